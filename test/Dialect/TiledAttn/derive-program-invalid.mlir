// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="element-type=f32" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="element-type=f16" 2>&1 | FileCheck %s --check-prefix=NO-BF16
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="head-dim=72" 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: not tiledattn-opt %s -split-input-file --tiledattn-derive-program="head-dim=256" 2>&1 | FileCheck %s --check-prefix=WIDER

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
