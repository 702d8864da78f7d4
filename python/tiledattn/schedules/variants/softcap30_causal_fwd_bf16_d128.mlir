// Causal with Gemma-2's logit softcap: s -> 30 * tanh(s / 30) on the
// scaled scores (tanh.approx.f32; the division a multiply by 1/30).
// Python: tiledattn.variant_attention(q, k, v, causal=True, softcap=30),
// or tiledattn.flex_attention with that score_mod and a causal BlockMask.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/softcap30_causal_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[])
// Written by scripts/gen_variant_schedules.py.

func.func @flex_score_mod(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>)
      score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = arith.constant 30.0 : f32
    %v1 = arith.divf %score, %v0 fastmath<arcp,afn> : f32
    %v2 = math.tanh %v1 fastmath<afn> : f32
    %v3 = arith.constant 30.0 : f32
    %v4 = arith.mulf %v3, %v2 : f32
    tiledattn.yield %v4 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
