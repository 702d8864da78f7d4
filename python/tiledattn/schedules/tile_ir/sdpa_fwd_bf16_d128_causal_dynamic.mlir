// The shipped causal D = 128 schedule for short keys (sdpa_fwd_bf16_d128_causal_short)
// without narrow_diagonal: dynamic_tiles as tile IR. The producer's thread takes
// each next tile from the launch's counter (tiledattn.for_each_tile ... dynamic)
// and tags Q's put with its rank; the consumers' loops take Q's slot and read
// the rank from its tag (ranks_from); the end mark, a put with no copy tagged
// past the last tile, ends them. Compiled through tiledattn-tile-sdpa's program:
//   tiledattn-compile sdpa_fwd_bf16_d128_causal_dynamic.mlir -o sdpa_fwd_bf16_d128_causal_dynamic
// See the program with tiledattn-opt sdpa_fwd_bf16_d128_causal_dynamic.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d128_causal_dynamic(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, dynamic_tiles = true,
                                   overlap_epilogue = true>)
      : !head, !head, !head, !head, !lse
  return
}
