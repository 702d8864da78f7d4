// Candidate (not shipped, not yet timed): the causal D=256 short schedule as a persistent kernel with uniform_ring.
// No key-length range: the harness runs it at every length (compare at <= 512).
// Copy, edit the schedule fields and compile with
//   tiledattn-compile urc_bf16_d256_causal_short.mlir -o urc_bf16_d256_causal_short
// docs/Schedules.md describes every field.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @urc_bf16_d256_causal_short(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   overlap_epilogue = true, skip_masked_blocks = true, persistent = true, uniform_ring = true>)
      : !head, !head, !head, !head, !lse
  return
}
