// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// row_sum_mma through the whole pipeline: the ones (bf16 1.0 twice per
// word) stored to shared memory and fenced for the async proxy before the
// block's barrier; every P.V k-step's m64n128k16 followed by an m64n8k16
// reading the same four P registers; ptxas takes the inline PTX (operand
// order: 4 sums, 4 P words, the descriptor of the ones) without spills or
// serializing the wgmmas.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @row_sum_mma(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   row_sum_mma = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK: st.shared.b32 {{\[}}%rd{{[0-9]+}}], 1065369472;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK: bar.sync 0;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CHECK: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {[[A]], [[B]], [[C]], [[D]]}, %rd{{[0-9]+}}, p, 1, 1, 0;
// PTXAS-NOT: wgmma.mma_async instructions are serialized
// PTXAS-NOT: C7513
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
