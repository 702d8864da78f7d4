// Shipped default schedule: bf16, head dim 192. Warp-specialized TMA + wgmma,
// lowered through tiledattn-tile-sdpa's tile program (convert-sdpa-to-hopper
// writes head dims 64, 128 and 256 only), with the refinements that program
// writes: overlap_softmax. 112 keys per block, so that Q and two stages of
// K and V fit the 227 KiB of shared memory. Copy, edit the schedule fields
// and compile with
//   tiledattn-compile sdpa_fwd_bf16_d192.mlir -o sdpa_fwd_bf16_d192
// docs/Schedules.md describes every field.
!qk = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d192(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 112, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !qk, !qk, !vo, !vo, !lse
  return
}
