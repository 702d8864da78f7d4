// RUN: tiledattn-opt %s --tiledattn-tile-sdpa --convert-tiledattn-to-nvgpu | FileCheck %s
// RUN: tiledattn-opt %s --tiledattn-to-ptx-pipeline | FileCheck %s --check-prefix=PTX

// producer = cp_async: K and V stream through a two-stage shared-memory ring
// (cp.async, 16-byte chunks, XOR-swizzled), fragments come from ldmatrix.

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @cp_async_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2,
                                   warps = 4, mma = mma_sync, producer = cp_async,
                                   swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: gpu.func @cp_async_f16_d64
// CHECK-SAME:    tiledattn.dynamic_smem_bytes = 32768 : i64
// CHECK:         %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:         %[[KRING:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK:         %[[VRING:.*]] = memref.view %[[SMEM]][%c16384][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// Prologue: block 0 into stage 0, swizzled, rows past the end zero-filled.
// CHECK:         arith.xori
// CHECK:         nvgpu.device_async_copy %arg1[{{.*}}], %[[KRING]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK:         nvgpu.device_async_copy %arg2[{{.*}}], %[[VRING]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK:         %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK:         scf.for
// Each iteration issues the next block, waits for this one, then reads it.
// CHECK:           nvgpu.device_async_copy %arg1
// CHECK:           %[[NEXT:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT:      nvgpu.device_async_wait %[[NEXT]] {numGroups = 1 : i32}
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvgpu.ldmatrix %[[KRING]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<2x64x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK:           nvvm.mma.sync
// CHECK:           nvgpu.ldmatrix %[[VRING]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.yield
// CHECK:         nvgpu.device_async_wait %[[FIRST]] {numGroups = 0 : i32}

// PTX: .target sm_90a
// PTX: cp.async.cg.shared.global
// PTX: cp.async.commit_group
// PTX: cp.async.wait_group \091
// PTX: bar.sync \090
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: cp.async.wait_group \090
// The PTX is escaped inside the gpu.binary attribute: \09 is a tab.
