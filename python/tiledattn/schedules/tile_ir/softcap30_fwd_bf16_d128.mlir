// A tile program edited by hand: the warp-specialized program that
//   tiledattn-opt sdpa_fwd_bf16_d128.mlir --tiledattn-tile-sdpa --canonicalize --cse
// prints for this directory's sdpa_fwd_bf16_d128 schedule, with one op added
// in each loop between the two mmas: a tiledattn.score_mod that caps the
// scaled scores at 30 (Gemma-2's softcap, FlashAttention's convention):
//   O = softmax(30 * tanh(scale * Q K^T / 30)) V
// The online softmax then takes scale 1, since the scores arrive scaled.
// Compile with
//   tiledattn-compile softcap30_fwd_bf16_d128.mlir -o softcap30_fwd_bf16_d128
// (python/test/test_gpu.py checks the bundle against float64).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
!qring = !tiledattn.ring<1, 128x128xbf16>
!ring = !tiledattn.ring<2, 128x128xbf16>
!slot = !tiledattn.smem<128x128xbf16>
!future = !tiledattn.future<64x128xf32>
!scores = !tiledattn.tile<64x128xf32>
!rows = !tiledattn.tile<64xf32>
!probs = !tiledattn.tile<64x128xbf16>

func.func @softcap30_fwd_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                                   %scale: f32)
    attributes {tiledattn.kernel,
                tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128,
                    num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                    consumer_warpgroups = 2, pingpong = true>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %one = arith.constant 1.0 : f32
  %cap = arith.constant 30.0 : f32
  %qr = tiledattn.ring releases(8) : !qring
  %kr = tiledattn.ring releases(8) : !ring
  %vr = tiledattn.ring releases(8) : !ring
  // This block's tile: query rows [qrow, qrow + 128) of head h in batch b.
  %qblock = gpu.block_id x
  %h = gpu.block_id y
  %b = gpu.block_id z
  %sk = memref.dim %k, %c2 : !head
  %hq = memref.dim %q, %c1 : !head
  %hkv = memref.dim %k, %c1 : !head
  %group = arith.divui %hq, %hkv : index
  %h_kv = arith.divui %h, %group : index
  %qrow = arith.muli %qblock, %c128 : index
  // Whole blocks of 128 keys need no mask; the ragged last one does.
  %blocks = arith.ceildivui %sk, %c128 : index
  %unmasked = arith.divui %sk, %c128 : index
  tiledattn.warp_specialize producer regs(24) {
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      tiledattn.ring.put %qr[%c0] : !qring {
      ^bb0(%slot: !slot):
        tiledattn.tma_load %q[%b, %h, %qrow] into %slot : !head, !slot
      }
      scf.for %j = %c0 to %blocks step %c1 {
        %row = arith.muli %j, %c128 : index
        tiledattn.ring.put %kr[%j] : !ring {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %k[%b, %h_kv, %row] into %slot : !head, !slot
        }
        tiledattn.ring.put %vr[%j] : !ring {
        ^bb0(%slot: !slot):
          tiledattn.tma_load %v[%b, %h_kv, %row] into %slot : !head, !slot
        }
      }
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    %o0 = tiledattn.constant 0.0 : !scores
    %m0 = tiledattn.constant 0xFF800000 : !rows
    %l0 = tiledattn.constant 0.0 : !rows
    %scale_over_cap = arith.divf %scale, %cap : f32
    %arow = arith.muli %c, %c64 : index
    %row0 = arith.addi %qrow, %arow : index
    %qs, %qt = tiledattn.ring.get %qr[%c0] : !qring
    %u:3 = scf.for %j = %c0 to %unmasked step %c1
        iter_args(%acc = %o0, %mx = %m0, %sum = %l0) -> (!scores, !rows, !rows) {
      %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
      %sf = tiledattn.turn -> !future {
        %f = tiledattn.mma_async %qs[%arow], %ks transpose_b : !slot, !slot -> !future
        tiledattn.yield %f : !future
      }
      %s = tiledattn.wait %sf : !future
      tiledattn.ring.release %kr, %kt : !ring
      %col = arith.muli %j, %c128 : index
      // The edit: 30 * tanh(scale * s / 30).
      %capped = tiledattn.score_mod %s[%row0, %col] : !scores {
      ^bb0(%x: f32, %q_idx: index, %kv_idx: index):
        %t = arith.mulf %x, %scale_over_cap : f32
        %th = math.tanh %t : f32
        %y = arith.mulf %th, %cap : f32
        tiledattn.yield %y : f32
      }
      %p, %mx1, %sum1, %alpha = tiledattn.online_softmax %capped, %mx, %sum, %one
          : !scores, !rows -> !probs
      %acc1 = tiledattn.rescale %acc, %alpha : !scores, !rows
      %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
      %of = tiledattn.turn -> !future {
        %f = tiledattn.mma_async %p, %vs acc(%acc1) : !probs, !slot -> !future
        tiledattn.yield %f : !future
      }
      %acc2 = tiledattn.wait %of : !future
      tiledattn.ring.release %vr, %vt : !ring
      scf.yield %acc2, %mx1, %sum1 : !scores, !rows, !rows
    }
    %r:3 = scf.for %j = %unmasked to %blocks step %c1
        iter_args(%acc = %u#0, %mx = %u#1, %sum = %u#2) -> (!scores, !rows, !rows) {
      %ks, %kt = tiledattn.ring.get %kr[%j] : !ring
      %sf = tiledattn.turn -> !future {
        %f = tiledattn.mma_async %qs[%arow], %ks transpose_b : !slot, !slot -> !future
        tiledattn.yield %f : !future
      }
      %s = tiledattn.wait %sf : !future
      tiledattn.ring.release %kr, %kt : !ring
      %col = arith.muli %j, %c128 : index
      // The edit, before the mask (which would otherwise be capped to -30).
      %capped = tiledattn.score_mod %s[%row0, %col] : !scores {
      ^bb0(%x: f32, %q_idx: index, %kv_idx: index):
        %t = arith.mulf %x, %scale_over_cap : f32
        %th = math.tanh %t : f32
        %y = arith.mulf %th, %cap : f32
        tiledattn.yield %y : f32
      }
      %sm = tiledattn.mask %capped, %row0, %col, %sk : !scores
      %p, %mx1, %sum1, %alpha = tiledattn.online_softmax %sm, %mx, %sum, %one
          : !scores, !rows -> !probs
      %acc1 = tiledattn.rescale %acc, %alpha : !scores, !rows
      %vs, %vt = tiledattn.ring.get %vr[%j] : !ring
      %of = tiledattn.turn -> !future {
        %f = tiledattn.mma_async %p, %vs acc(%acc1) : !probs, !slot -> !future
        tiledattn.yield %f : !future
      }
      %acc2 = tiledattn.wait %of : !future
      tiledattn.ring.release %vr, %vt : !ring
      scf.yield %acc2, %mx1, %sum1 : !scores, !rows, !rows
    }
    tiledattn.ring.release %qr, %qt : !qring
    tiledattn.store %r#0, %r#1, %r#2 into %o[%b, %h, %row0] lse(%lse)
        : !scores, !rows, !head, !lse
  }
  return
}
