// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d128_rows.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/main_bf16_d128_rows.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The backward's main loop (python/tiledattn/schedules/backward/
// main_bf16_d128_rows.mlir, which says what it computes) through the shared tile
// passes and into a bundle.

// The producer: K and V once a tile, Q_i and dO_i a query block (two
// 64-column boxes each).
// CHECK-LABEL: gpu.func @bwd_main_bf16_d128_rows
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK-COUNT-4: nvgpu.tma.async.load
// The consumers' index through a warp reduction (uniform_index), before
// their query-block loop: ptxas keeps the descriptors and barrier addresses
// that follow from it on the uniform datapath.
// CHECK: nvvm.redux.sync umin
// A consumer, per query block: S and dP over its 64 keys (8 k-steps of
// n = 64 each, both operands K-major in shared memory), P from the lse read
// per row (two loads, a 2^x per register), P staged (stmatrix, fence, the
// warpgroup's barrier) and dV += P^T dO (A transposed, 4 k-steps of
// n = 128); dS from D read per row and scaled, staged, dK += dS^T Q.
// CHECK: scf.for
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-2: memref.load
// CHECK-NOT: memref.load
// CHECK-COUNT-32: ex2.approx
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.barrier id
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-2: memref.load
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.barrier id
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// Both consumers' dS staged (the consumers' named barrier, 256 threads),
// then dQ's column half: two mmas of 4 k-steps over the two consumers'
// keys (B MN-major), one chain with no wait between (acc_in_flight), its
// 32 pairs written to the stage and one bulk reduction.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: scf.if
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-16: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// dK_c and dV_c written once a tile as bf16 pairs (a block owns their
// rows), each row half under its own bounds check.
// CHECK-COUNT-64: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// CHECK-NOT: memref.atomic_rmw
// CHECK-NOT: vector.store
// The last reduction has read its stage before the block exits.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// Two consumer warpgroups (384 threads); ptxas spills a few loop-invariant
// addresses at 240 registers (the program says why this form).
// SUMMARY: bwd_main_bf16_d128_rows: registers=168 spill_stores={{[0-9]+}} {{.*}} threads=384

// The launch's grid is the tile loops' bounds: a block per 128-key tile of
// each K/V head (GQA: it walks its group's query heads).
// RUN: FileCheck %s --check-prefix=GRID --input-file %t.bundle/manifest.json
// GRID: "grid": {
// GRID-NEXT: "x": "ceil_div(seqlen_k, block_m)",
// GRID-NEXT: "y": "heads_kv",
// GRID-NEXT: "z": "batch"
