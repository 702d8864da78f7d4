// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The overlapped program (overlap_softmax) through the tile passes: in the
// loop, one turn issues the Q.K^T group and then the P.V group, and the
// consumer waits with wgmma.wait_group 1 for the first while the second
// runs the softmax, then wait_group 0 for the P.V. ptxas keeps the wgmmas
// pipelined (no C7513 "serialized") and spills nothing.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @overlapped(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}

// Block 0: Q.K^T alone.
// CHECK: .entry overlapped(
// CHECK: bar.sync {{.*}}, 256;
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: bar.arrive
// CHECK: wgmma.wait_group.sync.aligned 0;
// A loop block: the turn issues Q K_j^T, then P_{j-1} V_{j-1} from registers.
// CHECK: bar.sync {{.*}}, 256;
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: bar.arrive
// CHECK: wgmma.wait_group.sync.aligned 1;
// CHECK: ex2.approx.ftz.f32
// CHECK: wgmma.wait_group.sync.aligned 0;
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized
