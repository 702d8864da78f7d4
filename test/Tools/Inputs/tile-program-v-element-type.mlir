// A tile program's v has q's element type.
!qk = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @v_element_type(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse, %scale: f32)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  return
}
