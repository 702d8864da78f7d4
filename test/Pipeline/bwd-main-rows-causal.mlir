// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/experimental/main_bf16_d128_rows_causal.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/experimental/main_bf16_d128_rows_causal.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The causal candidate of the row form (schedules/backward/experimental/
// main_bf16_d128_rows_causal.mlir, which says what it changes) keeps
// compiling: both roles loop over the query blocks from 2 j (the key tile's
// diagonal) on, and S is masked before its 2^x.
// CHECK-LABEL: gpu.func @bwd_main_bf16_d128_rows_causal
// CHECK: %[[DIAG:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK: scf.for %{{.*}} = %[[DIAG]] to
// CHECK: nvgpu.tma.async.load
// CHECK: %[[CDIAG:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK: scf.for %{{.*}} = %[[CDIAG]] to
// CHECK: arith.cmpi
// CHECK: 0xFF800000
// CHECK-COUNT-32: ex2.approx
// SUMMARY: bwd_main_bf16_d128_rows_causal: registers=168 {{.*}} threads=384
