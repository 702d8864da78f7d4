// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-lower-rings --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %PYTHON -c "import sys; t = open(sys.argv[1]).read(); print(t.count('arrive.expect_tx'), 'expect_tx', t.count('cp.async.bulk.tensor'), 'copies', t.count('mbarrier.arrive.shared'), 'arrives')" %t.ptx | FileCheck %s --check-prefix=COUNTS
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// A kernel written with rings, through the whole pipeline to PTX that ptxas
// assembles: the producer's TMA copies complete on mbarriers, the consumers
// wait on them and release the slots.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
module attributes {gpu.container_module} {
  gpu.module @rings {
    gpu.func @k(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %tid = gpu.thread_id x
      %b = gpu.block_id z
      %h = gpu.block_id y
      %sk = memref.dim %k, %c1 : !head
      %n = arith.divui %sk, %c128 : index
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        scf.for %j = %c0 to %n step %c1 {
          %row = arith.muli %j, %c128 : index
          tiledattn.ring.put %kr[%j] : !ring {
          ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
            tiledattn.tma_load %k[%b, %h, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
          }
          tiledattn.ring.put %vr[%j] : !ring {
          ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
            tiledattn.tma_load %v[%b, %h, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
          }
        }
      } else {
        scf.for %j = %c0 to %n step %c1 {
          %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
          tiledattn.ring.release %kr, %kt : !ring
          %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
          tiledattn.ring.release %vr, %vt : !ring
        }
      }
      gpu.return
    }
  }
}

// CHECK: .entry k(
// CHECK-COUNT-8: mbarrier.init.shared.b64
// CHECK-DAG: mbarrier.try_wait.parity.shared.b64
// CHECK-DAG: mbarrier.arrive.expect_tx.shared.b64
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: mbarrier.arrive.shared.b64
// Per K/V block two announcements of bytes, four copies (two atoms each of
// K and V) and two releases.
// COUNTS: 2 expect_tx 4 copies 2 arrives
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
