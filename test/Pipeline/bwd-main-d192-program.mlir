// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d192_rows.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %schedules/backward/main_bf16_d192_rows.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: rm -rf %t.causal && tiledattn-compile --derive='tiledattn-derive-program{mask=causal}' %schedules/backward/main_bf16_d192_rows.mlir -o %t.causal 2>&1 | FileCheck %s --check-prefix=CAUSAL
// RUN: rm -rf %t.pre && tiledattn-compile %schedules/backward/preprocess_bf16_d192.mlir -o %t.pre | FileCheck %s --check-prefix=PRE

// The row form for head dim 192 (python/tiledattn/schedules/backward/
// main_bf16_d192_rows.mlir): the consumers' unequal, equally costly shares.
// Consumer 0: S and dP over 16 keys (12 k-steps of n = 16 each, K = 192),
// its P and dS staged by one stmatrix.x4 each, then dV and dK for head-dim
// columns 0 .. 127 (4 k-steps of n = 128 each) and dQ's two 64-column
// blocks (4 k-steps of n = 64 and one bulk reduction each).
// CHECK-LABEL: gpu.func @bwd_main_bf16_d192_rows
// CHECK: scf.if
// CHECK: scf.for
// CHECK-COUNT-24: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 16, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-2: nvvm.stmatrix
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// dK_0 and dV_0 (64 x 128 each) as bf16 pairs at columns 0 .. 127.
// CHECK-COUNT-64: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// Consumer 1: 48 keys (12 k-steps of n = 48), three stmatrix.x4 for each of
// P and dS, dV and dK for columns 128 .. 191 (n = 64) and dQ's third block.
// CHECK: } else {
// CHECK: scf.for
// CHECK-COUNT-24: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 48, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-6: nvvm.stmatrix
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c256
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, {{.*}}A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// CHECK-NOT: cp.reduce.async.bulk
// CHECK-COUNT-32: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// CHECK-NOT: vector.store
// SUMMARY: bwd_main_bf16_d192_rows: registers=168 spill_stores=0 spill_loads=0 stack=0 smem=197728 threads=384
// CAUSAL: bwd_main_bf16_d192_rows_causal: registers=168 {{.*}} smem=197728 threads=384
// PRE: bwd_preprocess_bf16_d192: registers=168 spill_stores=0 spill_loads=0 stack=0
// RUN: FileCheck %s --check-prefix=GRID --input-file %t.bundle/manifest.json
// GRID: "x": "ceil_div(seqlen_k, 64)",
// GRID-NEXT: "y": "heads_kv",
