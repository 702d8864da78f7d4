// The shipped bf16 head dim 192 / value head dim 128 causal schedule with
// tma_store: the 128-column O is staged in the first two 64-column atoms of
// the consumer's rows of its 192-column Q slot and stored by TMA. Compiled
// through tiledattn-tile-sdpa's warp-specialized program:
//   tiledattn-compile sdpa_fwd_bf16_d192_dv128_causal.mlir -o sdpa_fwd_bf16_d192_dv128_causal
// Not shipped until the GPU round has checked it (python/test/test_gpu_tile_ir.py,
// test_tile_ir_bundles_are_right) and timed it against the shipped bundle.
!qk = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d192_dv128_causal(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 112, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true>)
      : !qk, !qk, !vo, !vo, !lse
  return
}
