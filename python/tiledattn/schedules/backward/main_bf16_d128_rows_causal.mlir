// The backward's main loop for causal attention (issue 23): the row form,
// main_bf16_d128_rows.mlir (which says what each step computes), with
// torch's is_causal (top-left: query i sees keys 0 .. i), as an edit of it.
//
// Key tile j (keys 128j .. 128j + 127) meets only the query blocks from
// the diagonal on, i >= 2j (none when q is shorter than that): the
// producer and the consumers loop from there, for each query head of the
// K/V head's group in turn, and the ring position, no longer a multiple of
// the tile count, is carried through for_each_tile's iter_args (the slots
// a block has put so far). S gets the forward's tiledattn.mask (causal)
// before the exponentials, so P = 0 above the diagonal and dS, dV, dK and
// dQ take nothing from there; only the two blocks on the diagonal have
// masked keys (the mask on the others is a next step). Operands, captures
// and dQ layout are the row form's; GQA / MQA and q, k of their own
// lengths as there.
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
func.func @bwd_main_bf16_d128_rows_causal(%q: !head, %k: !head, %v: !head, %do: !head,
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
  // P and dS (queries x keys), consumer c's in rows 64c .. 64c + 63; each
  // consumer's dQ stage (16 KB f32).
  %pbuf = tiledattn.alloc : !half
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
        %diag2 = arith.muli %bx, %c2 : index
        %diag = arith.minui %diag2, %qb : index
        %blocks = arith.subi %qb, %diag : index
        %tile_steps = arith.muli %group, %blocks : index
        tiledattn.ring.put %kr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %k[%bz, %by, %key] into %slot : !head, !kslot
        }
        tiledattn.ring.put %vr[%done] : !kring {
        ^bb0(%slot: !kslot):
          tiledattn.tma_load %v[%bz, %by, %key] into %slot : !head, !kslot
        }
        // The query blocks from the diagonal on, of each query head of the
        // group in turn (block %i of head %hd, carried).
        %head0 = arith.muli %by, %group : index
        %walked:2 = scf.for %j = %c0 to %tile_steps step %c1
            iter_args(%i = %diag, %hd = %head0) -> (index, index) {
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
          %inext = arith.select %wrap, %diag, %i1 : index
          %hd1 = arith.addi %hd, %c1 : index
          %hdnext = arith.select %wrap, %hd1, %hd : index
          scf.yield %inext, %hdnext : index, index
        }
        %next = arith.addi %base, %tile_steps : index
        tiledattn.yield %next : index
      }
    }
  // uniform_index: the consumer index reaches the region through redux.sync,
  // so ptxas keeps the descriptors and barrier addresses that follow from it
  // on the uniform datapath; without it they spilled (176 bytes, 46 local
  // loads and stores a query block in the row form; 56 and 14 with it).
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
      %diag2 = arith.muli %bx, %c2 : index
      %diag = arith.minui %diag2, %qb : index
      %blocks = arith.subi %qb, %diag : index
      %tile_steps = arith.muli %group, %blocks : index
      %key0 = arith.muli %bx, %c128 : index
      %key = arith.addi %key0, %crow : index
      %head0 = arith.muli %by, %group : index
      // The query blocks from the diagonal on, of the group's heads in
      // turn: block %i of head %hd, carried.
      %grads:4 = scf.for %j = %c0 to %tile_steps step %c1
          iter_args(%dv = %zero, %dk = %zero, %i = %diag, %hd = %head0) -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>, index, index) {
        %pos = arith.addi %base, %j : index
        %row = arith.muli %i, %c64 : index
        %qs, %qt = tiledattn.ring.get %qr[%pos] : !ring
        %ds, %dt = tiledattn.ring.get %dor[%pos] : !ring
        %sf = tiledattn.mma_async %qs[%c0] uniform_a, %ks[%crow] b_rows(64) transpose_b : !slot, !kslot -> !tiledattn.future<64x64xf32>
        %dpf = tiledattn.mma_async %ds[%c0] uniform_a, %vs[%crow] b_rows(64) transpose_b : !slot, !kslot -> !tiledattn.future<64x64xf32>
        %sraw = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
        // Keys after the query: -inf, so P = 0 there (the forward's mask).
        %st = tiledattn.mask %sraw, %row, %key, %sk causal : !tiledattn.tile<64x64xf32>
        %p = tiledattn.exp_from_lse %st, %lse[%bz, %hd, %row] per_row, %scale : !tiledattn.tile<64x64xf32>, !rows
        tiledattn.stage %p into %pbuf[%crow] : !tiledattn.tile<64x64xf32>, !half
        %dvf = tiledattn.mma_async %pbuf[%crow] transpose_a uniform_a, %ds acc(%dv) : !half, !slot -> !tiledattn.future<64x128xf32>
        %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
        %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %hd, %row] per_row scale(%scale) : !tiledattn.tile<64x64xf32>, !captured_rows
        tiledattn.stage %dst into %dsbuf[%crow] : !tiledattn.tile<64x64xf32>, !half
        %dkf = tiledattn.mma_async %dsbuf[%crow] transpose_a uniform_a, %qs acc(%dk) : !half, !slot -> !tiledattn.future<64x128xf32>
        // Both consumers' dS are staged: dQ_i's column half c, over all
        // 128 keys (the first consumer's dS by K's first 64 rows, then the
        // second's by the next 64, one chain of wgmmas), into block 2i + c.
        tiledattn.consumers_sync
        %dv2 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
        %dk2 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
        %half = arith.muli %i, %c2 : index
        %block = arith.addi %half, %c : index
        scf.if %first_half {
          %dqf0 = tiledattn.mma_async %dsbuf[%c0] uniform_a, %ks[%c0] b_rows(64) b_col(0) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dqf = tiledattn.mma_async %dsbuf[%c64] uniform_a, %ks[%c64] b_rows(64) b_col(0) acc_in_flight(%dqf0) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %hd, %block] via %dqbuf0 : !tiledattn.tile<64x64xf32>, !accum, !half
        } else {
          %dqf0 = tiledattn.mma_async %dsbuf[%c0] uniform_a, %ks[%c0] b_rows(64) b_col(64) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dqf = tiledattn.mma_async %dsbuf[%c64] uniform_a, %ks[%c64] b_rows(64) b_col(64) acc_in_flight(%dqf0) : !half, !kslot -> !tiledattn.future<64x64xf32>
          %dq = tiledattn.wait %dqf : !tiledattn.future<64x64xf32>
          tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %hd, %block] via %dqbuf1 : !tiledattn.tile<64x64xf32>, !accum, !half
        }
        tiledattn.ring.release %qr, %qt : !ring
        tiledattn.ring.release %dor, %dt : !ring
        // Both dQ mmas have read the staged dS before the next block's.
        tiledattn.consumers_sync
        %i1 = arith.addi %i, %c1 : index
        %wrap = arith.cmpi eq, %i1, %qb : index
        %inext = arith.select %wrap, %diag, %i1 : index
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
