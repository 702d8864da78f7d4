// REQUIRES: ptxas
// RUN: tiledattn-opt %s --tiledattn-tile-sdpa --convert-tiledattn-to-nvgpu="experimental-wgmma=true" | FileCheck %s
// RUN: tiledattn-opt %s --tiledattn-to-ptx-pipeline="experimental-wgmma=true" | %PYTHON %S/../../Pipeline/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: not tiledattn-opt %s --tiledattn-tile-sdpa --convert-tiledattn-to-nvgpu 2>&1 | FileCheck %s --check-prefix=OFF

// mma = wgmma (experimental: lowers and assembles, not yet run on a GPU).
// One warpgroup owns the 64 x 64 block; Q is staged once and P written every
// iteration into 1024-byte-aligned, 128-byte-swizzled shared-memory tiles;
// K and V come from the cp.async ring. S = Q.K^T reads K as a K-major B
// operand (PTX trans-b 0), O += P.V reads V as MN-major (trans-b 1).

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @wgmma_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                         %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2,
                                   warps = 4, mma = wgmma, producer = cp_async,
                                   swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}

// Pad to 1024 bytes, then Q and P (8 KiB each), then two stages of K and V.
// CHECK-LABEL: gpu.func @wgmma_f16_d64
// CHECK-SAME:    tiledattn.dynamic_smem_bytes = 50176 : i64
// CHECK:         %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK:         arith.remui %[[BASE]], %c1024
// Q is copied once, before the loop.
// CHECK:         nvgpu.device_async_copy %arg0
// CHECK:         scf.for
// The ring's copies must be visible to the async proxy before wgmma reads.
// CHECK:           nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-4:   nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// P goes to shared memory, fenced, then O += P.V with V transposed.
// CHECK:           vector.store
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      gpu.barrier
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-4:   nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-NOT:     nvvm.mma.sync

// PTX: .target sm_90a
// PTX: fence.proxy.async.shared::cta
// PTX: wgmma.fence.sync.aligned
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PTX: wgmma.commit_group.sync.aligned
// PTX: wgmma.wait_group.sync.aligned 0

// OFF: error: 'func.func' op mma = wgmma with producer = cp_async is lowered only with the experimental-wgmma option: it compiles and assembles but has not yet been checked on a GPU
