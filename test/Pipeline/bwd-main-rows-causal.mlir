// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/main_bf16_d128_rows.mlir --tiledattn-derive-program=mask=causal --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile --derive=tiledattn-derive-program{mask=causal} %schedules/backward/main_bf16_d128_rows.mlir -o %t.bundle 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=GRID --input-file %t.bundle/manifest.json
// RUN: FileCheck %s --check-prefix=MASK --input-file %t.bundle/manifest.json

// The causal row form, derived from schedules/backward/main_bf16_d128_rows.mlir
// (tiledattn-derive-program{mask=causal}): both roles start at the key
// tile's diagonal (tiledattn.first_query_block causal), query block
// min(128 j / 64, query blocks), and walk (query blocks - that) blocks of
// each query head of the group, the block carried from the diagonal on;
// S is masked (tiledattn.mask causal) before its 2^x.
// CHECK-LABEL: gpu.func @bwd_main_bf16_d128_rows_causal
// CHECK: %[[DIAG2:.*]] = arith.divui %{{.*}}, %c64{{.*}} : index
// CHECK: %[[DIAG:.*]] = arith.minui %[[DIAG2]], %{{.*}} : index
// CHECK: %[[BLOCKS:.*]] = arith.subi %{{.*}}, %[[DIAG]] : index
// CHECK: %[[STEPS:.*]] = arith.muli %{{.*}}, %[[BLOCKS]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[STEPS]] step %{{.*}} iter_args(%{{.*}} = %[[DIAG]],
// CHECK: nvgpu.tma.async.load
// CHECK: %[[CDIAG2:.*]] = arith.divui %{{.*}}, %c64{{.*}} : index
// CHECK: %[[CDIAG:.*]] = arith.minui %[[CDIAG2]], %{{.*}} : index
// CHECK: scf.for
// CHECK: arith.cmpi
// CHECK: 0xFF800000
// CHECK-COUNT-32: ex2.approx
// SUMMARY: bwd_main_bf16_d128_rows_causal: registers=168 {{.*}} threads=384
// A block per 128-key tile of each K/V head.
// GRID: "x": "ceil_div(seqlen_k, block_m)",
// GRID-NEXT: "y": "heads_kv",
// The manifest says what the kernel computes.
// MASK: "causal": true,
// MASK: "mask": "causal_top_left",
