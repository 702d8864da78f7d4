// Head dim 192 for queries, keys and values, no mask: three 64-column boxes
// per row, 112 keys per block so that Q and two stages of K and V fit the
// 227 KiB of shared memory. The default pipeline hands it to
// tiledattn-tile-sdpa (convert-sdpa-to-hopper writes 64, 128 and 256 only):
//   tiledattn-compile sdpa_fwd_f16_d192.mlir -o sdpa_fwd_f16_d192
// Not shipped yet: the GPU round checks the bundle against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x192xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d192(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                             %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 112, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
