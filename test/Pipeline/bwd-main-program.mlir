// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d128.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/main_bf16_d128.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The backward's main loop (python/tiledattn/schedules/backward/
// main_bf16_d128.mlir, which says what it computes) through the shared tile
// passes and into a bundle.

// The producer: K and V once a tile, Q_i and dO_i a query block (two
// 64-column boxes each).
// CHECK-LABEL: gpu.func @bwd_main_bf16_d128
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK-COUNT-4: nvgpu.tma.async.load
// The consumer, per query block: S^T and dP^T (8 k-steps each, both
// operands in shared memory), P^T from the lse (a 2^x per register), dS^T
// staged (stmatrix, fence, the warpgroup's barrier), dV and dK (A from
// registers, inline PTX), dQ (A transposed), its 32 pairs written to the
// stage and one bulk reduction.
// CHECK: scf.for
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-32: ex2.approx
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.barrier id
// CHECK-COUNT-8: llvm.inline_asm {{.*}}wgmma.mma_async
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-32: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// dK and dV added once a tile, atomically (a block owns their rows).
// CHECK-COUNT-128: memref.atomic_rmw addf
// CHECK-NOT: memref.atomic_rmw
// The last reduction has read its stage before the block exits.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// It spills (docs/Design.md says where from); the summary names it.
// SUMMARY: bwd_main_bf16_d128: registers=248 spill_stores={{[0-9]+}}
