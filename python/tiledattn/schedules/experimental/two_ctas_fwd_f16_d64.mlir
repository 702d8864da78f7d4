// Candidate (not shipped): f16, head dim 64, no mask. Warp-specialized TMA + wgmma. Two blocks per multiprocessor;
// faster than the shipped D=64 kernel at 512-8k on the H200, correct in the
// harness, but the GPU suite has not run on it (docs/perf-notes.md).
// Copy, edit the schedule fields and compile with
//   tiledattn-compile two_ctas_fwd_f16_d64.mlir -o two_ctas_fwd_f16_d64
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @two_ctas_fwd_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 2,
                                   warps = 8, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 1,
                                   consumer_regs = 232, overlap_softmax = true, ctas_per_sm = 2>)
      : !head, !head, !head, !head, !lse
  return
}
