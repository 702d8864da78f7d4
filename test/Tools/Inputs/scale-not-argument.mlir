// The scale as a constant in the function: the runtime passes a scale the
// kernel would ignore.
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @fixed_scale(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse) {
  %scale = arith.constant 0.125 : f32
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
