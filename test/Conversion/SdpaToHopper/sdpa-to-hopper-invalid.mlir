// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics --convert-sdpa-to-hopper

// A function holding a producer = tma sdpa becomes the kernel itself, so it
// must look like one: its arguments are the sdpa operands in order and
// nothing else, it returns nothing, and nothing else in it has effects.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @operands_swapped(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  // expected-error @below {{'tiledattn.sdpa' op with producer = tma expects its operands to be the function's arguments in order (q, k, v, o, lse, scale), but operand #1 is not argument #1}}
  tiledattn.sdpa %q, %v, %k, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// An operand computed in the function (side-effect free, so only the operand
// rule catches it).
func.func @scale_not_an_argument(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  %half = arith.constant 0.5 : f32
  // expected-error @below {{but operand #5 is not argument #5}}
  tiledattn.sdpa %q, %k, %v, %half into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// The operands in order, but the arguments shifted by one.
func.func @leading_extra_argument(%extra: i32, %q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  // expected-error @below {{but operand #0 is not argument #0}}
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// expected-error @below {{'func.func' op with producer = tma expects 6 arguments (q, k, v, o, lse, scale), but got 7}}
func.func @trailing_extra_argument(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32, %extra: i32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// expected-error @below {{'func.func' op a kernel function must return nothing, but it returns 1 values}}
func.func @returns_a_value(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) -> f32 {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return %scale : f32
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @store_beside_sdpa(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.store' op has side effects, but a kernel function holds only one tiledattn.sdpa and side-effect-free ops (it runs once per thread block)}}
  memref.store %scale, %lse[%c0, %c0, %c0] : !lse
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @two_sdpa(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  // expected-error @below {{'tiledattn.sdpa' op expected one tiledattn.sdpa per function (the function becomes the kernel), but found 2}}
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}
