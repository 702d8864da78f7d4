// Two blocks per multiprocessor (ctas_per_sm = 2: each thread starts with
// 128 registers, .maxnreg 128 and .minnctapersm 2 on the kernel; one
// consumer warpgroup of 64 query rows with overlap_softmax),
// compiled through tiledattn-tile-sdpa's warp-specialized program (not
// convert-sdpa-to-hopper, which had these kernels until the thirty-seventh
// session):
//   tiledattn-compile two_ctas_fwd_f16_d64.mlir -o two_ctas_fwd_f16_d64
// See the program with tiledattn-opt two_ctas_fwd_f16_d64.mlir --tiledattn-tile-sdpa.
// Not shipped: the GPU round checks these bundles against float64
// (python/test/test_gpu_tile_ir.py, test_tile_ir_bundles_are_right).
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @two_ctas_fwd_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 2,
                                   warps = 8, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 1,
                                   consumer_regs = 232, overlap_softmax = true, ctas_per_sm = 2>)
      : !head, !head, !head, !head, !lse
  return
}
