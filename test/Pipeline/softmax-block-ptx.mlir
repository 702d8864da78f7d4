// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// One consumer block of attention in tile IR, every op lowered by the tile
// passes: S = Q K^T, its wait, the causal mask, the online softmax (P packed
// for the next mma), O's rescale and O += P V from registers, through to
// PTX that ptxas assembles. (The row statistics start as constants built
// here; loops over blocks carry tiles once the passes convert scf.for.)

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
!slot = !tiledattn.smem<128x128xbf16>
!f = !tiledattn.future<64x128xf32>
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!rows = !llvm.struct<(f32, f32)>
module attributes {gpu.container_module} {
  gpu.module @block {
    gpu.func @block(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %qr = tiledattn.ring releases(8) : !ring
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %b = gpu.block_id z
      %h = gpu.block_id y
      %sk = memref.dim %k, %c0 : !head
      tiledattn.warp_specialize producer regs(24) {
        %tid = gpu.thread_id x
        %first = arith.cmpi eq, %tid, %c0 : index
        scf.if %first {
          tiledattn.ring.put %qr[%c0] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %q[%b, %h, %c0] into %slot : !head, !slot
          }
          tiledattn.ring.put %kr[%c0] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %k[%b, %h, %c0] into %slot : !head, !slot
          }
          tiledattn.ring.put %vr[%c0] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %v[%b, %h, %c0] into %slot : !head, !slot
          }
        }
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %ninf = arith.constant 0xFF800000 : f32
        %zero = arith.constant 0.0 : f32
        %u = llvm.mlir.undef : !rows
        %m1 = llvm.insertvalue %ninf, %u[0] : !rows
        %m2 = llvm.insertvalue %ninf, %m1[1] : !rows
        %l1 = llvm.insertvalue %zero, %u[0] : !rows
        %l2 = llvm.insertvalue %zero, %l1[1] : !rows
        %m = builtin.unrealized_conversion_cast %m2 : !rows to !tiledattn.tile<64xf32>
        %l = builtin.unrealized_conversion_cast %l2 : !rows to !tiledattn.tile<64xf32>
        %o0s = llvm.mlir.zero : !acc
        %o0 = builtin.unrealized_conversion_cast %o0s : !acc to !tiledattn.tile<64x128xf32>
        %row = arith.muli %c, %c64 : index
        %qs, %qt = tiledattn.ring.get %qr[%c0] : !ring
        %ks, %kt = tiledattn.ring.get %kr[%c0] : !ring
        %sf = tiledattn.mma_async %qs[%row], %ks transpose_b : !slot, !slot -> !f
        %s = tiledattn.wait %sf : !f
        tiledattn.ring.release %kr, %kt : !ring
        %sm = tiledattn.mask %s, %row, %c0, %sk causal : !tiledattn.tile<64x128xf32>
        %p, %m3, %l3, %alpha = tiledattn.online_softmax %sm, %m, %l, %scale
            : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x128xbf16>
        %o1 = tiledattn.rescale %o0, %alpha : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
        %vs, %vt = tiledattn.ring.get %vr[%c0] : !ring
        %of = tiledattn.mma_async %p, %vs acc(%o1) : !tiledattn.tile<64x128xbf16>, !slot -> !f
        %o2 = tiledattn.wait %of : !f
        tiledattn.ring.release %vr, %vt : !ring
        tiledattn.ring.release %qr, %qt : !ring
        // Until the epilogue is an op: one value of O and of l to memory.
        %o2s = builtin.unrealized_conversion_cast %o2 : !tiledattn.tile<64x128xf32> to !acc
        %l3s = builtin.unrealized_conversion_cast %l3 : !tiledattn.tile<64xf32> to !rows
        %x = llvm.extractvalue %o2s[0] : !acc
        %y = llvm.extractvalue %l3s[0] : !rows
        %xy = arith.addf %x, %y : f32
        memref.store %xy, %lse[%b, %h, %row] : !lse
      }
      gpu.return
    }
  }
}

// CHECK: .entry block(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: shfl.sync.bfly.b32
// CHECK: ex2.approx.ftz.f32
// CHECK: cvt.rn.bf16x2.f32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
