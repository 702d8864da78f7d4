// Candidate (not shipped), from the shipped schedule: bf16, head dim 128, no mask. Warp-specialized TMA + wgmma.
// No key-length range: the harness runs it at every length.
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d128_long.mlir -o sdpa_fwd_bf16_d128_long
// docs/Schedules.md describes every field.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @n96s2_bf16_d128_long(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 96, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   split_tail = true, q_in_registers = true, stage_o_in_q = true>)
      : !head, !head, !head, !head, !lse
  return
}
