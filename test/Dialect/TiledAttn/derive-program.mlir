// RUN: tiledattn-opt %s --tiledattn-derive-program="element-type=f16" | FileCheck %s --check-prefix=F16
// RUN: tiledattn-opt %s --tiledattn-derive-program="head-dim=96" | FileCheck %s --check-prefix=D96
// RUN: tiledattn-opt %s --tiledattn-derive-program="element-type=f16 head-dim=80" | FileCheck %s --check-prefix=BOTH
// RUN: tiledattn-opt %s --tiledattn-derive-program | FileCheck %s --check-prefix=SAME

// A program's float16 form and its forms for smaller operand head dims,
// derived from its bf16, head dim 128 text (tiledattn.backward_kernels'
// forms; tiledattn-compile --derive).

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!grad = memref<?x?x?x?xbf16>

// F16-LABEL: func.func @bwd_main_f16_d128(
// F16-SAME: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
// F16-SAME: memref<?x?x?xf32>, %{{.*}}: memref<?x?x?x?xf16>)
// F16: tiledattn.ring releases(1) : !tiledattn.ring<2, 64x128xf16>
// F16: tiledattn.alloc : !tiledattn.smem<128x64xf16>
// F16-NOT: bf16
// The operands' head dim only: slots and tiles keep their 128 columns.
// D96-LABEL: func.func @bwd_main_bf16_d96(
// D96-SAME: memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>
// D96-SAME: memref<?x?x?x?xbf16>)
// D96: !tiledattn.ring<2, 64x128xbf16>
// D96-NOT: x128xbf16, strided
// BOTH-LABEL: func.func @bwd_main_f16_d80(
// BOTH-SAME: memref<?x?x?x80xf16, strided<[?, ?, ?, 1], offset: ?>>
// SAME-LABEL: func.func @bwd_main_bf16_d128(
// SAME-SAME: memref<?x?x?x128xbf16
func.func @bwd_main_bf16_d128(%q: !head, %lse: memref<?x?x?xf32>, %g: !grad) {
  %r = tiledattn.ring releases(1) : !tiledattn.ring<2, 64x128xbf16>
  %s = tiledattn.alloc : !tiledattn.smem<128x64xbf16>
  return
}
