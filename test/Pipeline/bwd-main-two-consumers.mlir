// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/experimental/main_bf16_d128_two_consumers.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/experimental/main_bf16_d128_two_consumers.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The two-consumer candidate of the backward's main loop (schedules/
// backward/experimental, which says what it computes) through the shared
// tile passes and into a bundle: it must keep compiling until it is timed.

// CHECK-LABEL: gpu.func @bwd_main_bf16_d128_two_consumers
// Per query block: both consumers' dS^T staged, then they meet (barrier 8,
// 256 threads); each multiplies by its half of K (n = 64, 8 k-steps over
// the 128 keys) and adds it by one bulk reduction; they meet again.
// CHECK: scf.for
// CHECK: nvvm.stmatrix
// CHECK: nvvm.barrier id = %c8_i32 number_of_threads = %c256_i32
// CHECK: scf.if
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>{{.*}}A[<bf16>, <one>, <col>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK: } else {
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>{{.*}}A[<bf16>, <one>, <col>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK: nvvm.barrier id = %c8_i32{{.*}} number_of_threads = %c256_i32
// SUMMARY: bwd_main_bf16_d128_two_consumers: registers=168
