// Shipped default schedule: f16, head dim 128, no mask. Warp-specialized TMA + wgmma.
// Run for key/value lengths >= 2048; the bundle without a range covers the rest.
// Lowered through its tile program (tiledattn-tile-sdpa) since the
// thirty-eighth session, with hold_packed (the held O scaled and packed
// across the back edge) and narrow_consumer_index (without it ptxas spills
// the consumer index, 4 bytes); docs/perf-notes.md has its A/B against
// convert-sdpa-to-hopper's kernel.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_f16_d128_long.mlir -o sdpa_fwd_f16_d128_long
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_f16_d128_long(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32)
    attributes {tiledattn.min_seqlen_k = 2048 : i64} {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   split_tail = true, q_in_registers = true,
                                   hold_packed = true,
                                   narrow_consumer_index = true>)
      : !head, !head, !head, !head, !lse
  return
}
