// Shipped default schedule: bf16, head dim 128, no mask. Warp-specialized TMA + wgmma.
// Run for key/value lengths >= 2048; the bundle without a range covers the rest.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d128_long.mlir -o sdpa_fwd_bf16_d128_long
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @km_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true, q_in_registers = true, kv_multicast = true>)
      : !head, !head, !head, !head, !lse
  return
}
