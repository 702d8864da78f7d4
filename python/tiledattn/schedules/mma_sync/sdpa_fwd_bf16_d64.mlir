// Shipped default schedule: bf16, head dim 64, no mask.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d64.mlir -o sdpa_fwd_bf16_d64
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2,
                                   warps = 4, mma = mma_sync, producer = cp_async,
                                   swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}
