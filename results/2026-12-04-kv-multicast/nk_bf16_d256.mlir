// Shipped default schedule: bf16, head dim 256, no mask. Warp-specialized TMA + wgmma.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d256.mlir -o sdpa_fwd_bf16_d256
// docs/Schedules.md describes every field.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @nk_bf16_d256(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   q_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}
