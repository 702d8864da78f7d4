// Shipped default schedule: bf16, head dim 128, causal (top-left). Warp-specialized TMA + wgmma.
// Run for key/value lengths 1..4096; the bundle without a range covers the rest.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d128_causal_short.mlir -o sdpa_fwd_bf16_d128_causal_short
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d128_causal_short(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32)
    attributes {tiledattn.max_seqlen_k = 4096 : i64} {
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
