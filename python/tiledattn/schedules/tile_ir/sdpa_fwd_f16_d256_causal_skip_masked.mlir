// The shipped causal D = 256 schedule (f16), field for field: q_by_atom and
// k0_by_atom (Q and the first K block by atom: ring parts, a `with` put,
// partial gets, after_parts) and skip_masked_blocks (each consumer's loops
// end at its own bound, tiledattn.uniform; the producer releases the rest,
// tiledattn.ring.skip), through the tile program:
//   tiledattn-compile sdpa_fwd_f16_d256_causal_skip_masked.mlir -o out
// The GPU round checks it against float64 (python/test/test_gpu_tile_ir.py).
!head = memref<?x?x?x256xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d256_causal_skip_masked(%q: !head, %k: !head, %v: !head, %o: !head,
                 %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   overlap_epilogue = true, skip_masked_blocks = true,
                                   q_by_atom = true, k0_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}
