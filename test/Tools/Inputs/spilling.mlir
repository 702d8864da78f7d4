// Shipped default schedule: f16, head dim 128, no mask.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_f16_d128.mlir -o sdpa_fwd_f16_d128
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @spilling(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 256, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct,
                                   swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}
