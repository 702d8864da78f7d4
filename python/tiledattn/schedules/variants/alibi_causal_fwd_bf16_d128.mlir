// Causal with ALiBi: s -> s - slope[h] * (q + Sk - Sq - k), slopes read
// from a float32 tensor of one per head, Sk - Sq from an int32 one.
// Python: tiledattn.variant_attention(q, k, v, causal=True,
// alibi_slopes=slopes).
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/alibi_causal_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[slopes, offsets])
// Written by scripts/gen_variant_schedules.py.

func.func @flex_score_mod(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %cap0: memref<?xf32>, %cap1: memref<?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>)
      score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = memref.load %cap0[%h] : memref<?xf32>
    %v1 = memref.load %cap1[%h] : memref<?xi32>
    %v2 = arith.index_cast %v1 : i32 to index
    %v3 = arith.addi %q_idx, %v2 : index
    %v4 = arith.subi %v3, %kv_idx : index
    %v5 = arith.index_cast %v4 : index to i64
    %v6 = arith.sitofp %v5 : i64 to f32
    %v7 = arith.mulf %v0, %v6 : f32
    %v8 = arith.subf %score, %v7 : f32
    tiledattn.yield %v8 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
