// The backward's dK and dV for the deterministic mode (issue 23): the row
// form, main_bf16_d128_rows.mlir (which says what each step computes),
// without dQ: dK and dV only, each written once by the block that owns its
// keys, so nothing is added in an order that changes run to run; dQ comes
// from dq_bf16_d128.mlir, in registers. The two consumers never meet (each
// stages and reads only its own P and dS). GQA / MQA and q, k of their own
// lengths as the row form.
//
// Causal (torch's top-left) is its derived form, as the row form's is
// (tiledattn-derive-program{mask=causal}): each tile's walk starts at the
// first query block that sees its keys (tiledattn.first_query_block) and S
// is masked (tiledattn.mask, the identity here).
//
// Captures: delta = D, grad_k and grad_v ([B, Hkv, Sk, 128] bf16).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!rows = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!captured_rows = memref<?x?x?xf32>
!grad = memref<?x?x?x?xbf16>
!slot = !tiledattn.smem<64x128xbf16>
!ring = !tiledattn.ring<2, 64x128xbf16>
!kslot = !tiledattn.smem<128x128xbf16>
!kring = !tiledattn.ring<1, 128x128xbf16>
!half = !tiledattn.smem<128x64xbf16>
func.func @bwd_dkdv_bf16_d128(%q: !head, %k: !head, %v: !head, %do: !head,
                               %lse: !rows, %scale: f32, %delta: !captured_rows,
                               %grad_k: !grad, %grad_v: !grad)
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
  // P and dS (queries x keys), consumer c's in rows 64c .. 64c + 63.
  %pbuf = tiledattn.alloc : !half
  %dsbuf = tiledattn.alloc : !half
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
  // uniform_index, as the row form's: 20 / 32 bytes spilled instead of 36 /
  // 40, and the mode 1-6% faster (H100, forty-second session).
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
        // Where the mask goes, as in the row form: none here (the
        // identity); mask=causal sets keys after the query to -inf.
        %st = tiledattn.mask %sraw, %row, %key : !tiledattn.tile<64x64xf32>
        %p = tiledattn.exp_from_lse %st, %lse[%bz, %hd, %row] per_row, %scale : !tiledattn.tile<64x64xf32>, !rows
        tiledattn.stage %p into %pbuf[%crow] : !tiledattn.tile<64x64xf32>, !half
        %dvf = tiledattn.mma_async %pbuf[%crow] transpose_a uniform_a, %ds acc(%dv) : !half, !slot -> !tiledattn.future<64x128xf32>
        %dpt = tiledattn.wait %dpf : !tiledattn.future<64x64xf32>
        %dst = tiledattn.softmax_grad %p, %dpt, %delta[%bz, %hd, %row] per_row scale(%scale) : !tiledattn.tile<64x64xf32>, !captured_rows
        tiledattn.stage %dst into %dsbuf[%crow] : !tiledattn.tile<64x64xf32>, !half
        %dkf = tiledattn.mma_async %dsbuf[%crow] transpose_a uniform_a, %qs acc(%dk) : !half, !slot -> !tiledattn.future<64x128xf32>
        %dv2 = tiledattn.wait %dvf : !tiledattn.future<64x128xf32>
        %dk2 = tiledattn.wait %dkf : !tiledattn.future<64x128xf32>
        tiledattn.ring.release %qr, %qt : !ring
        tiledattn.ring.release %dor, %dt : !ring
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
  }
  return
}
