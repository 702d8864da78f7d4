// RUN: tiledattn-opt %s -split-input-file --tiledattn-to-ptx-pipeline | FileCheck %s
// RUN: tiledattn-opt %s -split-input-file '--tiledattn-to-ptx-pipeline=chip=sm_90a opt-level=2' | FileCheck %s
// RUN: tiledattn-opt %s -split-input-file '--tiledattn-to-ptx-pipeline=chip=sm_90' | FileCheck %s --check-prefix=SM90

// tiledattn.sdpa down to a gpu.binary holding PTX text (one line, escaped).

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: gpu.binary @causal_f16
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .entry causal_f16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-DAG: shfl.sync.bfly
// CHECK-DAG: ex2.approx
// CHECK-NOT: tiledattn.
// SM90-LABEL: gpu.binary @causal_f16
// SM90-SAME: .target sm_90{{\\0A}}
// SM90-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @causal_f16(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: gpu.binary @noncausal_bf16
// CHECK-SAME: .target sm_90a
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-DAG: shfl.sync.bfly
// CHECK-DAG: ex2.approx
// CHECK-NOT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM90-LABEL: gpu.binary @noncausal_bf16
// SM90-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @noncausal_bf16(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}
