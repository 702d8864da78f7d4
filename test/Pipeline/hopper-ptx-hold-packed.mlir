// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// hold_packed through the whole pipeline: the tile's O is scaled by 1 / sum
// and packed (cvt.rn.bf16x2.f32) before the tile loop's back edge, and the
// next tile's deferred store hands those words to stmatrix as they are.
// Without it ptxas injects a wgmma wait at the deferred store (C7517: the
// held registers were the last P.V's), which is what this checks is gone.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @hold_packed(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   hold_packed = true>)
      : !head, !head, !head, !head, !lse
  return
}
// The deferred store of the tile before: once the consumers' turn comes
// (bar.sync), the held words go to stmatrix as they are, with no scaling
// (mul) or packing (cvt) in between; the eight stmatrix of 64 rows x 64
// columns hand O's 32 words to shared memory.
// CHECK: bar.sync {{.*}}, 128;
// CHECK-NEXT: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-COUNT-7: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NEXT: fence.proxy.async.shared::cta;
// The packing happens in the tile before, ahead of the loop's back edge.
// CHECK: cvt.rn.bf16x2.f32
// CHECK: bra {{.*}}$L__BB
// PTXAS-NOT: C7517
// PTXAS-NOT: C7513
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
