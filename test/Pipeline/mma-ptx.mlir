// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// A warp-specialized kernel's mmas in tile IR: the producer fills a Q slot
// once and a K ring per block; the two consumers take turns starting
// S = Q K^T on their 64 rows of Q, and wait for it after their turn. Through
// the whole pipeline to PTX that ptxas assembles.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
!qring = !tiledattn.ring<1, 128x128xbf16>
!slot = !tiledattn.smem<128x128xbf16>
!s = !tiledattn.future<64x128xf32>
module attributes {gpu.container_module} {
  gpu.module @mma {
    gpu.func @mma(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %qr = tiledattn.ring releases(8) : !qring
      %kr = tiledattn.ring releases(8) : !ring
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
          }
        }
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
        %arow = arith.muli %c, %c64 : index
        scf.for %j = %c0 to %n step %c1 {
          %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
          %sf = tiledattn.turn -> !s {
            %f = tiledattn.mma_async %qs[%arow], %ks transpose_b : !slot, !slot -> !s
            tiledattn.yield %f : !s
          }
          %scores = tiledattn.wait %sf : !s
          tiledattn.ring.release %kr, %kt : !ring
        }
        tiledattn.ring.release %qr, %qt : !qring
      }
      gpu.return
    }
  }
}

// CHECK: .entry mma(
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
