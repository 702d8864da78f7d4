// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d64_rows.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/main_bf16_d64_rows.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: rm -rf %t.pre && tiledattn-compile %schedules/backward/preprocess_bf16_d64.mlir -o %t.pre | FileCheck %s --check-prefix=PRE

// The row form for head dim 64 (python/tiledattn/schedules/backward/
// main_bf16_d64_rows.mlir, which says what it changes) through the shared
// tile passes: per query block a consumer issues S, dP, dV, dK and its own
// part of dQ, each four k-steps of n = 64 (K = 64 of the head dim, the
// queries or the keys), and adds dQ by one bulk reduction without meeting
// the other consumer (only warpgroup barriers, 128 threads).
// CHECK-LABEL: gpu.func @bwd_main_bf16_d64_rows
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-NOT: number_of_threads = %c256
// dK_c and dV_c (64 x 64 each) written once as bf16 pairs.
// CHECK-COUNT-32: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// CHECK-NOT: vector.store
// With .maxnreg 168, ptxas gives the consumers their setmaxnreg budget of
// 240 (without it, C7508: 104 bytes spilled at 168), and the preprocess,
// which needs 46, starts with the 168 its budgets share.
// SUMMARY: bwd_main_bf16_d64_rows: registers=168 spill_stores=0 spill_loads=0 stack=0 {{.*}} threads=384
// PRE: bwd_preprocess_bf16_d64: registers=168 spill_stores=0 spill_loads=0 stack=0
// The launch: a block per 128-key tile of each K/V head.
// RUN: FileCheck %s --check-prefix=GRID --input-file %t.bundle/manifest.json
// GRID: "x": "ceil_div(seqlen_k, block_m)",
// GRID-NEXT: "y": "heads_kv",
