// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The consumers' loop of a warp-specialized attention kernel in tile IR:
// O, the row maxima and the row sums start as constants and ride the
// scf.for over K/V blocks as tiles; each block is S = Q K^T (the consumers
// taking turns to issue), its wait, the causal mask, the online softmax,
// O's rescale and O += P V, the two mmas issued in turns; then O / l and
// the lse stored from registers. Every op is lowered by the tile passes; the loop carries the tiles' registers
// (upstream's structural type conversion of SCF). Through to PTX that
// ptxas assembles without spills.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
!qring = !tiledattn.ring<1, 128x128xbf16>
!slot = !tiledattn.smem<128x128xbf16>
!f = !tiledattn.future<64x128xf32>
!o = !tiledattn.tile<64x128xf32>
!r = !tiledattn.tile<64xf32>
module attributes {gpu.container_module} {
  gpu.module @loop {
    gpu.func @loop(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %qr = tiledattn.ring releases(8) : !qring
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %b = gpu.block_id z
      %h = gpu.block_id y
      %m = gpu.block_id x
      %qrow = arith.muli %m, %c128 : index
      %sk = memref.dim %k, %c2 : !head
      %n = arith.ceildivui %sk, %c128 : index
      tiledattn.warp_specialize producer regs(24) {
        %tid = gpu.thread_id x
        %first = arith.cmpi eq, %tid, %c0 : index
        scf.if %first {
          tiledattn.ring.put %qr[%c0] : !qring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %q[%b, %h, %qrow] into %slot : !head, !slot
          }
          scf.for %j = %c0 to %n step %c1 {
            %row = arith.muli %j, %c128 : index
            tiledattn.ring.put %kr[%j] : !ring {
            ^bb0(%slot: !slot):
              tiledattn.tma_load %k[%b, %h, %row] into %slot : !head, !slot
            }
            tiledattn.ring.put %vr[%j] : !ring {
            ^bb0(%slot: !slot):
              tiledattn.tma_load %v[%b, %h, %row] into %slot : !head, !slot
            }
          }
        }
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %o0 = tiledattn.constant 0.0 : !o
        %m0 = tiledattn.constant 0xFF800000 : !r
        %l0 = tiledattn.constant 0.0 : !r
        %arow = arith.muli %c, %c64 : index
        %row0 = arith.addi %qrow, %arow : index
        %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
        %res:3 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %o0, %mx = %m0, %sum = %l0) -> (!o, !r, !r) {
          %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
          %sf = tiledattn.turn -> !f {
            %f = tiledattn.mma_async %qs[%arow], %ks transpose_b : !slot, !slot -> !f
            tiledattn.yield %f : !f
          }
          %s = tiledattn.wait %sf : !f
          tiledattn.ring.release %kr, %kt : !ring
          %col = arith.muli %j, %c128 : index
          %sm = tiledattn.mask %s, %row0, %col, %sk causal : !o
          %p, %mx1, %sum1, %alpha = tiledattn.online_softmax %sm, %mx, %sum, %scale
              : !o, !r -> !tiledattn.tile<64x128xbf16>
          %acc1 = tiledattn.rescale %acc, %alpha : !o, !r
          %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
          %of = tiledattn.turn -> !f {
            %f = tiledattn.mma_async %p, %vs acc(%acc1) : !tiledattn.tile<64x128xbf16>, !slot -> !f
            tiledattn.yield %f : !f
          }
          %acc2 = tiledattn.wait %of : !f
          tiledattn.ring.release %vr, %vt : !ring
          scf.yield %acc2, %mx1, %sum1 : !o, !r, !r
        }
        tiledattn.ring.release %qr, %qt : !qring
        tiledattn.store %res#0, %res#1, %res#2 into %o[%b, %h, %row0] lse(%lse)
            : !o, !r, !head, !lse
      }
      gpu.return
    }
  }
}

// CHECK: .entry loop(
// CHECK: bar.sync
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: ex2.approx.ftz.f32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: lg2.approx.f32
// CHECK: st.global.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
