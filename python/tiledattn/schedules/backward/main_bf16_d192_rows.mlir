// The backward's main loop at head dim 192 (issue 23): main_bf16_d256_rows.mlir
// (which says what each step computes and why the head dim is split) for
// three 64-column atoms. They do not halve on an atom boundary, so the
// consumers take unequal shares that cost the same: consumer 0 holds dK,
// dV and dQ for head-dim columns 0 .. 127 and S, dP for 16 of the tile's 64
// keys; consumer 1 columns 128 .. 191 and 48 keys. Per query block each
// then issues 1.97 M multiply-adds (S and dP over K = 192, dV, dK and dQ
// over its columns), so neither waits for the other at the two
// consumers_syncs. Their tiles differ in shape, so each has its own loop,
// in a branch on the consumer index; both take and release the same ring
// slots in the same order.
//
// Shared memory: K, V, two Q and two dO slots (144 KB), P and dS (8 KB
// each), a 16 KB dQ stage per consumer: 176 KB. dq_frags: [B, Hq,
// 3 ceil(Sq / 64), 4096] f32 (block 3i + q: query block i's columns
// 64q .. 64q + 63); the other operands and captures as the D = 256 form's.
//
// Compiled, not yet run on a GPU (forty-second session); not in autograd.
!head = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!captured_rows = memref<?x?x?xf32>
!accum = memref<?x?x?x?xf32>
!grad = memref<?x?x?x?xbf16>
!slot = !tiledattn.smem<64x192xbf16>
!qring = !tiledattn.ring<2, 64x192xbf16>
!ring1 = !tiledattn.ring<1, 64x192xbf16>
!square = !tiledattn.smem<64x64xbf16>
!dqstage = !tiledattn.smem<128x64xbf16>
func.func @bwd_main_bf16_d192_rows(%q: !head, %k: !head, %v: !head, %do: !head,
                                   %lse: !rows, %scale: f32, %delta: !captured_rows,
                                   %dq_frags: !accum, %grad_k: !grad,
                                   %grad_v: !grad)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %kr = tiledattn.ring releases(8) : !ring1
  %vr = tiledattn.ring releases(8) : !ring1
  %qr = tiledattn.ring releases(8) : !qring
  %dor = tiledattn.ring releases(8) : !qring
  // P and dS (queries x keys): consumer 0's keys in columns 0 .. 15,
  // consumer 1's in 16 .. 63; each consumer's dQ stage (a 64 x 64 f32
  // block).
  %pbuf = tiledattn.alloc : !square
  %dsbuf = tiledattn.alloc : !square
  %dqbuf0 = tiledattn.alloc : !dqstage
  %dqbuf1 = tiledattn.alloc : !dqstage
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %sq = memref.dim %q, %c2 : !head
    %sk = memref.dim %k, %c2 : !head
    %kb = arith.ceildivui %sk, %c64 : index
    %qb = arith.ceildivui %sq, %c64 : index
    %hq = memref.dim %q, %c1 : !head
    %hkv = memref.dim %k, %c1 : !head
    %group = arith.divui %hq, %hkv : index
    %b = memref.dim %q, %c0 : !head
    scf.if %first {
      %n = tiledattn.for_each_tile %kb, %hkv, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %base: index):
        %key = arith.muli %bx, %c64 : index
        %from = tiledattn.first_query_block %bx of %qb rows(64) keys(64)
        %blocks = arith.subi %qb, %from : index
        %tile_steps = arith.muli %group, %blocks : index
        tiledattn.ring.put %kr[%done] : !ring1 {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %k[%bz, %by, %key] into %slot : !head, !slot
        }
        tiledattn.ring.put %vr[%done] : !ring1 {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %v[%bz, %by, %key] into %slot : !head, !slot
        }
        %head0 = arith.muli %by, %group : index
        %walked:2 = scf.for %j = %c0 to %tile_steps step %c1
            iter_args(%i = %from, %hd = %head0) -> (index, index) {
          %pos = arith.addi %base, %j : index
          %row = arith.muli %i, %c64 : index
          tiledattn.ring.put %qr[%pos] : !qring {
          ^bb0(%slot: !slot):
            tiledattn.tma_load %q[%bz, %hd, %row] into %slot : !head, !slot
          }
          tiledattn.ring.put %dor[%pos] : !qring {
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
  } consumers(2) regs(240) uniform_index {
  ^bb0(%c: index):
    %sq = memref.dim %q, %c2 : !head
    %sk = memref.dim %k, %c2 : !head
    %kb = arith.ceildivui %sk, %c64 : index
    %qb = arith.ceildivui %sq, %c64 : index
    %hq = memref.dim %q, %c1 : !head
    %hkv = memref.dim %k, %c1 : !head
    %group = arith.divui %hq, %hkv : index
    %b = memref.dim %q, %c0 : !head
    %first_consumer = arith.cmpi eq, %c, %c0 : index
    scf.if %first_consumer {
      %n0 = tiledattn.for_each_tile %kb, %hkv, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %base: index):
        %ks, %kt = tiledattn.ring.get %kr[%done] : !ring1
        %vs, %vt = tiledattn.ring.get %vr[%done] : !ring1
        %kh = tiledattn.columns %ks[%c0] : !slot to !tiledattn.smem<64x128xbf16>
        %zero = tiledattn.constant 0.0 : !tiledattn.tile<64x128xf32>
        %from = tiledattn.first_query_block %bx of %qb rows(64) keys(64)
        %blocks = arith.subi %qb, %from : index
        %tile_steps = arith.muli %group, %blocks : index
        %key0 = arith.muli %bx, %c64 : index
        %ckey = arith.addi %key0, %c0 : index
        %head0 = arith.muli %by, %group : index
        %grads:4 = scf.for %j = %c0 to %tile_steps step %c1
            iter_args(%dv = %zero, %dk = %zero, %i = %from, %hd = %head0) -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>, index, index) {
          %pos = arith.addi %base, %j : index
          %row = arith.muli %i, %c64 : index
          %qs, %qt = tiledattn.ring.get %qr[%pos] : !qring
          %ds, %dt = tiledattn.ring.get %dor[%pos] : !qring
          %sf = tiledattn.mma_async %qs[%c0] uniform_a, %ks[%c0] b_rows(16) transpose_b : !slot, !slot -> !tiledattn.future<64x16xf32>
          %dpf = tiledattn.mma_async %ds[%c0] uniform_a, %vs[%c0] b_rows(16) transpose_b : !slot, !slot -> !tiledattn.future<64x16xf32>
          %sraw = tiledattn.wait %sf : !tiledattn.future<64x16xf32>
          %st = tiledattn.mask %sraw, %row, %ckey : !tiledattn.tile<64x16xf32>
          %p = tiledattn.exp_from_lse %st, %lse[%bz, %hd, %row] per_row, %scale : !tiledattn.tile<64x16xf32>, !rows
          tiledattn.stage %p into %pbuf[%c0, %c0] : !tiledattn.tile<64x16xf32>, !square
          %dpt = tiledattn.wait %dpf : !tiledattn.future<64x16xf32>
          %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %hd, %row] per_row scale(%scale) : !tiledattn.tile<64x16xf32>, !captured_rows
          tiledattn.stage %dst into %dsbuf[%c0, %c0] : !tiledattn.tile<64x16xf32>, !square
          tiledattn.consumers_sync
          %doh = tiledattn.columns %ds[%c0] : !slot to !tiledattn.smem<64x128xbf16>
          %qh = tiledattn.columns %qs[%c0] : !slot to !tiledattn.smem<64x128xbf16>
          %dvf = tiledattn.mma_async %pbuf[%c0] transpose_a uniform_a, %doh acc(%dv) : !square, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
          %dkf = tiledattn.mma_async %dsbuf[%c0] transpose_a uniform_a, %qh acc(%dk) : !square, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
          %dv2 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
          %dk2 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
          %block_base = arith.muli %i, %c3 : index
          %dq0f = tiledattn.mma_async %dsbuf[%c0] uniform_a, %kh b_col(0) : !square, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
          %dq0 = tiledattn.wait %dq0f : !tiledattn.future<64x64xf32>
          %block0 = arith.addi %block_base, %c0 : index
          tiledattn.bulk_reduce_add %dq0 into %dq_frags[%bz, %hd, %block0] via %dqbuf0 : !tiledattn.tile<64x64xf32>, !accum, !dqstage
          %dq1f = tiledattn.mma_async %dsbuf[%c0] uniform_a, %kh b_col(64) : !square, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
          %dq1 = tiledattn.wait %dq1f : !tiledattn.future<64x64xf32>
          %block1 = arith.addi %block_base, %c1 : index
          tiledattn.bulk_reduce_add %dq1 into %dq_frags[%bz, %hd, %block1] via %dqbuf0 : !tiledattn.tile<64x64xf32>, !accum, !dqstage
          tiledattn.ring.release %qr, %qt : !qring
          tiledattn.ring.release %dor, %dt : !qring
          tiledattn.consumers_sync
          %i1 = arith.addi %i, %c1 : index
          %wrap = arith.cmpi eq, %i1, %qb : index
          %inext = arith.select %wrap, %from, %i1 : index
          %hd1 = arith.addi %hd, %c1 : index
          %hdnext = arith.select %wrap, %hd1, %hd : index
          scf.yield %dv2, %dk2, %inext, %hdnext : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>, index, index
        }
        tiledattn.ring.release %kr, %kt : !ring1
        tiledattn.ring.release %vr, %vt : !ring1
        tiledattn.store_tile %grads#1 into %grad_k[%bz, %by, %key0, %c0] : !tiledattn.tile<64x128xf32>, !grad
        tiledattn.store_tile %grads#0 into %grad_v[%bz, %by, %key0, %c0] : !tiledattn.tile<64x128xf32>, !grad
        %next = arith.addi %base, %tile_steps : index
        tiledattn.yield %next : index
      }
    } else {
      %n1 = tiledattn.for_each_tile %kb, %hkv, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %base: index):
        %ks, %kt = tiledattn.ring.get %kr[%done] : !ring1
        %vs, %vt = tiledattn.ring.get %vr[%done] : !ring1
        %kh = tiledattn.columns %ks[%c128] : !slot to !tiledattn.smem<64x64xbf16>
        %zero = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf32>
        %from = tiledattn.first_query_block %bx of %qb rows(64) keys(64)
        %blocks = arith.subi %qb, %from : index
        %tile_steps = arith.muli %group, %blocks : index
        %key0 = arith.muli %bx, %c64 : index
        %ckey = arith.addi %key0, %c16 : index
        %head0 = arith.muli %by, %group : index
        %grads:4 = scf.for %j = %c0 to %tile_steps step %c1
            iter_args(%dv = %zero, %dk = %zero, %i = %from, %hd = %head0) -> (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>, index, index) {
          %pos = arith.addi %base, %j : index
          %row = arith.muli %i, %c64 : index
          %qs, %qt = tiledattn.ring.get %qr[%pos] : !qring
          %ds, %dt = tiledattn.ring.get %dor[%pos] : !qring
          %sf = tiledattn.mma_async %qs[%c0] uniform_a, %ks[%c16] b_rows(48) transpose_b : !slot, !slot -> !tiledattn.future<64x48xf32>
          %dpf = tiledattn.mma_async %ds[%c0] uniform_a, %vs[%c16] b_rows(48) transpose_b : !slot, !slot -> !tiledattn.future<64x48xf32>
          %sraw = tiledattn.wait %sf : !tiledattn.future<64x48xf32>
          %st = tiledattn.mask %sraw, %row, %ckey : !tiledattn.tile<64x48xf32>
          %p = tiledattn.exp_from_lse %st, %lse[%bz, %hd, %row] per_row, %scale : !tiledattn.tile<64x48xf32>, !rows
          tiledattn.stage %p into %pbuf[%c0, %c16] : !tiledattn.tile<64x48xf32>, !square
          %dpt = tiledattn.wait %dpf : !tiledattn.future<64x48xf32>
          %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %hd, %row] per_row scale(%scale) : !tiledattn.tile<64x48xf32>, !captured_rows
          tiledattn.stage %dst into %dsbuf[%c0, %c16] : !tiledattn.tile<64x48xf32>, !square
          tiledattn.consumers_sync
          %doh = tiledattn.columns %ds[%c128] : !slot to !tiledattn.smem<64x64xbf16>
          %qh = tiledattn.columns %qs[%c128] : !slot to !tiledattn.smem<64x64xbf16>
          %dvf = tiledattn.mma_async %pbuf[%c0] transpose_a uniform_a, %doh acc(%dv) : !square, !tiledattn.smem<64x64xbf16> -> !tiledattn.future<64x64xf32>
          %dkf = tiledattn.mma_async %dsbuf[%c0] transpose_a uniform_a, %qh acc(%dk) : !square, !tiledattn.smem<64x64xbf16> -> !tiledattn.future<64x64xf32>
          %dv2 = tiledattn.wait %dvf : !tiledattn.future<64x64xf32>
          %dk2 = tiledattn.wait %dkf : !tiledattn.future<64x64xf32>
          %block_base = arith.muli %i, %c3 : index
          %dq0f = tiledattn.mma_async %dsbuf[%c0] uniform_a, %kh b_col(0) : !square, !tiledattn.smem<64x64xbf16> -> !tiledattn.future<64x64xf32>
          %dq0 = tiledattn.wait %dq0f : !tiledattn.future<64x64xf32>
          %block0 = arith.addi %block_base, %c2 : index
          tiledattn.bulk_reduce_add %dq0 into %dq_frags[%bz, %hd, %block0] via %dqbuf1 : !tiledattn.tile<64x64xf32>, !accum, !dqstage
          tiledattn.ring.release %qr, %qt : !qring
          tiledattn.ring.release %dor, %dt : !qring
          tiledattn.consumers_sync
          %i1 = arith.addi %i, %c1 : index
          %wrap = arith.cmpi eq, %i1, %qb : index
          %inext = arith.select %wrap, %from, %i1 : index
          %hd1 = arith.addi %hd, %c1 : index
          %hdnext = arith.select %wrap, %hd1, %hd : index
          scf.yield %dv2, %dk2, %inext, %hdnext : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>, index, index
        }
        tiledattn.ring.release %kr, %kt : !ring1
        tiledattn.ring.release %vr, %vt : !ring1
        tiledattn.store_tile %grads#1 into %grad_k[%bz, %by, %key0, %c128] : !tiledattn.tile<64x64xf32>, !grad
        tiledattn.store_tile %grads#0 into %grad_v[%bz, %by, %key0, %c128] : !tiledattn.tile<64x64xf32>, !grad
        %next = arith.addi %base, %tile_steps : index
        tiledattn.yield %next : index
      }
    }
    tiledattn.tma_store_wait
  }
  return
}
