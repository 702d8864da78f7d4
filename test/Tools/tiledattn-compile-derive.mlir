// REQUIRES: ptxas
// tiledattn-compile --derive: a form of a program (tiledattn-derive-program)
// compiled as if its text said so; what tiledattn.backward_kernels asks for
// the float16 forms and the smaller head dims.
// RUN: rm -rf %t && tiledattn-compile %schedules/backward/preprocess_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16 head-dim=48}" -o %t --quiet
// RUN: FileCheck %s --input-file %t/manifest.json
// CHECK: "dtype": "f16",
// CHECK: "head_dim": 48,
// CHECK: "kernel": "bwd_preprocess_f16_d48",
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/kernel.ptx
// PTX: .entry bwd_preprocess_f16_d48(
// A pipeline it cannot parse, and a derivation the pass refuses, are errors
// that name them.
// RUN: not tiledattn-compile %schedules/backward/preprocess_bf16_d64.mlir --derive="no-such-pass" -o %t.bad 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --derive: expected a pass pipeline, but got 'no-such-pass': {{.*}}'no-such-pass' does not refer to a registered pass
// RUN: not tiledattn-compile %schedules/backward/preprocess_bf16_d64.mlir --derive="tiledattn-derive-program{head-dim=80}" -o %t.bad 2>&1 | FileCheck %s --check-prefix=WIDER
// WIDER: error: tiledattn-derive-program: expected head-dim to be a positive multiple of 16 up to the program's 64, but got 80
