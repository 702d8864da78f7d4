// The shipped f16 head dim 128 schedule for long rows (sdpa_fwd_f16_d128_long)
// without split_tail, which the tile program does not write yet:
// q_in_registers reads each consumer's 64 rows of Q into registers once per
// tile (tiledattn.read_rows, one ldmatrix.x4 per 16 columns) and every
// S = Q K^T takes A from there, so the tensor cores read only K from shared
// memory. Compiled through tiledattn-tile-sdpa's warp-specialized program:
//   tiledattn-compile sdpa_fwd_f16_d128_q_in_registers.mlir -o out
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d128_q_in_registers(%q: !head, %k: !head, %v: !head, %o: !head,
                                            %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true,
                                   overlap_softmax = true, persistent = true,
                                   q_buffers = 2, tma_store = true,
                                   defer_store = true, q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}
