// Causal within packed documents: query i sees key j <= i of the same
// document, ids (int32 [B, S]) read by the mask_mod.
// Python: tiledattn.flex_attention(q, k, v, block_mask=create_block_mask(
// same_document, B, None, S, S)).
// The block map (int32 [B|1, H|1, query tiles, 2 + key blocks]): per 128-row
// query tile the number of full 128-key blocks, the number listed, then
// their indices, full ones first; tiledattn.masks.block_map builds it from a
// dense bool mask, tiledattn.flex from a BlockMask of 128 x 128 blocks.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/documents_causal_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[ids, block_map])
// Written by scripts/gen_variant_schedules.py.

func.func @flex_score_mod(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %cap0: memref<?x?xi32>, %blocks: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 32, consumer_regs = 232, pingpong = true, overlap_softmax = true, tma_store = true, persistent = true, dynamic_tiles = true, q_buffers = 2, defer_store = true>)
      block_map(%blocks : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = arith.cmpi sge, %q_idx, %kv_idx : index
    %v1 = memref.load %cap0[%b, %q_idx] : memref<?x?xi32>
    %v2 = arith.index_cast %v1 : i32 to index
    %v3 = memref.load %cap0[%b, %kv_idx] : memref<?x?xi32>
    %v4 = arith.index_cast %v3 : i32 to index
    %v5 = arith.cmpi eq, %v2, %v4 : index
    %v6 = arith.andi %v0, %v5 : i1
    %v7 = arith.constant 0xFF800000 : f32
    %v8 = arith.select %v6, %score, %v7 : f32
    tiledattn.yield %v8 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
