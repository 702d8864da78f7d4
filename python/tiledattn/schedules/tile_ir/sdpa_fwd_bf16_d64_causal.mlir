// A producer = tma schedule with overlap_softmax (S of block j issued with
// P.V of block j - 1, the softmax under the P.V), persistent with one Q
// buffer (causal tiles of unequal length, longest first, walked by one block
// per multiprocessor) in tile_order = across_heads (heads fastest, every
// other round mirrored) and tma_store (O staged in the consumer's rows of
// its Q slot, which goes back to the producer once the copy has read them),
// compiled through tiledattn-tile-sdpa's warp-specialized program:
//
//   tiledattn-compile sdpa_fwd_bf16_d64_causal.mlir -o sdpa_fwd_bf16_d64_causal
// See the program with tiledattn-opt sdpa_fwd_bf16_d64_causal.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, pingpong = true,
                                   overlap_softmax = true, persistent = true,
                                   tma_store = true, tile_order = across_heads>)
      : !head, !head, !head, !head, !lse
  return
}
