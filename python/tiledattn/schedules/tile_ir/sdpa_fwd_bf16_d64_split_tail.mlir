// Every field of the shipped bf16 head dim 128 schedule for long rows
// (sdpa_fwd_bf16_d128_long) at head
// dim 64, through tiledattn-tile-sdpa's warp-specialized program: split_tail
// cuts the last, partial round of the persistent grid along the keys
// (tiledattn.for_each_tile ... split_tail) and the piece that starts a tile
// merges the others' partial O (tiledattn.merge_pieces) through the launch's
// workspace. At head dim 128 these fields spill 4 bytes (docs/perf-notes.md);
// sdpa_fwd_bf16_d128_long_split_tail.mlir runs that head dim without
// defer_store.
//   tiledattn-compile sdpa_fwd_bf16_d64_split_tail.mlir -o out
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_split_tail_bundles_merge_their_pieces).
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64_split_tail(%q: !head, %k: !head, %v: !head, %o: !head,
                                        %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   split_tail = true, q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}
