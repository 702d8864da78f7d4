// A producer = tma schedule without refinements (not even overlap_softmax,
// so that the GPU round keeps checking the in-order program), compiled
// through tiledattn-tile-sdpa's warp-specialized program:
//
//   tiledattn-compile sdpa_fwd_f16_d64.mlir -o sdpa_fwd_f16_d64
// See the program with tiledattn-opt sdpa_fwd_f16_d64.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 3,
                                   warps = 8, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 1,
                                   split_kv_loop = false>)
      : !head, !head, !head, !head, !lse
  return
}
