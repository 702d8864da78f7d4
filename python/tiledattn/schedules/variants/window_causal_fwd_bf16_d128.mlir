// Causal sliding window of 1024 keys (Mistral's): query i sees keys
// i - 1023 .. i (reading Sk - Sq per head, int32 [H], all equal). The
// mask_mod runs on the partial blocks of the map only.
// Python: tiledattn.variant_attention(q, k, v, causal=True,
// window_size=(1023, 0)).
// The block map (int32 [B|1, H|1, query tiles, 2 + key blocks]): per 128-row
// query tile the number of full 128-key blocks, the number listed, then
// their indices, full ones first; tiledattn.masks.block_map builds it from a
// dense bool mask, tiledattn.flex from a BlockMask of 128 x 128 blocks.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/window_causal_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[offsets, block_map])
// Written by scripts/gen_variant_schedules.py.

func.func @flex_score_mod(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %cap0: memref<?xi32>, %blocks: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 32, consumer_regs = 232, pingpong = true, overlap_softmax = true, tma_store = true, persistent = true, dynamic_tiles = true, q_buffers = 2, defer_store = true>)
      block_map(%blocks : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = memref.load %cap0[%h] : memref<?xi32>
    %v1 = arith.index_cast %v0 : i32 to index
    %v2 = arith.addi %q_idx, %v1 : index
    %v3 = arith.constant 0 : index
    %v4 = arith.addi %v2, %v3 : index
    %v5 = arith.cmpi sle, %kv_idx, %v4 : index
    %v6 = arith.constant 1023 : index
    %v7 = arith.subi %v2, %v6 : index
    %v8 = arith.cmpi sge, %kv_idx, %v7 : index
    %v9 = arith.andi %v5, %v8 : i1
    %v10 = arith.constant 0xFF800000 : f32
    %v11 = arith.select %v9, %score, %v10 : f32
    tiledattn.yield %v11 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
