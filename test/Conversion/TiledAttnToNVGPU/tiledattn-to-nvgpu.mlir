// RUN: tiledattn-opt %s -split-input-file -convert-tiledattn-to-nvgpu | FileCheck %s
// RUN: tiledattn-opt %s -split-input-file -tiledattn-tile-sdpa -convert-tiledattn-to-nvgpu | FileCheck %s --check-prefix=SDPA

// convert-tiledattn-to-nvgpu on a hand-written tile program (one warp,
// 16x16 tiles), then on what tiledattn-tile-sdpa makes of tiledattn.sdpa.

// CHECK-LABEL: gpu.module @hand_tile_program
// CHECK: gpu.func @hand_tile_program(%[[Q:[^:]*]]: memref<?x?x?x16xf16>, %[[K:[^:]*]]: memref<?x?x?x16xf16>, %[[V:[^:]*]]: memref<?x?x?x16xf16>, %[[O:[^:]*]]: memref<?x?x?x16xf16>, %[[LSE:[^:]*]]: memref<?x?x?xf32>, %[[SCALE:[^:]*]]: f32, %[[SK:[^:]*]]: index) kernel
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// CHECK: gpu.thread_id x
// The Q tile: four A-fragment pairs per k-step, 4-byte aligned.
// CHECK-COUNT-4: vector.load %[[Q]]{{.*}} {alignment = 4 : i64} : memref<?x?x?x16xf16>, vector<2xf16>
// Tile iteration arguments become their fragments: 2 x 4 accumulator
// registers, then 2 row maxima and 2 row sums.
// CHECK: %[[LOOP:.*]]:12 = scf.for %[[J:.*]] = %{{.*}} to %[[SK]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// K is read row-wise for the transposed rhs.
// CHECK:   vector.load %[[K]]{{.*}} {alignment = 4 : i64} : memref<?x?x?x16xf16>, vector<2xf16>
// CHECK:   nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The mask: a score becomes -inf where its key is at or past Sk or, causal,
// right of its query row (key > row).
// CHECK:   %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   %[[KEY:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[PAST:.*]] = arith.cmpi uge, %[[KEY]], %[[SK]] : index
// CHECK-NEXT: %[[RIGHT:.*]] = arith.cmpi ugt, %[[KEY]], %{{.*}} : index
// CHECK-NEXT: %[[MASKED:.*]] = arith.ori %[[PAST]], %[[RIGHT]] : i1
// CHECK-NEXT: %[[S0:.*]] = arith.select %[[MASKED]], %[[NINF]], %{{.*}} : f32
// The scale, folded with log2(e) into one multiplier for every score.
// CHECK:   %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[MINIT:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   %[[X0:.*]] = arith.mulf %[[S0]], %[[SCALED]] : f32
// Row maxima (from -inf) and sums are reduced over the four threads of a
// row group.
// CHECK:   arith.maximumf %[[MINIT]], %[[X0]] : f32
// CHECK:   gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:   arith.maximumf
// CHECK:   gpu.shuffle xor
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%{{.*}}) : (f32) -> f32
// CHECK:   gpu.shuffle xor
// CHECK:   arith.addf
// Probabilities are packed into f16 A fragments.
// CHECK:   arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// V is read column-wise, one element at a time.
// CHECK:   memref.load %[[V]]
// CHECK:   vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK:   nvvm.mma.sync
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK:   scf.yield {{.*}} : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK: }
// Rows past Sq are not stored.
// CHECK: %[[SQ:.*]] = memref.dim %[[O]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[SQ]] : index
// CHECK: scf.if %[[IN]] {
// CHECK:   vector.store %{{.*}}, %[[O]]{{.*}} {alignment = 4 : i64} : memref<?x?x?x16xf16>, vector<2xf16>
// The lse in natural log: (max + log2(sum)) * ln(2), -inf for a row no key
// took part in.
// CHECK:   scf.if
// CHECK:     %[[LG:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-NEXT: %[[BASE2:.*]] = arith.addf %{{.*}}, %[[LG]] : f32
// CHECK-NEXT: %[[NATURAL:.*]] = arith.mulf %[[BASE2]], %[[LN2]] : f32
// CHECK-NEXT: %[[EMPTYNINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[LSEV:.*]] = arith.select %{{.*}}, %[[EMPTYNINF]], %[[NATURAL]] : f32
// CHECK-NEXT: memref.store %[[LSEV]], %[[LSE]]
// CHECK: gpu.return
// CHECK-NOT: tiledattn.
// CHECK: // -----
!src = memref<?x?x?x16xf16>
!lse = memref<?x?x?xf32>
func.func @hand_tile_program(%q: !src, %k: !src, %v: !src, %o: !src, %lse: !lse, %scale: f32, %sk: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %qt = tiledattn.load %q[%c0, %c0, %c0] : !src -> !tiledattn.tile<16x16xf16>
  %acc0 = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %m0 = tiledattn.constant 0xFF800000 : !tiledattn.tile<16xf32>
  %l0 = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
  %r:3 = scf.for %j = %c0 to %sk step %c16 iter_args(%acc = %acc0, %m = %m0, %l = %l0) -> (!tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>, !tiledattn.tile<16xf32>) {
    %kt = tiledattn.load %k[%c0, %c0, %j] : !src -> !tiledattn.tile<16x16xf16>
    %s = tiledattn.mma %qt, %kt transposed, %acc0 : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
    %sm = tiledattn.mask %s, %c0, %j, %sk causal : !tiledattn.tile<16x16xf32>
    %p, %m1, %l1, %alpha = tiledattn.online_softmax %sm, %m, %l, %scale : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32> -> !tiledattn.tile<16x16xf16>
    %rs = tiledattn.rescale %acc, %alpha : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>
    %vt = tiledattn.load %v[%c0, %c0, %j] : !src -> !tiledattn.tile<16x16xf16>
    %next = tiledattn.mma %p, %vt, %rs : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
    scf.yield %next, %m1, %l1 : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>, !tiledattn.tile<16xf32>
  }
  tiledattn.store %r#0, %r#1, %r#2 into %o[%c0, %c0, %c0] lse(%lse) : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>, !src, !lse
  return
}

// -----

// Functions not marked tiledattn.kernel are left alone.
// CHECK: func.func @sdpa_bf16_causal
// CHECK-NEXT: tiledattn.sdpa

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// SDPA-LABEL: gpu.module @sdpa_bf16_causal
// SDPA: gpu.func @sdpa_bf16_causal({{.*}}) kernel
// SDPA-SAME: known_block_size = array<i32: 128, 1, 1>
// SDPA-SAME: tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64
// SDPA: vector.load {{.*}} {alignment = 4 : i64} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xbf16>
// SDPA: arith.minui
// SDPA: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// bf16 operands travel as packed i32.
// SDPA:   vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// SDPA:   nvvm.mma.sync
// SDPA-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// SDPA-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// SDPA-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// SDPA:   gpu.shuffle xor
// SDPA:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// SDPA:   arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// SDPA:   scf.yield
// SDPA: scf.if
// SDPA:   vector.store {{.*}} vector<2xbf16>
// SDPA: gpu.return
// SDPA-NOT: tiledattn.
func.func @sdpa_bf16_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// SDPA-LABEL: gpu.module @sdpa_f16_d128
// SDPA: gpu.func @sdpa_f16_d128({{.*}}) kernel
// SDPA-SAME: known_block_size = array<i32: 128, 1, 1>
// SDPA: nvvm.mma.sync
// SDPA-NOT: multiplicandAPtxType
// SDPA-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// SDPA-SAME: (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// SDPA: arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// SDPA: gpu.return
// SDPA-NOT: tiledattn.
func.func @sdpa_f16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 32, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// A producer = tma program keeps its tile ops: the body moves into a
// gpu.func of 128 threads per warpgroup, for tiledattn-lower-roles, -rings
// and -mma.
// CHECK-LABEL: gpu.module @warp_specialized
// SDPA-LABEL: gpu.module @warp_specialized
// CHECK: gpu.func @warp_specialized(%[[X:.*]]: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tiledattn.schedule = #tiledattn.schedule<{{.*}}producer = tma
// CHECK-NEXT: tiledattn.warp_specialize producer regs(24) {
// CHECK: } consumers(1) regs(240) {
// CHECK-NEXT: ^bb0(%{{.*}}: index):
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-NOT: func.func @warp_specialized
func.func @warp_specialized(%x: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  tiledattn.warp_specialize producer regs(24) {
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// tiledattn.for_each_tile without persistent: the block's one tile, from the
// grid (query blocks longest first: gridDim.x - 1 - blockIdx.x), done 0, the
// iter_args as they come; the body is inlined.
// CHECK-LABEL: gpu.module @one_tile
// CHECK: gpu.func @one_tile(%[[N:.*]]: index, %[[INIT:.*]]: index)
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK-NEXT: %[[BX:.*]] = gpu.block_id x
// CHECK-NEXT: %[[GRID:.*]] = gpu.grid_dim x
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[GRID]], %[[ONE]] : index
// CHECK-NEXT: %[[QB:.*]] = arith.subi %[[LAST]], %[[BX]] : index
// CHECK-NEXT: %[[BY:.*]] = gpu.block_id y
// CHECK-NEXT: %[[BZ:.*]] = gpu.block_id z
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[XY:.*]] = arith.addi %[[QB]], %[[BY]] : index
// CHECK-NEXT: %[[ZD:.*]] = arith.addi %[[BZ]], %[[ZERO]] : index
// CHECK-NEXT: %[[ALL:.*]] = arith.addi %[[XY]], %[[ZD]] : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[ALL]], %[[INIT]] : index
// CHECK-NEXT: arith.muli %[[NEXT]], %[[NEXT]] : index
// CHECK-NOT: tiledattn.for_each_tile
func.func @one_tile(%n: index, %init: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  tiledattn.warp_specialize producer regs(24) {
    %r = tiledattn.for_each_tile %n, %n, %n longest_first iter_args(%init : index) -> index {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %kv: index):
      %xy = arith.addi %x, %y : index
      %zd = arith.addi %z, %done : index
      %all = arith.addi %xy, %zd : index
      %next = arith.addi %all, %kv : index
      tiledattn.yield %next : index
    }
    %use = arith.muli %r, %r : index
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// With persistent: an scf.for over the tiles blockIdx.x, + gridDim.x, ... of
// q_blocks * heads * batches, in 32-bit arithmetic (the producer's 24
// registers), query blocks fastest, then heads, then batches; it counts the
// tiles done and carries the iter_args.
// CHECK-LABEL: gpu.module @persistent
// CHECK: gpu.func @persistent(%[[QBS:.*]]: index, %[[HS:.*]]: index, %[[BS:.*]]: index, %[[INIT:.*]]: index)
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK: %[[QBS32:.*]] = arith.index_castui %[[QBS]] : index to i32
// CHECK: %[[HS32:.*]] = arith.index_castui %[[HS]] : index to i32
// CHECK: %[[HB:.*]] = arith.muli %[[HS32]], %{{.*}} : i32
// CHECK: %[[TILES:.*]] = arith.muli %[[QBS32]], %[[HB]] : i32
// CHECK: %[[FIRST:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[STEP:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[RANK:.*]] = %[[FIRST]] to %[[TILES]] step %[[STEP]] iter_args(%[[DONE:.*]] = %{{.*}}, %[[KV:.*]] = %[[INIT]]) -> (i32, index)  : i32 {
// CHECK:   %[[Q:.*]] = arith.remui %[[RANK]], %[[QBS32]] : i32
// CHECK:   %[[HEADBATCH:.*]] = arith.divui %[[RANK]], %[[QBS32]] : i32
// CHECK:   %[[H:.*]] = arith.remui %[[HEADBATCH]], %[[HS32]] : i32
// CHECK:   %[[B:.*]] = arith.divui %[[HEADBATCH]], %[[HS32]] : i32
// CHECK:   %[[DONE1:.*]] = arith.addi %[[DONE]], %{{.*}} : i32
// CHECK:   %[[NEXT:.*]] = arith.addi %{{.*}}, %[[KV]] : index
// CHECK:   scf.yield %[[DONE1]], %[[NEXT]] : i32, index
// CHECK: arith.muli %[[LOOP]]#1, %[[LOOP]]#1 : index
func.func @persistent(%qb: index, %h: index, %b: index, %init: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true>} {
  tiledattn.warp_specialize producer regs(24) {
    %r = tiledattn.for_each_tile %qb, %h, %b iter_args(%init : index) -> index {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %kv: index):
      %xy = arith.addi %x, %y : index
      %zd = arith.addi %z, %done : index
      %all = arith.addi %xy, %zd : index
      %next = arith.addi %all, %kv : index
      tiledattn.yield %next : index
    }
    %use = arith.muli %r, %r : index
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// dynamic, the producer's form: an scf.while from rank blockIdx.x while the
// rank is below the tile count; each tile first asks the launch's counter (a
// pointer argument added after the function's) for the next rank, gridDim.x
// past the add's old value, and after its body the add that got the last
// rank zeroes the counter.
// CHECK-LABEL: gpu.module @dynamic_producer
// CHECK: gpu.func @dynamic_producer(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[INIT:.*]]: index, %[[COUNTER:.*]]: !llvm.ptr)
// CHECK: %[[HB:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[TILES:.*]] = arith.muli %{{.*}}, %[[HB]] : i32
// CHECK: %[[FIRST:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LOOP:.*]]:3 = scf.while (%[[RANK:.*]] = %[[FIRST]], %{{.*}} = %{{.*}}, %{{.*}} = %[[INIT]]) : (i32, i32, index) -> (i32, i32, index) {
// CHECK-NEXT: %[[MORE:.*]] = arith.cmpi ult, %[[RANK]], %[[TILES]] : i32
// CHECK-NEXT: scf.condition(%[[MORE]])
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[R:.*]]: i32, %[[DONE:.*]]: i32, %[[KV:.*]]: index):
// CHECK-NEXT: %[[WORD:.*]] = llvm.addrspacecast %[[COUNTER]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %[[WORD]], %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[OLD]], %{{.*}} : i32
// CHECK: arith.addi %[[R]], %[[R]] : i32
// CHECK: %[[LAST:.*]] = arith.subi %[[TILES]], %{{.*}} : i32
// CHECK: %[[ISLAST:.*]] = arith.cmpi eq, %[[OLD]], %[[LAST]] : i32
// CHECK-NEXT: scf.if %[[ISLAST]] {
// CHECK: llvm.store %{{.*}}, %[[WORD]] : i32, !llvm.ptr<1>
// CHECK: %[[DONE1:.*]] = arith.addi %[[DONE]], %{{.*}} : i32
// CHECK-NEXT: scf.yield %[[NEXT]], %[[DONE1]], %{{.*}} : i32, i32, index
// CHECK: arith.muli %[[LOOP]]#2, %[[LOOP]]#2 : index
func.func @dynamic_producer(%qb: index, %h: index, %b: index, %init: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true, dynamic_tiles = true>} {
  tiledattn.warp_specialize producer regs(24) {
    %r = tiledattn.for_each_tile %qb, %h, %b dynamic iter_args(%init : index) -> index {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %rank: i32, %kv: index):
      %twice = arith.addi %rank, %rank : i32
      %next = arith.addi %x, %kv : index
      tiledattn.yield %next : index
    }
    %use = arith.muli %r, %r : index
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// dynamic ranks_from, a consumer's form: all in the scf.while's before
// region, the get of position done, its tag as the rank (said warp-uniform),
// and the body under the rank's check, whose other branch releases the end
// mark's slot; the loop goes on while there was a tile.
// CHECK-LABEL: gpu.module @dynamic_consumer
// CHECK: %[[Q:.*]] = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
// CHECK: } consumers(1) regs(240) {
// CHECK: %[[HB:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[TILES:.*]] = arith.muli %{{.*}}, %[[HB]] : i32
// CHECK: scf.while (%[[DONE:.*]] = %{{.*}}) : (i32) -> i32 {
// CHECK-NEXT: %[[POS:.*]] = arith.index_castui %[[DONE]] : i32 to index
// CHECK-NEXT: %[[SLOT:.*]], %[[TOKEN:.*]] = tiledattn.ring.get %[[Q]][%[[POS]]] : !tiledattn.ring<2, 64x64xbf16>
// CHECK-NEXT: %[[TAG:.*]] = tiledattn.ring.tag %[[Q]], %[[TOKEN]] : !tiledattn.ring<2, 64x64xbf16>
// CHECK-NEXT: %[[TAGX:.*]] = arith.index_castui %[[TAG]] : i32 to index
// CHECK-NEXT: %[[SAID:.*]] = tiledattn.uniform %[[TAGX]] : index
// CHECK-NEXT: %[[RANK:.*]] = arith.index_castui %[[SAID]] : index to i32
// CHECK-NEXT: %[[MORE:.*]] = arith.cmpi ult, %[[RANK]], %[[TILES]] : i32
// CHECK-NEXT: scf.if %[[MORE]] {
// CHECK: arith.remui %[[RANK]], %{{.*}} : i32
// CHECK: tiledattn.ring.release %[[Q]], %[[TOKEN]] : !tiledattn.ring<2, 64x64xbf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: tiledattn.ring.release %[[Q]], %[[TOKEN]] : !tiledattn.ring<2, 64x64xbf16>
// CHECK-NEXT: }
// CHECK: %[[NEXT:.*]] = arith.addi %[[DONE]], %{{.*}} : i32
// CHECK-NEXT: scf.condition(%[[MORE]]) %[[NEXT]] : i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[ARG:.*]]: i32):
// CHECK-NEXT: scf.yield %[[ARG]] : i32
func.func @dynamic_consumer(%qb: index, %h: index, %b: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true, dynamic_tiles = true>} {
  %q = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %qb, %h, %b dynamic {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %rank: i32):
      tiledattn.yield
    }
  } consumers(1) regs(240) {
  ^bb0(%c: index):
    tiledattn.for_each_tile %qb, %h, %b dynamic ranks_from %q : !tiledattn.ring<2, 64x64xbf16> {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %slot: !tiledattn.smem<64x64xbf16>, %token: !tiledattn.token):
      tiledattn.ring.release %q, %token : !tiledattn.ring<2, 64x64xbf16>
      tiledattn.yield
    }
  }
  return
}

// -----

// split_tail: the kernel takes the launch's workspace (marked for
// merge_pieces, its size per block on the function: 2 consumers x (128
// threads x (64 + 4) words + a flag) x 4 bytes); the full rounds run in one
// scf.for, their body a copy whose merge_pieces is its operands (first 0,
// all the tile's blocks, no holders); the tail's pieces in a second one,
// each with its first block, blocks and holders.
// CHECK-LABEL: gpu.module @split_tail
// CHECK: gpu.func @split_tail(%[[QBS:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[BLOCKS:.*]]: index, %[[O:.*]]: !tiledattn.tile<64x128xf32>, %[[M:.*]]: !tiledattn.tile<64xf32>, %[[WS:.*]]: !llvm.ptr {tiledattn.workspace})
// CHECK-SAME: tiledattn.workspace_bytes_per_block = 69640 : i64
// CHECK: } consumers(2) regs(240) {
// CHECK: %[[TB:.*]] = arith.index_castui %[[BLOCKS]] : index to i32
// CHECK-NEXT: %[[TAIL:.*]] = arith.remui %[[TILES:.*]], %{{.*}} : i32
// CHECK: %[[FULL:.*]] = arith.subi %[[TILES]], %{{.*}} : i32
// CHECK: %[[ROUNDS:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[FULL]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[O]]) -> (i32, index, !tiledattn.tile<64x128xf32>)  : i32 {
// CHECK-NOT: tiledattn.merge_pieces
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[O]] : i32, index, !tiledattn.tile<64x128xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[DONE:.*]] = %[[ROUNDS]]#0, %{{.*}} = %[[ROUNDS]]#1, %{{.*}} = %[[ROUNDS]]#2) -> (i32, index, !tiledattn.tile<64x128xf32>)  : i32 {
// CHECK: arith.index_castui %[[DONE]] : i32 to index
// CHECK-NEXT: %[[FIRST:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-NEXT: %[[COUNT:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-NEXT: %[[HOLDERS:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[MO:.*]], %{{.*}}, %{{.*}} = tiledattn.merge_pieces %[[O]], %[[M]], %[[M]] first(%[[FIRST]]) holders(%[[HOLDERS]])
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[MO]] : i32, index, !tiledattn.tile<64x128xf32>
func.func @split_tail(%qb: index, %h: index, %b: index, %blocks: index, %o: !tiledattn.tile<64x128xf32>, %m: !tiledattn.tile<64xf32>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, split_tail = true>} {
  tiledattn.warp_specialize producer regs(24) {
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    %n:2 = tiledattn.for_each_tile %qb, %h, %b split_tail(%blocks) iter_args(%qb, %o : index, !tiledattn.tile<64x128xf32>) -> index, !tiledattn.tile<64x128xf32> {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %first: index, %count: index, %holders: index, %kv: index, %held: !tiledattn.tile<64x128xf32>):
      %o2, %m2, %l2 = tiledattn.merge_pieces %o, %m, %m first(%first) holders(%holders) : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
      %next = arith.addi %kv, %count : index
      tiledattn.yield %next, %o2 : index, !tiledattn.tile<64x128xf32>
    }
  }
  return
}

// -----

// across_heads: heads and batches fastest (rank / (heads * batches) is the
// query block, counted from the last with longest_first), and with
// longest_first every other full round of the grid mirrored.
// CHECK-LABEL: gpu.module @across_heads
// CHECK: gpu.func @across_heads(%[[QBS:.*]]: index, %[[HS:.*]]: index, %[[BS:.*]]: index)
// CHECK: %[[QBS32:.*]] = arith.index_castui %[[QBS]] : index to i32
// CHECK: %[[HS32:.*]] = arith.index_castui %[[HS]] : index to i32
// CHECK: %[[BS32:.*]] = arith.index_castui %[[BS]] : index to i32
// CHECK: %[[TILES:.*]] = arith.muli %[[QBS32]], %{{.*}} : i32
// CHECK: %[[FIRST:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[STEP:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[TILES]] step %[[STEP]] iter_args(%{{.*}} = %{{.*}}) -> (i32)  : i32 {
// CHECK:   %[[ROUND:.*]] = arith.divui %[[T]], %[[STEP]] : i32
// CHECK:   %[[ODD:.*]] = arith.trunci %[[ROUND]] : i32 to i1
// CHECK:   %[[START:.*]] = arith.muli %[[ROUND]], %[[STEP]] : i32
// CHECK:   %[[END:.*]] = arith.addi %[[START]], %[[STEP]] : i32
// CHECK:   %[[FULL:.*]] = arith.cmpi ule, %[[END]], %[[TILES]] : i32
// CHECK:   %[[LAST:.*]] = arith.subi %[[END]], %{{.*}} : i32
// CHECK:   %[[BACK:.*]] = arith.subi %[[LAST]], %[[T]] : i32
// CHECK:   %[[MIRRORED:.*]] = arith.addi %[[START]], %[[BACK]] : i32
// CHECK:   %[[BOTH:.*]] = arith.andi %[[ODD]], %[[FULL]] : i1
// CHECK:   %[[RANK:.*]] = arith.select %[[BOTH]], %[[MIRRORED]], %[[T]] : i32
// CHECK:   %[[HB:.*]] = arith.muli %[[HS32]], %[[BS32]] : i32
// CHECK:   %[[Q:.*]] = arith.divui %[[RANK]], %[[HB]] : i32
// CHECK:   %[[HEADBATCH:.*]] = arith.remui %[[RANK]], %[[HB]] : i32
// CHECK:   arith.subi %{{.*}}, %[[Q]] : i32
// CHECK:   arith.remui %[[HEADBATCH]], %[[HS32]] : i32
// CHECK:   arith.divui %[[HEADBATCH]], %[[HS32]] : i32
func.func @across_heads(%qb: index, %h: index, %b: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true, tile_order = across_heads>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %qb, %h, %b longest_first across_heads {
    ^bb0(%x: index, %y: index, %z: index, %done: index):
      %xy = arith.addi %x, %y : index
      %zd = arith.addi %z, %done : index
      tiledattn.yield
    }
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}
