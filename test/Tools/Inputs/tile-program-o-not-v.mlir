// A tile program's o has v's type (the value head dim may differ from q's).
!qk = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @o_not_v(%q: !qk, %k: !qk, %v: !vo, %o: !qk, %lse: !lse, %scale: f32)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  return
}
