// The backward's preprocess (issue 23): D = rowsum(dO * O) for every query
// row, bf16, head dim 192 (preprocess_bf16_d128.mlir's edit: 48 KB O and
// dO slots, 64 x 192 rows a consumer), as a hand-written tile program. The
// producer's thread loads each 128-row tile of O and dO by TMA into one-slot rings;
// each of the two consumer warpgroups reads its 64 rows of both into
// registers (tiledattn.read_rows), frees the slots, takes the rows' dot
// products in f32 (tiledattn.row_dot) and stores them (tiledattn.store_rows).
// The shared tile passes lower it (test/Pipeline/bwd-preprocess-program.mlir).
//
// It takes tiledattn.sdpa's operands, the only kernel the manifest knows
// yet: q = O, k = dO, lse = D ([B, H, S] f32); v, o and scale are unused.
// So the attention launch runs it, with D as its lse (python/test/
// test_gpu_backward_programs.py):
//   kernel = tiledattn.compile(<this file>)
//   launch = tiledattn.attention._prepare(o, do, do, None, 0.0, False, None,
//                                         False, False, kernel.entry)
//   _, delta = launch.run_with_lse()
!head = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bwd_preprocess_bf16_d192(%o: !head, %do: !head, %unused_v: !head,
                                    %unused_o: !head, %delta: !rows, %unused_scale: f32)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 1, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %or = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x192xbf16>
  %dr = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x192xbf16>
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
        tiledattn.ring.put %or[%done] : !tiledattn.ring<1, 128x192xbf16> {
        ^bb0(%slot: !tiledattn.smem<128x192xbf16>):
          tiledattn.tma_load %o[%bz, %by, %row] into %slot : !head, !tiledattn.smem<128x192xbf16>
        }
        tiledattn.ring.put %dr[%done] : !tiledattn.ring<1, 128x192xbf16> {
        ^bb0(%slot: !tiledattn.smem<128x192xbf16>):
          tiledattn.tma_load %do[%bz, %by, %row] into %slot : !head, !tiledattn.smem<128x192xbf16>
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
      %os, %ot = tiledattn.ring.get %or[%done] : !tiledattn.ring<1, 128x192xbf16>
      %ds, %dt = tiledattn.ring.get %dr[%done] : !tiledattn.ring<1, 128x192xbf16>
      %oa = tiledattn.read_rows %os[%crow] : !tiledattn.smem<128x192xbf16> -> !tiledattn.tile<64x192xbf16>
      %da = tiledattn.read_rows %ds[%crow] : !tiledattn.smem<128x192xbf16> -> !tiledattn.tile<64x192xbf16>
      tiledattn.ring.release %or, %ot : !tiledattn.ring<1, 128x192xbf16>
      tiledattn.ring.release %dr, %dt : !tiledattn.ring<1, 128x192xbf16>
      %d = tiledattn.row_dot %da, %oa : !tiledattn.tile<64x192xbf16> -> !tiledattn.tile<64xf32>
      tiledattn.store_rows %d into %delta[%bz, %by, %row] : !tiledattn.tile<64xf32>, !rows
      tiledattn.yield %kv : index
    }
  }
  return
}
