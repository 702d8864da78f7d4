// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: grep -c "stmatrix.sync.aligned.m8n8.x4.shared.b16" %t.ptx | FileCheck %s --check-prefix=STMATRIX
// RUN: grep -c "cp.async.bulk.tensor.4d.global.shared::cta" %t.ptx | FileCheck %s --check-prefix=STORES
// RUN: grep -c "cp.async.bulk.wait_group.read.*0;" %t.ptx | FileCheck %s --check-prefix=WAITS
// RUN: grep -c "bar.sync.*128;" %t.ptx | FileCheck %s --check-prefix=SYNCS
// RUN: grep -c "fence.proxy.async.shared::cta" %t.ptx | FileCheck %s --check-prefix=FENCES
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The tma_store epilogue of a persistent program with two Q buffers,
// through the tile passes. Per tile, the consumer waits until the tile
// before's copy has read its O tile (cp.async.bulk.wait_group.read, then
// its warpgroup's 128-thread barrier), writes O with eight stmatrix.x4 (64
// rows x 128 columns), fences for the async proxy, syncs, and its first
// thread stores the two 64 x 64 boxes by TMA and commits them; after the
// last tile it waits once more. (LLVM lays these blocks out of program
// order, so the instructions are counted.) No per-thread global stores of O
// remain, only the lse's st.global.b32; ptxas spills nothing.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @tma_store(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// Four tensor maps (Q, K, V, and O's after the loads').
// CHECK: .entry tma_store(
// CHECK-COUNT-4: .param .align 64 .b8 tma_store_param_{{[0-9]+}}[128]
// CHECK-NEXT: {{^}})
// CHECK-NOT: st.global.b16
// CHECK-NOT: st.global.v2.b16
// STMATRIX: 8
// STORES: 2
// The wait before a tile's stmatrix and the one after the last tile.
// WAITS: 2
// After each wait and before the copies.
// SYNCS: 3
// The barrier setup's and the epilogue's.
// FENCES: 2
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
