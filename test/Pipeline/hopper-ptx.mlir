// REQUIRES: ptxas
// The softmax's math.fma becomes a libdevice call (__nv_fmaf) that only
// links when CUDA_HOME names the toolkit (hopper-ptx-libdevice.mlir).
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// A producer = tma schedule (D = 128, bf16, two consumers, block_n 128,
// two stages) through the whole pipeline: the PTX has the tensor maps as
// 64-byte-aligned 128-byte grid-constant parameters used through their
// generic address, both register budgets, the mbarrier ring, 4-D TMA loads
// and the wgmmas; ptxas assembles it without spills and without
// serializing the wgmmas.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @hopper_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK: .target sm_90a
// CHECK-NOT: .extern .func
// CHECK: .entry hopper_bf16_d128(
// CHECK-COUNT-3: .param .align 64 .b8 {{.*}}[128]
// CHECK-NOT: .param
// CHECK: .maxntid 384, 1, 1
// CHECK-COUNT-3: cvta.param.u64
// A full and an empty barrier per slot: Q's one, K's and V's two each.
// CHECK-COUNT-10: mbarrier.init.shared.b64
// CHECK-NOT: mbarrier.init
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-DAG: mbarrier.try_wait.parity
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-DAG: wgmma.commit_group.sync.aligned
// CHECK-DAG: wgmma.wait_group.sync.aligned 0
// CHECK-NOT: wgmma.wait_group.sync.aligned 1

// PTXAS-NOT: wgmma.mma_async instructions are serialized
// PTXAS-NOT: C7513
// PTXAS: Compiling entry function 'hopper_bf16_d128' for 'sm_90a'
// PTXAS-NOT: C7513
// PTXAS-NOT: wgmma.mma_async instructions are serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: C7513
// PTXAS-NOT: wgmma.mma_async instructions are serialized
