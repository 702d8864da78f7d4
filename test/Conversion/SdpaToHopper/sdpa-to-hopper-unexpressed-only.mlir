// RUN: tiledattn-opt %s -split-input-file -convert-sdpa-to-hopper=unexpressed-only=1 | FileCheck %s

// The default pipeline's split: with unexpressed-only, convert-sdpa-to-hopper
// lowers a schedule the tile program writes only when its function keeps
// this pass's kernel (tiledattn.hopper_emitter), and always one that sets a
// refinement the tile program does not write yet (here conditional_rescale); it
// leaves the rest to tiledattn-tile-sdpa.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @expressed
// CHECK: tiledattn.sdpa
// CHECK-NOT: gpu.func
func.func @expressed(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-NOT: tiledattn.sdpa
// CHECK: gpu.func @kept_by_attribute
func.func @kept_by_attribute(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32)
    attributes {tiledattn.hopper_emitter} {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-NOT: tiledattn.sdpa
// CHECK: gpu.func @unexpressed
func.func @unexpressed(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2, defer_store = true, conditional_rescale = true>)
      : !head, !head, !head, !head, !lse
  return
}
