// The shipped causal D = 64 schedule (sdpa_fwd_f16_d64_causal) field for field,
// dynamic_tiles and narrow_diagonal included, compiled through tiledattn-tile-sdpa's
// program: a masked block whose keys from 64 on are right of all a consumer's
// rows takes S over its first 64 keys (mma_async ... b_rows(64)), its P widened
// with zeros (tiledattn.resize), and as the last block a P.V over those keys.
//   tiledattn-compile --hopper-tile-program sdpa_fwd_f16_d64_causal_narrow.mlir -o sdpa_fwd_f16_d64_causal_narrow
// See the program with tiledattn-opt sdpa_fwd_f16_d64_causal_narrow.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d64_causal_narrow(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
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
