// RUN: tiledattn-opt %s -split-input-file -tiledattn-tile-sdpa -verify-diagnostics

// tiledattn-tile-sdpa turns the function around a tiledattn.sdpa into the
// kernel, so it rejects functions that cannot become one.

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @two_sdpa_in_one_function(%q: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  // expected-error @+1 {{'tiledattn.sdpa' op expected one tiledattn.sdpa per function (the function becomes the kernel), but found 2}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
// expected-error @+1 {{'func.func' op a kernel function must return nothing, but it returns 1 values}}
func.func @function_with_results(%q: !head, %lse: !lse, %scale: f32) -> f32 {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return %scale : f32
}

// -----

// Regression: an sdpa inside a region was skipped and reached the LLVM
// lowering unexpanded.
!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_inside_scf_if(%q: !head, %lse: !lse, %scale: f32, %c: i1) {
  scf.if %c {
    // expected-error @+1 {{'tiledattn.sdpa' op expected to be directly in the body of a func.func (the function becomes the kernel), but its parent is scf.if}}
    tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
        schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
        : !head, !head, !head, !head, !lse
  }
  return
}

// -----

// Every thread block runs the kernel function, so a store beside the sdpa
// would run once per block.
!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @store_beside_sdpa(%q: !head, %lse: !lse, %scale: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.store' op has side effects, but a kernel function holds only one tiledattn.sdpa and side-effect-free ops (it runs once per thread block)}}
  memref.store %scale, %lse[%c0, %c0, %c0] : !lse
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @score_mod_on_mma_sync(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op has a score_mod, which tiledattn-tile-sdpa writes into the warp-specialized program (producer = tma schedules) only; the mma_sync program does not lower it yet}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    tiledattn.yield %s : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @mask_mod_on_mma_sync(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op has a mask_mod, which tiledattn-tile-sdpa writes into the warp-specialized program (producer = tma schedules) only; the mma_sync program does not lower it yet}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    tiledattn.yield %s : f32
  } : !head, !head, !head, !head, !lse
  return
}

