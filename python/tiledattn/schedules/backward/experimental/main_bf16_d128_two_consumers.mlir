// A candidate for the backward's main loop (issue 23), not yet run on a GPU:
// main_bf16_d128.mlir with two consumer warpgroups per 128-key tile, in
// FlashAttention-3's split. Consumer c owns keys 64c .. 64c + 63 of the
// tile (S^T, dP^T, P^T, dS^T, dV and dK of its keys, as the one-consumer
// program computes them) and columns 64c .. 64c + 63 of dQ: both stage
// their dS^T into one 128 x 64 tile, meet (tiledattn.consumers_sync), and
// each multiplies all 128 keys of it by its half of K (b_col), a 32-register
// accumulator, added into dq_frags by one bulk reduction. They meet again
// before the next query block overwrites the staged dS^T.
//
// Captures: delta, dq_frags ([B, H, 2 ceil(S / 64), 4096] f32, zeroed:
// block 2i + c is query block i's column half c, fragment-ordered),
// dk_accum and dv_accum ([B, H, S, 128] f32, zeroed). The grid covers
// 128-key tiles (block_m = 128). scripts/backward_programs_speed.py times
// it with --main-dq-halves.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!captured_rows = memref<?x?x?xf32>
!accum = memref<?x?x?x?xf32>
!slot = !tiledattn.smem<64x128xbf16>
!ring = !tiledattn.ring<2, 64x128xbf16>
!kslot = !tiledattn.smem<128x128xbf16>
!kring = !tiledattn.ring<1, 128x128xbf16>
!dsbuf = !tiledattn.smem<128x64xbf16>
func.func @bwd_main_bf16_d128_two_consumers(%q: !head, %k: !head, %v: !head, %do: !head,
                                            %lse: !rows, %scale: f32, %delta: !captured_rows,
                                            %dq_frags: !accum, %dk_accum: !accum,
                                            %dv_accum: !accum)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  // The tile's K and V (one 128-row slot each, read by both consumers),
  // Q_i and dO_i (a slot each per query block).
  %kr = tiledattn.ring releases(8) : !kring
  %vr = tiledattn.ring releases(8) : !kring
  %qr = tiledattn.ring releases(8) : !ring
  %dor = tiledattn.ring releases(8) : !ring
  // Both consumers' dS^T (keys x queries); each one's dQ half (16 KB f32).
  %dsbuf = tiledattn.alloc : !dsbuf
  %dqbuf0 = tiledattn.alloc : !dsbuf
  %dqbuf1 = tiledattn.alloc : !dsbuf
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %s = memref.dim %q, %c2 : !head
    %kb = arith.ceildivui %s, %c128 : index
    %qb = arith.ceildivui %s, %c64 : index
    %h = memref.dim %q, %c1 : !head
    %b = memref.dim %q, %c0 : !head
    scf.if %first {
      %n = tiledattn.for_each_tile %kb, %h, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
        %key = arith.muli %bx, %c128 : index
        tiledattn.ring.put %kr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %k[%bz, %by, %key] into %slot : !head, !kslot
        }
        tiledattn.ring.put %vr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %v[%bz, %by, %key] into %slot : !head, !kslot
        }
        %base = arith.muli %done, %qb : index
        scf.for %i = %c0 to %qb step %c1 {
          %pos = arith.addi %base, %i : index
          %row = arith.muli %i, %c64 : index
          tiledattn.ring.put %qr[%pos] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %q[%bz, %by, %row] into %slot : !head, !slot
          }
          tiledattn.ring.put %dor[%pos] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %do[%bz, %by, %row] into %slot : !head, !slot
          }
        }
        tiledattn.yield %kv : index
      }
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    %zero = tiledattn.constant 0.0 : !tiledattn.tile<64x128xf32>
    %s = memref.dim %q, %c2 : !head
    %kb = arith.ceildivui %s, %c128 : index
    %qb = arith.ceildivui %s, %c64 : index
    %h = memref.dim %q, %c1 : !head
    %b = memref.dim %q, %c0 : !head
    %crow = arith.muli %c, %c64 : index
    %first_half = arith.cmpi eq, %c, %c0 : index
    %n = tiledattn.for_each_tile %kb, %h, %b iter_args(%c0 : index) -> index {
    ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
      %ks, %kt = tiledattn.ring.get %kr[%done] : !kring
      %vs, %vt = tiledattn.ring.get %vr[%done] : !kring
      %base = arith.muli %done, %qb : index
      %grads:2 = scf.for %i = %c0 to %qb step %c1
          iter_args(%dv = %zero, %dk = %zero) -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>) {
        %pos = arith.addi %base, %i : index
        %col = arith.muli %i, %c64 : index
        %qs, %qt = tiledattn.ring.get %qr[%pos] : !ring
        %ds, %dt = tiledattn.ring.get %dor[%pos] : !ring
        %sf = tiledattn.mma_async %ks[%crow], %qs transpose_b : !kslot, !slot -> !tiledattn.future<64x64xf32>
        %dpf = tiledattn.mma_async %vs[%crow], %ds transpose_b : !kslot, !slot -> !tiledattn.future<64x64xf32>
        %st = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
        %p = tiledattn.exp_from_lse %st, %lse[%bz, %by, %col], %scale : !tiledattn.tile<64x64xf32>, !rows
        %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
        %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %by, %col] : !tiledattn.tile<64x64xf32>, !captured_rows
        tiledattn.stage %dst into %dsbuf[%crow] : !tiledattn.tile<64x64xf32>, !dsbuf
        %pb = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        %dsb = tiledattn.truncate %dst : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        %dvf = tiledattn.mma_async %pb, %ds acc(%dv) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dkf = tiledattn.mma_async %dsb, %qs acc(%dk) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dv1 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
        %dk1 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
        tiledattn.ring.release %qr, %qt : !ring
        tiledattn.ring.release %dor, %dt : !ring
        // Both consumers' dS^T are staged: dQ_i's column half c, over all
        // 128 keys, into block 2i + c.
        tiledattn.consumers_sync
        %half = arith.muli %i, %c2 : index
        %block = arith.addi %half, %c : index
        scf.if %first_half {
          %dqf = tiledattn.mma_async %dsbuf[%c0] transpose_a, %ks b_col(0) : !dsbuf, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %by, %block] via %dqbuf0 : !tiledattn.tile<64x64xf32>, !accum, !dsbuf
        } else {
          %dqf = tiledattn.mma_async %dsbuf[%c0] transpose_a, %ks b_col(64) : !dsbuf, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %by, %block] via %dqbuf1 : !tiledattn.tile<64x64xf32>, !accum, !dsbuf
        }
        // Both dQ mmas have read the staged dS^T.
        tiledattn.consumers_sync
        scf.yield %dv1, %dk1 : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>
      }
      tiledattn.ring.release %kr, %kt : !kring
      tiledattn.ring.release %vr, %vt : !kring
      %key0 = arith.muli %bx, %c128 : index
      %key = arith.addi %key0, %crow : index
      tiledattn.reduce_add %grads#1 into %dk_accum[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !accum
      tiledattn.reduce_add %grads#0 into %dv_accum[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !accum
      tiledattn.yield %kv : index
    }
    tiledattn.tma_store_wait
  }
  return
}
