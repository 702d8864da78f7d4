// RUN: tiledattn-opt %s --convert-sdpa-to-hopper | FileCheck %s
// RUN: tiledattn-opt %s --convert-sdpa-to-hopper=register-budgets=false | FileCheck %s --check-prefix=SANITIZER

// The producer gives registers back and the consumers take them with
// setmaxnreg; register-budgets=false (tiledattn-compile --sanitizer-build,
// the builds run under compute-sanitizer) leaves both out: every warp keeps
// the launch's register count.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @budgets(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: nvvm.wgmma.mma_async

// SANITIZER-NOT: nvvm.setmaxregister
// SANITIZER: nvgpu.tma.async.load
// SANITIZER-NOT: nvvm.setmaxregister
// SANITIZER: nvvm.wgmma.mma_async
// SANITIZER-NOT: nvvm.setmaxregister
