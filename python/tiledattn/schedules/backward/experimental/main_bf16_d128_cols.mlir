// A candidate for the backward's main loop (issue 23; not in
// tiledattn.backward_kernels.MAIN_PROGRAMS, not GPU-run):
// main_bf16_d128_rows.mlir in the transposed layout, FlashAttention-3's for
// this head dim. Consumer c computes S^T = K_c Q_i^T and dP^T = V_c dO_i^T
// (a key per row), so P^T and dS^T are in registers in the layout of an
// mma's A: dV_c += P^T dO_i and dK_c += dS^T Q_i read them there (no P
// stage, one warpgroup sync a block less); dS^T is staged for dQ, which
// reads it transposed over both consumers' keys. The cost is the lse and D
// of 16 query columns a thread (exp_from_lse and softmax_grad without
// per_row), which spilled 252 bytes in the thirty-fourth session's form of
// this layout; with uniform_index and uniform_a that form spills 64
// (docs/perf-notes.md, forty-third session). Operands, captures and dQ's
// layout ("halves") are the row form's, so scripts/backward_programs_speed.py
// --main times it against it. Not causal: its S^T has no mask hook yet.
//
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!captured_rows = memref<?x?x?xf32>
!accum = memref<?x?x?x?xf32>
!grad = memref<?x?x?x?xbf16>
!slot = !tiledattn.smem<64x128xbf16>
!ring = !tiledattn.ring<2, 64x128xbf16>
!kslot = !tiledattn.smem<128x128xbf16>
!kring = !tiledattn.ring<1, 128x128xbf16>
!half = !tiledattn.smem<128x64xbf16>
func.func @bwd_main_bf16_d128_cols(%q: !head, %k: !head, %v: !head, %do: !head,
                                   %lse: !rows, %scale: f32, %delta: !captured_rows,
                                   %dq_frags: !accum, %grad_k: !grad,
                                   %grad_v: !grad)
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
  // dS^T (keys x queries), consumer c's in rows 64c .. 64c + 63; each
  // consumer's dQ stage (16 KB f32).
  %dsbuf = tiledattn.alloc : !half
  %dqbuf0 = tiledattn.alloc : !half
  %dqbuf1 = tiledattn.alloc : !half
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %sq = memref.dim %q, %c2 : !head
    %sk = memref.dim %k, %c2 : !head
    %kb = arith.ceildivui %sk, %c128 : index
    %qb = arith.ceildivui %sq, %c64 : index
    %hq = memref.dim %q, %c1 : !head
    %hkv = memref.dim %k, %c1 : !head
    %group = arith.divui %hq, %hkv : index
    %b = memref.dim %q, %c0 : !head
    scf.if %first {
      %n = tiledattn.for_each_tile %kb, %hkv, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %base: index):
        %key = arith.muli %bx, %c128 : index
        %from = tiledattn.first_query_block %bx of %qb rows(64) keys(128)
        %blocks = arith.subi %qb, %from : index
        %tile_steps = arith.muli %group, %blocks : index
        tiledattn.ring.put %kr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %k[%bz, %by, %key] into %slot : !head, !kslot
        }
        tiledattn.ring.put %vr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %v[%bz, %by, %key] into %slot : !head, !kslot
        }
        // The query blocks the tile meets, of each query head of the group
        // in turn (block %i of head %hd, carried).
        %head0 = arith.muli %by, %group : index
        %walked:2 = scf.for %j = %c0 to %tile_steps step %c1
            iter_args(%i = %from, %hd = %head0) -> (index, index) {
          %pos = arith.addi %base, %j : index
          %row = arith.muli %i, %c64 : index
          tiledattn.ring.put %qr[%pos] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %q[%bz, %hd, %row] into %slot : !head, !slot
          }
          tiledattn.ring.put %dor[%pos] : !ring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %do[%bz, %hd, %row] into %slot : !head, !slot
          }
          %i1 = arith.addi %i, %c1 : index
          %wrap = arith.cmpi eq, %i1, %qb : index
          %inext = arith.select %wrap, %from, %i1 : index
          %hd1 = arith.addi %hd, %c1 : index
          %hdnext = arith.select %wrap, %hd1, %hd : index
          scf.yield %inext, %hdnext : index, index
        }
        %next = arith.addi %base, %tile_steps : index
        tiledattn.yield %next : index
      }
    }
  // uniform_index: the consumer index reaches the region through redux.sync
  // (as in the row form, where it took the spills from 176 bytes to 56).
  } consumers(2) regs(240) uniform_index {
  ^bb0(%c: index):
    %zero = tiledattn.constant 0.0 : !tiledattn.tile<64x128xf32>
    %sq = memref.dim %q, %c2 : !head
    %sk = memref.dim %k, %c2 : !head
    %kb = arith.ceildivui %sk, %c128 : index
    %qb = arith.ceildivui %sq, %c64 : index
    %hq = memref.dim %q, %c1 : !head
    %hkv = memref.dim %k, %c1 : !head
    %group = arith.divui %hq, %hkv : index
    %b = memref.dim %q, %c0 : !head
    %crow = arith.muli %c, %c64 : index
    %first_half = arith.cmpi eq, %c, %c0 : index
    %n = tiledattn.for_each_tile %kb, %hkv, %b iter_args(%c0 : index) -> index {
    ^bb0(%bx: index, %by: index, %bz: index, %done: index, %base: index):
      %ks, %kt = tiledattn.ring.get %kr[%done] : !kring
      %vs, %vt = tiledattn.ring.get %vr[%done] : !kring
      %from = tiledattn.first_query_block %bx of %qb rows(64) keys(128)
      %blocks = arith.subi %qb, %from : index
      %tile_steps = arith.muli %group, %blocks : index
      %key0 = arith.muli %bx, %c128 : index
      %key = arith.addi %key0, %crow : index
      %head0 = arith.muli %by, %group : index
      // The query blocks the tile meets, of the group's heads in turn:
      // block %i of head %hd, carried (no division in the loop).
      %grads:4 = scf.for %j = %c0 to %tile_steps step %c1
          iter_args(%dv = %zero, %dk = %zero, %i = %from, %hd = %head0) -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>, index, index) {
        %pos = arith.addi %base, %j : index
        %row = arith.muli %i, %c64 : index
        %qs, %qt = tiledattn.ring.get %qr[%pos] : !ring
        %ds, %dt = tiledattn.ring.get %dor[%pos] : !ring
        // S^T and dP^T: keys 64c .. 64c + 63 of the tile by the block's 64
        // queries (a key per row, a query per column).
        %sf = tiledattn.mma_async %ks[%crow] uniform_a, %qs transpose_b : !kslot, !slot -> !tiledattn.future<64x64xf32>
        %dpf = tiledattn.mma_async %vs[%crow] uniform_a, %ds transpose_b : !kslot, !slot -> !tiledattn.future<64x64xf32>
        %st = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
        %p = tiledattn.exp_from_lse %st, %lse[%bz, %hd, %row], %scale : !tiledattn.tile<64x64xf32>, !rows
        %pb = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        // dV_c += P^T dO_i with P^T from registers (no stage).
        %dvf = tiledattn.mma_async %pb, %ds acc(%dv) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
        %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %hd, %row] scale(%scale) : !tiledattn.tile<64x64xf32>, !captured_rows
        // dS^T staged for dQ (both consumers' keys), and dK_c += dS^T Q_i
        // from registers.
        tiledattn.stage %dst into %dsbuf[%crow] : !tiledattn.tile<64x64xf32>, !half
        %dsb = tiledattn.truncate %dst : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        %dkf = tiledattn.mma_async %dsb, %qs acc(%dk) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        // Both consumers' dS^T are staged: dQ_i's column half c, over all
        // 128 keys (dS read transposed from the whole stage, one mma of 8
        // k-steps), into block 2i + c.
        tiledattn.consumers_sync
        %dv2 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
        %dk2 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
        %half = arith.muli %i, %c2 : index
        %block = arith.addi %half, %c : index
        scf.if %first_half {
          %dqf = tiledattn.mma_async %dsbuf[%c0] transpose_a uniform_a, %ks b_col(0) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %hd, %block] via %dqbuf0 : !tiledattn.tile<64x64xf32>, !accum, !half
        } else {
          %dqf = tiledattn.mma_async %dsbuf[%c0] transpose_a uniform_a, %ks b_col(64) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %hd, %block] via %dqbuf1 : !tiledattn.tile<64x64xf32>, !accum, !half
        }
        tiledattn.ring.release %qr, %qt : !ring
        tiledattn.ring.release %dor, %dt : !ring
        // Both dQ mmas have read the staged dS before the next block's.
        tiledattn.consumers_sync
        %i1 = arith.addi %i, %c1 : index
        %wrap = arith.cmpi eq, %i1, %qb : index
        %inext = arith.select %wrap, %from, %i1 : index
        %hd1 = arith.addi %hd, %c1 : index
        %hdnext = arith.select %wrap, %hd1, %hd : index
        scf.yield %dv2, %dk2, %inext, %hdnext : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>, index, index
      }
      tiledattn.ring.release %kr, %kt : !kring
      tiledattn.ring.release %vr, %vt : !kring
      tiledattn.store_tile %grads#1 into %grad_k[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !grad
      tiledattn.store_tile %grads#0 into %grad_v[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !grad
      %next = arith.addi %base, %tile_steps : index
      tiledattn.yield %next : index
    }
    tiledattn.tma_store_wait
  }
  return
}
