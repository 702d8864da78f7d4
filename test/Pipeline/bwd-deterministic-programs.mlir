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
