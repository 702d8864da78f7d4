// Candidate (not shipped), from the shipped schedule: bf16, head dim 256, no mask. Warp-specialized TMA + wgmma.
// No key-length range: the harness runs it at every length.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d256_short.mlir -o sdpa_fwd_bf16_d256_short
// docs/Schedules.md describes every field.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @urq2d_bf16_d256_short(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 48, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   persistent = true, uniform_ring = true, q_buffers = 2, stage_o_in_q = true, defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
