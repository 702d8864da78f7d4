// The backward's main loop (issue 23): dK, dV and dQ's partial sums for
// one 64-key tile per block, bf16, head dim 128, no mask, as a hand-written
// tile program (docs/Design.md, "The backward as tile IR").
//
// The producer's thread loads the tile's K and V once, then streams Q_i
// and dO_i, 64 queries at a time, through two-slot rings. The consumer
// warpgroup, per query block i:
//   S^T  = K Q_i^T,  dP^T = V dO_i^T               (keys x queries)
//   P^T  = exp(scale S^T - lse_i)                  (exp_from_lse)
//   dS^T = P^T (dP^T - D_i)                        (softmax_grad)
//   dS^T into shared memory                        (stage)
//   dV += P^T dO_i,  dK += dS^T Q_i                 (A from registers)
//   dQ_i += dS K: A = the staged dS^T, read transposed, the partial sum
//                 added into dq_frags by one bulk reduction from shared
//                 memory                          (bulk_reduce_add)
// and at the tile's end adds dK and dV into dk_accum and dv_accum (one
// block writes each row: sums into zeroed f32). The softmax's scale is
// left out of dS: dQ and dK are dq_accum * scale and dk_accum * scale.
//
// One consumer warpgroup, so that it has 255 registers a thread (its
// setmaxnreg budget of 256; ptxas allocates up to 255): dK and dV hold 128,
// dQ's accumulator 64 while they live (with two warpgroups, 168 a thread,
// it spilled 1.3 KB). It still spills about 80 bytes.
//
// It takes tiledattn.sdpa's operands, to be launched on given o and lse:
// q = Q, k = K, v = V, o = dO (the fourth TMA operand), lse = the
// forward's lse; then the captures (contiguous):
// delta = D (the preprocess program's), dq_frags ([B, H, ceil(S / 64),
// 8192] f32, zeroed: each 64-query block of dQ in the warpgroup's register
// order, which tiledattn.backward_kernels puts back in row order), dk_accum
// and dv_accum ([B, H, S, 128] f32, zeroed). The grid is the forward's over 64-row
// tiles of q, so q and k have one length (self-attention) and one number
// of heads (no GQA yet). torch.ops.tiledattn.run_bundle launches it, from
// tiledattn.backward_kernels (docs/Design.md).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!captured_rows = memref<?x?x?xf32>
!accum = memref<?x?x?x?xf32>
!frags = memref<?x?x?x?xf32>
!slot = !tiledattn.smem<64x128xbf16>
!ring = !tiledattn.ring<2, 64x128xbf16>
func.func @bwd_main_bf16_d128(%q: !head, %k: !head, %v: !head, %do: !head, %lse: !rows,
                              %scale: f32, %delta: !captured_rows, %dq_frags: !frags,
                              %dk_accum: !accum, %dv_accum: !accum)
    attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // The tile's K and V (a slot each per tile), Q_i and dO_i (a slot each
  // per query block); each slot released by the consumer's 4 warps.
  %kr = tiledattn.ring releases(4) : !ring
  %vr = tiledattn.ring releases(4) : !ring
  %qr = tiledattn.ring releases(4) : !ring
  %dor = tiledattn.ring releases(4) : !ring
  // dS^T, for dQ's mma; dQ's f32 partial sums (32 KB) for their reduction.
  %dsbuf = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
  %dqbuf = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %s = memref.dim %q, %c2 : !head
    %kb = arith.ceildivui %s, %c64 : index
    %qb = arith.ceildivui %s, %c64 : index
    %h = memref.dim %q, %c1 : !head
    %b = memref.dim %q, %c0 : !head
    scf.if %first {
      %n = tiledattn.for_each_tile %kb, %h, %b iter_args(%c0 : index) -> index {
      ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
        %key = arith.muli %bx, %c64 : index
        tiledattn.ring.put %kr[%done] : !ring {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %k[%bz, %by, %key] into %slot : !head, !slot
        }
        tiledattn.ring.put %vr[%done] : !ring {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %v[%bz, %by, %key] into %slot : !head, !slot
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
  } consumers(1) regs(256) {
  ^bb0(%c: index):
    %zero = tiledattn.constant 0.0 : !tiledattn.tile<64x128xf32>
    %s = memref.dim %q, %c2 : !head
    %kb = arith.ceildivui %s, %c64 : index
    %qb = arith.ceildivui %s, %c64 : index
    %h = memref.dim %q, %c1 : !head
    %b = memref.dim %q, %c0 : !head
    %n = tiledattn.for_each_tile %kb, %h, %b iter_args(%c0 : index) -> index {
    ^bb0(%bx: index, %by: index, %bz: index, %done: index, %kv: index):
      %ks, %kt = tiledattn.ring.get %kr[%done] : !ring
      %vs, %vt = tiledattn.ring.get %vr[%done] : !ring
      %base = arith.muli %done, %qb : index
      %grads:2 = scf.for %i = %c0 to %qb step %c1
          iter_args(%dv = %zero, %dk = %zero) -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>) {
        %pos = arith.addi %base, %i : index
        %col = arith.muli %i, %c64 : index
        %qs, %qt = tiledattn.ring.get %qr[%pos] : !ring
        %ds, %dt = tiledattn.ring.get %dor[%pos] : !ring
        %sf = tiledattn.mma_async %ks[%c0], %qs transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
        %dpf = tiledattn.mma_async %vs[%c0], %ds transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
        %st = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
        %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
        %p = tiledattn.exp_from_lse %st, %lse[%bz, %by, %col], %scale : !tiledattn.tile<64x64xf32>, !rows
        %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %by, %col] : !tiledattn.tile<64x64xf32>, !captured_rows
        tiledattn.stage %dst into %dsbuf[%c0] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<64x64xbf16>
        %pb = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        %dsb = tiledattn.truncate %dst : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
        %dvf = tiledattn.mma_async %pb, %ds acc(%dv) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dkf = tiledattn.mma_async %dsb, %qs acc(%dk) : !tiledattn.tile<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dv1 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
        %dk1 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
        %dqf = tiledattn.mma_async %dsbuf[%c0] transpose_a, %ks : !tiledattn.smem<64x64xbf16>, !slot -> !tiledattn.future<64x128xf32>
        %dq = tiledattn.wait %dqf : !tiledattn.future<64x128xf32>
        tiledattn.ring.release %qr, %qt : !ring
        tiledattn.ring.release %dor, %dt : !ring
        tiledattn.bulk_reduce_add %dq into %dq_frags[%bz, %by, %i] via %dqbuf : !tiledattn.tile<64x128xf32>, !frags, !tiledattn.smem<128x128xbf16>
        scf.yield %dv1, %dk1 : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>
      }
      tiledattn.ring.release %kr, %kt : !ring
      tiledattn.ring.release %vr, %vt : !ring
      %key = arith.muli %bx, %c64 : index
      tiledattn.reduce_add %grads#1 into %dk_accum[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !accum
      tiledattn.reduce_add %grads#0 into %dv_accum[%bz, %by, %key] : !tiledattn.tile<64x128xf32>, !accum
      tiledattn.yield %kv : index
    }
    // The last reduction has read its stage before the block exits.
    tiledattn.tma_store_wait
  }
  return
}
