// A tile program must take tiledattn.sdpa's operands: the manifest lists them.
!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wrong_arguments(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !head, %scale: f32)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  return
}
