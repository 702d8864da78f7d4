// DeepSeek's head dims: queries and keys 192, values 128, causal. The
// shipped kernels' emitter (convert-sdpa-to-hopper) writes head dims 64, 128
// and 256 only, so the default pipeline hands this sdpa to tiledattn-tile-sdpa:
//   tiledattn-compile sdpa_fwd_bf16_d192_dv128_causal.mlir -o sdpa_fwd_bf16_d192_dv128_causal
// The program's V ring and O accumulator are 128 wide, its Q and K 192; see
// it with tiledattn-opt sdpa_fwd_bf16_d192_dv128_causal.mlir --tiledattn-tile-sdpa.
// Not shipped yet: the GPU round checks the bundle against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!qk = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d192_dv128_causal(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse,
                                           %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 112, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !qk, !qk, !vo, !vo, !lse
  return
}
