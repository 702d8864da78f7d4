// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/preprocess_bf16_d128.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: FileCheck %s --check-prefix=EXTF --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/preprocess_bf16_d128.mlir -o %t.bundle | FileCheck %s --check-prefix=SUMMARY

// The backward's preprocess, D = rowsum(dO * O) per query row, as a
// hand-written tile program (python/tiledattn/schedules/backward/
// preprocess_bf16_d128.mlir, which says what it computes), through the
// shared tile passes and into a bundle.

// Per consumer thread: one ldmatrix.x4 per 16 columns of each tile, two
// bf16 a word unpacked to f32, 64 products, each row half summed over the
// quad, and quad lane 0's two rows stored where they are inside D.
// CHECK-LABEL: gpu.func @bwd_preprocess_bf16_d128
// CHECK-COUNT-2: nvgpu.tma.async.load
// CHECK-COUNT-16: nvvm.ldmatrix
// CHECK-NOT: nvvm.ldmatrix
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK-COUNT-64: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store
// EXTF-COUNT-128: arith.extf {{.*}} : bf16 to f32
// EXTF-NOT: arith.extf
// SUMMARY: bwd_preprocess_bf16_d128: registers={{[0-9]+}} spill_stores=0 spill_loads=0
