// Shipped default schedule: f16, head dim 256, no mask. Warp-specialized TMA + wgmma.
// Its tile program with one_thread_producer at 40 / 232 registers: 0.981-0.983x
// of convert-sdpa-to-hopper's kernel at 512 keys, 0.993-0.996x at 256 (H100,
// thirty-second session; docs/perf-notes.md), the last shipped kernel that
// left that lowering.
// Run for key/value lengths 1..512; the bundle without a range covers the rest.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_f16_d256_short.mlir -o sdpa_fwd_f16_d256_short
// docs/Schedules.md describes every field.
!head = memref<?x?x?x256xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d256_short(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32)
    attributes {tiledattn.max_seqlen_k = 512 : i64} {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, overlap_epilogue = true,
                                   uniform_ring = true, one_thread_producer = true,
                                   producer_regs = 40, consumer_regs = 232>)
      : !head, !head, !head, !head, !lse
  return
}
