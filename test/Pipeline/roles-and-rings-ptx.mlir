// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-lower-roles=entry-registers=true --tiledattn-lower-rings --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The skeleton of a warp-specialized kernel in tile IR: a producer
// warpgroup fills K and V rings by TMA, two consumer warpgroups take turns
// reading them. Through the whole pipeline to PTX that ptxas assembles.
// With entry-registers, the kernel starts with the registers its roles'
// budgets share (.maxnreg 168 for 384 threads); without it ptxas ignores
// setmaxnreg wherever it cannot tell the count at entry (C7508).

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!ring = !tiledattn.ring<2, 128x128xbf16>
module attributes {gpu.container_module} {
  gpu.module @skeleton {
    gpu.func @skeleton(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c128 = arith.constant 128 : index
      %kr = tiledattn.ring releases(8) : !ring
      %vr = tiledattn.ring releases(8) : !ring
      %b = gpu.block_id z
      %h = gpu.block_id y
      %sk = memref.dim %k, %c2 : !head
      %n = arith.ceildivui %sk, %c128 : index
      tiledattn.warp_specialize producer regs(24) {
        %tid = gpu.thread_id x
        %first = arith.cmpi eq, %tid, %c0 : index
        scf.if %first {
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
        }
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        scf.for %j = %c0 to %n step %c1 {
          %kt = tiledattn.turn -> !tiledattn.token {
            %ks, %t = tiledattn.ring.get %kr[%j] : !ring
            tiledattn.yield %t : !tiledattn.token
          }
          tiledattn.ring.release %kr, %kt : !ring
          %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
          tiledattn.ring.release %vr, %vt : !ring
        }
      }
      gpu.return
    }
  }
}

// CHECK: .entry skeleton(
// CHECK: .maxntid 384, 1, 1
// CHECK-NEXT: .maxnreg 168
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-DAG: bar.arrive
// CHECK-DAG: bar.sync {{.*}}, 256;
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: mbarrier.try_wait.parity.shared.b64
// PTXAS-NOT: C7508
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
