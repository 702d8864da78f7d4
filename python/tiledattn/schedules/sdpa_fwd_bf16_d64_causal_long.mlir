// Shipped default schedule: bf16, head dim 64, causal (top-left). Warp-specialized TMA + wgmma.
// Run for key/value lengths >= 4608; the bundle without a range covers the rest.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d64_causal_long.mlir -o sdpa_fwd_bf16_d64_causal_long
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64_causal_long(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32)
    attributes {tiledattn.min_seqlen_k = 4608 : i64} {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 112, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true, q_buffers = 2,
                                   tile_order = across_heads>)
      : !head, !head, !head, !head, !lse
  return
}
