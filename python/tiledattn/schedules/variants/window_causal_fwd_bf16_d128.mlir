// Causal sliding window of 1024 keys (Mistral's): query i sees keys
// i - 1023 .. i. The mask_mod runs on the partial blocks of the map only.
// Python: tiledattn.variant_attention(q, k, v, causal=True,
// window_size=(1023, 0)).
// The block map (int32 [B|1, H|1, query tiles, 2 + key blocks]): per 128-row
// query tile the number of full 128-key blocks, the number listed, then
// their indices, full ones first; tiledattn.masks.block_map builds it from a
// dense bool mask, tiledattn.flex from a BlockMask of 128 x 128 blocks.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/window_causal_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[block_map])
// Written by scripts/gen_variant_schedules.py.

func.func @flex_score_mod(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %blocks: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>)
      block_map(%blocks : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = arith.constant 0 : index
    %v1 = arith.addi %q_idx, %v0 : index
    %v2 = arith.constant 0 : index
    %v3 = arith.addi %v1, %v2 : index
    %v4 = arith.cmpi sle, %kv_idx, %v3 : index
    %v5 = arith.constant 1023 : index
    %v6 = arith.subi %v1, %v5 : index
    %v7 = arith.cmpi sge, %kv_idx, %v6 : index
    %v8 = arith.andi %v4, %v7 : i1
    %v9 = arith.constant 0xFF800000 : f32
    %v10 = arith.select %v8, %score, %v9 : f32
    tiledattn.yield %v10 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
