// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="element-type=f32" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="element-type=f16" 2>&1 | FileCheck %s --check-prefix=NO-BF16
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="head-dim=72" 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="head-dim=256" 2>&1 | FileCheck %s --check-prefix=WIDER
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="mask=window" 2>&1 | FileCheck %s --check-prefix=MASK
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="mask=causal" 2>&1 | FileCheck %s --check-prefixes=NO-MASK-OP,NO-FIRST-OP,ALREADY

// tiledattn-derive-program refuses what it cannot derive, naming it.

// TYPE: error: tiledattn-derive-program: expected element-type f16 (a bf16 program's float16 form) or none, but got 'f32'
// DIM: error: tiledattn-derive-program: expected head-dim to be a positive multiple of 16 up to the program's 128, but got 72
// WIDER: error: tiledattn-derive-program: expected head-dim to be a positive multiple of 16 up to the program's 128, but got 256
func.func @bwd_bf16_d128(%q: memref<?x?x?x128xbf16>) {
  return
}

// -----

// NO-BF16: error: tiledattn-derive-program: element-type=f16 derives a bf16 program's float16 form, but the program has no bf16
func.func @bwd_f16_d128(%q: memref<?x?x?x128xf16>) {
  return
}

// -----

// DIM: error: tiledattn-derive-program: expected the operands' [B, H, S, D] memrefs to have one head dim, but got 128 and 64
func.func @bwd_bf16_d128(%q: memref<?x?x?x128xbf16>, %k: memref<?x?x?x64xbf16>) {
  return
}

// -----

// DIM: error: tiledattn-derive-program: head-dim needs operands of type memref<?x?x?xDx...>, but the program has none
func.func @bwd_bf16(%q: memref<?x?x?x?xbf16>) {
  return
}

// -----

// MASK: error: tiledattn-derive-program: expected mask causal (a program's causal form) or none, but got 'window'
// NO-MASK-OP: error: tiledattn-derive-program: mask=causal needs a program that says where its mask goes, a tiledattn.mask on its scores and a tiledattn.first_query_block or tiledattn.key_block_end for its loops, but it has no tiledattn.mask
func.func @bwd_first_only(%kt: index, %qb: index) -> index {
  %f = tiledattn.first_query_block %kt of %qb rows(64) keys(128)
  return %f : index
}

// -----

// NO-FIRST-OP: error: tiledattn-derive-program: mask=causal needs a program that says where its mask goes, a tiledattn.mask on its scores and a tiledattn.first_query_block or tiledattn.key_block_end for its loops, but it has no loop bound
func.func @bwd_mask_only(%s: !tiledattn.tile<64x64xf32>, %r: index) -> !tiledattn.tile<64x64xf32> {
  %m = tiledattn.mask %s, %r, %r : !tiledattn.tile<64x64xf32>
  return %m : !tiledattn.tile<64x64xf32>
}

// -----

func.func @bwd_causal_already(%s: !tiledattn.tile<64x64xf32>, %r: index) -> !tiledattn.tile<64x64xf32> {
  %f = tiledattn.key_block_end %r of %r rows(128) keys(64)
  // ALREADY: error: tiledattn-derive-program: mask=causal derives from a program without a mask, but this op is already causal
  %m = tiledattn.mask %s, %r, %f causal : !tiledattn.tile<64x64xf32>
  return %m : !tiledattn.tile<64x64xf32>
}
