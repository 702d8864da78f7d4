!head = memref<?x?x?x64xf32>
!lse = memref<?x?x?xf32>
func.func @f32_heads(%q: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}
