!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @wgmma_cp_async(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = wgmma, producer = cp_async, swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}
