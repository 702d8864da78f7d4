// Variable-length sequences packed along the tokens (FlashAttention's
// varlen layout, [1, H, total tokens, 128] here): a mask_mod over each
// token's sequence and position (int32 tensors read as captures) and a
// block map built from cu_seqlens.
// Python: tiledattn.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k),
// which builds the captures (tiledattn.varlen.positions) and the map.
// Compile and call it (on CUDA tensors [B, H, S, 128]):
//   kernel = tiledattn.compile('python/tiledattn/schedules/variants/varlen_fwd_bf16_d128.mlir')
//   out = kernel(q, k, v, captures=[*positions, block_map])
// Written by scripts/gen_variant_schedules.py.

func.func @varlen(%q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %scale: f32, %cap0: memref<?xi32>, %cap1: memref<?xi32>, %cap2: memref<?xi32>, %cap3: memref<?xi32>, %blocks: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>)
      block_map(%blocks : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %v0 = memref.load %cap0[%q_idx] : memref<?xi32>
    %v1 = arith.index_cast %v0 : i32 to index
    %v2 = memref.load %cap1[%kv_idx] : memref<?xi32>
    %v3 = arith.index_cast %v2 : i32 to index
    %v4 = arith.cmpi eq, %v1, %v3 : index
    %v5 = memref.load %cap2[%q_idx] : memref<?xi32>
    %v6 = arith.index_cast %v5 : i32 to index
    %v7 = memref.load %cap3[%kv_idx] : memref<?xi32>
    %v8 = arith.index_cast %v7 : i32 to index
    %v9 = arith.cmpi sge, %v6, %v8 : index
    %v10 = arith.andi %v4, %v9 : i1
    %v11 = arith.constant 0xFF800000 : f32
    %v12 = arith.select %v10, %score, %v11 : f32
    tiledattn.yield %v12 : f32
  } : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}
