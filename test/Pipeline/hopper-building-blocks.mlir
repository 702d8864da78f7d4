// REQUIRES: ptxas
// RUN: tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// The Hopper building blocks the wgmma/TMA lowering will emit, written by
// hand: a TMA load of two 64x64 f16 tiles (128-byte swizzle) completing on
// an mbarrier, and one 64x64x64 warpgroup mma from shared-memory
// descriptors. It pins down that tiledattn-to-ptx-pipeline (our dialect
// registrations plus upstream's NVVM lowering) turns nvgpu's TMA, mbarrier
// and warpgroup ops into PTX that ptxas 13 assembles for sm_90a. The tensor
// maps travel as pointers cast to the descriptor type inside the kernel: a
// gpu.func argument of descriptor type does not legalize in LLVM 22.

// CHECK: .target sm_90a
// CHECK: mbarrier.init.shared.b64
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.fence.sync.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned
// CHECK: wgmma.wait_group.sync.aligned 0

!barrier = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!kMap = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>

module attributes {gpu.container_module} {
  gpu.module @hopper_blocks {
    gpu.func @qk_tile(%qMapPtr: !llvm.ptr, %kMapPtr: !llvm.ptr, %out: memref<64x64xf32>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %bytes = arith.constant 16384 : index
      %false = arith.constant false
      %ticks = arith.constant 10000000 : index
      %qMap = builtin.unrealized_conversion_cast %qMapPtr : !llvm.ptr to !kMap
      %kMap = builtin.unrealized_conversion_cast %kMapPtr : !llvm.ptr to !kMap
      %tid = gpu.thread_id x
      %leader = arith.cmpi eq, %tid, %c0 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %q = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      %k = memref.view %smem[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      %bar = nvgpu.mbarrier.create -> !barrier
      nvgpu.mbarrier.init %bar[%c0], %c1 : !barrier
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !barrier
        nvgpu.tma.async.load %qMap[%c0, %c0], %bar[%c0] to %q : !kMap, !barrier -> memref<64x64xf16, #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %kMap[%c0, %c0], %bar[%c0] to %k : !kMap, !barrier -> memref<64x64xf16, #gpu.address_space<workgroup>>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %false, %ticks : !barrier
      %dq = nvgpu.warpgroup.generate.descriptor %q, %qMap : memref<64x64xf16, #gpu.address_space<workgroup>>, !kMap -> !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>
      %dk = nvgpu.warpgroup.generate.descriptor %k, %kMap : memref<64x64xf16, #gpu.address_space<workgroup>>, !kMap -> !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>
      %zero = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %s = nvgpu.warpgroup.mma %dq, %dk, %zero : <tensor = memref<64x64xf16, 3>>, <tensor = memref<64x64xf16, 3>>, !acc -> !acc
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %s, %out : !acc to memref<64x64xf32>
      gpu.return
    }
  }
}
