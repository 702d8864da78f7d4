// Shipped default schedule: bf16, head dim 64, causal (top-left). Warp-specialized TMA + wgmma.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d64_causal.mlir -o sdpa_fwd_bf16_d64_causal
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, dynamic_tiles = true,
                                   overlap_epilogue = true, narrow_diagonal = true>)
      : !head, !head, !head, !head, !lse
  return
}
