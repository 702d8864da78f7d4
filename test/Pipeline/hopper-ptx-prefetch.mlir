// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// prefetch_next_q through the whole pipeline: the L2 prefetch of the next
// block's Q is one cp.async.bulk.prefetch.tensor per 64-column atom on Q's
// grid-constant tensor map, guarded by the block-index test, and ptxas
// assembles it without spills.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @prefetch_next_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   prefetch_next_q = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK: mov.u32 {{.*}}, %nsmid;
// CHECK: cp.async.bulk.prefetch.tensor.4d.L2.global.tile {{\[}}[[MAP:%rd[0-9]+]], {{{%r[0-9]+}}, [[ROW:%r[0-9]+]], [[HEAD:%r[0-9]+]], [[BATCH:%r[0-9]+]]}];
// CHECK-NEXT: mov.b32 {{%r[0-9]+}}, 64;
// CHECK-NEXT: cp.async.bulk.prefetch.tensor.4d.L2.global.tile {{\[}}[[MAP]], {{{%r[0-9]+}}, [[ROW]], [[HEAD]], [[BATCH]]}];
// CHECK-NOT: cp.async.bulk.prefetch.tensor
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
