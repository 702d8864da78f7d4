// A producer = tma schedule with the one refinement the tile program writes
// so far (overlap_softmax: S of block j issued with P.V of block j - 1, the
// softmax under the P.V) and none of the others, compiled through tiledattn-tile-sdpa's warp-specialized
// program:
//   tiledattn-compile sdpa_fwd_bf16_d256_causal.mlir -o sdpa_fwd_bf16_d256_causal
// See the program with tiledattn-opt sdpa_fwd_bf16_d256_causal.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d256_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2,
                                   warps = 8, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 1,
                                   overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
