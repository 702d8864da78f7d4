// The shipped bf16 head dim 128 schedule (sdpa_fwd_bf16_d128), field for
// field, compiled through tiledattn-tile-sdpa's warp-specialized program
// rather than convert-sdpa-to-hopper: overlap_softmax (S of block j issued
// with P.V of block j - 1, the softmax under the P.V), persistent (one block
// per multiprocessor walking the tiles, tiledattn.for_each_tile) with
// q_buffers = 2 (the next tile's Q loads under this one), tma_store (O
// staged in a shared tile of its own, tiledattn.alloc, and stored by TMA)
// and defer_store (a tile's O stored under the next tile's first S). The
// GPU round times it against the shipped bundle (the A/B that decides when
// the shipped schedules move to the tile program):
//   tiledattn-compile sdpa_fwd_bf16_d128.mlir -o sdpa_fwd_bf16_d128
// See the program with tiledattn-opt sdpa_fwd_bf16_d128.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true,
                                   overlap_softmax = true, persistent = true,
                                   q_buffers = 2, tma_store = true,
                                   defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
