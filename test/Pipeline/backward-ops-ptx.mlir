// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s -allow-unregistered-dialect --tiledattn-lower-rings --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The backward main loop's new ops in one consumer warpgroup, down to PTX
// that ptxas takes: S^T = K Q^T and dP^T = V dO^T from slots, P^T from the
// saved lse (exp_from_lse), dS^T = P^T (dP^T - D) (softmax_grad), dS^T
// staged into shared memory (stage), dQ = dS K with A read transposed
// (mma_async transpose_a), and dQ added into its f32 accumulator
// (reduce_add).

// CHECK: .entry backward_step
// The lse and D of the thread's columns, then 2^x.
// CHECK: ld.global.b32
// CHECK: ex2.approx.ftz.f32
// dS^T into shared memory, fenced for the tensor cores, the warpgroup
// synced on its named barrier.
// CHECK: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: fence.proxy.async.shared::cta
// CHECK: bar.sync 4, 128;
// dQ's wgmma: A transposed (imm-trans-a 1), B MN-major (imm-trans-b 1).
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// dQ added atomically.
// CHECK: atom.global.add.f32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!accum = memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
!kv = !tiledattn.ring<1, 128x128xbf16>
!qd = !tiledattn.ring<1, 64x128xbf16>
module attributes {gpu.container_module} {
  gpu.module @backward_step {
    gpu.func @backward_step(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !rows,
                            %delta: !rows, %dq: !accum, %b: index, %h: index,
                            %col: index, %scale: f32) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %kr = tiledattn.ring releases(4) : !kv
      %vr = tiledattn.ring releases(4) : !kv
      %qr = tiledattn.ring releases(4) : !qd
      %dor = tiledattn.ring releases(4) : !qd
      %dst = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
      %ks, %kt = tiledattn.ring.get %kr[%c0] : !kv
      %vs, %vt = tiledattn.ring.get %vr[%c0] : !kv
      %qs, %qt = tiledattn.ring.get %qr[%c0] : !qd
      %ds, %dt = tiledattn.ring.get %dor[%c0] : !qd
      %sf = tiledattn.mma_async %ks[%c0], %qs transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
      %dpf = tiledattn.mma_async %vs[%c0], %ds transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
      %st = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
      %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
      %p = tiledattn.exp_from_lse %st, %lse[%b, %h, %col], %scale : !tiledattn.tile<64x64xf32>, !rows
      %dst_regs = tiledattn.softmax_grad %p, %dpt, %delta[%b, %h, %col] : !tiledattn.tile<64x64xf32>, !rows
      tiledattn.stage %dst_regs into %dst[%c0] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<64x64xbf16>
      %dqf = tiledattn.mma_async %dst[%c0] transpose_a, %ks b_rows(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
      %dqt = tiledattn.wait %dqf : !tiledattn.future<64x128xf32>
      tiledattn.reduce_add %dqt into %dq[%b, %h, %col] : !tiledattn.tile<64x128xf32>, !accum
      tiledattn.ring.release %dor, %dt : !qd
      tiledattn.ring.release %qr, %qt : !qd
      tiledattn.ring.release %vr, %vt : !kv
      tiledattn.ring.release %kr, %kt : !kv
      gpu.return
    }
  }
}
