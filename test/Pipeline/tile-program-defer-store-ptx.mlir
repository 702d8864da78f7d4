// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: grep -c "stmatrix.sync.aligned.m8n8.x4.shared.b16" %t.ptx | FileCheck %s --check-prefix=STMATRIX
// RUN: grep -c "cp.async.bulk.tensor.4d.global.shared::cta" %t.ptx | FileCheck %s --check-prefix=STORES
// RUN: grep -c "cp.async.bulk.wait_group.read.*0;" %t.ptx | FileCheck %s --check-prefix=WAITS
// RUN: grep -c "bar.sync.*128;" %t.ptx | FileCheck %s --check-prefix=SYNCS
// RUN: grep -c "fence.proxy.async.shared::cta" %t.ptx | FileCheck %s --check-prefix=FENCES
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// defer_store on top of the persistent tma_store program: a tile's O is
// stored under the next tile's first S, and the last tile's after the
// loop, so the epilogue appears twice (LLVM lays the blocks out of program
// order, so the instructions are counted). Holding O (64 f32 a thread) across
// the next tile's first S spills nothing.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @defer_store(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2, defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK: .entry defer_store(
// CHECK-COUNT-4: .param .align 64 .b8 defer_store_param_{{[0-9]+}}[128]
// CHECK-NEXT: {{^}})
// CHECK-NOT: st.global.b16
// CHECK-NOT: st.global.v2.b16
// Two epilogues of eight stmatrix.x4 and two boxes each.
// STMATRIX: 16
// STORES: 4
// Each epilogue's wait for the copy before, and the kernel's last.
// WAITS: 3
// After each wait, and before each epilogue's copies.
// SYNCS: 5
// The barrier setup's and the epilogues'.
// FENCES: 3
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
