// Shipped default schedule: bf16, head dim 64, no mask. Warp-specialized TMA + wgmma.
// Lowered through its tile program (tiledattn-tile-sdpa): with
// one_thread_producer it runs level with convert-sdpa-to-hopper's kernel,
// which it replaced (docs/perf-notes.md, thirty-first session).
// Copy, edit the schedule fields and compile with
//   tiledattn-compile sdpa_fwd_bf16_d64.mlir -o sdpa_fwd_bf16_d64
// docs/Schedules.md describes every field.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @sdpa_fwd_bf16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   producer_regs = 24, consumer_regs = 160, pingpong = true,
                                   overlap_softmax = true, persistent = true, tma_store = true,
                                   q_buffers = 2, uniform_consumer = true,
                                   one_thread_producer = true>)
      : !head, !head, !head, !head, !lse
  return
}
