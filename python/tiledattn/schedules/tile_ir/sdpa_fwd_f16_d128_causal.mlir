// The shipped f16 head dim 128 causal schedule (sdpa_fwd_f16_d128_causal),
// field for field, compiled through tiledattn-tile-sdpa's warp-specialized
// program rather than convert-sdpa-to-hopper: overlap_softmax (S of block j
// issued with P.V of block j - 1, the softmax under the P.V), tma_store (O
// staged in the consumer's rows of its Q slot and stored by TMA) and
// overlap_epilogue (the rows' 1 / l and lse under the last P.V,
// tiledattn.finish_rows), one tile per block:
//   tiledattn-compile sdpa_fwd_f16_d128_causal.mlir -o sdpa_fwd_f16_d128_causal
// See the program with tiledattn-opt sdpa_fwd_f16_d128_causal.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d128_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true,
                                   overlap_softmax = true,
                                   tma_store = true, overlap_epilogue = true>)
      : !head, !head, !head, !head, !lse
  return
}
