// The backward's main loop (issue 23): dK, dV and dQ's partial sums for
// one 128-key tile per block, bf16, head dim 128, no mask, as a hand-written
// tile program (docs/Design.md, "The backward as tile IR"), in
// FlashAttention-3's layout for this head dim.
//
// The one autograd runs (tiledattn.backward_kernels.DEFAULT_MAIN; GPU
// suite passed at aef0c41 on an H100); main_bf16_d128.mlir, the
// one-consumer form, is the reference it is A/B-timed against.
//
// The producer's thread loads the tile's K and V once, then streams Q_i
// and dO_i, 64 queries at a time, through two-slot rings. Two consumer
// warpgroups; consumer c owns keys 64c .. 64c + 63 of the tile (K_c, V_c)
// and, per query block i:
//   S = Q_i K_c^T,  dP = dO_i V_c^T        (queries x keys; B from row 64c)
//   P = exp(scale S - lse_i)               (exp_from_lse per_row)
//   dS = P (dP - D_i)                      (softmax_grad per_row)
//   P and dS into shared memory, rows 64c .. 64c + 63 (stage)
//   dV_c += P^T dO_i,  dK_c += dS^T Q_i    (A read transposed)
//   both consumers' dS staged (consumers_sync), dQ_i's column half c over
//   the tile's 128 keys: dS_0 K_0 + dS_1 K_1, 64 x 64, added into dq_frags
//   by one bulk reduction (bulk_reduce_add)
// and at the tile's end writes dK_c and dV_c, once, as bf16 (store_tile:
// the block owns those rows). dS carries the softmax's scale
// (softmax_grad ... scale), so dQ and dK come out scaled.
//
// Why this form: with a query per row the saved lse and D are two values a
// thread; the transposed form (S^T = K Q^T, which keeps P^T and dS^T in
// registers as the A of dV and dK) needs 32, and with dK, dV (128), S and
// dP (64) live that spilled 252 bytes in the loop at 240 registers. Here
// ptxas spills a few loop-invariant addresses (test/Pipeline/
// bwd-main-program.mlir), and the shared-memory As carry uniform_a.
// docs/perf-notes.md has the measurements.
//
// GQA and cross-attention: a block owns a 128-key tile of one K/V head
// and walks the query blocks of every query head of its group (Hq / Hkv
// heads, head-major), so dK and dV are summed over the group in registers
// and written once, with no atomics; q may be longer or shorter than k.
// The tiles of tiledattn.for_each_tile (key blocks of k, heads of k,
// batches) are the launch's grid (the manifest's, read off its bounds).
//
// It takes tiledattn.sdpa's operands, to be launched on given o and lse:
// q = Q [B, Hq, Sq, 128], k = K and v = V [B, Hkv, Sk, 128], o = dO (the
// fourth TMA operand), lse = the forward's lse; then the captures
// (contiguous): delta = D (the preprocess program's), dq_frags ([B, Hq,
// 2 ceil(Sq / 64), 4096] f32, zeroed: block 2i + c is query block i's
// column half c in a warpgroup's register order, which
// tiledattn.backward_kernels puts back in row order), grad_k and grad_v
// ([B, Hkv, Sk, 128] bf16, the gradients themselves).
// torch.ops.tiledattn.run_bundle launches it, from
// tiledattn.backward_kernels.
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
func.func @bwd_main_bf16_d128_rows(%q: !head, %k: !head, %v: !head, %do: !head,
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
        %sf = tiledattn.mma_async %qs[%c0] uniform_a, %ks[%crow] b_rows(64) transpose_b : !slot, !kslot -> !tiledattn.future<64x64xf32>
        %dpf = tiledattn.mma_async %ds[%c0] uniform_a, %vs[%crow] b_rows(64) transpose_b : !slot, !kslot -> !tiledattn.future<64x64xf32>
        %sraw = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
        // Where the mask goes: none here (the identity, which folds
        // away); mask=causal sets keys after the query to -inf, P = 0.
        %st = tiledattn.mask %sraw, %row, %key : !tiledattn.tile<64x64xf32>
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
