// Shipped default schedule: bf16, head dim 256, no mask. Warp-specialized TMA + wgmma.
// Lowered by convert-sdpa-to-hopper (tiledattn.hopper_emitter): its tile
// program is still 2-4% slower (docs/perf-notes.md, twentieth session).
// Run for key/value lengths 1..512; the bundle without a range covers the rest.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d256_short.mlir -o sdpa_fwd_bf16_d256_short
// docs/Schedules.md describes every field.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d256_short(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32)
    attributes {tiledattn.max_seqlen_k = 512 : i64, tiledattn.hopper_emitter} {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, overlap_epilogue = true,
                                   uniform_ring = true>)
      : !head, !head, !head, !head, !lse
  return
}
