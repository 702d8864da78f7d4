// REQUIRES: ptxas
// RUN: tiledattn-opt %s --convert-tiledattn-to-nvgpu --tiledattn-lower-roles --tiledattn-lower-rings --tiledattn-lower-mma > %t.mlir
// RUN: FileCheck %s --input-file %t.mlir
// RUN: FileCheck %s --check-prefix=EXTF --input-file %t.mlir
// RUN: rm -rf %t.bundle && tiledattn-compile %s -o %t.bundle | FileCheck %s --check-prefix=SUMMARY

// The backward's preprocess (issue 23), D = rowsum(dO * O) per query row, as
// a hand-written tile program: the producer's thread loads each tile's O and
// dO by TMA into one-slot rings; each consumer warpgroup reads its 64 rows of
// both into registers (read_rows), releases the slots, takes the rows' dot
// products (row_dot) and stores them (store_rows). The shared passes lower it
// to a bundle. It takes tiledattn.sdpa's operands because the manifest is
// still sdpa's (q = O, k = dO, lse = D; v, o and scale unused): a manifest
// kind for the backward's kernels, and their launch, come next.

// Per consumer thread: one ldmatrix.x4 per 16 columns of each tile, two
// bf16 a word unpacked to f32, 64 products, each row half summed over the
// quad, and quad lane 0's two rows stored where they are inside D.
// CHECK-LABEL: gpu.func @bwd_preprocess_bf16_d128
// CHECK-COUNT-2: nvgpu.tma.async.load
// CHECK-COUNT-16: nvvm.ldmatrix
// CHECK-NOT: nvvm.ldmatrix
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK-COUNT-64: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: scf.if
// CHECK: memref.store
// CHECK: memref.store
// EXTF-COUNT-128: arith.extf {{.*}} : bf16 to f32
// EXTF-NOT: arith.extf
// SUMMARY: bwd_preprocess_bf16_d128: registers={{[0-9]+}} spill_stores=0 spill_loads=0

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bwd_preprocess_bf16_d128(%o: !head, %do: !head, %unused_v: !head, %unused_o: !head, %delta: !rows, %unused_scale: f32)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 1, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %or = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
  %dr = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %s = memref.dim %o, %c2 : !head
    %qb = arith.ceildivui %s, %c128 : index
    %h = memref.dim %o, %c1 : !head
    %b = memref.dim %o, %c0 : !head
    scf.if %first {
      %n = tiledattn.for_each_tile %qb, %h, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
        %row = arith.muli %bx, %c128 : index
        tiledattn.ring.put %or[%done] : !tiledattn.ring<1, 128x128xbf16> {
        ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
          tiledattn.tma_load %o[%bz, %by, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
        }
        tiledattn.ring.put %dr[%done] : !tiledattn.ring<1, 128x128xbf16> {
        ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
          tiledattn.tma_load %do[%bz, %by, %row] into %slot : !head, !tiledattn.smem<128x128xbf16>
        }
        tiledattn.yield %kv : index
      }
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    %crow = arith.muli %c, %c64 : index
    %s = memref.dim %o, %c2 : !head
    %qb = arith.ceildivui %s, %c128 : index
    %h = memref.dim %o, %c1 : !head
    %b = memref.dim %o, %c0 : !head
    %n = tiledattn.for_each_tile %qb, %h, %b iter_args(%c0 : index) -> index {
    ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
      %tile = arith.muli %bx, %c128 : index
      %row = arith.addi %tile, %crow : index
      %os, %ot = tiledattn.ring.get %or[%done] : !tiledattn.ring<1, 128x128xbf16>
      %ds, %dt = tiledattn.ring.get %dr[%done] : !tiledattn.ring<1, 128x128xbf16>
      %oa = tiledattn.read_rows %os[%crow] : !tiledattn.smem<128x128xbf16> -> !tiledattn.tile<64x128xbf16>
      %da = tiledattn.read_rows %ds[%crow] : !tiledattn.smem<128x128xbf16> -> !tiledattn.tile<64x128xbf16>
      tiledattn.ring.release %or, %ot : !tiledattn.ring<1, 128x128xbf16>
      tiledattn.ring.release %dr, %dt : !tiledattn.ring<1, 128x128xbf16>
      %d = tiledattn.row_dot %da, %oa : !tiledattn.tile<64x128xbf16> -> !tiledattn.tile<64xf32>
      tiledattn.store_rows %d into %delta[%bz, %by, %row] : !tiledattn.tile<64xf32>, !rows
      tiledattn.yield %kv : index
    }
  }
  return
}
