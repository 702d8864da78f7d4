!head = memref<?x?x?x128xf16>
!lse = memref<?x?x?xf32>
func.func @too_much_smem(%q: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 4, warps = 8, mma = mma_sync, producer = cp_async, swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}
