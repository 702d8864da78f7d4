!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @wgmma_cp_async(%q: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = wgmma, producer = cp_async, swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}
