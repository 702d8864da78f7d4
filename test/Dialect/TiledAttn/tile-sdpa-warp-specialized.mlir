// RUN: tiledattn-opt %s -split-input-file -tiledattn-tile-sdpa | FileCheck %s
// RUN: tiledattn-opt %s -split-input-file -tiledattn-tile-sdpa | FileCheck %s --check-prefix=UNIFORM-A

// For a producer = tma schedule, tiledattn-tile-sdpa writes the
// warp-specialized program: rings of Q, K and V slots filled by one
// producer thread with TMA, and consumer warpgroups of 64 rows each running
// the online softmax over the K/V blocks with asynchronous mmas (in turns
// with pingpong), releasing each slot after the mma that read it.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @pingpong_bf16_d128
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^%]*}}%[[K:[^:]*]]: {{[^%]*}}%[[V:[^:]*]]: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]: {{[^%]*}}%[[SCALE:[^:]*]]: f32)
// CHECK-SAME: attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true>}
// Eight warps (two consumers) release each slot.
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
// CHECK: %[[KR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
// CHECK: %[[VR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
// Each role walks the block's tiles with tiledattn.for_each_tile (one tile
// here: not persistent), carrying the K/V ring position from tile to tile.
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK:   %[[TID:.*]] = gpu.thread_id x
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TID]]
// CHECK:   %[[QBLOCKS:.*]] = arith.ceildivui
// CHECK:   %[[HEADS:.*]] = memref.dim %[[Q]]
// CHECK:   %[[BATCHES:.*]] = memref.dim %[[Q]]
// CHECK:   tiledattn.for_each_tile %[[QBLOCKS]], %[[HEADS]], %[[BATCHES]] iter_args(%{{.*}} : index) -> index {
// CHECK:   ^bb0(%[[BX:.*]]: index, %[[BY:.*]]: index, %[[BZ:.*]]: index, %[[DONE:.*]]: index, %[[KV0:.*]]: index):
// CHECK:     %[[SK:.*]] = memref.dim %[[K]]
// CHECK:     %[[HKV:.*]] = arith.divui %[[BY]], %{{.*}} : index
// CHECK:     %[[ROW:.*]] = arith.muli %[[BX]], %{{.*}} : index
// Not causal: every key; whole blocks of 128 keys need no mask.
// CHECK:     %[[FULL:.*]] = arith.divui %[[SK]], %{{.*}} : index
// CHECK:     %[[UNMASKED:.*]] = arith.muli %[[FULL]], %{{.*}} : index
// CHECK:     %[[BLOCKS:.*]] = arith.ceildivui %[[SK]], %{{.*}} : index
// CHECK:     scf.if %[[FIRST]]
// The tile's Q goes into the slot of the block's tiles so far.
// CHECK:       tiledattn.ring.put %[[QR]][%[[DONE]]] : !tiledattn.ring<1, 128x128xbf16> {
// CHECK:       ^bb0(%[[QSLOT:.*]]: !tiledattn.smem<128x128xbf16>):
// CHECK:         tiledattn.tma_load %[[Q]][%[[BZ]], %[[BY]], %[[ROW]]] into %[[QSLOT]]
// CHECK:       scf.for %[[J:.*]] = %{{.*}} to %[[BLOCKS]] step
// CHECK:         %[[KROW:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:         %[[KPOS:.*]] = arith.addi %[[KV0]], %[[J]] : index
// CHECK:         tiledattn.ring.put %[[KR]][%[[KPOS]]]
// CHECK:           tiledattn.tma_load %[[K]][%[[BZ]], %[[HKV]], %[[KROW]]]
// CHECK-NOT:     arith.addi
// CHECK:         tiledattn.ring.put %[[VR]][%[[KPOS]]]
// CHECK:           tiledattn.tma_load %[[V]][%[[BZ]], %[[HKV]], %[[KROW]]]
// CHECK:     %[[NEXT:.*]] = arith.addi %[[KV0]], %[[BLOCKS]] : index
// CHECK:     tiledattn.yield %[[NEXT]] : index
// CHECK: } consumers(2) regs(240) {
// CHECK: ^bb0(%[[C:.*]]: index):
// CHECK:   %[[O0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x128xf32>
// CHECK:   %[[M0:.*]] = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
// CHECK:   %[[L0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64xf32>
// CHECK:   %[[AROW:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK:   tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} iter_args(%{{.*}} : index) -> index {
// CHECK:   ^bb0(%[[BX:.*]]: index, %[[BY:.*]]: index, %[[BZ:.*]]: index, %[[DONE:.*]]: index, %[[KV0:.*]]: index):
// CHECK:     %[[SK:.*]] = memref.dim %[[K]]
// CHECK:     %[[ROW:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK:     %[[BLOCKS:.*]] = arith.ceildivui %[[SK]], %{{.*}} : index
// CHECK:     %[[UBLOCKS:.*]] = arith.divui
// CHECK:     %[[MYROW:.*]] = arith.addi %[[ROW]], %[[AROW]] : index
// CHECK:     %[[QS:.*]], %[[QT:.*]] = tiledattn.ring.get %[[QR]][%[[DONE]]]
// The unmasked blocks: no tiledattn.mask.
// CHECK:     %[[U:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %[[UBLOCKS]] step %{{.*}} iter_args(%{{.*}} = %[[O0]], %{{.*}} = %[[M0]], %{{.*}} = %[[L0]])
// CHECK:       %[[KPOS:.*]] = arith.addi %[[KV0]], %[[J]] : index
// Each slot is taken inside the turn, just before its mma.
// CHECK:       %[[SF:.*]]:2 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.token {
// CHECK-NEXT:    %[[KS:.*]], %[[KT:.*]] = tiledattn.ring.get %[[KR]][%[[KPOS]]]
// CHECK-NEXT:    %[[F:.*]] = tiledattn.mma_async %[[QS]][%[[AROW]]], %[[KS]] transpose_b
// CHECK-NEXT:    tiledattn.yield %[[F]], %[[KT]]
// CHECK:       %[[S:.*]] = tiledattn.wait %[[SF]]#0
// CHECK:       tiledattn.ring.release %[[KR]], %[[SF]]#1
// CHECK-NOT:   tiledattn.mask
// No mask touched these scores: `finite`, no -inf guard.
// CHECK:       %[[P:.*]], %[[MX:.*]], %[[SUM:.*]], %[[ALPHA:.*]] = tiledattn.online_softmax %[[S]], {{.*}}, %[[SCALE]] finite : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x128xbf16>
// CHECK:       %[[ACC1:.*]] = tiledattn.rescale %{{.*}}, %[[ALPHA]]
// CHECK:       %[[VPOS:.*]] = arith.addi %[[KV0]], %[[J]] : index
// CHECK:       %[[OF:.*]]:2 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.token {
// CHECK-NEXT:    %[[VS:.*]], %[[VT:.*]] = tiledattn.ring.get %[[VR]][%[[VPOS]]]
// CHECK-NEXT:    tiledattn.mma_async %[[P]], %[[VS]] acc(%[[ACC1]])
// CHECK:       %[[ACC2:.*]] = tiledattn.wait %[[OF]]#0
// CHECK:       tiledattn.ring.release %[[VR]], %[[OF]]#1
// CHECK:       scf.yield %[[ACC2]], %[[MX]], %[[SUM]]
// Then the ragged end, masked.
// CHECK:     %[[R:.*]]:3 = scf.for %[[J:.*]] = %[[UBLOCKS]] to %[[BLOCKS]] step %{{.*}} iter_args(%{{.*}} = %[[U]]#0, %{{.*}} = %[[U]]#1, %{{.*}} = %[[U]]#2)
// CHECK:       tiledattn.mask %{{.*}}, %[[MYROW]], %{{.*}}, %[[SK]] : !tiledattn.tile<64x128xf32>
// CHECK:       tiledattn.online_softmax %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %[[SCALE]] :
// CHECK:     tiledattn.ring.release %[[QR]], %[[QT]]
// CHECK:     tiledattn.store %[[R]]#0, %[[R]]#1, %[[R]]#2 into %[[O]][%[[BZ]], %[[BY]], %[[MYROW]]] lse(%[[LSE]])
// CHECK:     tiledattn.yield
// CHECK-NOT: tiledattn.sdpa
func.func @pingpong_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// raw_maxima: every online_softmax keeps the raw scores' maxima (raw_max),
// and tiledattn.scale_max turns them into the scaled ones the store's lse
// (here) or finish_rows (overlap_epilogue, below) takes.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @raw_maxima
// CHECK-SAME: %[[SCALE:[^:]*]]: f32)
// CHECK: } consumers(2) regs(240) {
// CHECK:     %[[U:.*]]:3 = scf.for
// CHECK:       tiledattn.online_softmax %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %[[SCALE]] finite raw_max :
// CHECK:     %[[R:.*]]:3 = scf.for
// CHECK:       tiledattn.online_softmax %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %[[SCALE]] raw_max :
// CHECK:     %[[RMAX:.*]] = tiledattn.scale_max %[[R]]#1, %[[SCALE]] : !tiledattn.tile<64xf32>
// CHECK:     tiledattn.store %[[R]]#0, %[[RMAX]], %[[R]]#2 into
func.func @raw_maxima(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, raw_maxima = true>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: func.func @raw_maxima_overlap_epilogue
// CHECK-SAME: %[[SCALE:[^:]*]]: f32)
// CHECK:   %[[LMAX:.*]] = tiledattn.scale_max %[[LOOPS:[0-9]+]]#1, %[[SCALE]] : !tiledattn.tile<64xf32>
// CHECK:   tiledattn.finish_rows %[[LMAX]], %[[LOOPS]]#2 into
func.func @raw_maxima_overlap_epilogue(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true, overlap_epilogue = true,
                                   raw_maxima = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// one_thread_producer: the producer's first thread runs the whole tile loop
// (the if around for_each_tile), so ptxas keeps its positions uniform.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @one_thread_producer
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK:   %[[TID:.*]] = gpu.thread_id x
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TID]]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK:     tiledattn.for_each_tile
// CHECK-NOT: scf.if %[[FIRST]]
// CHECK:       tiledattn.ring.put
// CHECK:       scf.for
// CHECK:         tiledattn.ring.put
// CHECK:         tiledattn.ring.put
// CHECK:       tiledattn.yield
// CHECK: } consumers(2) regs(240) {
func.func @one_thread_producer(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, persistent = true,
                                   one_thread_producer = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// narrow_consumer_index: the roles' narrow_index (the consumer index in 32
// bits when lowered).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @narrow_consumer_index
// CHECK: } consumers(2) regs(240) narrow_index {
func.func @narrow_consumer_index(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, narrow_consumer_index = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// kv_multicast: the K and V rings are shared by the cluster's pair of blocks
// (cluster(2)); Q's stays the block's own.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @kv_multicast
// CHECK: tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
// CHECK-NEXT: tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
// CHECK-NEXT: tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
func.func @kv_multicast(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true, kv_multicast = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// Causal, three consumers, no pingpong and one loop that masks every block:
// the mmas are issued without turns; the loop ends at the block's diagonal;
// the function records that it is causal.

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal_f16_d64
// CHECK-SAME: attributes {tiledattn.causal, tiledattn.kernel
// CHECK: tiledattn.ring releases(12) : !tiledattn.ring<1, 192x64xf16>
// CHECK: tiledattn.ring releases(12) : !tiledattn.ring<3, 128x64xf16>
// CHECK: tiledattn.warp_specialize producer regs(24) {
// Causal: the tiles' query blocks run longest first.
// CHECK:   tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first
// CHECK: } consumers(3) regs(160) {
// CHECK:   tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first
// CHECK:     %[[ROW:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:     %[[DIAG:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:     %[[END:.*]] = arith.minui %{{.*}}, %[[DIAG]] : index
// CHECK:     %[[NONE:.*]] = arith.constant 0 : index
// CHECK:     %[[BLOCKS:.*]] = arith.ceildivui %[[END]], %{{.*}} : index
// CHECK-NOT: tiledattn.turn
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]]
// CHECK:     tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}} transpose_b : !tiledattn.smem<192x64xf16>, !tiledattn.smem<128x64xf16> -> !tiledattn.future<64x128xf32>
// CHECK:     tiledattn.mask {{.*}} causal : !tiledattn.tile<64x128xf32>
// CHECK:     tiledattn.online_softmax {{.*}} -> !tiledattn.tile<64x128xf16>
// CHECK:     tiledattn.mma_async %{{.*}}, %{{.*}} acc(%{{.*}}) : !tiledattn.tile<64x128xf16>, !tiledattn.smem<128x64xf16> -> !tiledattn.future<64x64xf32>
// CHECK-NOT: scf.for
// CHECK:   tiledattn.store
func.func @causal_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 3,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, split_kv_loop = false>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// exp2_on_fma in the schedule: every online_softmax of the program (the
// unmasked and the masked loop's) computes that many exponentials a thread
// on the FMA pipe.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @exp2_on_fma
// CHECK:   scf.for
// CHECK:     tiledattn.online_softmax %{{.*}} finite exp2_on_fma(16)
// CHECK:   scf.for
// CHECK:     tiledattn.mask
// CHECK:     tiledattn.online_softmax %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} exp2_on_fma(16)
func.func @exp2_on_fma(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, exp2_on_fma = 16>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// A score_mod on the sdpa: after S's wait (before the mask), a
// tiledattn.score_mod whose body scales the score and runs the sdpa's body
// with the block's batch and head; the softmax then takes scale 1.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @with_score_mod
// CHECK-SAME: %[[SCALE:[^:]*]]: f32)
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:   tiledattn.for_each_tile
// CHECK:   ^bb0(%{{.*}}: index, %[[BY:.*]]: index, %[[BZ:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK:   scf.for
// CHECK:     %[[S:.*]] = tiledattn.wait
// CHECK:     %[[COL:.*]] = arith.muli
// CHECK:     %[[MOD:.*]] = tiledattn.score_mod %[[S]][%{{.*}}, %[[COL]]] : !tiledattn.tile<64x128xf32> {
// CHECK:     ^bb0(%[[X:.*]]: f32, %[[QI:.*]]: index, %[[KI:.*]]: index):
// CHECK:       %[[XS:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK:       %[[D:.*]] = arith.subi %[[KI]], %[[QI]] : index
// CHECK:       %[[BH:.*]] = arith.addi %[[BZ]], %[[BY]] : index
// CHECK:       tiledattn.yield %{{.*}} : f32
// CHECK:     }
// CHECK:     tiledattn.online_softmax %[[MOD]], %{{.*}}, %{{.*}}, %[[ONE]]
// CHECK:   scf.for
// CHECK:     %[[S2:.*]] = tiledattn.wait
// CHECK:     %[[MOD2:.*]] = tiledattn.score_mod %[[S2]]
// CHECK:     tiledattn.mask %[[MOD2]]
func.func @with_score_mod(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %d = arith.subi %ki, %qi : index
    %bh = arith.addi %b, %h : index
    %e = arith.addi %d, %bh : index
    %ei = arith.index_cast %e : index to i32
    %ef = arith.sitofp %ei : i32 to f32
    %y = arith.addf %s, %ef : f32
    tiledattn.yield %y : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// overlap_softmax: block 0's S and softmax alone (masked only when block 0
// is the diagonal or the ragged end), then per block j one turn issuing
// S_j = Q K_j^T and O += P_{j-1} V_{j-1}; S_j is waited for and its softmax
// runs while the P.V still runs, then O is waited for and rescaled. The
// last block's P.V follows the loops.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @overlapped
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
// CHECK: %[[KR:.*]] = tiledattn.ring releases(8)
// CHECK: %[[VR:.*]] = tiledattn.ring releases(8)
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[O0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x128xf32>
// CHECK:   tiledattn.for_each_tile
// CHECK:   ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[KV0:.*]]: index):
// CHECK:     arith.ceildivui
// CHECK:     %[[UNMASKED:.*]] = arith.divui
// CHECK:   %[[QSLOT:.*]], %[[QTOKEN:.*]] = tiledattn.ring.get %[[QR]]
// CHECK:   %[[S0F:.*]]:2 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.token {
// CHECK-NEXT: %[[K0:.*]], %{{.*}} = tiledattn.ring.get %[[KR]]
// CHECK-NEXT: tiledattn.mma_async %[[QSLOT]][%{{.*}}], %[[K0]] transpose_b
// CHECK:   %[[S0:.*]] = tiledattn.wait %[[S0F]]#0
// CHECK:   tiledattn.ring.release %[[KR]], %[[S0F]]#1
// CHECK:   %[[FIRSTMASKED:.*]] = arith.cmpi eq, %[[UNMASKED]], %{{.*}} : index
// CHECK:   %[[S0M:.*]] = scf.if %[[FIRSTMASKED]] -> (!tiledattn.tile<64x128xf32>) {
// CHECK:     tiledattn.mask %[[S0]]
// CHECK:   } else {
// CHECK:     scf.yield %[[S0]]
// CHECK:   %[[P0:.*]], %[[M1:.*]], %[[L1:.*]], %{{.*}} = tiledattn.online_softmax %[[S0M]]
// CHECK:   %[[BEGIN:.*]] = arith.maxui %[[UNMASKED]], %[[ONE:.*]] : index
// CHECK:   %[[U:.*]]:4 = scf.for %[[J:.*]] = %[[ONE]] to %[[BEGIN]] step %{{.*}} iter_args(%[[O:.*]] = %[[O0]], %[[M:.*]] = %[[M1]], %[[L:.*]] = %[[L1]], %[[P:.*]] = %[[P0]])
// V_{j-1}'s slot is waited for after S_j's issue, inside the turn.
// CHECK:     %[[KPOS:.*]] = arith.addi %[[KV0]], %[[J]]
// CHECK:     %[[PREV:.*]] = arith.subi %[[J]]
// CHECK:     %[[VPOS:.*]] = arith.addi %[[KV0]], %[[PREV]]
// CHECK:     %[[F:.*]]:4 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.future<64x128xf32>, !tiledattn.token, !tiledattn.token {
// CHECK-NEXT:  %[[K:.*]], %[[KTOKEN:.*]] = tiledattn.ring.get %[[KR]][%[[KPOS]]]
// CHECK-NEXT:  %[[SF:.*]] = tiledattn.mma_async %[[QSLOT]][%{{.*}}], %[[K]] transpose_b
// CHECK-NEXT:  %[[V:.*]], %[[VTOKEN:.*]] = tiledattn.ring.get %[[VR]][%[[VPOS]]]
// CHECK-NEXT:  %[[OF:.*]] = tiledattn.mma_async %[[P]], %[[V]] acc(%[[O]])
// CHECK-NEXT:  tiledattn.yield %[[SF]], %[[OF]], %[[KTOKEN]], %[[VTOKEN]]
// CHECK:     %[[S:.*]] = tiledattn.wait %[[F]]#0
// CHECK:     tiledattn.ring.release %[[KR]], %[[F]]#2
// CHECK-NOT: tiledattn.mask
// CHECK:     %[[PN:.*]], %[[MN:.*]], %[[LN:.*]], %[[ALPHA:.*]] = tiledattn.online_softmax %[[S]], %[[M]], %[[L]]
// CHECK:     %[[OW:.*]] = tiledattn.wait %[[F]]#1
// CHECK:     tiledattn.ring.release %[[VR]], %[[F]]#3
// CHECK:     %[[OR:.*]] = tiledattn.rescale %[[OW]], %[[ALPHA]]
// CHECK:     scf.yield %[[OR]], %[[MN]], %[[LN]], %[[PN]]
// CHECK:   %[[D:.*]]:4 = scf.for %{{.*}} = %[[BEGIN]] to %[[BLOCKS:[^ ]*]] step %{{.*}} iter_args({{.*}} = %[[U]]#0, {{.*}} = %[[U]]#1, {{.*}} = %[[U]]#2, {{.*}} = %[[U]]#3)
// CHECK:     tiledattn.turn
// CHECK:     tiledattn.wait
// CHECK:     tiledattn.mask
// CHECK:     tiledattn.online_softmax
// CHECK:   %[[LAST:.*]] = arith.subi %[[BLOCKS]]
// CHECK:   %[[LASTPOS:.*]] = arith.addi %[[KV0]], %[[LAST]]
// CHECK:   %[[OLF:.*]]:2 = tiledattn.turn
// CHECK-NEXT: %[[VL:.*]], %{{.*}} = tiledattn.ring.get %[[VR]][%[[LASTPOS]]]
// CHECK-NEXT: tiledattn.mma_async %[[D]]#3, %[[VL]] acc(%[[D]]#0)
// CHECK:   %[[OL:.*]] = tiledattn.wait %[[OLF]]#0
// CHECK:   tiledattn.ring.release %[[VR]], %[[OLF]]#1
// CHECK:   tiledattn.ring.release %[[QR]], %[[QTOKEN]]
// CHECK:   tiledattn.store %[[OL]], %[[D]]#1, %[[D]]#2
func.func @overlapped(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// A value head dim of its own (DeepSeek's 192 / 128): Q and K slots are 192
// wide, V slots and the O accumulator 128.

!qk = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @value_head_dim
// CHECK: tiledattn.ring releases(8) : !tiledattn.ring<1, 128x192xbf16>
// CHECK: tiledattn.ring releases(8) : !tiledattn.ring<2, 112x192xbf16>
// CHECK: tiledattn.ring releases(8) : !tiledattn.ring<2, 112x128xbf16>
// CHECK: } consumers(2) regs(240) {
// CHECK:   tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x128xf32>
// CHECK:   tiledattn.mma_async %{{.*}}, %{{.*}} transpose_b : !tiledattn.smem<128x192xbf16>, !tiledattn.smem<112x192xbf16> -> !tiledattn.future<64x112xf32>
// CHECK:   tiledattn.mma_async %{{.*}}, %{{.*}} acc(%{{.*}}) : !tiledattn.tile<64x112xbf16>, !tiledattn.smem<112x128xbf16> -> !tiledattn.future<64x128xf32>
// CHECK:   tiledattn.store %{{.*}} : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x128xbf16
func.func @value_head_dim(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 112, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      : !qk, !qk, !vo, !vo, !lse
  return
}

// -----

// tma_store, one tile per block: each consumer stages O in its rows of the Q
// slot it still holds, waits until the copy has read them, then releases
// the slot.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @tma_store_in_q
// CHECK-SAME: (%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]:
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
// CHECK-NOT: tiledattn.alloc
// CHECK: } consumers(2) regs(240) {
// CHECK: ^bb0(%[[C:.*]]: index):
// CHECK:   %[[SLOTROW:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK:   tiledattn.for_each_tile
// CHECK:     %[[ROW:.*]] = arith.addi %{{.*}}, %[[SLOTROW]] : index
// CHECK:     %[[QSLOT:.*]], %[[QTOKEN:.*]] = tiledattn.ring.get %[[QR]]
// CHECK:     tiledattn.tma_store %{{.*}}, %{{.*}}, %{{.*}} into %[[O]][%{{.*}}, %{{.*}}, %[[ROW]]] via %[[QSLOT]][%[[SLOTROW]]] lse(%[[LSE]])
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: tiledattn.ring.release %[[QR]], %[[QTOKEN]]
// CHECK-NOT: tiledattn.tma_store_wait
// CHECK: return
func.func @tma_store_in_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// tma_store, persistent with two Q buffers: O gets a tile of its own (the
// next tile's Q arrives in the other slot meanwhile). A consumer releases
// its Q slot, waits until the tile before's copy has read the stage, then
// stages and stores; after the last tile it waits once more.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @tma_store_persistent
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
// CHECK: %[[STAGE:.*]] = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
// CHECK: } consumers(2) regs(240) {
// CHECK:   tiledattn.for_each_tile
// CHECK:     %{{.*}}, %[[QTOKEN:.*]] = tiledattn.ring.get %[[QR]]
// CHECK:     tiledattn.ring.release %[[QR]], %[[QTOKEN]]
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: tiledattn.tma_store %{{.*}} via %[[STAGE]][%{{.*}}] lse(%{{.*}})
// CHECK:   }
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: }
func.func @tma_store_persistent(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// tma_store with a value head dim wider than Q's: O does not fit Q's slot,
// so it gets a tile of its own, 128 x 192.

!qk = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x192xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @tma_store_of_a_wider_value
// CHECK: %[[STAGE:.*]] = tiledattn.alloc : !tiledattn.smem<128x192xbf16>
// CHECK: tiledattn.tma_store %{{.*}} via %[[STAGE]]
func.func @tma_store_of_a_wider_value(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true>)
      : !qk, !qk, !vo, !vo, !lse
  return
}

// -----

// defer_store: the tile loop carries the tile's O (acc, row max, row sum),
// its row, head and batch, and whether there is one; the next tile stores
// it between the issue and the wait of its first S, and the last one is
// stored after the loop.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @defer_store
// CHECK-SAME: (%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]:
// CHECK: %[[STAGE:.*]] = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ACC0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x128xf32>
// CHECK:   %[[NONE:.*]] = arith.constant false
// CHECK:   %[[LAST:.*]]:8 = tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} iter_args(%{{.*}}, %[[ACC0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NONE]] : index, !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, index, index, index, i1)
// CHECK:   ^bb0(%[[BX:[^:]*]]: index, %[[BY:[^:]*]]: index, %[[BZ:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[HACC:[^:]*]]: !tiledattn.tile<64x128xf32>, %[[HMAX:[^:]*]]: !tiledattn.tile<64xf32>, %[[HSUM:[^:]*]]: !tiledattn.tile<64xf32>, %[[HROW:[^:]*]]: index, %[[HHEAD:[^:]*]]: index, %[[HBATCH:[^:]*]]: index, %[[HVALID:[^:]*]]: i1):
// CHECK:     %[[S0:.*]]:2 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.token {
// CHECK:     scf.if %[[HVALID]] {
// CHECK-NEXT:  tiledattn.tma_store_wait
// CHECK-NEXT:  tiledattn.tma_store %[[HACC]], %[[HMAX]], %[[HSUM]] into %[[O]][%[[HBATCH]], %[[HHEAD]], %[[HROW]]] via %[[STAGE]][%{{.*}}] lse(%[[LSE]])
// CHECK:     }
// CHECK-NEXT: tiledattn.wait %[[S0]]#0
// CHECK-NOT: tiledattn.tma_store
// CHECK:     tiledattn.ring.release
// CHECK:     %[[TRUE:.*]] = arith.constant true
// CHECK:     tiledattn.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BY]], %[[BZ]], %[[TRUE]]
// CHECK:   scf.if %[[LAST]]#7 {
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: tiledattn.tma_store %[[LAST]]#1, %[[LAST]]#2, %[[LAST]]#3 into %[[O]][%[[LAST]]#6, %[[LAST]]#5, %[[LAST]]#4] via %[[STAGE]]
// CHECK:   }
// CHECK-NEXT: tiledattn.tma_store_wait
func.func @defer_store(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2, defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// hold_packed: at the end of its tile the O a tile hands the next is
// normalized (finish_rows writes the lse, rescale by 1 / l) and packed
// (truncate), so the loop carries a bf16 tile and no row statistics, and
// the deferred store takes it as it is (no statistics, no lse).

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @hold_packed
// CHECK-SAME: (%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]:
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ACC0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x128xf32>
// CHECK:   %[[ZERO:.*]] = tiledattn.truncate %[[ACC0]] : !tiledattn.tile<64x128xf32> to !tiledattn.tile<64x128xbf16>
// CHECK:   %[[LAST:.*]]:6 = tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} iter_args(%{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : index, !tiledattn.tile<64x128xbf16>, index, index, index, i1)
// CHECK:   ^bb0(%[[BX:[^:]*]]: index, %[[BY:[^:]*]]: index, %[[BZ:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[HELD:[^:]*]]: !tiledattn.tile<64x128xbf16>, %[[HROW:[^:]*]]: index, %[[HHEAD:[^:]*]]: index, %[[HBATCH:[^:]*]]: index, %[[HVALID:[^:]*]]: i1):
// CHECK:     scf.if %[[HVALID]] {
// CHECK-NEXT:  tiledattn.tma_store_wait
// CHECK-NEXT:  tiledattn.tma_store %[[HELD]] into %[[O]][%[[HBATCH]], %[[HHEAD]], %[[HROW]]] via %{{.*}} : !tiledattn.tile<64x128xbf16>,
// CHECK:     %[[INV:.*]] = tiledattn.finish_rows %{{.*}}, %{{.*}} into %[[LSE]][%[[BZ]], %[[BY]], %[[ROW:.*]]] :
// CHECK-NEXT: %[[SCALED:.*]] = tiledattn.rescale %{{.*}}, %[[INV]]
// CHECK-NEXT: %[[PACKED:.*]] = tiledattn.truncate %[[SCALED]] : !tiledattn.tile<64x128xf32> to !tiledattn.tile<64x128xbf16>
// CHECK:     tiledattn.yield %{{.*}}, %[[PACKED]], %[[ROW]], %[[BY]], %[[BZ]], %{{.*}} :
// CHECK:   scf.if %[[LAST]]#5 {
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: tiledattn.tma_store %[[LAST]]#1 into %[[O]][%[[LAST]]#4, %[[LAST]]#3, %[[LAST]]#2] via
func.func @hold_packed(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2, defer_store = true,
                                   hold_packed = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// tile_order = across_heads: both roles walk the tiles heads and batches
// fastest (causal: longest first); uniform_consumer: the roles' consumer
// index is known warp-uniform.

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @across_heads
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK:   tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first across_heads iter_args
// CHECK: } consumers(3) regs(160) uniform_index {
// CHECK:   tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first across_heads iter_args
func.func @across_heads(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 112, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, pingpong = true,
                                   overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2,
                                   tile_order = across_heads,
                                   uniform_consumer = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// overlap_epilogue: the rows' 1 / l and lse (tiledattn.finish_rows) under
// the last P.V; after its wait O is normalized (tiledattn.rescale) and
// stored as it is.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @overlap_epilogue
// CHECK-SAME: (%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%{{[^:]*}}: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]:
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[QSLOT:.*]], %[[QTOKEN:.*]] = tiledattn.ring.get
// CHECK:   scf.for
// CHECK:   %[[LOOPS:.*]]:4 = scf.for
// CHECK:   %[[PV:.*]]:2 = tiledattn.turn -> !tiledattn.future<64x128xf32>, !tiledattn.token {
// CHECK:   %[[INV:.*]] = tiledattn.finish_rows %[[LOOPS]]#1, %[[LOOPS]]#2 into %[[LSE]][
// CHECK-NEXT: %[[ACC:.*]] = tiledattn.wait %[[PV]]#0
// CHECK-NEXT: tiledattn.ring.release
// CHECK-NEXT: %[[NORMALIZED:.*]] = tiledattn.rescale %[[ACC]], %[[INV]]
// CHECK-NEXT: tiledattn.tma_store %[[NORMALIZED]] into %[[O]][{{.*}}] via %[[QSLOT]][{{.*}}] : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>{{$}}
// CHECK-NEXT: tiledattn.tma_store_wait
// CHECK-NEXT: tiledattn.ring.release %{{.*}}, %[[QTOKEN]]
func.func @overlap_epilogue(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   tma_store = true, overlap_epilogue = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// q_in_registers: each tile, right after Q's get, the consumer reads its
// rows of Q into registers, and every S takes A from there.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @q_in_registers
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ROW:.*]] = arith.muli %{{.*}}, %c64
// CHECK:   %[[QSLOT:.*]], %{{.*}} = tiledattn.ring.get
// CHECK-NEXT: %[[QA:.*]] = tiledattn.read_rows %[[QSLOT]][%[[ROW]]] : !tiledattn.smem<128x128xbf16> -> !tiledattn.tile<64x128xbf16>
// CHECK-COUNT-3: tiledattn.mma_async %[[QA]], %{{.*}} transpose_b : !tiledattn.tile<64x128xbf16>
// CHECK-NOT: tiledattn.mma_async %[[QSLOT]]
// CHECK: return
func.func @q_in_registers(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// uniform_ring: every consumer get is uniform (the producer, one thread,
// takes none), and so is the address of Q's rows each S reads (uniform_a);
// P.V's A is in registers.

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @uniform_ring
// CHECK: } consumers(2) regs(240) {
// CHECK-NOT: tiledattn.ring.get %{{.*}}[%{{.*}}] :
// CHECK: tiledattn.ring.get %{{.*}}[%{{.*}}] uniform
// CHECK-NOT: tiledattn.ring.get %{{.*}}[%{{.*}}] :
// CHECK: return
// UNIFORM-A-LABEL: func.func @uniform_ring
// UNIFORM-A-COUNT-3: tiledattn.mma_async %{{.*}}[%{{.*}}] uniform_a, %{{.*}} transpose_b
// UNIFORM-A-NOT: uniform_a
// UNIFORM-A: return
func.func @uniform_ring(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   overlap_epilogue = true, uniform_ring = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// q_by_atom: Q's ring fills in 4 parts (one per atom of head dim 256); the
// producer puts the first before the first K block and the rest right
// after it; each consumer takes Q `partial`, and only the tile's first S
// waits for its parts (after_parts).

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @q_by_atom
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
// CHECK: %[[KR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x256xbf16>
// CHECK: tiledattn.warp_specialize producer
// CHECK: tiledattn.ring.put %[[QR]][%{{.*}}] parts(0 to 1) :
// CHECK: scf.for
// CHECK: tiledattn.ring.put %[[KR]]
// CHECK: scf.if
// CHECK-NEXT: tiledattn.ring.put %[[QR]][%{{.*}}] parts(1 to 4) :
// CHECK: } consumers(2) regs(240) {
// CHECK: %[[QS:.*]], %[[QT:.*]] = tiledattn.ring.get %[[QR]][%{{.*}}] partial
// CHECK: tiledattn.mma_async %[[QS]][%{{.*}}], %{{.*}} transpose_b after_parts(%[[QT]])
// CHECK-NOT: after_parts
// CHECK: return
func.func @q_by_atom(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   q_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// k0_by_atom: the first K block goes in Q's put (`with`), each of its atoms
// with Q's; the K loop skips block 0, and the first S takes that K slot
// `partial` too and names both tokens.

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @k0_by_atom
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) parts(4)
// CHECK: %[[KR:.*]] = tiledattn.ring releases(8) :
// CHECK: tiledattn.ring.put %[[QR]][%{{.*}}] parts(0 to 4) with %[[KR]][%{{.*}}] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
// CHECK: scf.for %[[J:.*]] = %{{.*}}
// CHECK: %[[LATER:.*]] = arith.cmpi ne, %[[J]], %c0
// CHECK: scf.if %[[LATER]] {
// CHECK-NEXT: tiledattn.ring.put %[[KR]]
// CHECK-NOT: parts(1 to 4)
// CHECK: } consumers(2) regs(240) {
// CHECK: %[[QS:.*]], %[[QT:.*]] = tiledattn.ring.get %[[QR]][%{{.*}}] partial
// CHECK: %[[KS:.*]], %[[KT:.*]] = tiledattn.ring.get %[[KR]][%{{.*}}] partial
// CHECK-NEXT: tiledattn.mma_async %[[QS]][%{{.*}}], %[[KS]] transpose_b after_parts(%[[QT]], %[[KT]])
// CHECK-NOT: partial
// CHECK: return
func.func @k0_by_atom(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   q_by_atom = true, k0_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// skip_masked_blocks (causal): the producer releases, after each block's
// puts, the slots of consumer 0 when its rows end before the block; each
// consumer's loops end at its own bound, said warp-uniform, and it takes an
// empty turn for each later block of the tile.

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @skip_masked_blocks
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[BLOCKS:[^ ]*]]
// CHECK: tiledattn.ring.put
// CHECK: tiledattn.ring.put
// CHECK: %[[SKIPPED:.*]] = arith.cmpi uge, %[[J]], %{{.*}}
// CHECK-NEXT: scf.if %[[SKIPPED]] {
// CHECK-NEXT: tiledattn.ring.skip %{{.*}}[%[[KV:.*]]] readers(4)
// CHECK-NEXT: tiledattn.ring.skip %{{.*}}[%[[KV]]] readers(4)
// CHECK: } consumers(2) regs(240) {
// CHECK: %[[MINE:.*]] = tiledattn.uniform %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[MINE]]
// CHECK: scf.for %{{.*}} = %[[MINE]] to %{{.*}} step
// CHECK-NEXT: tiledattn.turn {
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: return
func.func @skip_masked_blocks(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   skip_masked_blocks = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// dynamic_tiles: the producer's thread walks a dynamic tile loop, tags Q's
// put with the tile's rank and, after the last tile, puts the end mark (no
// copy, tagged with the tile count) at the position past its last tile; each
// consumer's loop takes Q's slot itself (ranks_from) and releases it.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @dynamic_tiles
// CHECK: %[[QR:.*]] = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK: scf.if %{{.*}} {
// CHECK: %[[LOOP:.*]]:2 = tiledattn.for_each_tile %[[QB:.*]], %[[H:.*]], %[[B:.*]] longest_first dynamic iter_args(%{{.*}}, %{{.*}} : index, index) -> index, index {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[DONE:.*]]: index, %[[RANK:.*]]: i32, %{{.*}}: index, %[[PUTS:.*]]: index):
// CHECK: tiledattn.ring.put %[[QR]][%[[DONE]]] tag(%[[RANK]])
// CHECK: %[[PUTS1:.*]] = arith.addi %[[PUTS]], %{{.*}} : index
// CHECK: tiledattn.yield %{{.*}}, %[[PUTS1]] : index, index
// CHECK: %[[TILES:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: tiledattn.ring.put %[[QR]][%[[LOOP]]#1] tag(%[[TILES]]) : !tiledattn.ring<2, 128x128xbf16> {
// CHECK-NEXT: ^bb0(%{{.*}}: !tiledattn.smem<128x128xbf16>):
// CHECK-NEXT: }
// CHECK: } consumers(2) regs(240) {
// CHECK: tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first dynamic ranks_from %[[QR]] : !tiledattn.ring<2, 128x128xbf16> iter_args(%{{.*}} : index) -> index {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[QSLOT:.*]]: !tiledattn.smem<128x128xbf16>, %[[QTOKEN:.*]]: !tiledattn.token, %{{.*}}: index):
// CHECK-NOT: tiledattn.ring.get %[[QR]]
// CHECK: tiledattn.mma_async %[[QSLOT]]
// CHECK: tiledattn.ring.release %[[QR]], %[[QTOKEN]]
func.func @dynamic_tiles(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   persistent = true, tma_store = true,
                                   q_buffers = 2, dynamic_tiles = true,
                                   overlap_epilogue = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// narrow_diagonal: in the masked loop, a block whose keys from 64 on are right
// of all the consumer's rows (a condition said warp-uniform) takes S over its
// first 64 keys, its P in f32 packed after the P.V's wait, and widens P with
// zeros; the last block's P.V, if narrow, is over those 64 keys only.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @narrow_diagonal
// CHECK: } consumers(2) regs(240) {
// CHECK: scf.for
// CHECK: %[[NARROW:.*]] = tiledattn.uniform %{{.*}} : i1
// CHECK-NEXT: %{{.*}}:4 = scf.if %[[NARROW]] -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64x128xbf16>) {
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}} b_rows(64) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
// CHECK: tiledattn.mask %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} causal : !tiledattn.tile<64x64xf32>
// CHECK: %[[P32:.*]], %{{.*}}, %{{.*}}, %{{.*}} = tiledattn.online_softmax {{.*}} -> !tiledattn.tile<64x64xf32>
// CHECK: tiledattn.wait %{{.*}} : !tiledattn.future<64x128xf32>
// CHECK: %[[P16:.*]] = tiledattn.truncate %[[P32]] : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
// CHECK: %[[WIDE:.*]] = tiledattn.resize %[[P16]] : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xbf16>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[WIDE]]
// CHECK: } else {
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}} transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
// CHECK: %[[LASTNARROW:.*]] = tiledattn.uniform %{{.*}} : i1
// CHECK-NEXT: scf.if %[[LASTNARROW]]
// CHECK: %[[P64:.*]] = tiledattn.resize %{{.*}} : !tiledattn.tile<64x128xbf16> to !tiledattn.tile<64x64xbf16>
// CHECK: tiledattn.mma_async %[[P64]], %{{.*}} b_rows(64) acc(%{{.*}}) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
// CHECK: } else {
// CHECK: tiledattn.mma_async %{{.*}}, %{{.*}} acc(%{{.*}}) : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
func.func @narrow_diagonal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true,
                                   narrow_diagonal = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// A block_map: each role reads its tile's row of the map (index 0 along a
// dimension of size 1), takes the blocks listed (entry 1) and the full ones
// (entry 0) from it, and the first key of its j-th block from entry 2 + j:
// the producer for its copies, the consumers for their masks. The mask_mod
// runs on the partial blocks only (with the mask), scaling its result back
// by 1 / scale, and every softmax takes the scale; the full blocks' softmax
// is `finite`.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @with_block_map
// CHECK-SAME: %[[SCALE:[^:]*]]: f32, %[[MASK:[^:]*]]: memref<?x?x?x?xi8>, %[[MAP:[^:]*]]: memref<?x?x?x?xi32>)
// CHECK: tiledattn.warp_specialize producer
// CHECK:   tiledattn.for_each_tile
// CHECK:   ^bb0(%[[PX:[^:]*]]: index, %[[PY:[^:]*]]: index, %[[PZ:[^:]*]]: index,
// CHECK:     %[[PB0:.*]] = memref.dim %[[MAP]], %c0
// CHECK:     %[[PB1:.*]] = arith.cmpi eq, %[[PB0]], %c1
// CHECK:     %[[PB:.*]] = arith.select %[[PB1]], %c0{{.*}}, %[[PZ]] : index
// CHECK:     %[[PH0:.*]] = memref.dim %[[MAP]], %c1
// CHECK:     %[[PH1:.*]] = arith.cmpi eq, %[[PH0]], %c1
// CHECK:     %[[PH:.*]] = arith.select %[[PH1]], %c0{{.*}}, %[[PY]] : index
// CHECK:     %[[PM:.*]] = arith.divui
// CHECK:     %[[PN32:.*]] = memref.load %[[MAP]][%[[PB]], %[[PH]], %[[PM]], %c1{{.*}}]
// CHECK:     %[[PN:.*]] = arith.index_castui %[[PN32]] : i32 to index
// CHECK:     scf.for %[[J:.*]] = %c0{{.*}} to %[[PN]]
// CHECK:       %[[E:.*]] = arith.addi %[[J]], %c2
// CHECK:       %[[BLK32:.*]] = memref.load %[[MAP]][%[[PB]], %[[PH]], %[[PM]], %[[E]]]
// CHECK:       %[[BLK:.*]] = arith.index_castui %[[BLK32]]
// CHECK:       %[[ROW:.*]] = arith.muli %[[BLK]], %c128
// CHECK:       tiledattn.tma_load %{{.*}}[%{{.*}}, %{{.*}}, %[[ROW]]]
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[UNSCALE:.*]] = arith.divf %cst, %[[SCALE]] : f32
// CHECK:   tiledattn.for_each_tile
// CHECK:     %[[N32:.*]] = memref.load %[[MAP]][%[[B:.*]], %[[H:.*]], %[[M:.*]], %c1{{.*}}]
// CHECK:     %[[N:.*]] = arith.index_castui %[[N32]]
// CHECK:     %[[F32:.*]] = memref.load %[[MAP]][%[[B]], %[[H]], %[[M]], %c0{{.*}}]
// CHECK:     %[[F:.*]] = arith.index_castui %[[F32]]
// Block 0 is partial when no block is full: then the score_mod and mask.
// CHECK:     %[[S0:.*]] = tiledattn.wait
// CHECK:     %[[PARTIAL:.*]] = arith.cmpi eq, %[[F]], %c0
// CHECK:     scf.if %[[PARTIAL]]
// CHECK:       memref.load %[[MAP]]
// CHECK:       tiledattn.score_mod %[[S0]]
// CHECK:         arith.mulf %{{.*}}, %[[UNSCALE]] : f32
// CHECK:       tiledattn.mask
// CHECK:     } else {
// CHECK:       scf.yield %[[S0]]
// CHECK:     tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]] :
// The full blocks: no score_mod, no mask, finite.
// CHECK:     %[[FULL_END:.*]] = arith.maxui %[[F]], %c1
// CHECK:     scf.for %{{.*}} = %c1{{.*}} to %[[FULL_END]]
// CHECK-NOT:   tiledattn.score_mod
// CHECK:       tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]] finite
// CHECK:     scf.yield
// The partial ones: the block's first key read before its mmas issue.
// CHECK:     scf.for %[[PJ:.*]] = %[[FULL_END]] to %[[N]]
// CHECK:       %[[PE:.*]] = arith.addi %[[PJ]], %c2
// CHECK:       %[[PBLK32:.*]] = memref.load %[[MAP]][%[[B]], %[[H]], %[[M]], %[[PE]]]
// CHECK:       %[[PBLK:.*]] = arith.index_castui %[[PBLK32]]
// CHECK:       %[[COL:.*]] = arith.muli %[[PBLK]], %c128
// CHECK:       tiledattn.turn
// CHECK:       %[[MOD:.*]] = tiledattn.score_mod %{{.*}}[%{{.*}}, %[[COL]]]
// CHECK:       tiledattn.mask %[[MOD]], %{{.*}}, %[[COL]]
// CHECK:       tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]] :
func.func @with_block_map(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32,
                          %mask: memref<?x?x?x?xi8>, %map: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      block_map(%map : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %c0 = arith.constant 0 : index
    %m = memref.load %mask[%b, %c0, %c0, %ki] : memref<?x?x?x?xi8>
    %z = arith.constant 0 : i8
    %keep = arith.cmpi ne, %m, %z : i8
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %s, %ninf : f32
    tiledattn.yield %y : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// A score_mod and a mask_mod with a block_map: the score_mod on every
// block, the mask_mod after it on the partial ones; the softmax takes 1.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @score_mod_and_mask_mod
// CHECK-SAME: %[[SCALE:[^:]*]]: f32, %[[MAP:[^:]*]]: memref<?x?x?x?xi32>)
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: arith.divf
// CHECK:   tiledattn.for_each_tile
// Block 0: the score_mod, then in the partial branch the mask_mod alone on
// the scaled scores.
// CHECK:     %[[S0:.*]] = tiledattn.score_mod
// CHECK:       arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:       math.tanh
// CHECK-NOT:   arith.cmpi
// CHECK:       tiledattn.yield
// CHECK:     scf.if
// CHECK:       tiledattn.score_mod %[[S0]]
// CHECK-NOT:     arith.mulf
// CHECK-NOT:     math.tanh
// CHECK:         arith.cmpi sge
// CHECK:         tiledattn.yield
// CHECK:       tiledattn.mask
// CHECK:     tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]] :
// Full blocks: the score_mod only, and not finite (it may give -inf).
// CHECK:     scf.for
// CHECK:       tiledattn.score_mod
// CHECK:         math.tanh
// CHECK-NOT:     arith.cmpi
// CHECK:         tiledattn.yield
// CHECK-NOT:   tiledattn.mask
// CHECK:       tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]] :
// Partial blocks: both in one body, then the mask.
// CHECK:     scf.for
// CHECK:       tiledattn.score_mod
// CHECK:         math.tanh
// CHECK:         arith.cmpi sge
// CHECK:         tiledattn.yield
// CHECK:       tiledattn.mask
func.func @score_mod_and_mask_mod(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                                  %scale: f32, %map: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      block_map(%map : memref<?x?x?x?xi32>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %t = math.tanh %s : f32
    tiledattn.yield %t : f32
  } mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %keep = arith.cmpi sge, %qi, %ki : index
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %s, %ninf : f32
    tiledattn.yield %y : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// A mask_mod without a block_map runs on every block after the score_mod,
// as a second score_mod would; the softmax takes 1.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @mask_mod_without_map
// CHECK: } consumers(2) regs(240) {
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:     tiledattn.score_mod
// CHECK:       arith.cmpi sge
// CHECK:     tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]] :
// CHECK:     scf.for
// CHECK:       tiledattn.score_mod
// CHECK:         arith.cmpi sge
// CHECK:       tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]] :
func.func @mask_mod_without_map(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                                %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %keep = arith.cmpi sge, %qi, %ki : index
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %s, %ninf : f32
    tiledattn.yield %y : f32
  } : !head, !head, !head, !head, !lse
  return
}
