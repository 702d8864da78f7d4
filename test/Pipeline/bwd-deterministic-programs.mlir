// REQUIRES: ptxas
// RUN: tiledattn-opt %schedules/backward/dq_bf16_d128.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dq.mlir
// RUN: FileCheck %s --check-prefix=DQ --input-file %t.dq.mlir
// RUN: tiledattn-opt %schedules/backward/dkdv_bf16_d128.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dkdv.mlir
// RUN: FileCheck %s --check-prefix=DKDV --input-file %t.dkdv.mlir
// RUN: rm -rf %t.b1 %t.b2 && tiledattn-compile %schedules/backward/dq_bf16_d128.mlir -o %t.b1 | FileCheck %s --check-prefix=SUMMARY-DQ
// RUN: tiledattn-compile %schedules/backward/dkdv_bf16_d128.mlir -o %t.b2 2>&1 | FileCheck %s --check-prefix=SUMMARY-DKDV
// RUN: tiledattn-opt %schedules/backward/dq_bf16_d64.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dq64.mlir
// RUN: FileCheck %s --check-prefix=DQ64 --input-file %t.dq64.mlir
// RUN: tiledattn-opt %schedules/backward/dkdv_bf16_d64.mlir --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dkdv64.mlir
// RUN: FileCheck %s --check-prefix=DKDV64 --input-file %t.dkdv64.mlir
// RUN: rm -rf %t.b3 %t.b4 && tiledattn-compile %schedules/backward/dq_bf16_d64.mlir -o %t.b3 | FileCheck %s --check-prefix=SUMMARY-DQ64
// RUN: tiledattn-compile %schedules/backward/dkdv_bf16_d64.mlir -o %t.b4 | FileCheck %s --check-prefix=SUMMARY-DKDV64
// RUN: tiledattn-opt %schedules/backward/dq_bf16_d128.mlir --tiledattn-derive-program=mask=causal --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dqc.mlir
// RUN: FileCheck %s --check-prefix=DQ-CAUSAL --input-file %t.dqc.mlir
// RUN: tiledattn-opt %schedules/backward/dkdv_bf16_d128.mlir --tiledattn-derive-program=mask=causal --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.dkdvc.mlir
// RUN: FileCheck %s --check-prefix=DKDV-CAUSAL --input-file %t.dkdvc.mlir
// RUN: rm -rf %t.b5 %t.b6 && tiledattn-compile --derive=tiledattn-derive-program{mask=causal} %schedules/backward/dq_bf16_d128.mlir -o %t.b5 | FileCheck %s --check-prefix=SUMMARY-DQ-CAUSAL
// RUN: tiledattn-compile --derive=tiledattn-derive-program{mask=causal} %schedules/backward/dkdv_bf16_d128.mlir -o %t.b6 2>&1 | FileCheck %s --check-prefix=SUMMARY-DKDV-CAUSAL
// RUN: FileCheck %s --check-prefix=MASK --input-file %t.b5/manifest.json
// RUN: FileCheck %s --check-prefix=MASK --input-file %t.b6/manifest.json

// The deterministic mode's two programs (python/tiledattn/schedules/
// backward/dq_bf16_d128.mlir and dkdv_bf16_d128.mlir, which say what they
// compute): nothing is added into global memory, in any order.

// dQ: per key block S and dP (K-major B, 8 k-steps of n = 64 each), then
// dS packed as a register A and dQ += dS K (inline PTX, 4 k-steps of
// n = 128); dQ written once at the tile's end.
// DQ-LABEL: gpu.func @bwd_dq_bf16_d128
// DQ: scf.for
// DQ-COUNT-16: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// DQ-COUNT-32: arith.truncf {{.*}} : f32 to bf16
// DQ-COUNT-4: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// DQ-NOT: cp.reduce.async.bulk
// DQ-NOT: atomic
// dQ_c (64 x 128) as 32 bf16 pairs a thread.
// DQ-COUNT-32: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>

// dK and dV: the row form's loop without dQ: no bulk reduction, no
// consumers' barrier, dK and dV written once.
// DKDV-LABEL: gpu.func @bwd_dkdv_bf16_d128
// DKDV-NOT: cp.reduce.async.bulk
// DKDV-NOT: atomic
// DKDV-COUNT-64: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// SUMMARY-DQ: bwd_dq_bf16_d128: registers=168 spill_stores=0 spill_loads=0
// SUMMARY-DKDV: bwd_dkdv_bf16_d128: registers=168 {{.*}} threads=384

// Head dim 64 (dq_bf16_d64.mlir, dkdv_bf16_d64.mlir: the D = 128 pair's
// edits, compiled, not yet GPU-run). dQ: S and dP in 4 k-steps each, dQ +=
// dS K in 4 k-steps of n = 64, dQ_c (64 x 64) as 16 bf16 pairs a thread;
// dK and dV (64 x 64 each) as 32 pairs; nothing added into global memory.
// DQ64-LABEL: gpu.func @bwd_dq_bf16_d64
// DQ64: scf.for
// DQ64-COUNT-8: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// DQ64-COUNT-4: llvm.inline_asm {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// DQ64-NOT: cp.reduce.async.bulk
// DQ64-NOT: atomic
// DQ64-COUNT-16: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// DQ64-NOT: vector.store
// DKDV64-LABEL: gpu.func @bwd_dkdv_bf16_d64
// DKDV64-NOT: cp.reduce.async.bulk
// DKDV64-NOT: atomic
// DKDV64-COUNT-32: vector.store {{.*}} : memref<?x?x?x?xbf16>, vector<2xbf16>
// DKDV64-NOT: vector.store
// SUMMARY-DQ64: bwd_dq_bf16_d64: registers=168 spill_stores=0 spill_loads=0
// SUMMARY-DKDV64: bwd_dkdv_bf16_d64: registers=168 spill_stores=0 spill_loads=0

// The causal pair, derived (tiledattn-derive-program{mask=causal}). dQ: each
// 128-query tile's walk ends one past the key block of its last query,
// min(ceil(128 (tile + 1) / 64), key blocks) (tiledattn.key_block_end
// causal), in both roles, and S is masked before its 2^x.
// DQ-CAUSAL-LABEL: gpu.func @bwd_dq_bf16_d128_causal
// DQ-CAUSAL: %[[PNEXT:.*]] = arith.addi %block_id_x, %c1{{.*}} : index
// DQ-CAUSAL: %[[PQ:.*]] = arith.muli %[[PNEXT]], %c128{{.*}} : index
// DQ-CAUSAL: %[[PEND:.*]] = arith.ceildivui %[[PQ]], %c64{{.*}} : index
// DQ-CAUSAL: %[[PENDMIN:.*]] = arith.minui %[[PEND]], %{{.*}} : index
// DQ-CAUSAL: scf.for %{{.*}} = %c0 to %[[PENDMIN]] step
// DQ-CAUSAL: %[[CNEXT:.*]] = arith.addi %block_id_x, %c1{{.*}} : index
// DQ-CAUSAL: %[[CQ:.*]] = arith.muli %[[CNEXT]], %c128{{.*}} : index
// DQ-CAUSAL: %[[CEND:.*]] = arith.ceildivui %[[CQ]], %c64{{.*}} : index
// DQ-CAUSAL: %[[CENDMIN:.*]] = arith.minui %[[CEND]], %{{.*}} : index
// DQ-CAUSAL: scf.for %{{.*}} = %c0 to %[[CENDMIN]] step
// DQ-CAUSAL: 0xFF800000
// DQ-CAUSAL-COUNT-32: ex2.approx
// dK and dV: each 128-key tile's walk starts at its diagonal's query block,
// min(128 j / 64, query blocks) (tiledattn.first_query_block causal), the
// block carried from there, as in the causal row form.
// DKDV-CAUSAL-LABEL: gpu.func @bwd_dkdv_bf16_d128_causal
// DKDV-CAUSAL: %[[DIAG2:.*]] = arith.divui %{{.*}}, %c64{{.*}} : index
// DKDV-CAUSAL: %[[DIAG:.*]] = arith.minui %[[DIAG2]], %{{.*}} : index
// DKDV-CAUSAL: scf.for %{{.*}} = %c0 to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[DIAG]],
// DKDV-CAUSAL: 0xFF800000
// DKDV-CAUSAL-NOT: cp.reduce.async.bulk
// SUMMARY-DQ-CAUSAL: bwd_dq_bf16_d128_causal: registers=168 spill_stores=0 spill_loads=0
// SUMMARY-DKDV-CAUSAL: bwd_dkdv_bf16_d128_causal: registers=168 {{.*}} threads=384
// MASK: "causal": true,
// MASK: "mask": "causal_top_left",
