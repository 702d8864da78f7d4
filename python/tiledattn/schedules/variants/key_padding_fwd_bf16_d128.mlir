// Key padding, as scaled_dot_product_attention(attn_mask=...) runs a
// bool mask of shape (B, 1, 1, S): the mask_mod reads it (as int8, of
// that shape; tiledattn.masks.compact_mask) on the partial blocks of the
// map.
// Python: tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=keep).
// The block map (int32 [B|1, H|1, query tiles, 2 + key blocks]): per 128-row
// query tile the number of full 128-key blocks, the number listed, then
// their indices, full ones first; tiledattn.masks.block_map builds it from a
// dense bool mask, tiledattn.flex from a BlockMask of 128 x 128 blocks.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/key_padding_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[mask, block_map])
// Written by scripts/gen_variant_schedules.py.

func.func @sdpa_attn_mask(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %cap0: memref<?x?x?x?xi8>, %blocks: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>)
      block_map(%blocks : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = arith.constant 0 : index
    %v1 = arith.constant 0 : index
    %v2 = memref.load %cap0[%b, %v0, %v1, %kv_idx] : memref<?x?x?x?xi8>
    %v3 = arith.constant 0 : i8
    %v4 = arith.cmpi ne, %v2, %v3 : i8
    %v5 = arith.constant 0xFF800000 : f32
    %v6 = arith.select %v4, %score, %v5 : f32
    tiledattn.yield %v6 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
