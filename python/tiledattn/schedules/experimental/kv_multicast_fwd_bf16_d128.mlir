// Candidate (not shipped): bf16, head dim 128, no mask. Warp-specialized TMA +
// wgmma, one tile per block, blocks in clusters of two that share each K/V
// block by TMA multicast (kv_multicast). The emitter's kernel was correct on
// the H200 (check_bundles) but not faster: even with the same kernel without
// kv_multicast, which is 4-12% behind the shipped persistent one
// (docs/perf-notes.md, fourteenth session). Since the thirty-ninth session
// the tile program writes it: K and V rings shared by the cluster's pair
// of blocks (`tiledattn.ring ... cluster(2)`).
// Copy, edit the schedule fields and compile with
//   tiledattn-compile kv_multicast_fwd_bf16_d128.mlir -o kv_multicast_fwd_bf16_d128
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @kv_multicast_fwd_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true, q_in_registers = true,
                                   kv_multicast = true>)
      : !head, !head, !head, !head, !lse
  return
}
