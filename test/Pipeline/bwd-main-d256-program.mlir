// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d256_rows.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/main_bf16_d256_rows.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: rm -rf %t.causal && tiledattn-compile --derive='tiledattn-derive-program{mask=causal}' %schedules/backward/main_bf16_d256_rows.mlir -o %t.causal 2>&1 | FileCheck %s --check-prefix=CAUSAL
// RUN: rm -rf %t.pre && tiledattn-compile %schedules/backward/preprocess_bf16_d256.mlir -o %t.pre | FileCheck %s --check-prefix=PRE

// The row form for head dim 256 (python/tiledattn/schedules/backward/
// main_bf16_d256_rows.mlir, which says how it splits the work) through the
// shared tile passes. Per query block a consumer issues S and dP over its
// 32 keys (16 k-steps of n = 32 each: K = 256, B K-major from row 32c of
// the K and V slots), stages P and dS at its columns (two stmatrix.x4
// each), meets the other consumer, then dV and dK for all 64 keys and its
// head-dim half (4 k-steps of n = 128 each, A read transposed, B the
// slots' tiledattn.columns) and dQ's half in two 64-column blocks (4
// k-steps of n = 64 each, one bulk reduction each).
// CHECK-LABEL: gpu.func @bwd_main_bf16_d256_rows
// CHECK: scf.for
// CHECK-COUNT-32: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 32, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-2: nvvm.stmatrix
// CHECK-COUNT-2: nvvm.stmatrix
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// dK_c and dV_c (64 x 128 each) written once as bf16 pairs, at the
// consumer's columns.
// CHECK-COUNT-64: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// CHECK-NOT: vector.store
// SUMMARY: bwd_main_bf16_d256_rows: registers=168 spill_stores=4 spill_loads=8 stack=8 smem=214096 threads=384
// CAUSAL: bwd_main_bf16_d256_rows_causal: registers=168 {{.*}} smem=214096 threads=384
// PRE: bwd_preprocess_bf16_d256: registers=168 spill_stores=0 spill_loads=0 stack=0
// The launch: a block per 64-key tile of each K/V head.
// RUN: FileCheck %s --check-prefix=GRID --input-file %t.bundle/manifest.json
// GRID: "x": "ceil_div(seqlen_k, 64)",
// GRID-NEXT: "y": "heads_kv",
