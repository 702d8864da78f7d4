// Candidate (not shipped): bf16, head dim 64, causal (top-left). Warp-specialized TMA + wgmma. Two blocks per multiprocessor.
// The verifier refused causal with ctas_per_sm = 2 from the second to the
// thirty-sixth session (NaN rows from 1k tokens); the thirty-seventh found
// the cause, every kernel's tiles overlapping its mbarriers, and with that
// fixed this kernel had no NaN row in 5 runs each at B 16-1 x H 32 x S
// 1k-16k, against up to 7723 with the overlap (H100,
// results/2026-12-07-session37). Not timed against the shipped kernel yet.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile two_ctas_causal_fwd_bf16_d64.mlir -o two_ctas_causal_fwd_bf16_d64
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @two_ctas_causal_fwd_bf16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 2,
                                   warps = 8, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 1,
                                   consumer_regs = 232, overlap_softmax = true, ctas_per_sm = 2>)
      : !head, !head, !head, !head, !lse
  return
}
