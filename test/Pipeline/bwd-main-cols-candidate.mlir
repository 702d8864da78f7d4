// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/experimental/main_bf16_d128_cols.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/experimental/main_bf16_d128_cols.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The transposed candidate of the D = 128 main loop (python/tiledattn/
// schedules/backward/experimental/main_bf16_d128_cols.mlir), a query
// block of one consumer: S^T = K_c Q^T and dP^T = V_c dO^T from shared
// memory (8 k-steps each, A = the K or V slot's rows as they are, B = Q or
// dO read transposed), then dV and dK with P^T and dS^T as register As
// (4 k-steps of n = 128 each, inline wgmma), dS^T staged by stmatrix (P is
// not), both consumers synced, dQ's half from dS^T read transposed (8
// k-steps over the tile's 128 keys) and one bulk reduction.
// CHECK-LABEL: gpu.func @bwd_main_bf16_d128_cols
// CHECK: scf.for
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.stmatrix
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.stmatrix
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// Its spills (the lse and D of 16 query columns a thread across the mma
// waits) are the number to beat: docs/perf-notes.md, forty-third session.
// SUMMARY: bwd_main_bf16_d128_cols: registers=168 spill_stores=168 spill_loads=196 stack=168 smem=181344 threads=384
