// RUN: tiledattn-opt %s -allow-unregistered-dialect --tiledattn-lower-mma | FileCheck %s

// tiledattn.mask, score_mod, online_softmax, rescale, constant, store,
// tma_store and finish_rows on a warpgroup's accumulator registers (64 x 64: 32 f32 a thread, register
// 4i + h at row warpRow + group (+ 8 for h >= 2), key 8i + 2 * quad (+ 1 for
// odd h)), as convert-sdpa-to-hopper emits them.

!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!rows = !llvm.struct<(f32, f32)>
!acc16 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
!words16 = !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
!words128 = !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
!acc128 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
module attributes {gpu.container_module} {
  gpu.module @m {
    // CHECK-LABEL: gpu.func @causal_mask
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[ROW:.*]]: index, %[[COL:.*]]: index, %[[SK:.*]]: index)
    gpu.func @causal_mask(%s: !acc, %row: index, %col: index, %sk: index) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      // The thread's place: warp of its warpgroup (16 rows each), group
      // (lane / 4) and quad (lane % 4).
      // CHECK: %[[TID:.*]] = gpu.thread_id x
      // CHECK: %[[IN_WG:.*]] = arith.remui %[[TID]], %c128
      // CHECK: %[[LANE:.*]] = arith.remui %[[IN_WG]], %c32
      // CHECK: %[[GROUP:.*]] = arith.divui %[[LANE]], %c4
      // CHECK: %[[QUAD:.*]] = arith.remui %[[LANE]], %c4
      // CHECK: %[[WARP:.*]] = arith.divui %[[IN_WG]], %c32
      // CHECK: %[[WARPROW:.*]] = arith.muli %[[WARP]], %c16
      // CHECK: %[[OWN:.*]] = arith.addi %[[WARPROW]], %[[GROUP]]
      // CHECK: %[[ROWBASE:.*]] = arith.addi %[[ROW]], %[[OWN]]
      // The thread's first key, then each row's first masked key: the
      // sequence's end, or the row + 1 (rows g and g + 8).
      // CHECK: %[[Q2:.*]] = arith.muli %[[QUAD]], %c2
      // CHECK: %[[KEY0:.*]] = arith.addi %[[COL]], %[[Q2]]
      // CHECK: %[[KEY0I:.*]] = arith.index_castui %[[KEY0]] : index to i32
      // CHECK: %[[NEXT0:.*]] = arith.addi %[[ROWBASE]], %c1
      // CHECK: %[[LIM0:.*]] = arith.minui %[[SK]], %[[NEXT0]]
      // CHECK: %[[LIM0I:.*]] = arith.index_castui %[[LIM0]] : index to i32
      // CHECK: %[[T0:.*]] = arith.subi %[[LIM0I]], %[[KEY0I]] : i32
      // CHECK: %[[NEXT1:.*]] = arith.addi %[[ROWBASE]], %c9
      // CHECK: %[[LIM1:.*]] = arith.minui %[[SK]], %[[NEXT1]]
      // CHECK: %[[LIM1I:.*]] = arith.index_castui %[[LIM1]] : index to i32
      // CHECK: %[[T1:.*]] = arith.subi %[[LIM1I]], %[[KEY0I]] : i32
      // Register 4i + h: key offset 8i + h % 2 against its row's threshold.
      // CHECK: %[[B0:.*]] = arith.cmpi sge, %c0_i32, %[[T0]] : i32
      // CHECK: arith.select %[[B0]], %cst, %{{.*}} : f32
      // CHECK: %[[B1:.*]] = arith.cmpi sge, %c1_i32, %[[T0]] : i32
      // CHECK: arith.select %[[B1]], %cst, %{{.*}} : f32
      // CHECK: arith.cmpi sge, %c0_i32{{.*}}, %[[T1]] : i32
      // CHECK: arith.cmpi sge, %c1_i32{{.*}}, %[[T1]] : i32
      // CHECK: arith.cmpi sge, %c8_i32{{.*}}, %[[T0]] : i32
      // CHECK: arith.cmpi sge, %c57_i32{{.*}}, %[[T1]] : i32
      // CHECK-NOT: arith.cmpi
      // The result: the registers back in a struct.
      // CHECK: %[[OUT:.*]] = llvm.insertvalue %{{.*}}[31]
      // CHECK: %[[TILE:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : {{.*}} to !tiledattn.tile<64x64xf32>
      // CHECK: "test.use"(%[[TILE]])
      %sm = tiledattn.mask %st, %row, %col, %sk causal : !tiledattn.tile<64x64xf32>
      "test.use"(%sm) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // Without causal only the sequence's end bounds the keys.
    // CHECK-LABEL: gpu.func @end_mask
    // CHECK-NOT: arith.minui
    // CHECK: arith.cmpi sge
    // CHECK: gpu.return
    gpu.func @end_mask(%s: !acc, %row: index, %col: index, %sk: index) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %sm = tiledattn.mask %st, %row, %col, %sk : !tiledattn.tile<64x64xf32>
      "test.use"(%sm) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // Causal without a bound (the backward's derived mask): each row's
    // threshold is its row + 1 (+ 8 for the second) less the first key.
    // CHECK-LABEL: gpu.func @causal_only_mask
    // CHECK-NOT: arith.minui
    // CHECK: %[[N0:.*]] = arith.addi %{{.*}}, %c1 : index
    // CHECK: arith.index_castui %[[N0]] : index to i32
    // CHECK: arith.addi %{{.*}}, %c9 : index
    // CHECK-NOT: arith.minui
    // CHECK-COUNT-32: arith.cmpi sge
    // CHECK-NOT: arith.cmpi
    // CHECK: gpu.return
    gpu.func @causal_only_mask(%s: !acc, %row: index, %col: index) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %sm = tiledattn.mask %st, %row, %col causal : !tiledattn.tile<64x64xf32>
      "test.use"(%sm) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // Each register times its row's factor: registers 4i, 4i + 1 row g,
    // 4i + 2, 4i + 3 row g + 8.
    // CHECK-LABEL: gpu.func @rescale
    // CHECK-SAME: (%[[O:.*]]: !llvm.struct<{{.*}}>, %[[F:.*]]: !llvm.struct<(f32, f32)>)
    gpu.func @rescale(%o: !acc, %alpha: !rows) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc to !tiledattn.tile<64x64xf32>
      %at = builtin.unrealized_conversion_cast %alpha : !rows to !tiledattn.tile<64xf32>
      // CHECK-DAG: %[[O0:.*]] = llvm.extractvalue %[[O]][0]
      // CHECK-DAG: %[[O1:.*]] = llvm.extractvalue %[[O]][1]
      // CHECK-DAG: %[[O2:.*]] = llvm.extractvalue %[[O]][2]
      // CHECK-DAG: %[[O3:.*]] = llvm.extractvalue %[[O]][3]
      // CHECK-DAG: %[[F0:.*]] = llvm.extractvalue %[[F]][0]
      // CHECK-DAG: %[[F1:.*]] = llvm.extractvalue %[[F]][1]
      // CHECK: arith.mulf %[[O0]], %[[F0]] : f32
      // CHECK-NEXT: arith.mulf %[[O1]], %[[F0]] : f32
      // CHECK-NEXT: arith.mulf %[[O2]], %[[F1]] : f32
      // CHECK-NEXT: arith.mulf %[[O3]], %[[F1]] : f32
      // CHECK-COUNT-28: arith.mulf
      // CHECK-NOT: arith.mulf
      // CHECK: builtin.unrealized_conversion_cast %{{.*}} : {{.*}} to !tiledattn.tile<64x64xf32>
      %o1 = tiledattn.rescale %ot, %at : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
      "test.use"(%o1) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }
    // tiledattn.resize: a tile's first columns are its first words (four i32
    // per 16 columns of an mma's A), so widening appends zero words and
    // narrowing keeps the first (the others' extracts go unused).
    // CHECK-LABEL: gpu.func @resize
    // CHECK-SAME: (%[[P:.*]]: !llvm.struct<{{.*}}>)
    // CHECK-COUNT-16: llvm.extractvalue %[[P]]
    // CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
    // CHECK-COUNT-16: llvm.insertvalue %{{.*}}, %{{.*}}[{{[0-9]+}}]
    // CHECK: llvm.insertvalue %[[ZERO]], %{{.*}}[16]
    // CHECK-COUNT-15: llvm.insertvalue %[[ZERO]]
    // CHECK: %[[WIDE:.*]] = builtin.unrealized_conversion_cast %{{.*}} : {{.*}} to !tiledattn.tile<64x128xbf16>
    // CHECK: "test.use"(%[[WIDE]])
    // CHECK: %[[W7:.*]] = llvm.extractvalue %[[P]][7]
    // CHECK: llvm.insertvalue %[[W7]], %{{.*}}[7]
    // CHECK-NEXT: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)> to !tiledattn.tile<64x32xbf16>
    gpu.func @resize(%p: !words16) kernel {
      %pt = builtin.unrealized_conversion_cast %p : !words16 to !tiledattn.tile<64x64xbf16>
      %wide = tiledattn.resize %pt : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xbf16>
      "test.use"(%wide) : (!tiledattn.tile<64x128xbf16>) -> ()
      %narrow = tiledattn.resize %pt : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x32xbf16>
      "test.use"(%narrow) : (!tiledattn.tile<64x32xbf16>) -> ()
      gpu.return
    }
    // The online softmax with the op's row maxima (of scale * log2(e) * s):
    // the block's raw maximum over the thread's values and its quad, scaled
    // once, against the running one; -inf rows guarded; P = 2^(s * scale *
    // log2(e) - m'), packed into bf16 pairs for the next mma's A.
    // CHECK-LABEL: gpu.func @online_softmax
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[M:.*]]: !llvm.struct<(f32, f32)>, %[[L:.*]]: !llvm.struct<(f32, f32)>, %[[SCALE:.*]]: f32)
    gpu.func @online_softmax(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      // CHECK-DAG: %[[M0:.*]] = llvm.extractvalue %[[M]][0]
      // CHECK-DAG: %[[L0:.*]] = llvm.extractvalue %[[L]][0]
      // CHECK: %[[SL2:.*]] = arith.mulf %[[SCALE]], %{{.*}} : f32
      // CHECK: arith.maxnumf
      // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
      // CHECK: %[[BMAX:.*]] = arith.maxnumf
      // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
      // CHECK: %[[BMAX0:.*]] = arith.maxnumf
      // CHECK: %[[BS:.*]] = arith.mulf %[[BMAX0]], %[[SL2]] : f32
      // CHECK: %[[NEWM:.*]] = arith.maxnumf %[[M0]], %[[BS]] : f32
      // CHECK: %[[ISINF:.*]] = arith.cmpf oeq, %[[NEWM]], %{{.*}} : f32
      // CHECK: %[[SHIFT:.*]] = arith.select %[[ISINF]], %{{.*}}, %[[NEWM]] : f32
      // CHECK: %[[D:.*]] = arith.subf %[[M0]], %[[SHIFT]] : f32
      // CHECK: %[[ALPHA:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[D]])
      // CHECK: %[[NEG:.*]] = arith.negf %[[SHIFT]] : f32
      // CHECK: %[[X:.*]] = llvm.intr.fma(%{{.*}}, %[[SL2]], %[[NEG]])
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]])
      // CHECK: llvm.intr.fma(%[[L0]], %[[ALPHA]], %{{.*}})
      // CHECK: arith.truncf %{{.*}} : f32 to bf16
      // CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
      // CHECK: %[[P:.*]] = llvm.insertvalue %{{.*}}[15] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
      // CHECK: builtin.unrealized_conversion_cast %[[P]] : {{.*}} to !tiledattn.tile<64x64xbf16>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
      "test.use"(%p, %m1, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    // raw_max: the running maximum of the raw scores (no multiply before the
    // max), scaled once on the way to the exponents and the rescale factor;
    // scale_max turns such a maximum into the scaled one the stores take.
    // CHECK-LABEL: gpu.func @online_softmax_raw_max
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[M:.*]]: !llvm.struct<(f32, f32)>, %[[L:.*]]: !llvm.struct<(f32, f32)>, %[[SCALE:.*]]: f32)
    // CHECK-DAG: %[[M0:.*]] = llvm.extractvalue %[[M]][0]
    // CHECK: %[[SL2:.*]] = arith.mulf %[[SCALE]], %{{.*}} : f32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
    // CHECK: %[[BMAX0:.*]] = arith.maxnumf
    // CHECK-NEXT: %[[NEWM:.*]] = arith.maxnumf %[[M0]], %[[BMAX0]] : f32
    // CHECK-NEXT: %[[SHIFT:.*]] = arith.mulf %[[NEWM]], %[[SL2]] : f32
    // CHECK-NEXT: %[[OLD:.*]] = arith.mulf %[[M0]], %[[SL2]] : f32
    // CHECK-NEXT: %[[D:.*]] = arith.subf %[[OLD]], %[[SHIFT]] : f32
    // CHECK-NEXT: %[[ALPHA:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[D]])
    // CHECK: %[[NEG:.*]] = arith.negf %[[SHIFT]] : f32
    // CHECK: llvm.intr.fma(%{{.*}}, %[[SL2]], %[[NEG]])
    // The new maximum stays raw; scale_max multiplies it by scale * log2(e).
    // CHECK: %[[SL2B:.*]] = arith.mulf %[[SCALE]], %{{.*}} : f32
    // CHECK-NEXT: arith.mulf %{{.*}}, %[[SL2B]] : f32
    // CHECK-NEXT: arith.mulf %{{.*}}, %[[SL2B]] : f32
    gpu.func @online_softmax_raw_max(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale finite raw_max
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
      %mx = tiledattn.scale_max %m1, %scale : !tiledattn.tile<64xf32>
      "test.use"(%p, %mx, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    // f32 probs: the exponents as they are, in the accumulator's layout; a
    // tiledattn.truncate packs them into an mma's A words, here after a
    // barrier that stands for the wait the program puts between.
    // CHECK-LABEL: gpu.func @online_softmax_f32_probs
    // CHECK-NOT: arith.truncf
    // CHECK: nvvm.barrier0
    // CHECK: arith.truncf %{{.*}} : f32 to bf16
    // CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
    // CHECK: %[[P:.*]] = llvm.insertvalue %{{.*}}[15] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)>
    // CHECK: builtin.unrealized_conversion_cast %[[P]] : {{.*}} to !tiledattn.tile<64x64xbf16>
    gpu.func @online_softmax_f32_probs(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf32>
      nvvm.barrier0
      %p16 = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
      "test.use"(%p16, %m1, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    // exp2_on_fma(8): 8 of the thread's 32 exponents (every fourth) by the
    // polynomial on the FMA pipe (x rounded by adding 1.5 * 2^23, three FMAs,
    // the integer part into the exponent), the rest by MUFU; outside finite
    // blocks a score below -126 (-inf) gives exactly 0.
    // CHECK-LABEL: gpu.func @online_softmax_exp2_on_fma
    // The rows' two rescale factors, then exponents 0-2 by MUFU.
    // CHECK-COUNT-5: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
    // CHECK: %[[X:.*]] = llvm.intr.fma
    // CHECK-NEXT: %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
    // CHECK-NEXT: %[[LOW:.*]] = arith.constant -1.260000e+02 : f32
    // CHECK-NEXT: %[[C:.*]] = arith.maxnumf %[[X]], %[[LOW]] : f32
    // CHECK-NEXT: %[[T:.*]] = arith.addf %[[C]], %[[MAGIC]] : f32
    // CHECK-COUNT-3: llvm.intr.fma
    // CHECK: %[[TBITS:.*]] = arith.bitcast %[[T]] : f32 to i32
    // CHECK: arith.shli %[[TBITS]], %{{.*}} : i32
    // CHECK: arith.addi
    // CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[X]], %{{.*}} : f32
    // CHECK: arith.select %[[TINY]], %{{.*}}, %{{.*}} : f32
    // Exponents 4-6 by MUFU, then 7 by the polynomial again.
    // CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
    // CHECK: arith.constant 0x4B400000 : f32
    // CHECK: gpu.return
    // The same finite: no select.
    // CHECK-LABEL: gpu.func @online_softmax_exp2_on_fma_finite
    // CHECK-COUNT-8: arith.shli
    // CHECK-NOT: arith.cmpf olt
    // CHECK: gpu.return
    gpu.func @online_softmax_exp2_on_fma(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale exp2_on_fma(8)
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
      "test.use"(%p, %m1, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    gpu.func @online_softmax_exp2_on_fma_finite(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale finite exp2_on_fma(8)
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
      "test.use"(%p, %m1, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    // finite: the new maximum goes straight to the exponents, no -inf guard.
    // CHECK-LABEL: gpu.func @online_softmax_finite
    // CHECK-SAME: (%{{[^:]*}}: !llvm.struct<{{[^>]*}}>, %[[M:[^:]*]]: !llvm.struct<(f32, f32)>,
    // CHECK-DAG: %[[M0:.*]] = llvm.extractvalue %[[M]][0]
    // CHECK: %[[SL2:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
    // CHECK: %[[BS:.*]] = arith.mulf %{{.*}}, %[[SL2]] : f32
    // CHECK: %[[NEWM:.*]] = arith.maxnumf %[[M0]], %[[BS]] : f32
    // CHECK-NOT: arith.cmpf
    // CHECK-NOT: arith.select
    // CHECK: %[[D:.*]] = arith.subf %[[M0]], %[[NEWM]] : f32
    // CHECK-NOT: arith.cmpf
    // CHECK-NOT: arith.select
    // CHECK: gpu.return
    gpu.func @online_softmax_finite(%s: !acc, %m: !rows, %l: !rows, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %p, %m1, %l1, %alpha = tiledattn.online_softmax %st, %mt, %lt, %scale finite
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
      "test.use"(%p, %m1, %l1, %alpha) : (!tiledattn.tile<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }
    // Constants and loops: a warpgroup tile carried by scf.for is its
    // registers' struct in the loop (upstream's structural type conversion).
    // CHECK-LABEL: gpu.func @carried
    // CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
    // CHECK: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, f32)>
    // CHECK: %[[I0:.*]] = llvm.insertvalue %[[NINF]], %[[U]][0]
    // CHECK: %[[I1:.*]] = llvm.insertvalue %[[NINF]], %[[I0]][1]
    // CHECK: %[[INIT:.*]] = builtin.unrealized_conversion_cast %[[I1]] : !llvm.struct<(f32, f32)> to !tiledattn.tile<64xf32>
    // CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast %[[INIT]] : !tiledattn.tile<64xf32> to !llvm.struct<(f32, f32)>
    // CHECK: scf.for {{.*}} iter_args(%[[ARG:.*]] = %[[IN]]) -> (!llvm.struct<(f32, f32)>)
    // CHECK: %[[T:.*]] = builtin.unrealized_conversion_cast %[[ARG]] : !llvm.struct<(f32, f32)> to !tiledattn.tile<64xf32>
    // CHECK: "test.use"(%[[T]])
    // CHECK: scf.yield %{{.*}} : !llvm.struct<(f32, f32)>
    gpu.func @carried(%n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m0 = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
      %m = scf.for %j = %c0 to %n step %c1 iter_args(%mx = %m0) -> (!tiledattn.tile<64xf32>) {
        "test.use"(%mx) : (!tiledattn.tile<64xf32>) -> ()
        scf.yield %mx : !tiledattn.tile<64xf32>
      }
      gpu.return
    }
    // The store: the quad adds its row sums, 1 / sum (0 for an empty row),
    // rows past the sequence skipped, bf16 pairs at key 8i + 2 * quad, and
    // the lse (m + log2 l) * ln 2 (-inf for an empty row) from quad 0.
    // CHECK-LABEL: gpu.func @store
    // CHECK-SAME: (%[[O:.*]]: !llvm.struct<{{.*}}>, %[[M:.*]]: !llvm.struct<(f32, f32)>, %[[L:.*]]: !llvm.struct<(f32, f32)>, %[[DEST:.*]]: memref<{{.*}}>, %[[LSE:.*]]: memref<{{.*}}>, %[[ROW:.*]]: index)
    // CHECK: %[[L0:.*]] = llvm.extractvalue %[[L]][0]
    // CHECK: %[[SEQ:.*]] = memref.dim %[[DEST]], %c2
    // CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle  xor %[[L0]], %c1_i32
    // CHECK: %[[P1:.*]] = arith.addf %[[L0]], %[[S1]]
    // CHECK: %[[S2:.*]], %{{.*}} = gpu.shuffle  xor %[[P1]], %c2_i32
    // CHECK: %[[SUM:.*]] = arith.addf %[[P1]], %[[S2]]
    // CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[SUM]], %{{.*}} : f32
    // CHECK: %[[RCP:.*]] = arith.divf %{{.*}}, %[[SUM]] : f32
    // CHECK: %[[INV:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[RCP]] : f32
    // CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[SEQ]] : index
    // CHECK: scf.if %[[IN]] {
    // CHECK: arith.mulf %{{.*}}, %[[INV]] : f32
    // CHECK: vector.store %{{.*}}, %[[DEST]]{{.*}} : memref<{{.*}}>, vector<2xbf16>
    // CHECK: scf.if
    // CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[SUM]])
    // CHECK: arith.select %[[EMPTY]], %{{.*}}, %{{.*}} : f32
    // CHECK: memref.store %{{.*}}, %[[LSE]]
    gpu.func @store(%o: !acc, %m: !rows, %l: !rows,
                    %dest: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %row: index) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      tiledattn.store %ot, %mt, %lt into %dest[%row, %row, %row] lse(%lse)
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>,
            memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      gpu.return
    }

    // tma_store: the same 1 / sum and lse as the store, O written into the
    // stage by stmatrix.x4, lanes 8j .. 8j + 7 addressing the rows of
    // matrix j: row stage_row + warpRow + (j % 2) * 8 + lane % 8, 16-byte
    // chunk (i + j / 2) ^ (lane % 8) (the 128-byte swizzle), 128-column O
    // in two atoms of the stage's 128 rows (16 KiB apart).
    // CHECK-LABEL: gpu.func @tma_store
    // CHECK-SAME: %[[LSE:[^:]*]]: memref<?x?x?xf32{{.*}}>, %[[ROW:[^:]*]]: index, %[[STAGE:[^:]*]]: index, %[[SROW:[^:]*]]: index)
    // CHECK: %[[TID:.*]] = gpu.thread_id x
    // CHECK: %[[IN_WG:.*]] = arith.remui %[[TID]], %c128
    // CHECK: %[[LANE:.*]] = arith.remui %[[IN_WG]], %c32
    // CHECK: %[[WARPROW:.*]] = arith.muli %{{.*}}, %c16
    // CHECK: %[[INV:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
    // CHECK: %[[MATRIX:.*]] = arith.divui %[[LANE]], %c8
    // CHECK: %[[INMATRIX:.*]] = arith.remui %[[LANE]], %c8
    // CHECK: %[[WARPFIRST:.*]] = arith.addi %[[SROW]], %[[WARPROW]]
    // CHECK: %[[HALF:.*]] = arith.remui %[[MATRIX]], %c2
    // CHECK: %[[HALFROWS:.*]] = arith.muli %[[HALF]], %c8
    // CHECK: %[[INWARP:.*]] = arith.addi %[[HALFROWS]], %[[INMATRIX]]
    // CHECK: %[[R:.*]] = arith.addi %[[WARPFIRST]], %[[INWARP]]
    // CHECK: %[[RBYTES:.*]] = arith.muli %[[R]], %c128
    // CHECK: %[[RSTART:.*]] = arith.addi %[[STAGE]], %[[RBYTES]]
    // CHECK: arith.mulf %{{.*}}, %[[INV]] : f32
    // CHECK: %[[MHALF:.*]] = arith.divui %[[MATRIX]], %c2
    // CHECK: %[[C:.*]] = arith.addi %[[MHALF]], %c0
    // CHECK: %[[CHUNK:.*]] = arith.xori %[[C]], %[[INMATRIX]]
    // CHECK-COUNT-4: nvvm.stmatrix %{{.*}} {{.*}}shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>
    // CHECK: arith.addi %[[RSTART]], %c16384
    // CHECK-COUNT-4: nvvm.stmatrix
    // CHECK-NOT: nvvm.stmatrix
    // CHECK: scf.if
    // CHECK: scf.if
    // CHECK: memref.store %{{.*}}, %[[LSE]]
    gpu.func @tma_store(%o: !acc128, %m: !rows, %l: !rows,
                        %dest: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                        %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %row: index,
                        %stage: index, %srow: index) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc128 to !tiledattn.tile<64x128xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %st = builtin.unrealized_conversion_cast %stage : index to !tiledattn.smem<128x128xbf16>
      tiledattn.tma_store %ot, %mt, %lt into %dest[%row, %row, %row] via %st[%srow] lse(%lse)
          : !tiledattn.tile<64x128xf32>,
            memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>,
            memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      gpu.return
    }

    // tma_store of a packed tile (hold_packed's held O): its words go to
    // stmatrix as they are, words 4k .. 4k + 3 for the k-th stmatrix, with no
    // scaling, no packing and no lse.
    // CHECK-LABEL: gpu.func @tma_store_packed
    // CHECK-SAME: (%[[W:.*]]: !llvm.struct<(i32, {{.*}})>,
    // CHECK-DAG: %[[W0:.*]] = llvm.extractvalue %[[W]][0]
    // CHECK-DAG: %[[W3:.*]] = llvm.extractvalue %[[W]][3]
    // CHECK-DAG: %[[W4:.*]] = llvm.extractvalue %[[W]][4]
    // CHECK-NOT: arith.truncf
    // CHECK-NOT: arith.mulf
    // CHECK: nvvm.stmatrix %{{.*}}, %[[W0]], %{{.*}}, %{{.*}}, %[[W3]] {{.*}}shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>
    // CHECK: nvvm.stmatrix %{{.*}}, %[[W4]],
    // CHECK-COUNT-6: nvvm.stmatrix
    // CHECK-NOT: nvvm.stmatrix
    // CHECK-NOT: memref.store
    // CHECK: gpu.return
    gpu.func @tma_store_packed(%w: !words128,
                               %dest: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                               %row: index, %stage: index, %srow: index) kernel {
      %ot = builtin.unrealized_conversion_cast %w : !words128 to !tiledattn.tile<64x128xbf16>
      %st = builtin.unrealized_conversion_cast %stage : index to !tiledattn.smem<128x128xbf16>
      tiledattn.tma_store %ot into %dest[%row, %row, %row] via %st[%srow]
          : !tiledattn.tile<64x128xbf16>,
            memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x128xbf16>
      gpu.return
    }

    // finish_rows: the store's 1 / sum and lse, the factors returned as a
    // row tile; a tma_store without statistics writes O unscaled.
    // CHECK-LABEL: gpu.func @finish_rows
    // CHECK-SAME: (%[[O:.*]]: !llvm.struct<{{.*}}>, %[[M:.*]]: !llvm.struct<(f32, f32)>, %[[L:.*]]: !llvm.struct<(f32, f32)>, %[[DEST:[^:]*]]: memref<?x?x?x128xbf16{{.*}}>, %[[LSE:[^:]*]]: memref<?x?x?xf32{{.*}}>, %[[ROW:[^:]*]]: index, %[[STAGE:[^:]*]]: index)
    // CHECK: %[[SEQ:.*]] = memref.dim %[[LSE]], %c2
    // CHECK: gpu.shuffle  xor
    // CHECK: gpu.shuffle  xor
    // CHECK: %[[SUM:.*]] = arith.addf
    // CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[SUM]], %{{.*}} : f32
    // CHECK: %[[RCP:.*]] = arith.divf %{{.*}}, %[[SUM]] : f32
    // CHECK: %[[INV0:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[RCP]] : f32
    // CHECK: arith.cmpi ult, %{{.*}}, %[[SEQ]] : index
    // CHECK: %[[INV1:.*]] = arith.select
    // CHECK: memref.store %{{.*}}, %[[LSE]]
    // CHECK: memref.store %{{.*}}, %[[LSE]]
    // CHECK: %[[INVS:.*]] = llvm.insertvalue %[[INV1]], %{{.*}}[1] : !llvm.struct<(f32, f32)>
    // CHECK: "test.use"(%{{.*}}) : (!tiledattn.tile<64xf32>) -> ()
    // CHECK-NOT: arith.mulf
    // CHECK: nvvm.stmatrix
    gpu.func @finish_rows(%o: !acc128, %m: !rows, %l: !rows,
                          %dest: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
                          %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %row: index,
                          %stage: index) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc128 to !tiledattn.tile<64x128xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %st = builtin.unrealized_conversion_cast %stage : index to !tiledattn.smem<128x128xbf16>
      %inv = tiledattn.finish_rows %mt, %lt into %lse[%row, %row, %row]
          : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      "test.use"(%inv) : (!tiledattn.tile<64xf32>) -> ()
      tiledattn.tma_store %ot into %dest[%row, %row, %row] via %st[%row]
          : !tiledattn.tile<64x128xf32>,
            memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x128xbf16>
      gpu.return
    }

    // score_mod: its body once per register, on the register's score and
    // its row and key (rows g and g + 8; keys 2 * quad + 8i + h % 2).
    // CHECK-LABEL: gpu.func @score_mod
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[ROW:.*]]: index, %[[COL:.*]]: index, %[[BIAS:.*]]: f32)
    // CHECK: %[[R0:.*]] = llvm.extractvalue %[[S]][0]
    // CHECK: %[[R1:.*]] = llvm.extractvalue %[[S]][1]
    // CHECK: %[[R2:.*]] = llvm.extractvalue %[[S]][2]
    // CHECK: %[[QUAD:.*]] = arith.remui %{{.*}}, %c4
    // CHECK: %[[ROWBASE:.*]] = arith.addi %[[ROW]], %{{.*}}
    // CHECK: %[[ROW8:.*]] = arith.addi %[[ROWBASE]], %c8
    // CHECK: %[[Q2:.*]] = arith.muli %[[QUAD]], %c2
    // CHECK: %[[KEY0:.*]] = arith.addi %[[COL]], %[[Q2]]
    // Register 0: row g, key 2 * quad.
    // CHECK: %[[D0:.*]] = arith.subi %[[KEY0]], %[[ROWBASE]]
    // CHECK: %[[F0:.*]] = arith.uitofp %{{.*}}
    // CHECK: %[[M0:.*]] = arith.mulf %[[F0]], %[[BIAS]]
    // CHECK: %[[N0:.*]] = arith.addf %[[M0]], %[[R0]]
    // Register 1: row g, key 2 * quad + 1.
    // CHECK: %[[KEY1:.*]] = arith.addi %[[KEY0]], %c1
    // CHECK: arith.subi %[[KEY1]], %[[ROWBASE]]
    // Register 2: row g + 8, key 2 * quad.
    // CHECK: arith.subi %[[KEY0]], %[[ROW8]]
    // Register 4: row g, key 2 * quad + 8.
    // CHECK: %[[KEY8:.*]] = arith.addi %[[KEY0]], %c8
    // CHECK: arith.subi %[[KEY8]], %[[ROWBASE]]
    // Registers 29 and 31: key 2 * quad + 57, rows g and g + 8.
    // CHECK: %[[KEY57:.*]] = arith.addi %[[KEY0]], %c57
    // CHECK: arith.subi %[[KEY57]], %[[ROWBASE]]
    // CHECK: %[[KEY57B:.*]] = arith.addi %[[KEY0]], %c57
    // CHECK: arith.subi %[[KEY57B]], %[[ROW8]]
    // CHECK: arith.mulf
    // CHECK-NOT: arith.mulf
    // CHECK: llvm.insertvalue %[[N0]], %{{.*}}[0]
    // CHECK: llvm.insertvalue %{{.*}}[31]
    gpu.func @score_mod(%s: !acc, %row: index, %col: index, %bias: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc to !tiledattn.tile<64x64xf32>
      %r = tiledattn.score_mod %st[%row, %col] : !tiledattn.tile<64x64xf32> {
      ^bb0(%x: f32, %q: index, %k: index):
        %d = arith.subi %k, %q : index
        %di = arith.index_castui %d : index to i64
        %df = arith.uitofp %di : i64 to f32
        %m = arith.mulf %df, %bias : f32
        %y = arith.addf %m, %x : f32
        tiledattn.yield %y : f32
      }
      "test.use"(%r) : (!tiledattn.tile<64x64xf32>) -> ()
      gpu.return
    }

    // merge_pieces (split_tail): a piece that does not start its tile
    // (first != 0) stores its 32 + 4 words to its slot of the workspace
    // (block * consumers + consumer, word-major: word w at w * 128 floats
    // past the thread's first), then a release fence, the warpgroup's
    // barrier and one thread's release store of the slot's flag. A piece
    // with holders spins on each holder's flag (acquire), loads its words
    // and folds them into its own with the maxima's exp2 factors; then the
    // barrier and one thread's zeroing of the flags.
    // CHECK-LABEL: gpu.func @merge_pieces
    // CHECK-SAME: (%[[O:.*]]: !llvm.struct<{{.*}}>, %[[M:.*]]: !llvm.struct<(f32, f32)>, %[[L:.*]]: !llvm.struct<(f32, f32)>, %[[FIRST:[^:]*]]: index, %[[HOLDERS:[^:]*]]: index, %[[WS:.*]]: !llvm.ptr {tiledattn.workspace})
    // No known block size: the consumers are blockDim.x / 128 - 1.
    // CHECK: gpu.block_dim x
    // CHECK: %[[FIRST32:.*]] = arith.index_castui %[[FIRST]] : index to i32
    // CHECK: %[[WRITES:.*]] = arith.cmpi ne, %[[FIRST32]], %{{.*}} : i32
    // CHECK: scf.if %[[WRITES]] {
    // CHECK: %[[BASE:.*]] = llvm.getelementptr %[[WS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    // CHECK: %[[W1:.*]] = llvm.getelementptr %[[BASE]][128] : (!llvm.ptr) -> !llvm.ptr, f32
    // CHECK: llvm.store %{{.*}}, %[[W1]] : f32, !llvm.ptr
    // CHECK: %[[W35:.*]] = llvm.getelementptr %[[BASE]][4480] : (!llvm.ptr) -> !llvm.ptr, f32
    // CHECK-NEXT: llvm.store %{{.*}}, %[[W35]] : f32, !llvm.ptr
    // CHECK-NEXT: llvm.fence release
    // CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
    // CHECK: scf.if
    // CHECK: llvm.store %{{.*}}, %{{.*}} atomic release {alignment = 4 : i64} : i32, !llvm.ptr
    // CHECK: %[[HOLDERS32:.*]] = arith.index_castui %[[HOLDERS]] : index to i32
    // CHECK: %[[MERGES:.*]] = arith.cmpi ne, %[[HOLDERS32]], %{{.*}} : i32
    // CHECK: scf.if %[[MERGES]] -> (f32, {{.*}}) {
    // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, {{.*}}) : i32 {
    // CHECK: scf.while : () -> () {
    // CHECK: llvm.load %{{.*}} atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32
    // CHECK: scf.condition
    // CHECK-COUNT-36: llvm.load %{{.*}} : !llvm.ptr -> f32
    // CHECK: arith.maxnumf
    // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
    // CHECK: scf.yield
    // CHECK: nvvm.barrier
    // CHECK: scf.for
    // CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
    // CHECK: "test.use"(%{{.*}}, %{{.*}}, %{{.*}}) : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
    gpu.func @merge_pieces(%o: !acc, %m: !rows, %l: !rows, %first: index, %holders: index,
                           %ws: !llvm.ptr {tiledattn.workspace}) kernel {
      %ot = builtin.unrealized_conversion_cast %o : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %o2, %m2, %l2 = tiledattn.merge_pieces %ot, %mt, %lt first(%first) holders(%holders)
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
      "test.use"(%o2, %m2, %l2) : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }

    // With the kernel's known block size the consumer count is a constant
    // (384 threads: 2), not blockDim.x / 128 - 1 kept live across the loop.
    // CHECK-LABEL: gpu.func @merge_pieces_known_block
    // CHECK-NOT: gpu.block_dim
    // CHECK: arith.muli %{{.*}}, %c2_i32 : i32
    // CHECK-NOT: gpu.block_dim
    // CHECK: gpu.return
    gpu.func @merge_pieces_known_block(%o: !acc, %m: !rows, %l: !rows, %first: index,
                                       %holders: index, %ws: !llvm.ptr {tiledattn.workspace})
        kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %ot = builtin.unrealized_conversion_cast %o : !acc to !tiledattn.tile<64x64xf32>
      %mt = builtin.unrealized_conversion_cast %m : !rows to !tiledattn.tile<64xf32>
      %lt = builtin.unrealized_conversion_cast %l : !rows to !tiledattn.tile<64xf32>
      %o2, %m2, %l2 = tiledattn.merge_pieces %ot, %mt, %lt first(%first) holders(%holders)
          : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
      "test.use"(%o2, %m2, %l2) : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) -> ()
      gpu.return
    }

    // row_dot on accumulators: register 4i + h is in row half h / 2, so
    // registers 0, 1, 4, 5, ... multiply into row g and 2, 3, 6, 7, ... into
    // row g + 8; each half is summed pairwise, then over the quad (xor 1, 2).
    // CHECK-LABEL: gpu.func @row_dot_acc
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[B:.*]]: !llvm.struct<{{.*}}>)
    // CHECK-DAG: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK-DAG: %[[B0:.*]] = llvm.extractvalue %[[B]][0]
    // CHECK-DAG: %[[A2:.*]] = llvm.extractvalue %[[A]][2]
    // CHECK-DAG: %[[B2:.*]] = llvm.extractvalue %[[B]][2]
    // CHECK: %[[P0:.*]] = arith.mulf %[[A0]], %[[B0]] : f32
    // CHECK: %[[P2:.*]] = arith.mulf %[[A2]], %[[B2]] : f32
    // CHECK-COUNT-15: arith.addf
    // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
    // CHECK-COUNT-15: arith.addf
    // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
    // CHECK: %[[R:.*]] = llvm.insertvalue %{{.*}}[1] : !llvm.struct<(f32, f32)>
    // CHECK: builtin.unrealized_conversion_cast %[[R]] : !llvm.struct<(f32, f32)> to !tiledattn.tile<64xf32>
    gpu.func @row_dot_acc(%a: !acc, %b: !acc) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc to !tiledattn.tile<64x64xf32>
      %bt = builtin.unrealized_conversion_cast %b : !acc to !tiledattn.tile<64x64xf32>
      %d = tiledattn.row_dot %at, %bt : !tiledattn.tile<64x64xf32> -> !tiledattn.tile<64xf32>
      "test.use"(%d) : (!tiledattn.tile<64xf32>) -> ()
      gpu.return
    }

    // row_dot on an mma's A words (read_rows): word w is in row half w % 2
    // and holds two bf16 elements, unpacked to f32 before the multiply.
    // CHECK-LABEL: gpu.func @row_dot_words
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[B:.*]]: !llvm.struct<{{.*}}>)
    // CHECK: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK: %[[B0:.*]] = llvm.extractvalue %[[B]][0]
    // CHECK: %[[AV:.*]] = vector.from_elements %[[A0]] : vector<1xi32>
    // CHECK: %[[AP:.*]] = vector.bitcast %[[AV]] : vector<1xi32> to vector<2xbf16>
    // CHECK: %[[AL:.*]] = vector.extract %[[AP]][0] : bf16 from vector<2xbf16>
    // CHECK: %[[ALF:.*]] = arith.extf %[[AL]] : bf16 to f32
    // CHECK: %[[AH:.*]] = vector.extract %[[AP]][1] : bf16 from vector<2xbf16>
    // CHECK: %[[AHF:.*]] = arith.extf %[[AH]] : bf16 to f32
    // CHECK: %[[BP:.*]] = vector.bitcast %{{.*}} : vector<1xi32> to vector<2xbf16>
    // CHECK: %[[BLF:.*]] = arith.extf %{{.*}} : bf16 to f32
    // CHECK: %[[BHF:.*]] = arith.extf %{{.*}} : bf16 to f32
    // CHECK: arith.mulf %[[ALF]], %[[BLF]] : f32
    // CHECK: arith.mulf %[[AHF]], %[[BHF]] : f32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
    // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
    // CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(f32, f32)> to !tiledattn.tile<64xf32>
    gpu.func @row_dot_words(%a: !words16, %b: !words16) kernel {
      %at = builtin.unrealized_conversion_cast %a : !words16 to !tiledattn.tile<64x64xbf16>
      %bt = builtin.unrealized_conversion_cast %b : !words16 to !tiledattn.tile<64x64xbf16>
      %d = tiledattn.row_dot %at, %bt : !tiledattn.tile<64x64xbf16> -> !tiledattn.tile<64xf32>
      "test.use"(%d) : (!tiledattn.tile<64xf32>) -> ()
      gpu.return
    }

    // store_rows: quad lane 0 stores its rows g and g + 8 (of its warp's 16,
    // from %row) where they are below dest's dimension 2.
    // CHECK-LABEL: gpu.func @store_rows
    // CHECK-SAME: (%[[D:.*]]: !llvm.struct<(f32, f32)>, %[[DEST:.*]]: memref<{{.*}}>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index)
    // CHECK-DAG: %[[D0:.*]] = llvm.extractvalue %[[D]][0]
    // CHECK-DAG: %[[D1:.*]] = llvm.extractvalue %[[D]][1]
    // CHECK: %[[S:.*]] = memref.dim %[[DEST]], %c2
    // CHECK: %[[LEAD:.*]] = arith.cmpi eq, %{{.*}}, %c0
    // CHECK: scf.if %[[LEAD]] {
    // CHECK:   %[[IN0:.*]] = arith.cmpi ult, %[[R0:.*]], %[[S]]
    // CHECK:   scf.if %[[IN0]] {
    // CHECK:     memref.store %[[D0]], %[[DEST]][%[[BI]], %[[H]], %[[R0]]]
    // CHECK:   %[[R1:.*]] = arith.addi %{{.*}}, %c8
    // CHECK:   %[[IN1:.*]] = arith.cmpi ult, %[[R1]], %[[S]]
    // CHECK:   scf.if %[[IN1]] {
    // CHECK:     memref.store %[[D1]], %[[DEST]][%[[BI]], %[[H]], %[[R1]]]
    gpu.func @store_rows(%d: !rows, %dest: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                         %b: index, %h: index, %row: index) kernel {
      %dt = builtin.unrealized_conversion_cast %d : !rows to !tiledattn.tile<64xf32>
      tiledattn.store_rows %dt into %dest[%b, %h, %row]
          : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      gpu.return
    }

    // exp_from_lse on a 64 x 32 tile: the thread's columns are col + 2 quad
    // + {0, 1, 8, 9, 16, 17, 24, 25}, each read once (index 0 past S) and
    // taken to -lse log2(e) (-inf past S or for an lse of -inf); register r
    // takes column value 2 (r / 4) + r % 2: exp2(s * scale log2(e) + that).
    // CHECK-LABEL: gpu.func @exp_from_lse
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[LSE:.*]]: memref<{{.*}}>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[COL:.*]]: index, %[[SCALE:.*]]: f32)
    // CHECK-DAG: %[[S0:.*]] = llvm.extractvalue %[[S]][0]
    // CHECK-DAG: %[[S1:.*]] = llvm.extractvalue %[[S]][1]
    // CHECK-DAG: %[[S2:.*]] = llvm.extractvalue %[[S]][2]
    // CHECK-DAG: %[[S4:.*]] = llvm.extractvalue %[[S]][4]
    // CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
    // CHECK: %[[SEQ:.*]] = memref.dim %[[LSE]], %c2
    // CHECK: %[[Q2:.*]] = arith.muli %{{.*}}, %c2
    // CHECK: %[[FIRST:.*]] = arith.addi %[[COL]], %[[Q2]]
    // CHECK: %[[C0:.*]] = arith.addi %[[FIRST]], %c0
    // CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[C0]], %[[SEQ]]
    // CHECK: %[[AT0:.*]] = arith.select %[[IN0]], %[[C0]], %c0
    // CHECK: %[[L0:.*]] = memref.load %[[LSE]][%[[BI]], %[[H]], %[[AT0]]]
    // CHECK: %[[V0:.*]] = arith.select %[[IN0]], %[[L0]], %[[NEGINF]]
    // CHECK: arith.addi %[[FIRST]], %c1
    // CHECK: %[[C2:.*]] = arith.addi %[[FIRST]], %c8
    // CHECK: %[[V2:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEGINF]]
    // CHECK-COUNT-5: memref.load %[[LSE]]
    // CHECK: %[[E0:.*]] = arith.cmpf oeq, %[[V0]], %[[NEGINF]]
    // CHECK: %[[M0:.*]] = arith.mulf %[[V0]], %[[NLOG2E:.*]] : f32
    // CHECK: %[[X0:.*]] = arith.select %[[E0]], %[[NEGINF]], %[[M0]]
    // CHECK: %[[X1:.*]] = arith.select
    // CHECK: %[[X2:.*]] = arith.select
    // CHECK: %[[FACTOR:.*]] = arith.mulf %[[SCALE]], %{{.*}} : f32
    // CHECK: %[[F0:.*]] = llvm.intr.fma(%[[S0]], %[[FACTOR]], %[[X0]])
    // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[F0]])
    // CHECK: llvm.intr.fma(%[[S1]], %[[FACTOR]], %[[X1]])
    // CHECK: llvm.intr.fma(%[[S2]], %[[FACTOR]], %[[X0]])
    // CHECK: llvm.intr.fma(%{{.*}}, %[[FACTOR]], %[[X1]])
    // CHECK: llvm.intr.fma(%[[S4]], %[[FACTOR]], %[[X2]])
    // CHECK-COUNT-11: llvm.intr.fma
    // CHECK-NOT: llvm.intr.fma
    // CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to !tiledattn.tile<64x32xf32>
    gpu.func @exp_from_lse(%s: !acc16, %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                           %b: index, %h: index, %col: index, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc16 to !tiledattn.tile<64x32xf32>
      %p = tiledattn.exp_from_lse %st, %lse[%b, %h, %col], %scale
          : !tiledattn.tile<64x32xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      "test.use"(%p) : (!tiledattn.tile<64x32xf32>) -> ()
      gpu.return
    }

    // softmax_grad: dS = P (dP - D), D read per column as exp_from_lse reads
    // the lse (0 past S), register r taking column value 2 (r / 4) + r % 2.
    // CHECK-LABEL: gpu.func @softmax_grad
    // CHECK-SAME: (%[[P:.*]]: !llvm.struct<{{.*}}>, %[[DP:.*]]: !llvm.struct<{{.*}}>, %[[D:.*]]: memref<{{.*}}>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[COL:.*]]: index)
    // CHECK-DAG: %[[P0:.*]] = llvm.extractvalue %[[P]][0]
    // CHECK-DAG: %[[DP0:.*]] = llvm.extractvalue %[[DP]][0]
    // CHECK-DAG: %[[P4:.*]] = llvm.extractvalue %[[P]][4]
    // CHECK-DAG: %[[DP4:.*]] = llvm.extractvalue %[[DP]][4]
    // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
    // CHECK: %[[L0:.*]] = memref.load %[[D]][%[[BI]], %[[H]], %{{.*}}]
    // CHECK: %[[V0:.*]] = arith.select %{{.*}}, %[[L0]], %[[ZERO]]
    // CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]]
    // CHECK: %[[L2:.*]] = memref.load %[[D]]
    // CHECK: %[[V2:.*]] = arith.select %{{.*}}, %[[L2]], %[[ZERO]]
    // CHECK: %[[G0:.*]] = arith.subf %[[DP0]], %[[V0]] : f32
    // CHECK: arith.mulf %[[P0]], %[[G0]] : f32
    // CHECK-COUNT-3: arith.subf
    // CHECK: %[[G4:.*]] = arith.subf %[[DP4]], %[[V2]] : f32
    // CHECK: arith.mulf %[[P4]], %[[G4]] : f32
    gpu.func @softmax_grad(%p: !acc16, %dp: !acc16, %d: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                           %b: index, %h: index, %col: index) kernel {
      %pt = builtin.unrealized_conversion_cast %p : !acc16 to !tiledattn.tile<64x32xf32>
      %dpt = builtin.unrealized_conversion_cast %dp : !acc16 to !tiledattn.tile<64x32xf32>
      %ds = tiledattn.softmax_grad %pt, %dpt, %d[%b, %h, %col]
          : !tiledattn.tile<64x32xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      "test.use"(%ds) : (!tiledattn.tile<64x32xf32>) -> ()
      gpu.return
    }

    // per_row (S = Q K^T as it is): the thread's two rows, first + warp row
    // + g and 8 more, each read once (index 0 past S); register r takes row
    // value (r % 4) / 2, for exp_from_lse's lse and softmax_grad's D alike.
    // CHECK-LABEL: gpu.func @per_row
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %[[DP:.*]]: !llvm.struct<{{.*}}>, %[[LSE:.*]]: memref<{{.*}}>, %[[D:.*]]: memref<{{.*}}>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[SCALE:.*]]: f32)
    // CHECK-DAG: %[[S0:.*]] = llvm.extractvalue %[[S]][0]
    // CHECK-DAG: %[[S1:.*]] = llvm.extractvalue %[[S]][1]
    // CHECK-DAG: %[[S2:.*]] = llvm.extractvalue %[[S]][2]
    // CHECK-DAG: %[[S4:.*]] = llvm.extractvalue %[[S]][4]
    // CHECK: %[[SEQ:.*]] = memref.dim %[[LSE]], %c2
    // CHECK: %[[R0:.*]] = arith.addi %[[ROW]], %{{.*}} : index
    // CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[R0]], %[[SEQ]]
    // CHECK: %[[AT0:.*]] = arith.select %[[IN0]], %[[R0]], %c0
    // CHECK: memref.load %[[LSE]][%[[BI]], %[[H]], %[[AT0]]]
    // CHECK: %[[R1:.*]] = arith.addi %[[R0]], %c8
    // CHECK: %[[IN1:.*]] = arith.cmpi ult, %[[R1]], %[[SEQ]]
    // CHECK: %[[AT1:.*]] = arith.select %[[IN1]], %[[R1]], %c0
    // CHECK: memref.load %[[LSE]][%[[BI]], %[[H]], %[[AT1]]]
    // CHECK-NOT: memref.load %[[LSE]]
    // CHECK: arith.mulf
    // CHECK: %[[X0:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
    // CHECK: arith.mulf
    // CHECK: %[[X1:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
    // CHECK: llvm.intr.fma(%[[S0]], %{{.*}}, %[[X0]])
    // CHECK: llvm.intr.fma(%[[S1]], %{{.*}}, %[[X0]])
    // CHECK: llvm.intr.fma(%[[S2]], %{{.*}}, %[[X1]])
    // CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %[[X1]])
    // CHECK: llvm.intr.fma(%[[S4]], %{{.*}}, %[[X0]])
    // CHECK-COUNT-11: llvm.intr.fma
    // CHECK-NOT: llvm.intr.fma
    // CHECK: memref.load %[[D]]
    // CHECK: memref.load %[[D]]
    // CHECK-NOT: memref.load
    // CHECK: gpu.return
    gpu.func @per_row(%s: !acc16, %dp: !acc16, %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                      %d: memref<?x?x?xf32>, %b: index, %h: index, %row: index, %scale: f32) kernel {
      %st = builtin.unrealized_conversion_cast %s : !acc16 to !tiledattn.tile<64x32xf32>
      %dpt = builtin.unrealized_conversion_cast %dp : !acc16 to !tiledattn.tile<64x32xf32>
      %p = tiledattn.exp_from_lse %st, %lse[%b, %h, %row] per_row, %scale
          : !tiledattn.tile<64x32xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      %ds = tiledattn.softmax_grad %p, %dpt, %d[%b, %h, %row] per_row
          : !tiledattn.tile<64x32xf32>, memref<?x?x?xf32>
      "test.use"(%ds) : (!tiledattn.tile<64x32xf32>) -> ()
      gpu.return
    }

    // load_rows: the per_row reads above, where the op stands (outside()
    // past S); exp_from_lse and softmax_grad then take the rows' registers
    // and read no memory.
    // CHECK-LABEL: gpu.func @load_rows
    // CHECK-SAME: (%[[S:.*]]: !llvm.struct<{{.*}}>, %{{.*}}: !llvm.struct<{{.*}}>, %[[LSE:.*]]: memref<{{.*}}>, %[[D:.*]]: memref<{{.*}}>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f32)
    // CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
    // CHECK: %[[L0:.*]] = memref.load %[[LSE]]
    // CHECK: arith.select %{{.*}}, %[[L0]], %[[NEG]] : f32
    // CHECK: memref.load %[[LSE]]
    // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
    // CHECK: %[[D0:.*]] = memref.load %[[D]]
    // CHECK: arith.select %{{.*}}, %[[D0]], %[[ZERO]] : f32
    // CHECK: memref.load %[[D]]
    // CHECK: "test.barrier"
    // CHECK-NOT: memref.load
    // CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}})
    // CHECK: arith.subf
    // CHECK-NOT: memref.load
    // CHECK: gpu.return
    gpu.func @load_rows(%s: !acc16, %dp: !acc16, %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                        %d: memref<?x?x?xf32>, %b: index, %h: index, %row: index, %scale: f32) kernel {
      %lr = tiledattn.load_rows %lse[%b, %h, %row] outside(0xFF800000)
          : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> !tiledattn.tile<64xf32>
      %dr = tiledattn.load_rows %d[%b, %h, %row] outside(0.0)
          : memref<?x?x?xf32> -> !tiledattn.tile<64xf32>
      "test.barrier"() : () -> ()
      %st = builtin.unrealized_conversion_cast %s : !acc16 to !tiledattn.tile<64x32xf32>
      %dpt = builtin.unrealized_conversion_cast %dp : !acc16 to !tiledattn.tile<64x32xf32>
      %p = tiledattn.exp_from_lse %st, %lr per_row, %scale
          : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32>
      %ds = tiledattn.softmax_grad %p, %dpt, %dr per_row
          : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32>
      "test.use"(%ds) : (!tiledattn.tile<64x32xf32>) -> ()
      gpu.return
    }

    // softmax_grad scale(s): each dS times s, after P (dP - D).
    // CHECK-LABEL: gpu.func @scaled_softmax_grad
    // CHECK-SAME: (%[[P:.*]]: !llvm.struct<{{.*}}>, %[[DP:.*]]: !llvm.struct<{{.*}}>, %{{.*}}: memref<{{.*}}>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[SCALE:.*]]: f32)
    // CHECK: %[[G0:.*]] = arith.subf
    // CHECK: %[[DS0:.*]] = arith.mulf %{{.*}}, %[[G0]] : f32
    // CHECK: arith.mulf %[[DS0]], %[[SCALE]] : f32
    // CHECK-COUNT-15: arith.mulf %{{.*}}, %[[SCALE]] : f32
    // CHECK-NOT: arith.mulf %{{.*}}, %[[SCALE]] : f32
    gpu.func @scaled_softmax_grad(%p: !acc16, %dp: !acc16, %d: memref<?x?x?xf32>, %b: index,
                                  %h: index, %row: index, %scale: f32) kernel {
      %pt = builtin.unrealized_conversion_cast %p : !acc16 to !tiledattn.tile<64x32xf32>
      %dpt = builtin.unrealized_conversion_cast %dp : !acc16 to !tiledattn.tile<64x32xf32>
      %ds = tiledattn.softmax_grad %pt, %dpt, %d[%b, %h, %row] per_row scale(%scale)
          : !tiledattn.tile<64x32xf32>, memref<?x?x?xf32>
      "test.use"(%ds) : (!tiledattn.tile<64x32xf32>) -> ()
      gpu.return
    }

    // store_tile: per row half (g, then g + 8, each below S) the thread's
    // registers 4i + 2h' and 4i + 2h' + 1 as one bf16 pair at columns
    // 8i + 2 quad, no normalization; a capture's dynamic head dim is the
    // tile's 32 columns (4 pairs a row half).
    // CHECK-LABEL: gpu.func @store_tile
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[G:.*]]: memref<?x?x?x?xbf16>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index)
    // CHECK-DAG: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK-DAG: %[[A1:.*]] = llvm.extractvalue %[[A]][1]
    // CHECK-DAG: %[[A2:.*]] = llvm.extractvalue %[[A]][2]
    // CHECK: %[[SEQ:.*]] = memref.dim %[[G]], %c2
    // CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[R0:.*]], %[[SEQ]]
    // CHECK: scf.if %[[IN0]] {
    // CHECK: %[[LO:.*]] = arith.truncf %[[A0]] : f32 to bf16
    // CHECK: %[[HI:.*]] = arith.truncf %[[A1]] : f32 to bf16
    // CHECK: %[[PAIR:.*]] = vector.from_elements %[[LO]], %[[HI]] : vector<2xbf16>
    // CHECK: vector.store %[[PAIR]], %[[G]][%[[BI]], %[[H]], %[[R0]], %{{.*}}]
    // CHECK-COUNT-3: vector.store
    // CHECK: }
    // CHECK: scf.if
    // CHECK: arith.truncf %[[A2]] : f32 to bf16
    // CHECK-COUNT-4: vector.store
    // CHECK-NOT: vector.store
    // CHECK: gpu.return
    gpu.func @store_tile(%a: !acc16, %g: memref<?x?x?x?xbf16>, %b: index, %h: index, %row: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      tiledattn.store_tile %at into %g[%b, %h, %row] : !tiledattn.tile<64x32xf32>, memref<?x?x?x?xbf16>
      gpu.return
    }

    // store_tile at a column: the pairs' columns from col + 2 quad.
    // CHECK-LABEL: gpu.func @store_tile_at_a_column
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[G:.*]]: memref<?x?x?x?xbf16>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[COL:.*]]: index)
    // CHECK: %[[QUAD2:.*]] = arith.muli %{{.*}}, %c2
    // CHECK: %[[COL0:.*]] = arith.addi %[[QUAD2]], %[[COL]]
    // CHECK: scf.if
    // CHECK: %[[C:.*]] = arith.addi %[[COL0]], %c0
    // CHECK: vector.store %{{.*}}, %[[G]][%[[BI]], %[[H]], %{{.*}}, %[[C]]]
    gpu.func @store_tile_at_a_column(%a: !acc16, %g: memref<?x?x?x?xbf16>, %b: index, %h: index, %row: index, %col: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      tiledattn.store_tile %at into %g[%b, %h, %row, %col] : !tiledattn.tile<64x32xf32>, memref<?x?x?x?xbf16>
      gpu.return
    }

    // reduce_add: per row half (g, then g + 8, each where it is below S)
    // the thread's registers 4i + 2h' + e at columns 8i + 2 quad + e, added
    // atomically.
    // CHECK-LABEL: gpu.func @reduce_add
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[DQ:.*]]: memref<{{.*}}>, %[[BI:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index)
    // CHECK-DAG: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK-DAG: %[[A1:.*]] = llvm.extractvalue %[[A]][1]
    // CHECK-DAG: %[[A2:.*]] = llvm.extractvalue %[[A]][2]
    // CHECK-DAG: %[[A4:.*]] = llvm.extractvalue %[[A]][4]
    // CHECK: %[[SEQ:.*]] = memref.dim %[[DQ]], %c2
    // CHECK: %[[Q2:.*]] = arith.muli %{{.*}}, %c2
    // CHECK: %[[R0:.*]] = arith.addi %{{.*}}, %c0
    // CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[R0]], %[[SEQ]]
    // CHECK: scf.if %[[IN0]] {
    // CHECK:   %[[C0:.*]] = arith.addi %[[Q2]], %c0
    // CHECK:   memref.atomic_rmw addf %[[A0]], %[[DQ]][%[[BI]], %[[H]], %[[R0]], %[[C0]]]
    // CHECK:   %[[C1:.*]] = arith.addi %[[Q2]], %c1
    // CHECK:   memref.atomic_rmw addf %[[A1]], %[[DQ]][%[[BI]], %[[H]], %[[R0]], %[[C1]]]
    // CHECK:   %[[C8:.*]] = arith.addi %[[Q2]], %c8
    // CHECK:   memref.atomic_rmw addf %[[A4]], %[[DQ]][%[[BI]], %[[H]], %[[R0]], %[[C8]]]
    // CHECK-COUNT-5: memref.atomic_rmw addf
    // CHECK: }
    // CHECK: %[[R1:.*]] = arith.addi %{{.*}}, %c8
    // CHECK: %[[IN1:.*]] = arith.cmpi ult, %[[R1]], %[[SEQ]]
    // CHECK: scf.if %[[IN1]] {
    // CHECK:   memref.atomic_rmw addf %[[A2]], %[[DQ]][%[[BI]], %[[H]], %[[R1]], %{{.*}}]
    // CHECK-COUNT-7: memref.atomic_rmw addf
    // CHECK: }
    // CHECK-NOT: memref.atomic_rmw
    // CHECK: gpu.return
    gpu.func @reduce_add(%a: !acc16, %dq: memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>,
                         %b: index, %h: index, %row: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      tiledattn.reduce_add %at into %dq[%b, %h, %row]
          : !tiledattn.tile<64x32xf32>, memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
      gpu.return
    }

    // bulk_reduce_add: the thread that issues the bulk copies waits until
    // its previous ones have read the stage, the warpgroup syncs, each
    // thread writes register pair j at byte 8 (128 j + tid % 128) of the
    // stage (f32, 8 pairs for 64 x 32), a fence for the TMA unit and a
    // sync, then that thread adds the 8 KB into block (b, h, blk) of dest.
    // CHECK-LABEL: gpu.func @bulk_reduce_add
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[DEST:.*]]: memref<?x?x?x?xf32>, %[[BUF:.*]]: index, %[[BI:.*]]: index, %[[H:.*]]: index, %[[BLK:.*]]: index)
    // CHECK-DAG: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK-DAG: %[[A1:.*]] = llvm.extractvalue %[[A]][1]
    // CHECK-DAG: %[[A2:.*]] = llvm.extractvalue %[[A]][2]
    // CHECK-DAG: %[[A3:.*]] = llvm.extractvalue %[[A]][3]
    // CHECK: %[[LT:.*]] = arith.remui %{{.*}}, %c128
    // CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[LT]], %c0
    // CHECK: scf.if %[[LEAD]] {
    // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
    // CHECK: nvvm.barrier
    // CHECK: %[[T0:.*]] = arith.addi %[[LT]], %c0
    // CHECK: %[[B0:.*]] = arith.muli %[[T0]], %c8
    // CHECK: arith.addi %[[BUF]], %[[B0]]
    // CHECK: %[[V0:.*]] = vector.from_elements %[[A0]], %[[A1]] : vector<2xf32>
    // CHECK: llvm.store %[[V0]], %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
    // CHECK: %[[T1:.*]] = arith.addi %[[LT]], %c128
    // CHECK: %[[B1:.*]] = arith.muli %[[T1]], %c8
    // CHECK: arith.addi %[[BUF]], %[[B1]]
    // CHECK: %[[V1:.*]] = vector.from_elements %[[A2]], %[[A3]] : vector<2xf32>
    // CHECK: llvm.store %[[V1]]
    // CHECK-COUNT-6: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
    // CHECK-NOT: llvm.store
    // CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
    // CHECK: nvvm.barrier
    // CHECK: scf.if %[[LEAD]] {
    // CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:4, %[[STR:.*]]:4 = memref.extract_strided_metadata %[[DEST]]
    // CHECK: arith.muli %[[BI]], %[[STR]]#0
    // CHECK: arith.muli %[[H]], %[[STR]]#1
    // CHECK: arith.muli %[[BLK]], %[[STR]]#2
    // CHECK: memref.extract_aligned_pointer_as_index %[[DEST]]
    // CHECK: %[[BYTES:.*]] = arith.constant 8192 : i32
    // CHECK: llvm.inline_asm has_side_effects asm_dialect = att "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], $2;", "l,r,r" %{{.*}}, %{{.*}}, %[[BYTES]]
    // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
    // CHECK: gpu.return
    gpu.func @bulk_reduce_add(%a: !acc16, %frags: memref<?x?x?x?xf32>, %buf: index,
                              %b: index, %h: index, %blk: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      %st = builtin.unrealized_conversion_cast %buf : index to !tiledattn.smem<64x64xbf16>
      tiledattn.bulk_reduce_add %at into %frags[%b, %h, %blk] via %st
          : !tiledattn.tile<64x32xf32>, memref<?x?x?x?xf32>, !tiledattn.smem<64x64xbf16>
      gpu.return
    }

    // stage: a 64 x 32 accumulator tile packed to bf16 and written by two
    // stmatrix.x4 (chunk pairs 0-1 and 2-3 of the row, swizzled as
    // tma_store writes them), then fenced for the tensor cores and the
    // warpgroup synced on its own named barrier (4 + tid / 128).
    // CHECK-LABEL: gpu.func @stage
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[BUF:.*]]: index, %[[SROW:.*]]: index)
    // CHECK: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
    // CHECK: %[[A1:.*]] = llvm.extractvalue %[[A]][1]
    // CHECK: %[[R:.*]] = arith.addi %[[SROW]], %{{.*}}
    // CHECK: %[[RSTART:.*]] = arith.addi %[[BUF]], %{{.*}}
    // CHECK: %[[C0:.*]] = arith.addi %{{.*}}, %c0
    // CHECK: %[[CHUNK0:.*]] = arith.xori %[[C0]], %{{.*}}
    // CHECK: %[[L0:.*]] = arith.truncf %[[A0]] : f32 to bf16
    // CHECK: %[[H0:.*]] = arith.truncf %[[A1]] : f32 to bf16
    // CHECK: vector.from_elements %[[L0]], %[[H0]] : vector<2xbf16>
    // CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {{.*}}shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>
    // CHECK: %[[C2:.*]] = arith.addi %{{.*}}, %c2
    // CHECK: arith.xori %[[C2]], %{{.*}}
    // CHECK: nvvm.stmatrix
    // CHECK-NOT: nvvm.stmatrix
    // CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    // CHECK: %[[TID:.*]] = gpu.thread_id x
    // CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128
    // CHECK: %[[ID:.*]] = arith.addi %[[WG]], %c4
    // CHECK: %[[ID32:.*]] = arith.index_castui %[[ID]] : index to i32
    // CHECK: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
    // CHECK-NEXT: gpu.return
    gpu.func @stage(%a: !acc16, %buf: index, %srow: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      %st = builtin.unrealized_conversion_cast %buf : index to !tiledattn.smem<64x64xbf16>
      tiledattn.stage %at into %st[%srow] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
      gpu.return
    }

    // stage at a column (a consumer's 32 of a tile's 64 keys): the chunk
    // pairs counted from stage_col / 8, each pair's atom and chunk in it
    // computed from there (pair p: chunk (first + p) % 8 of atom (first +
    // p) / 8, swizzled by the row as before).
    // CHECK-LABEL: gpu.func @stage_at_a_column
    // CHECK-SAME: (%[[A:.*]]: !llvm.struct<{{.*}}>, %[[BUF:.*]]: index, %[[SROW:.*]]: index, %[[SCOL:.*]]: index)
    // CHECK: %[[FIRST:.*]] = arith.divui %[[SCOL]], %c8
    // CHECK: %[[P0:.*]] = arith.addi %[[FIRST]], %c0
    // CHECK: %[[IN0:.*]] = arith.remui %[[P0]], %c8
    // CHECK: %[[AT0:.*]] = arith.divui %[[P0]], %c8
    // CHECK: arith.muli %[[AT0]], %c8192
    // CHECK: arith.addi %{{.*}}, %[[IN0]]
    // CHECK: nvvm.stmatrix
    // CHECK: %[[P1:.*]] = arith.addi %[[FIRST]], %c2
    // CHECK: arith.remui %[[P1]], %c8
    // CHECK: nvvm.stmatrix
    // CHECK-NOT: nvvm.stmatrix
    // CHECK: gpu.return
    gpu.func @stage_at_a_column(%a: !acc16, %buf: index, %srow: index, %scol: index) kernel {
      %at = builtin.unrealized_conversion_cast %a : !acc16 to !tiledattn.tile<64x32xf32>
      %st = builtin.unrealized_conversion_cast %buf : index to !tiledattn.smem<64x64xbf16>
      tiledattn.stage %at into %st[%srow, %scol] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
      gpu.return
    }
  }
}
