// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/tile_ir/softcap30_fwd_bf16_d128.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma | FileCheck %s
// RUN: rm -rf %t && tiledattn-compile %schedules/tile_ir/softcap30_fwd_bf16_d128.mlir -o %t | FileCheck %s --check-prefix=SUMMARY

// The hand-edited tile program (schedules/tile_ir/softcap30_fwd_bf16_d128:
// a tiledattn.score_mod between the mmas of each loop) through the tile
// passes: the body once per accumulator register (64 a thread) in each of
// the two loops, on the scores the first mma waited for, before the online
// softmax (and, in the second loop, before the mask); then to a bundle
// without spills.

// CHECK-LABEL: gpu.func @softcap30_fwd_bf16_d128
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: math.tanh
// CHECK-NOT: math.tanh
// CHECK: gpu.shuffle xor
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: math.tanh
// CHECK-NOT: math.tanh
// CHECK: arith.select
// CHECK: gpu.shuffle xor
// SUMMARY: softcap30_fwd_bf16_d128: registers={{[0-9]+}} spill_stores=0 spill_loads=0
