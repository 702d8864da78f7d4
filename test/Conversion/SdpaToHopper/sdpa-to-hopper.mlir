// RUN: tiledattn-opt %s -split-input-file --convert-sdpa-to-hopper | FileCheck %s

// convert-sdpa-to-hopper turns a function holding a producer = tma sdpa into
// a warp-specialized gpu.func. The checks pin what follows from the schedule
// (barrier count, byte counts, TMA atoms, wgmma shapes, register budgets,
// shared memory) and the order of the synchronization, not SSA names or the
// arithmetic in between. Integer constants are matched by the name the
// printer derives from their value (%c256, %c32768_12, ...).

//===----------------------------------------------------------------------===//
// D = 128, bf16, two consumer warpgroups: block_m 128, block_n 128, 2 stages.
//===----------------------------------------------------------------------===//

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// The function becomes a kernel of the same name in its own gpu.module.
// CHECK: module attributes {gpu.container_module}
// CHECK-NOT: func.func
// CHECK-LABEL: gpu.module @bf16_d128

// The six arguments, then the q, k, v tensor maps as pointers.
// CHECK: gpu.func @bf16_d128(%[[Q:[^:]*]]: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %[[K:[^:]*]]: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[V:[^:]*]]: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, %[[O:[^:]*]]: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[LSE:[^:]*]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>, %[[SCALE:[^:]*]]: f32,
// CHECK-SAME: %[[QPTR:[^:]*]]: !llvm.ptr, %[[KPTR:[^:]*]]: !llvm.ptr, %[[VPTR:[^:]*]]: !llvm.ptr) kernel
// 12 warps.
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// The 1 KiB swizzle pad + Q (128 x 128 x 2) + 2 stages of K and V (128 x 128 x 2 each).
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 164864 : i64
// Boxes of 64 columns (128 bytes) by block_m rows for q, block_n rows for k and v.
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 128 : i64, operand = "q", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 128 : i64, operand = "k", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 128 : i64, operand = "v", swizzle = 128 : i64}]
// CHECK: %[[QMAP:.*]] = builtin.unrealized_conversion_cast %[[QPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, 3>, swizzle = swizzle_128b, {{.*}}, oob = zero, {{.*}}>
// CHECK: %[[KMAP:.*]] = builtin.unrealized_conversion_cast %[[KPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, 3>, swizzle = swizzle_128b, {{.*}}, oob = zero, {{.*}}>
// CHECK: %[[VMAP:.*]] = builtin.unrealized_conversion_cast %[[VPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xbf16, 3>, swizzle = swizzle_128b, {{.*}}, oob = zero, {{.*}}>
// CHECK: %[[SEQK:.*]] = memref.dim %[[K]], %c2{{(_[0-9]+)?}}
// CHECK: %[[HEAD:.*]] = gpu.block_id y
// CHECK: %[[BATCH:.*]] = gpu.block_id z
// GQA: K and V are read at head / (heads_q / heads_kv).
// CHECK: %[[KVHEAD:.*]] = arith.divui %[[HEAD]], %{{.*}} : index
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]

// 1 + 4 * num_stages barriers: Q full, K full, V full, K empty, V empty.
// Full barriers take the producer's one arrive (plus the TMA bytes); empty
// ones one arrive per consumer warp: 4 warps x 2 consumer warpgroups.
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
// CHECK: scf.if
// CHECK-COUNT-5: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c8{{(_[0-9]+)?}} :
// CHECK-NOT: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.prefetch.descriptor %[[QMAP]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[KMAP]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[VMAP]]
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier

// Warpgroup 0 is the producer: it gives registers away, then one thread
// loads Q (block_m x 128 bf16 = 32768 bytes, two 64-column atoms) and the
// K/V ring.
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[QFULL:.*]]], %c32768{{(_[0-9]+)?}} :
// CHECK: nvgpu.tma.async.load %[[QMAP]][%c0{{(_[0-9]+)?}}, %[[QROW:.*]], %[[HEAD]], %[[BATCH]]], %[[BAR]][%[[QFULL]]] to %{{.*}} : {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %[[QMAP]][%c64{{(_[0-9]+)?}}, %[[QROW]], %[[HEAD]], %[[BATCH]]], %[[BAR]][%[[QFULL]]] to
// CHECK-NOT: nvgpu.tma.async.load %[[QMAP]]
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %[[NBLOCKS:.*]] step
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %c2{{(_[0-9]+)?}} : index
// Wait for the consumers to free the stage (K empty = 1 + 2 * stages + s),
// then fill it (K full = 1 + s).
// CHECK: %[[KEMPTY:.*]] = arith.addi %[[STAGE]], %c5{{(_[0-9]+)?}} : index
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[KEMPTY]]]
// CHECK: %[[KFULL:.*]] = arith.addi %[[STAGE]], %c1{{(_[0-9]+)?}} : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[KFULL]]], %c32768{{(_[0-9]+)?}} :
// CHECK-COUNT-2: nvgpu.tma.async.load %[[KMAP]][%{{.*}}, %{{.*}}, %[[KVHEAD]], %[[BATCH]]], %[[BAR]][%[[KFULL]]] to
// CHECK-NOT: nvgpu.tma.async.load %[[KMAP]]
// V empty = 1 + 3 * stages + s, V full = 1 + stages + s.
// CHECK: %[[VEMPTY:.*]] = arith.addi %[[STAGE]], %c7{{(_[0-9]+)?}} : index
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[VEMPTY]]]
// CHECK: %[[VFULL:.*]] = arith.addi %[[STAGE]], %c3{{(_[0-9]+)?}} : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[VFULL]]], %c32768{{(_[0-9]+)?}} :
// CHECK-COUNT-2: nvgpu.tma.async.load %[[VMAP]][%{{.*}}, %{{.*}}, %[[KVHEAD]], %[[BATCH]]], %[[BAR]][%[[VFULL]]] to
// CHECK-NOT: nvgpu.tma.async.load

// The consumers take the registers, wait for Q (phase 0) and run two loops
// over the K/V blocks: without the mask, then with it.
// CHECK: } else {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The softmax works in base 2 with the scale folded in: one multiplier.
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// The rows' running maxima start at -inf, their sums and O at 0.
// CHECK: %[[MAX0:.*]] = arith.constant 0xFF800000 : f32
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c0{{(_[0-9]+)?}}], %false
// 64 S + 4 statistics (no P carried without overlap_softmax).
// CHECK: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[MAX0]], %{{.*}} = %{{.*}}, %{{.*}} = %[[MAX0]], %{{.*}} = %{{.*}}) -> (f32, f32,
// S = Q.K^T: head_dim / 16 = 8 wgmma m64n128k16, the first one overwriting.
// The descriptors are built once per block; each k-step adds its offset.
// CHECK: arith.ori
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The scores leave through an empty asm after the wait, then K's stage is
// released.
// CHECK-NEXT: llvm.extractvalue
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,){64}0}},
// CHECK: nvgpu.mbarrier.arrive %[[BAR]]
// No mask in this loop.
// CHECK-NOT: arith.cmpi uge
// Row max and row sum across the 4 threads of a row.
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32{{(_[0-9]+)?}}, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32{{(_[0-9]+)?}}, %c32_i32
// Unmasked, the new maximum is finite: no -inf guard on it. Scaled, it is
// the exponents' offset.
// CHECK-NOT: arith.cmpf oeq
// CHECK: %[[NEWMAX:.*]] = arith.maxnumf %arg{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: arith.mulf %[[NEWMAX]], %[[SCALED]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// O += P.V: block_n / 16 = 8 wgmma m64n128k16 with P in 4 registers and V
// transposed (MN-major), after V's stage is full.
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;\0A}", "{{(=f,){64}([0-9]+,){64}r}},r,r,r,l"
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "{{(=f,){64}0}},
// CHECK: nvgpu.mbarrier.arrive %[[BAR]]
// CHECK: scf.yield
// The masked loop: keys past seqlen_k are -inf. Per row one 32-bit
// threshold, seqlen_k - key0; then register 4i + h compares its constant
// column 8i + h % 2 against it.
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[KEY0:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LIMIT:.*]] = arith.index_castui %[[SEQK]] : index to i32
// CHECK: %[[THRESHOLD:.*]] = arith.subi %[[LIMIT]], %[[KEY0]] : i32
// CHECK: %[[BAD0:.*]] = arith.cmpi sge, %c0_i32{{.*}}, %[[THRESHOLD]] : i32
// CHECK-NEXT: arith.select %[[BAD0]], %[[NINF]], %{{.*}} : f32
// CHECK: %[[BAD1:.*]] = arith.cmpi sge, %c1_i32{{.*}}, %[[THRESHOLD]] : i32
// CHECK-NEXT: arith.select %[[BAD1]], %[[NINF]], %{{.*}} : f32
// CHECK: arith.cmpi sge, %c8_i32{{.*}}, %[[THRESHOLD]] : i32
// CHECK-NOT: arith.cmpi uge
// A row whose keys are all masked so far keeps max -inf: offset 0 then.
// CHECK: %[[MMAX:.*]] = arith.maxnumf %arg{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: %[[GUARDNINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[ALLMASKED:.*]] = arith.cmpf oeq, %[[MMAX]], %[[GUARDNINF]] : f32
// CHECK-NEXT: %[[MSCALED:.*]] = arith.mulf %[[MMAX]], %[[SCALED]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.select %[[ALLMASKED]], %[[ZERO]], %[[MSCALED]] : f32
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: scf.yield
// The two rows of each thread: lse, then head_dim / 8 = 16 pairs into o.
// lse = (max * scale * log2(e) + log2(sum)) * ln(2).
// CHECK: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-NEXT: %[[LG:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[MAXS:.*]] = arith.mulf %{{.*}}, %[[SCALED]] : f32
// CHECK-NEXT: %[[BASE2:.*]] = arith.addf %[[MAXS]], %[[LG]] : f32
// CHECK-NEXT: %[[LSEV:.*]] = arith.mulf %[[BASE2]], %[[LN2]] : f32
// CHECK: memref.store %[[LSEV]], %[[LSE]][%[[BATCH]], %[[HEAD]], %{{.*}}] : memref<?x?x?xf32, {{.*}}>
// CHECK: memref.store %{{.*}}, %[[LSE]]
// CHECK-COUNT-16: vector.store %{{.*}}, %[[O]][%[[BATCH]], %[[HEAD]], %{{.*}}, %{{.*}}] : memref<?x?x?x128xbf16, {{.*}}>, vector<2xbf16>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[O]]
// CHECK: gpu.return
// Without overlap_softmax every group is waited for at once.
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: tiledattn.sdpa

// -----

//===----------------------------------------------------------------------===//
// D = 64, f16, causal, one consumer warpgroup: block_m 64, block_n 128.
//===----------------------------------------------------------------------===//

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @f16_d64_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 2, warps = 8, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 1>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: gpu.module @f16_d64_causal
// CHECK: gpu.func @f16_d64_causal({{.*}}, %{{[^:]*}}: f32, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// 1024 + 64 x 64 x 2 + 2 x 2 x 128 x 64 x 2.
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 74752 : i64
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 64 : i64, operand = "q", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 128 : i64, operand = "k", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 128 : i64, operand = "v", swizzle = 128 : i64}]
// CHECK: builtin.unrealized_conversion_cast {{.*}} to !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xf16, 3>
// CHECK: builtin.unrealized_conversion_cast {{.*}} to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xf16, 3>
// CHECK: builtin.unrealized_conversion_cast {{.*}} to !nvgpu.tensormap.descriptor<tensor = memref<1x1x128x64xf16, 3>
// Causal: the longest rows (last query block) go first.
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[GX:.*]] = gpu.grid_dim x
// CHECK: %[[LAST:.*]] = arith.subi %[[GX]], %c1
// CHECK: arith.subi %[[LAST]], %[[BX]]
// Causal: no K/V block right of the query block's last row.
// CHECK: arith.minui
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 9>
// Empty barriers count the 4 warps of the one consumer.
// CHECK-COUNT-5: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %c4{{(_[0-9]+)?}} :
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// Q: 64 x 64 x 2 bytes, one atom; K, V: 128 x 64 x 2 bytes, one atom each.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c8192{{(_[0-9]+)?}} :
// CHECK-COUNT-1: nvgpu.tma.async.load {{.*}} -> memref<1x1x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c16384{{(_[0-9]+)?}} :
// CHECK-COUNT-1: nvgpu.tma.async.load {{.*}} -> memref<1x1x128x64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c16384{{(_[0-9]+)?}} :
// CHECK-COUNT-1: nvgpu.tma.async.load {{.*}} -> memref<1x1x128x64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: } else {
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The unmasked loop ends at the first block that reaches the diagonal.
// CHECK: arith.minui
// CHECK: scf.for
// S: 64 / 16 = 4 wgmma m64n128k16 (block_n wide).
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <{{zero|one}}>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// P.V: 128 / 16 = 8 wgmma m64n64k16 (head-dim wide), 32 accumulators.
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: scf.yield
// The masked loop: past seqlen_k or right of the row, as a per-row limit
// min(seqlen_k, row + 1) (rows r and r + 8), minus key0.
// CHECK: scf.for
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[KEY0:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[ROW1:.*]] = arith.addi %[[ROW:.*]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[LIMIT0:.*]] = arith.minui %{{.*}}, %[[ROW1]] : index
// CHECK: %[[LIMIT0I:.*]] = arith.index_castui %[[LIMIT0]] : index to i32
// CHECK: %[[T0:.*]] = arith.subi %[[LIMIT0I]], %[[KEY0]] : i32
// CHECK: %[[ROW9:.*]] = arith.addi %[[ROW]], %c9{{(_[0-9]+)?}} : index
// CHECK: %[[LIMIT1:.*]] = arith.minui %{{.*}}, %[[ROW9]] : index
// CHECK: %[[LIMIT1I:.*]] = arith.index_castui %[[LIMIT1]] : index to i32
// CHECK: %[[T1:.*]] = arith.subi %[[LIMIT1I]], %[[KEY0]] : i32
// Registers 0, 1 are row r, 2, 3 row r + 8.
// CHECK: arith.cmpi sge, %c0_i32{{.*}}, %[[T0]] : i32
// CHECK: arith.cmpi sge, %c1_i32{{.*}}, %[[T0]] : i32
// CHECK: arith.cmpi sge, %c0_i32{{.*}}, %[[T1]] : i32
// CHECK: arith.cmpi sge, %c1_i32{{.*}}, %[[T1]] : i32
// CHECK-NOT: arith.ori {{.*}} : i1
// CHECK: scf.yield
// CHECK-COUNT-8: vector.store %{{.*}} : memref<?x?x?x64xf16, {{.*}}>, vector<2xf16>
// CHECK: gpu.return
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1

// -----

//===----------------------------------------------------------------------===//
// overlap_softmax: S of block j and P.V of block j - 1 in flight together.
//===----------------------------------------------------------------------===//

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @bf16_d128_overlap(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: gpu.module @bf16_d128_overlap
// CHECK: gpu.func @bf16_d128_overlap
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 164864 : i64
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// Block 0 alone: its S, waited for at once, and its softmax.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: wgmma.mma_async
// Its mask only when the unmasked loop is empty (block 0 is the ragged end
// or the diagonal): 64 scores through an scf.if.
// CHECK: %{{.*}}:64 = scf.if %{{.*}} -> ({{(f32, ){63}f}}32) {
// CHECK: arith.cmpi sge
// CHECK: arith.select
// CHECK: } else {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// The loops carry O (64), the packed P (128 / 4 = 32) and 4 statistics.
// CHECK: scf.for %{{.*}} = %c1{{(_[0-9]+)?}} to
// CHECK-SAME: -> ({{(f32, ){64}(i32, ){32}(f32, ){3}f}}32)
// S of this block, then P.V of the one before, then wait until only the
// newer group (P.V) is in flight.
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// The softmax runs while P.V does.
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Without conditional_rescale O is rescaled after every block.
// CHECK-NOT: nvvm.vote.sync
// CHECK: scf.yield
// The masked loop does the same.
// CHECK: scf.for
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// The last block's P.V after the loops, waited for at once (without
// overlap_epilogue).
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: vector.store
// CHECK: gpu.return

// -----

//===----------------------------------------------------------------------===//
// D = 256, bf16, block_n 64: four atoms per tile, P.V is m64n256k16.
//===----------------------------------------------------------------------===//

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @bf16_d256(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: gpu.module @bf16_d256
// CHECK: gpu.func @bf16_d256
// 1024 + 128 x 256 x 2 + 2 x 2 x 64 x 256 x 2.
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 197632 : i64
// CHECK-SAME: tiledattn.tensor_maps = [{box_cols = 64 : i64, box_rows = 128 : i64, operand = "q", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 64 : i64, operand = "k", swizzle = 128 : i64},
// CHECK-SAME:   {box_cols = 64 : i64, box_rows = 64 : i64, operand = "v", swizzle = 128 : i64}]
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// Q: 128 x 256 x 2 bytes in four atoms at columns 0, 64, 128, 192.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c65536{{(_[0-9]+)?}} :
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0{{(_[0-9]+)?}}, {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64{{(_[0-9]+)?}}, {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %{{.*}}[%c128{{(_[0-9]+)?}}, {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %{{.*}}[%c192{{(_[0-9]+)?}}, {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.tma.async.load
// K and V: 64 x 256 x 2 bytes, four atoms each.
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.tma.async.load {{.*}} -> memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.tma.async.load {{.*}} -> memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// S: 256 / 16 = 16 wgmma m64n64k16.
// CHECK: scf.for
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// P.V: 64 / 16 = 4 wgmma m64n256k16 with 128 accumulators.
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {$0, {{.*}}, $127}, {$256, $257, $258, $259}, $260, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: scf.yield
// CHECK: gpu.return

// -----

// q_by_atom + k0_by_atom (the shipped one-tile D = 256 schedules): Q and the
// first K block arrive in per-atom pieces, atom a on full barrier a (0-3),
// so that the first Q.K^T starts on atom 0. That block's K-full barrier
// (4 + stage) only gets the producer's bare arrive, but its phase must still
// be waited for before the barrier is armed again (compute-sanitizer
// synccheck: "Missing wait"): the consumers wait for it after their first
// Q.K^T has retired, and only then free the stage (K empty, 8 + stage).

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @bf16_d256_k0_by_atom(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   q_by_atom = true, k0_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: gpu.module @bf16_d256_k0_by_atom
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 12>
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// Atom a: Q's 128 rows and K block 0's 80, 64 columns of 2 bytes = 26624.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c0{{(_[0-9]+)?}}], %c26624{{(_[0-9]+)?}} :
// CHECK: nvgpu.tma.async.load %{{.*}}, %[[BAR]][%c0{{(_[0-9]+)?}}] to {{.*}} -> memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %{{.*}}, %[[BAR]][%c0{{(_[0-9]+)?}}] to {{.*}} -> memref<1x1x80x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c1{{(_[0-9]+)?}}], %c26624{{(_[0-9]+)?}} :
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c2{{(_[0-9]+)?}}], %c26624{{(_[0-9]+)?}} :
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c3{{(_[0-9]+)?}}], %c26624{{(_[0-9]+)?}} :
// In the K/V loop, block 0 completes its K-full phase with a bare arrive.
// CHECK: scf.for %[[IT:[^ ]*]] =
// CHECK: %[[PS:.*]] = arith.remui %[[IT]], %c2{{(_[0-9]+)?}} : index
// CHECK: arith.cmpi eq, %[[IT]], %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: scf.if
// CHECK: %[[PKF:.*]] = arith.addi %[[PS]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[BAR]][%[[PKF]]]
// CHECK-NEXT: } else {
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%{{.*}}], %c40960{{(_[0-9]+)?}} :
// The consumers' first Q.K^T waits for atom a before its four k-steps on it.
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c0{{(_[0-9]+)?}}]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 80, k = 16>
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c1{{(_[0-9]+)?}}]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 80, k = 16>
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c2{{(_[0-9]+)?}}]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 80, k = 16>
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c3{{(_[0-9]+)?}}]
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 80, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Then the wait for block 0's K-full phase, and only after it K empty.
// CHECK-NOT: nvgpu.mbarrier
// CHECK: %[[KF:.*]] = arith.addi %[[S:.*]], %c4{{(_[0-9]+)?}} : index
// CHECK-NOT: nvgpu.mbarrier
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[KF]]]
// CHECK-NOT: nvgpu.mbarrier
// CHECK: %[[KE:.*]] = arith.addi %[[S]], %c8{{(_[0-9]+)?}} : index
// CHECK-NOT: nvgpu.mbarrier
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%[[KE]]]
// CHECK: gpu.return

// -----

// Other producers are left for tiledattn-tile-sdpa, and the module is not
// made a GPU container.

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-NOT: gpu.container_module
// CHECK-LABEL: func.func @cp_async_untouched
// CHECK: tiledattn.sdpa
// CHECK-NOT: gpu.module
func.func @cp_async_untouched(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync,
                                   producer = cp_async, swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// pingpong = true: consumer 1 opens consumer 0's first turn (named barrier
// 1, 256 threads); each turn is a bar.sync on the consumer's own barrier
// (1 + consumer), the wgmma issue, and a bar.arrive on the other's
// (2 - consumer), before the wait that retires the group.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_pingpong(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_pingpong
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: nvvm.barrier.arrive id = %[[C1]] number_of_threads = %{{.*}}
// Block 0's turn, then the loop's.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.for
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-COUNT-8: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1

// -----

// ctas_per_sm = 2 with one consumer (256 threads): the kernel starts with
// 65536 / (2 x 256) = 128 registers per thread (.maxnreg) and asks for two
// blocks per multiprocessor; the roles move from 128 to 24 and 232.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_two_ctas(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2,
                                   warps = 8, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_regs = 232, ctas_per_sm = 2>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_two_ctas
// CHECK: gpu.func @bf16_d128_two_ctas
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: nvvm.setmaxregister {{ *}}increase 232

// -----

// persistent, causal, tile_order = across_heads: both roles loop over tiles
// blockIdx.x, +gridDim.x, ... (32-bit), heads fastest and the longest query
// blocks first, every other full round mirrored; the Q buffer is handed back
// through a tenth barrier ("Q empty", one arrive per consumer warp) and its
// phase is the number of tiles done.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_persistent_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true, producer_regs = 32,
                                   consumer_regs = 232, persistent = true,
                                   tile_order = across_heads>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_persistent_causal
// No block coordinates before the roles split.
// CHECK-NOT: gpu.block_id
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK-COUNT-5: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-5: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c8{{(_[0-9]+)?}} :
// CHECK: nvvm.setmaxregister {{ *}}decrease 32
// CHECK: %[[PBX:.*]] = arith.index_castui %block_id_x{{.*}} : index to i32
// CHECK: %[[PGX:.*]] = arith.index_castui %grid_dim_x{{.*}} : index to i32
// CHECK: scf.for %[[PT:.*]] = %[[PBX]] to %{{.*}} step %[[PGX]] iter_args(%{{.*}} = %c0_i32{{.*}}, %[[PDONE:[a-z0-9_]+]] = %c0_i32{{.*}}) -> (i32, i32)  : i32 {
// Longest tiles first, odd full rounds backwards.
// CHECK: %[[ROUND:.*]] = arith.divui %[[PT]], %[[PGX]] : i32
// CHECK: %[[ODD:.*]] = arith.trunci %[[ROUND]] : i32 to i1
// CHECK: %[[FULL:.*]] = arith.cmpi ule
// CHECK: %[[FLIP:.*]] = arith.andi %[[ODD]], %[[FULL]] : i1
// CHECK: %[[RANK:.*]] = arith.select %[[FLIP]], %{{.*}}, %[[PT]] : i32
// CHECK: %[[HB:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[QI:.*]] = arith.divui %[[RANK]], %[[HB]] : i32
// CHECK: arith.remui %[[RANK]], %[[HB]] : i32
// CHECK: arith.subi %{{.*}}, %[[QI]] : i32
// CHECK: %[[PPAR:.*]] = arith.trunci %[[PDONE]] : i32 to i1
// The next Q waits for the consumers to release the last one (parity 1
// first: a fresh barrier passes).
// CHECK: %[[QWAIT:.*]] = arith.xori %[[PPAR]], %true
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c9], %[[QWAIT]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c0{{(_[0-9]+)?}}], %c32768
// CHECK-COUNT-2: nvgpu.tma.async.load
// K/V blocks continue the ring from the tiles before.
// CHECK: scf.for %[[IT:.*]] = %c0{{.*}} to %{{.*}} step
// CHECK: %[[POS:.*]] = arith.addi %{{.*}}, %[[IT]] : index
// CHECK: arith.divui %[[POS]], %c2
// CHECK: arith.remui %[[POS]], %c2
// CHECK: scf.yield %{{.*}}, %{{.*}} : i32, i32
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %c0_i32{{.*}}, %[[CDONE:[a-z0-9_]+]] = %c0_i32{{.*}}) -> (i32, i32)  : i32 {
// CHECK: %[[CPAR:.*]] = arith.trunci %[[CDONE]] : i32 to i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c0{{(_[0-9]+)?}}], %[[CPAR]]
// After both K/V loops (unmasked, masked), Q is released before the last P.V.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%c9{{(_[0-9]+)?}}]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: vector.store
// CHECK: scf.yield %{{.*}}, %{{.*}} : i32, i32

// -----

// Three consumer warpgroups (block_m 192, 512 threads): empty barriers count
// 12 warps, and pingpong rotates 0 -> 1 -> 2 -> 0 on named barriers 1..3:
// consumer 2 opens the first turn, each turn ends with an arrive on the next
// consumer's barrier, (c + 1) % 3 + 1.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d64_three_consumers(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 3, producer_regs = 32,
                                   consumer_regs = 160, pingpong = true, overlap_softmax = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d64_three_consumers
// CHECK: known_block_size = array<i32: 512, 1, 1>
// 1 KiB pad + Q 192 x 64 x 2 + 2 stages x (K + V) 128 x 64 x 2.
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 91136 : i64
// CHECK-SAME: {box_cols = 64 : i64, box_rows = 192 : i64, operand = "q", swizzle = 128 : i64}
// CHECK-COUNT-5: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.*}}[%{{.*}}], %c12{{(_[0-9]+)?}} :
// CHECK: nvvm.setmaxregister {{ *}}decrease 32
// Q: 192 x 64 x 2 bytes in one 64-column atom.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c24576{{(_[0-9]+)?}} :
// CHECK: } else {
// CHECK: %[[CONSUMER:.*]] = arith.subi %{{.*}}, %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 160
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[CONSUMER]], %c2{{(_[0-9]+)?}} : index
// CHECK: scf.if %[[LAST]] {
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: nvvm.barrier.arrive id = %[[C1]] number_of_threads = %{{.*}}
// Consumer c waits on barrier 1 + c, then hands the turn to (c + 1) % 3.
// CHECK: %[[MINE:.*]] = arith.addi %[[CONSUMER]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[MINE32:.*]] = arith.index_castui %[[MINE]] : index to i32
// CHECK: nvvm.barrier id = %[[MINE32]] number_of_threads = %{{.*}}
// CHECK: %[[NEXT:.*]] = arith.addi %[[CONSUMER]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[WRAP:.*]] = arith.remui %[[NEXT]], %c3{{(_[0-9]+)?}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[WRAP]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[ID32:.*]] = arith.index_castui %[[ID]] : index to i32
// CHECK: nvvm.barrier.arrive id = %[[ID32]] number_of_threads = %{{.*}}

// -----

// tma_store: O leaves through Q's tile (this consumer's rows, 128-byte
// swizzle) by stmatrix and one TMA store per 64 x 64 box; the output's
// tensor map is a fourth parameter.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_tma_store(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true, tma_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_tma_store
// CHECK: gpu.func @bf16_d128_tma_store({{.*}}, %{{[^:]*}}: f32, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[OPTR:[^:]*]]: !llvm.ptr) kernel
// No staging tile of its own: the shared memory is the shipped kernel's.
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 164864 : i64
// CHECK-SAME: {box_cols = 64 : i64, box_rows = 64 : i64, operand = "o", swizzle = 128 : i64}]
// CHECK: %[[OMAP:.*]] = builtin.unrealized_conversion_cast %[[OPTR]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<1x1x64x64xbf16, 3>, swizzle = swizzle_128b
// CHECK: nvgpu.tma.prefetch.descriptor %[[OMAP]]
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// lse still leaves from registers, one thread per row.
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?x?x?xf32, {{.*}}>
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?x?x?xf32, {{.*}}>
// head_dim / 16 = 8 stmatrix.x4, then the async-proxy fence and the
// consumer's own barrier (4 + consumer, 128 threads).
// CHECK-COUNT-8: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NOT: vector.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: %[[SB:.*]] = arith.addi %{{.*}}, %c3{{(_[0-9]+)?}} : index
// CHECK: %[[SB32:.*]] = arith.index_castui %[[SB]] : index to i32
// CHECK: nvvm.barrier id = %[[SB32]] number_of_threads = %c128_i32
// CHECK: scf.if
// CHECK-COUNT-2: nvgpu.tma.async.store %{{.*}} to %[[OMAP]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.bulk.commit.group
// The issuing thread waits for the reads before the block may exit.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.return

// -----

// q_buffers = 2: tiles alternate between two Q tiles (tile count % 2) whose
// barriers change phase every second tile, so the producer loads the next
// tile's Q while the consumers read this one. Barriers: Q full x2, the
// ring's 8, Q empty x2 (10 + buffer); the K ring starts after both Q tiles.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_two_q_buffers(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true, producer_regs = 32,
                                   consumer_regs = 232, persistent = true, tma_store = true,
                                   q_buffers = 2>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_two_q_buffers
// 1 KiB pad + 2 x Q 128 x 128 x 2 + 2 stages x (K + V) + O staging 128 x 128 x 2.
// CHECK: tiledattn.dynamic_smem_bytes = 230400 : i64
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 12>
// CHECK-COUNT-6: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-6: nvgpu.mbarrier.init %[[BAR]][%{{.*}}], %c8{{(_[0-9]+)?}} :
// CHECK: nvvm.setmaxregister {{ *}}decrease 32
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %c0_i32{{.*}}, %[[PDONE:[a-z0-9_]+]] = %c0_i32{{.*}}) -> (i32, i32)  : i32 {
// CHECK: %[[PBUFI:.*]] = arith.remui %[[PDONE]], %c2_i32{{.*}} : i32
// CHECK: %[[PBUF:.*]] = arith.index_castui %[[PBUFI]] : i32 to index
// CHECK: %[[PUSES:.*]] = arith.divui %[[PDONE]], %c2_i32{{.*}} : i32
// CHECK: %[[PPAR:.*]] = arith.trunci %[[PUSES]] : i32 to i1
// CHECK: %[[QWAIT:.*]] = arith.xori %[[PPAR]], %true
// CHECK: %[[QEMPTY:.*]] = arith.addi %[[PBUF]], %c10
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[QEMPTY]]], %[[QWAIT]]
// CHECK: %[[QOFF:.*]] = arith.muli %[[PBUF]], %c32768
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%[[PBUF]]], %c32768
// CHECK: arith.addi %{{.*}}, %[[QOFF]]
// CHECK-COUNT-2: nvgpu.tma.async.load %{{.*}}, %[[BAR]][%[[PBUF]]] to
// K stage s at 65536 + s * 32768, behind both Q tiles.
// CHECK: scf.for
// CHECK: %[[KOFF:.*]] = arith.muli %{{.*}}, %c32768
// CHECK: arith.addi %[[KOFF]], %c65536
// CHECK: nvvm.setmaxregister {{ *}}increase 232
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %c0_i32{{.*}}, %[[CDONE:[a-z0-9_]+]] = %c0_i32{{.*}}) -> (i32, i32)  : i32 {
// CHECK: %[[CBUFI:.*]] = arith.remui %[[CDONE]], %c2_i32{{.*}} : i32
// CHECK: %[[CBUF:.*]] = arith.index_castui %[[CBUFI]] : i32 to index
// CHECK: %[[CUSES:.*]] = arith.divui %[[CDONE]], %c2_i32{{.*}} : i32
// CHECK: %[[CPAR:.*]] = arith.trunci %[[CUSES]] : i32 to i1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%[[CBUF]]], %[[CPAR]]
// The first Q.K^T reads the tile's own Q buffer.
// CHECK: arith.muli %[[CBUF]], %c32768
// CHECK: nvvm.wgmma.mma_async
// After both K/V loops, this buffer goes back to the producer.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[CEMPTY:.*]] = arith.addi %[[CBUF]], %c10
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%[[CEMPTY]]]
// O is staged after the ring (65536 + 131072), not in a Q buffer.
// CHECK: %c196608
// CHECK: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store
// CHECK: scf.yield %{{.*}}, %{{.*}} : i32, i32

// -----

// dynamic_tiles: the producer starts at tile blockIdx.x and takes each next
// one from the counter (the parameter after scale), gridDim.x past the
// add's old value; the add that returns numTiles - 1 zeroes the counter.
// The tile's rank goes into its Q buffer's slot (after Q x2, the ring and O
// staging: 229376) before the Q load's arrive; when the ranks run out the
// producer writes numTiles there and arrives without a load. The consumers
// wait for Q, read the slot and stop at numTiles. Causal ranks run query
// blocks fastest, from the last, one head after another.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_dynamic_tiles(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true, persistent = true, tma_store = true,
                                   q_buffers = 2, dynamic_tiles = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_dynamic_tiles
// CHECK: gpu.func @bf16_d128_dynamic_tiles({{.*}}, %{{.*}}: f32, %[[COUNTER:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// 1 KiB pad + 2 x Q + 2 stages x (K + V) + O staging + 16 bytes of slots.
// CHECK-SAME: tiledattn.dynamic_smem_bytes = 230416 : i64
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: %[[NT:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[BX:.*]] = arith.index_castui %block_id_x : index to i32
// CHECK: %[[PLOOP:.*]]:3 = scf.while (%[[R0:.*]] = %[[BX]], %{{.*}} = %c0_i32{{.*}}, %{{.*}} = %c0_i32{{.*}}) : (i32, i32, i32) -> (i32, i32, i32) {
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[R0]], %[[NT]] : i32
// CHECK: scf.condition(%[[MORE]]) %[[R0]],
// CHECK: ^bb0(%[[RANK:[a-z0-9]+]]: i32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK: %[[GLOBAL:.*]] = llvm.addrspacecast %[[COUNTER]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %[[GLOBAL]], %c1_i32{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[OLD]], %{{.*}} : i32
// CHECK-NOT: arith.cmpi eq, %[[OLD]]
// CHECK: arith.remui %[[RANK]], %{{.*}} : i32
// CHECK: arith.subi
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: arith.addi %{{.*}}, %c229376{{.*}} : index
// CHECK: llvm.store %[[RANK]], %{{.*}} : i32, !llvm.ptr<3>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// The reset check comes after the tile's loads, not right after the add.
// CHECK: scf.for
// CHECK: nvgpu.tma.async.load
// CHECK: }
// CHECK: %[[LAST:.*]] = arith.subi %[[NT]], %c1_i32{{.*}} : i32
// CHECK: %[[ISLAST:.*]] = arith.cmpi eq, %[[OLD]], %[[LAST]] : i32
// CHECK: scf.if %[[ISLAST]] {
// CHECK: llvm.store %c0_i32{{.*}}, %[[GLOBAL]] : i32, !llvm.ptr<1>
// CHECK: scf.yield %[[NEXT]], %{{.*}}, %{{.*}} : i32, i32, i32
// The end mark, in the next Q buffer once the consumers gave it back.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: llvm.store %[[NT]], %{{.*}} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvgpu.mbarrier.arrive
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: scf.while (%{{.*}} = %c0_i32{{.*}}, %{{.*}} = %c0_i32{{.*}}) : (i32, i32) -> (i32, i32, i32) {
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: arith.addi %{{.*}}, %c229376{{.*}} : index
// CHECK: %[[SLOT:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// The rank through redux.sync, so ptxas sees it is warp-uniform.
// CHECK: %[[GOT:.*]] = nvvm.redux.sync umin %[[SLOT]], %c-1_i32
// CHECK: %[[GOON:.*]] = arith.cmpi ult, %[[GOT]], %{{.*}} : i32
// CHECK: scf.condition(%[[GOON]]) %[[GOT]],
// Q was waited for with the rank: before the first Q.K^T only K's wait.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-NOT: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async

// -----

// A persistent block with one Q buffer stages O in it (no tile of its own:
// 1024 + Q + 2 stages x (K + V) = 230400 at head dim 256 with block_n 80)
// and gives the buffer back after the TMA stores have read it, not after
// the last Q.K^T.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_persistent_o_in_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, pingpong = true,
                                   overlap_softmax = true, persistent = true, tma_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_persistent_o_in_q
// CHECK: tiledattn.dynamic_smem_bytes = 230400 : i64
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// Q empty is barrier 9 (Q full, 4 x 2 ring barriers before it).
// CHECK-NOT: arith.constant 9 : index
// CHECK: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier
// CHECK: %[[C9:.*]] = arith.constant 9 : index
// CHECK: nvgpu.mbarrier.arrive %{{.*}}[%[[C9]]]
// CHECK: scf.yield

// -----

// persistent, causal, tile_order = by_head (the default): tile t is query
// block qBlocks - 1 - t mod qBlocks of head-batch t / qBlocks, no rounds
// mirrored.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_persistent_causal_by_head(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2, persistent = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_persistent_causal_by_head
// CHECK: %[[QB:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT: arith.select
// CHECK: %[[QOFF:.*]] = arith.remui %[[T]], %[[QB]] : i32
// CHECK: arith.divui %[[T]], %[[QB]] : i32
// CHECK: %[[LASTQ:.*]] = arith.subi %[[QB]], %c1_i32{{.*}} : i32
// CHECK: arith.subi %[[LASTQ]], %[[QOFF]] : i32

// -----

// conditional_rescale: after P.V retires, a warp vote on "some rescale
// factor is not exactly 1" guards O's 64 multiplies; the else branch yields
// O unchanged.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_conditional_rescale(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   overlap_softmax = true, conditional_rescale = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_conditional_rescale
// CHECK: scf.for
// An unchanged row maximum gives the factor 1 itself (ex2.approx of 0 need
// not be exactly 1), so the vote below can skip.
// CHECK: %[[FACTOR:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[SAME:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.select %[[SAME]], %cst{{.*}}, %[[FACTOR]] : f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.cmpf une, %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.cmpf une, %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[EITHER:.*]] = arith.ori %{{[0-9]+}}, %{{[0-9]+}} : i1
// CHECK: %[[ANY:.*]] = nvvm.vote.sync any %c-1_i32{{.*}}, %[[EITHER]] -> i1
// CHECK: %[[O:.*]]:64 = scf.if %[[ANY]] -> ({{(f32, ){63}f}}32) {
// CHECK-COUNT-64: arith.mulf
// CHECK: scf.yield
// CHECK: } else {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK: scf.yield

// -----

// overlap_epilogue: the row sums, 1 / sum and lse (softmax statistics only)
// run under the tile's last P.V, between its commit and its wait.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_overlap_epilogue(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   overlap_softmax = true, overlap_epilogue = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_overlap_epilogue
// Past the unmasked and the masked loop (one wait for S per iteration).
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.yield
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: gpu.shuffle xor
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?x?x?xf32, {{.*}}>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: vector.store
// CHECK: gpu.return

// -----

// defer_store: the tile loop carries the tile's O (32 registers at head dim
// 64), 1 / sum of both row halves, its first row, head and batch and a valid
// bit (false before the first tile). The held O is stored between the issue
// and the wait of the next tile's first Q.K^T, and the last one after the
// loop.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d64_defer_store(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d64_defer_store
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[NONE:.*]] = arith.constant false
// CHECK: %[[TILES:.*]]:40 = scf.for {{.*}} iter_args({{.*}}, %[[VALID:.*]] = %[[NONE]]) -> (i32, i32, {{(f32, ){34}i}}ndex, index, index, i1)
// The first block's Q.K^T, then the held O under it.
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: scf.if %[[VALID]] {
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The tile ends without a store: its O goes to the next one.
// CHECK-NOT: nvvm.stmatrix
// CHECK: %[[HELD:.*]] = arith.constant true
// CHECK-NOT: nvvm.stmatrix
// CHECK: scf.yield {{.*}}, %[[HELD]] : i32, i32, {{(f32, ){34}i}}ndex, index, index, i1
// CHECK: scf.if %[[TILES]]#39 {
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}, %[[TILES]]#37, %[[TILES]]#38]
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.return

// -----

// defer_store with dynamic_tiles: the scf.while carries the held O through
// both regions and hands the last one out.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d64_defer_store_dynamic(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, dynamic_tiles = true,
                                   defer_store = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d64_defer_store_dynamic
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[NONE:.*]] = arith.constant false
// CHECK: %[[TILES:.*]]:41 = scf.while ({{.*}}, %{{.*}} = %[[NONE]]) : (i32, i32, {{(f32, ){34}i}}ndex, index, index, i1) -> (i32, i32, i32, {{(f32, ){34}i}}ndex, index, index, i1)
// CHECK: scf.condition(%{{.*}}) {{.*}} : i32, i32, i32, {{(f32, ){34}i}}ndex, index, index, i1
// CHECK: ^bb0({{.*}}, %[[VALID:.*]]: i1):
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: scf.if %[[VALID]] {
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[HELD:.*]] = arith.constant true
// CHECK: scf.yield {{.*}}, %[[HELD]] : i32, i32, {{(f32, ){34}i}}ndex, index, index, i1
// CHECK: scf.if %[[TILES]]#40 {
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}, %[[TILES]]#38, %[[TILES]]#39]
// CHECK: gpu.return

// -----

// stage_o_in_q: O is staged for its TMA store in its own tile's Q buffer
// (64 KiB apart at head dim 256), so there is no O tile after the ring: 1 KiB
// pad + 2 Q buffers + 2 stages of 48 x 256 K and V = 230400 bytes. The tile
// loop carries the held tile's Q buffer; the deferred store writes there
// without waiting for earlier stores (the buffers alternate), and after the
// next tile's first block (a tile that had one before it) the consumer waits
// for the stores' reads and returns that buffer (Q empty = 10 + buffer).
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_stage_o_in_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 48, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   stage_o_in_q = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_stage_o_in_q
// CHECK: tiledattn.dynamic_smem_bytes = 230400 : i64
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]*}} = %{{[^ ]*}}, %[[DONE:[^ ]*]] = {{.*}}, %[[VALID:[^ ]*]] = %false{{[^ ]*}}, %[[HELDBUF:[^ ]*]] = %{{[^ ]*}}) -> (i32, i32, {{(f32, ){130}i}}ndex, index, index, i1, index)
// CHECK: scf.if %[[VALID]] {
// CHECK-NOT: nvvm.cp.async.bulk.wait_group
// CHECK: arith.muli %[[HELDBUF]], %c65536{{.*}} : index
// CHECK: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: %[[PREV:.*]] = arith.subi %c1{{[^ ]*}}, %{{[^ ]*}} : index
// CHECK: %[[RAN:.*]] = arith.cmpi ne, %[[DONE]], %c0{{[^ ]*}} : i32
// CHECK: scf.if %[[RAN]] {
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: %[[QEMPTY:.*]] = arith.addi %[[PREV]], %c10 : index
// CHECK: nvgpu.mbarrier.arrive %{{.*}}[%[[QEMPTY]]]
// The tile's own buffer is not returned at its end (only K/V empties).
// CHECK-NOT: arith.addi %{{[^ ]*}}, %c10 : index
// CHECK: scf.yield {{.*}}, %true{{[^ ]*}}, %{{[^ ]*}} : i32, i32, {{(f32, ){130}i}}ndex, index, index, i1, index
// -----

// narrow_diagonal: in the masked loop, a consumer whose rows all end before
// block it's key 64 (it * block_n >= the tile's first row + 64 * consumer)
// issues S with N = 64 (32 registers) and pads P with zeros; otherwise the
// full block. The last block's P.V takes 4 k-steps where it is narrow.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_narrow_diagonal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   overlap_softmax = true, narrow_diagonal = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_narrow_diagonal
// The unmasked loop has only full blocks.
// CHECK: scf.for
// CHECK-NOT: n = 64
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK: scf.yield
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[FIRST:.*]] = arith.addi
// CHECK: %[[KEY0:.*]] = arith.muli %[[IT]], %c128{{.*}} : index
// CHECK: %[[PAST:.*]] = arith.cmpi uge, %[[KEY0]], %[[FIRST]] : index
// Through vote.sync, so ptxas sees the branch is warp-uniform.
// CHECK: %[[NARROW:.*]] = nvvm.vote.sync any %c-1_i32{{.*}}, %[[PAST]] -> i1
// CHECK: scf.if %[[NARROW]] -> ({{(f32, ){64}(i32, ){32}f}}32, f32, f32, f32) {
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>{{.*}} -> !llvm.struct<({{(f32, ){31}f}}32)>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// The previous block's P.V stays full.
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The padding of P: 16 words of zeros.
// CHECK: scf.yield {{.*}}{{(%c0_i32[_0-9]*, ){15}%}}c0_i32
// CHECK: } else {
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: scf.yield
// CHECK: scf.yield
// The last P.V: 4 k-steps where narrow, 8 otherwise.
// CHECK: arith.cmpi uge
// CHECK: %[[LASTNARROW:.*]] = nvvm.vote.sync any
// CHECK: scf.if %[[LASTNARROW]] -> ({{(f32, ){63}f}}32) {
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: } else {
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.return

// -----

// skip_masked_blocks: the consumer's block count is the blocks its own rows
// reach (min with the tile's, through redux.sync so ptxas sees it is
// warp-uniform) and ends the masked loop; the tile's later blocks get an
// empty ping-pong turn each right after the last P.V. The producer makes
// its arrivals on those blocks' K and V empty barriers (one per warp),
// right after issuing their loads, so the consumer never waits for blocks
// it does not read. uniform_consumer: the consumer index through
// redux.sync first.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_skip_masked_blocks(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   skip_masked_blocks = true, uniform_consumer = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_skip_masked_blocks
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}}[%{{.*}}] to
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}}[%{{.*}}] to
// Consumer 0's rows end at the tile's first row + 64.
// CHECK: %[[ROWS0:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[KEYS0:.*]] = arith.minui %{{.*}}, %[[ROWS0]] : index
// CHECK: %[[UP0:.*]] = arith.addi %[[KEYS0]], %c63{{.*}} : index
// CHECK: %[[REACHED0:.*]] = arith.divui %[[UP0]], %c64{{.*}} : index
// CHECK-NEXT: %[[BLOCKS0:.*]] = arith.minui %{{.*}}, %[[REACHED0]] : index
// CHECK-NEXT: %[[UNREAD:.*]] = arith.cmpi uge, %[[IT]], %[[BLOCKS0]] : index
// CHECK-NEXT: scf.if %[[UNREAD]] {
// CHECK-COUNT-8: nvgpu.mbarrier.arrive
// CHECK-NOT: nvgpu.mbarrier.arrive
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[RAW:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[UNI:.*]] = nvvm.redux.sync {{ *}}umin %[[RAW]], %c-1_i32
// CHECK: %[[CONSUMER:.*]] = arith.index_castui %[[UNI]] : i32 to index
// CHECK: %[[KEYS:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK: %[[UP:.*]] = arith.addi %[[KEYS]], %c63{{.*}} : index
// CHECK: %[[REACHED:.*]] = arith.divui %[[UP]], %c64{{.*}} : index
// CHECK: %[[MINE:.*]] = arith.minui %[[TILE:.*]], %[[REACHED]] : index
// CHECK: %[[MINE32:.*]] = arith.index_castui %[[MINE]] : index to i32
// CHECK: %[[SAME:.*]] = nvvm.redux.sync {{ *}}umin %[[MINE32]], %c-1_i32
// CHECK: %[[BLOCKS:.*]] = arith.index_castui %[[SAME]] : i32 to index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] step
// The last P.V, then one empty turn per skipped block.
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16
// CHECK: scf.for %{{.*}} = %[[BLOCKS]] to %[[TILE]] step
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.addi %[[CONSUMER]]
// CHECK: nvvm.barrier id
// CHECK-NOT: nvgpu.mbarrier
// CHECK: nvvm.barrier.arrive id
// CHECK-NEXT: }
// After the O store the consumer waits for no K/V stage.
// CHECK: nvgpu.tma.async.store
// CHECK-NOT: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.return

// -----

// prefetch_next_q (one block per tile): after the tile's loads the producer
// prefetches into L2 the Q tile of block (linear index + nsmid), decoded
// as the grid is (query block, reversed when causal; head; batch), one
// box per 64-column atom, through Q's tensor-map parameter.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_prefetch_next_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   prefetch_next_q = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_prefetch_next_q
// CHECK: gpu.func @bf16_d256_prefetch_next_q({{.*}}, %[[QMAP:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// The tile's K/V loop, then the prefetch.
// CHECK: scf.for
// CHECK: nvgpu.tma.async.load
// CHECK: }
// CHECK: %[[GX:.*]] = gpu.grid_dim {{ *}}x
// CHECK: %[[GY:.*]] = gpu.grid_dim {{ *}}y
// CHECK: %[[LINEAR:.*]] = arith.addi %block_id_x{{.*}}, %{{.*}} : index
// CHECK: %[[SMS:.*]] = nvvm.read.ptx.sreg.nsmid : i32
// CHECK: %[[SMSIDX:.*]] = arith.index_castui %[[SMS]] : i32 to index
// CHECK: %[[NEXT:.*]] = arith.addi %[[LINEAR]], %[[SMSIDX]] : index
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[GX]], %{{.*}} : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[NEXT]], %[[BLOCKS]] : index
// CHECK: scf.if %[[INSIDE]] {
// CHECK: %[[X:.*]] = arith.remui %[[NEXT]], %[[GX]] : index
// CHECK: %[[YZ:.*]] = arith.divui %[[NEXT]], %[[GX]] : index
// CHECK: arith.remui %[[YZ]], %[[GY]] : index
// CHECK: arith.divui %[[YZ]], %[[GY]] : index
// Causal: the grid runs query blocks from the last.
// CHECK: %[[LASTX:.*]] = arith.subi %[[GX]], %c1{{.*}} : index
// CHECK: %[[QB:.*]] = arith.subi %[[LASTX]], %[[X]] : index
// CHECK: %[[ROW:.*]] = arith.muli %[[QB]], %c128{{.*}} : index
// CHECK: %[[ROW32:.*]] = arith.index_castui %[[ROW]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%c0_i32{{.*}}, %[[ROW32]], %{{.*}}, %{{.*}}] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%c64_i32{{.*}}, %[[ROW32]], %{{.*}}, %{{.*}}] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%c128_i32{{.*}}, %[[ROW32]], %{{.*}}, %{{.*}}] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%c192_i32{{.*}}, %[[ROW32]], %{{.*}}, %{{.*}}] : !llvm.ptr
// CHECK: nvvm.setmaxregister {{ *}}increase 240

// -----

// prefetch_next_kv: after the next block's Q, its first num_stages K and V
// blocks (rows 0 and 64 at block_n 64, 2 stages) of its K/V head (GQA: head
// / (heads_q / heads_kv)), four 64-column atoms each, through the K and V
// tensor-map parameters.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_prefetch_next_kv(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   prefetch_next_q = true, prefetch_next_kv = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_prefetch_next_kv
// CHECK: gpu.func @bf16_d256_prefetch_next_kv({{.*}}, %[[QMAP:[a-z0-9]+]]: !llvm.ptr, %[[KMAP:[a-z0-9]+]]: !llvm.ptr, %[[VMAP:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: %[[YZ:.*]] = arith.divui %{{.*}}, %grid_dim_x : index
// CHECK-NEXT: %[[Y:.*]] = arith.remui %[[YZ]], %grid_dim_y : index
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]]
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[HKV:.*]] = arith.divui %[[Y]], %[[GROUP]] : index
// CHECK-NEXT: %[[HKV32:.*]] = arith.index_castui %[[HKV]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%c0_i32{{.*}}, %[[ROW0:.*]], %[[HKV32]], %{{.*}}] : !llvm.ptr
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%{{.*}}, %[[ROW0]], %[[HKV32]], %{{.*}}] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%c0_i32{{.*}}, %[[ROW1:.*]], %[[HKV32]], %{{.*}}] : !llvm.ptr
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%{{.*}}, %[[ROW1]], %[[HKV32]], %{{.*}}] : !llvm.ptr
// CHECK-COUNT-8: nvvm.cp.async.bulk.tensor.prefetch %[[VMAP]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.prefetch
// CHECK: nvvm.setmaxregister {{ *}}increase 240

// -----

// split_tail: a workspace pointer after scale (before the tensor maps) and
// its size per block (2 consumers x (128 threads x (64 + 4) words + a
// flag) x 4 bytes); the tail (tiles mod grid, kept only with at least one
// K/V step per block) leaves the full rounds; one loop over this block's
// full-round tiles, then its pieces. A writing piece stores its words,
// fences, syncs the consumer and raises its flag (release); the merging
// piece spins on each writer's flag (acquire), folds the partial in with
// two exp2 factors per row half, syncs and zeroes the flags.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_split_tail(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, q_buffers = 2, defer_store = true,
                                   split_tail = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_split_tail
// CHECK: gpu.func @bf16_d128_split_tail({{.*}}%arg5: f32, %[[WS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: tiledattn.workspace_bytes_per_block = 69640
// CHECK-NEXT: %[[WSG:.*]] = llvm.addrspacecast %[[WS]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[GRID:.*]] = arith.index_castui %grid_dim_x : index to i32
// CHECK: %[[REM:.*]] = arith.remui %[[TILES:.*]], %[[GRID]] : i32
// CHECK: %[[STEPS:.*]] = arith.muli %[[REM]], %[[NB:.*]] : i32
// CHECK: %[[ENOUGH:.*]] = arith.cmpi uge, %[[STEPS]], %[[GRID]] : i32
// CHECK: %[[TAIL:.*]] = arith.select %[[ENOUGH]], %[[REM]], %c0_i32 : i32
// CHECK: %[[FULL:.*]] = arith.subi %[[TILES]], %[[TAIL]] : i32
// The full rounds: a loop of its own, with no piece's workspace traffic.
// CHECK: %[[ROUNDS:.*]]:72 = scf.for %{{.*}} = %{{.*}} to %[[FULL]] step %[[GRID]] iter_args
// CHECK-NOT: atomic
// The pieces, a second copy of the tile body, after the rounds' ring
// position and tiles done.
// CHECK: scf.for %[[U:.*]] = %{{.*}} to %{{.*}} step %c1_i32{{.*}} iter_args(%{{.*}} = %[[ROUNDS]]#0, %{{.*}} = %[[ROUNDS]]#1,
// CHECK: arith.muli %[[U]], %[[NB]] : i32
// The piece starts at the tile's first key block, or writes a partial.
// CHECK: %[[STARTS:.*]] = arith.cmpi eq, %[[FIRST:.*]], %c0_i32{{.*}} : i32
// CHECK: arith.cmpi ne, %[[FIRST]], %c0_i32{{.*}} : i32
// Writer: the stores of this thread's words, the fence, the consumer's
// barrier and the flag.
// CHECK: %[[WORD:.*]] = llvm.getelementptr %[[WSG]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.store %{{.*}}, %[[WORD]] : f32, !llvm.ptr<1>
// CHECK: llvm.fence release
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.index_castui
// CHECK-NEXT: arith.constant 128 : i32
// CHECK-NEXT: nvvm.barrier id
// CHECK: llvm.store %c1_i32{{.*}}, %{{.*}} atomic release {alignment = 4 : i64} : i32, !llvm.ptr<1>
// Merger: over the blocks after this one that hold the tile's later steps,
// the last of them and the slots in 32 bits (a 64-bit division is a call
// whose return address spilled at 240 registers).
// CHECK: %[[LASTSTEP:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[SCALED:.*]] = arith.muli %[[LASTSTEP]], %{{.*}} : i32
// CHECK-NEXT: %[[BEFORE:.*]] = arith.subi %[[SCALED]], %{{.*}} : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.divui %[[BEFORE]], %{{.*}} : i32
// CHECK-NEXT: arith.index_castui %[[LAST]] : i32 to index
// CHECK: scf.for %[[WRITER:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[W32:.*]] = arith.index_castui %[[WRITER]] : index to i32
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: %[[SLOT0:.*]] = arith.muli %[[W32]], %{{.*}} : i32
// CHECK-NEXT: arith.addi %[[SLOT0]], %{{.*}} : i32
// CHECK: scf.while : () -> () {
// CHECK-NEXT: %[[SEEN:.*]] = llvm.load %{{.*}} atomic acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: %[[UNSET:.*]] = arith.cmpi eq, %[[SEEN]], %{{.*}} : i32
// CHECK-NEXT: scf.condition(%[[UNSET]])
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.barrier id
// CHECK: llvm.store %c0_i32{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
// The rows' lse only where the piece starts at the tile's first key.
// CHECK: %[[STORES:.*]] = arith.andi %{{.*}}, %[[STARTS]] : i1
// CHECK-NEXT: scf.if %[[STORES]] {
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}} : memref<?x?x?xf32
// CHECK: gpu.return

// -----

// row_sum_mma: the block's threads fill a 1 KiB tile of ones after the
// ring (bf16 1.0 twice per word), fenced for the async proxy; each P.V
// k-step's m64n128k16 is followed by an m64n8k16 of the same P against
// that tile (K-major: trans-b 0), into 4 sum registers. No FADD of P
// anywhere and no shuffle of the sums: the rows' totals take the sum
// straight from the retired accumulator (register 0 for rows g, 2 for g+8).
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_row_sum_mma(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   row_sum_mma = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_row_sum_mma
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %thread_id_x, %c256{{.*}} : index
// CHECK-NEXT: scf.if %[[FEW]] {
// CHECK-NEXT: %c163840 = arith.constant 163840 : index
// CHECK: llvm.store %c1065369472_i32, %{{.*}} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: arith.addf
// CHECK: m64n128k16.f32.bf16.bf16 {{.*}}, %[[PA:[a-z0-9]+]], %[[PB:[a-z0-9]+]], %[[PC:[a-z0-9]+]], %[[PD:[a-z0-9]+]], %{{[a-z0-9]+}} : (
// CHECK-NOT: m64n128k16
// CHECK: m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, 1, 1, 0;\0A}", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PA]], %[[PB]], %[[PC]], %[[PD]], %{{[a-z0-9]+}} :
// The first addf of the kernel is the lse's, after 1 / sum: neither P nor
// the quad's sums are added anywhere.
// CHECK-NOT: arith.addf
// CHECK: %{{.*}} = arith.divf %cst{{.*}}, %[[SUM0:[0-9]+]] : f32
// CHECK-NEXT: arith.constant
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[SUM0]])
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf

// -----

// exp2_on_fma = 16: in the unmasked block loop, 16 of the thread's 64
// probabilities (every fourth) take 2^x on the FMA pipe: clamp to -126,
// round by adding 1.5 * 2^23, a degree-3 polynomial of the fraction, the
// rounded value's bits shifted into the exponent. Masked blocks keep MUFU.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_exp2_on_fma(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, exp2_on_fma = 16>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_exp2_on_fma
// CHECK-NOT: arith.shli %{{.*}}, %c23_i32
// CHECK: scf.for %{{.*}} = %c1{{.*}} iter_args
// CHECK: %[[X:.*]] = llvm.intr.fma
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]])
// CHECK: %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT: %[[FLOOR:.*]] = arith.constant -1.260000e+02 : f32
// CHECK-NEXT: %[[C:.*]] = arith.maxnumf %{{.*}}, %[[FLOOR]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[C]], %[[MAGIC]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[T]], %[[MAGIC]] : f32
// CHECK-NEXT: %[[F:.*]] = arith.subf %[[C]], %[[R]] : f32
// CHECK: %[[P1:.*]] = llvm.intr.fma(%{{.*}}, %[[F]], %{{.*}})
// CHECK: %[[P2:.*]] = llvm.intr.fma(%[[P1]], %[[F]], %{{.*}})
// CHECK: %[[P3:.*]] = llvm.intr.fma(%[[P2]], %[[F]], %{{.*}})
// CHECK: %[[TB:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK-NEXT: %[[E:.*]] = arith.shli %[[TB]], %c23_i32 : i32
// CHECK-NEXT: %[[PB:.*]] = arith.bitcast %[[P3]] : f32 to i32
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[PB]], %[[E]] : i32
// CHECK-NEXT: arith.bitcast %[[SUM]] : i32 to f32
// CHECK-COUNT-15: arith.shli %{{.*}}, %c23_i32
// CHECK-NOT: arith.shli %{{.*}}, %c23_i32
// CHECK: scf.for
// CHECK-NOT: arith.shli %{{.*}}, %c23_i32
// CHECK: gpu.return

// -----

// q_per_consumer: Q full per consumer (barriers 0 and 1, then K/V from 2);
// the producer loads each consumer's 64 rows (32 KB at D=256) into its
// half of every 64-column atom (rows 64.. at 8 KB into each 16 KB atom),
// on that consumer's barrier; a consumer waits on its own.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_q_per_consumer(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   q_per_consumer = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_q_per_consumer
// CHECK: gpu.func
// CHECK-SAME: {box_cols = 64 : i64, box_rows = 64 : i64, operand = "q"
// CHECK-COUNT-10: nvgpu.mbarrier.init %{{.*}}, num_barriers = 10>
// CHECK: %[[WG:.*]] = arith.divui %thread_id_x, %c128
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS:.*]][%[[Q0:.*]]], %c32768
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[ROW0:.*]], %block_id_y, %block_id_z], %[[BARS]][%[[Q0]]] to %{{.*}} : <tensor = memref<1x1x64x64xbf16, 3>
// CHECK: %[[ROW1:.*]] = arith.addi %{{.*}}, %c64{{.*}} : index
// CHECK: %c8192 = arith.constant 8192 : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[Q1:.*]]], %c32768
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[ROW1]], %block_id_y, %block_id_z], %[[BARS]][%[[Q1]]]
// CHECK: %[[CONSUMER:.*]] = arith.subi %[[WG]], %c1
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 240
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.*}}[%[[CONSUMER]]], %false

// -----

// q_by_atom + k0_by_atom: Q (two 64-column atoms at head dim 128) and the
// first K block arrive atom by atom, atom a of both on barrier a (expect
// (128 + 64) rows x 128 bytes), Q's atom before K's; the producer's block 0
// only completes K-full's phase (a plain arrive) so later blocks' parities
// hold. The first Q.K^T waits for barrier a before atom a's four k-steps and
// not for K full. store_by_atom: each atom of O is fenced and stored as soon
// as its stmatrix are done.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_q_by_atom(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   q_by_atom = true, k0_by_atom = true, store_by_atom = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_q_by_atom
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c0{{[_0-9]*}}], %c24576
// CHECK: nvgpu.tma.async.load %[[QMAP:[0-9]+]][%c0{{[_0-9]*}}, {{.*}}], %[[BAR]][%c0{{[_0-9]*}}] to %{{.*}} : <tensor = memref<1x1x128x64xbf16
// CHECK: nvgpu.tma.async.load %[[KMAP:[0-9]+]][%c0{{[_0-9]*}}, %c0{{[_0-9]*}}, {{.*}}], %[[BAR]][%c0{{[_0-9]*}}] to %{{.*}} : <tensor = memref<1x1x64x64xbf16
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%c1{{[_0-9]*}}], %c24576
// CHECK: nvgpu.tma.async.load %[[QMAP]][%c64{{[_0-9]*}}, {{.*}}], %[[BAR]][%c1{{[_0-9]*}}]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c64{{[_0-9]*}}, %c0{{[_0-9]*}}, {{.*}}], %[[BAR]][%c1{{[_0-9]*}}]
// CHECK: scf.for
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0{{[_0-9]*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: nvgpu.mbarrier.arrive %[[BAR]]
// CHECK-NEXT: } else {
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BAR]][%{{.*}}], %c16384
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The first block: no K-full wait, each atom's k-steps after its barrier.
// CHECK: nvvm.barrier id
// CHECK-NOT: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c0{{[_0-9]*}}], %false
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BAR]][%c1{{[_0-9]*}}], %false
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// The block loop waits for K full (barrier 2 + stage) as before.
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async
// O: atom 0 fenced and stored before atom 1's stmatrix.
// CHECK: nvvm.stmatrix
// CHECK: nvvm.fence.proxy
// CHECK-NOT: nvvm.stmatrix
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-NOT: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%c0{{[_0-9]*}},
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: nvvm.stmatrix
// CHECK: nvvm.fence.proxy
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%c64{{[_0-9]*}},
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group

// -----

// split_tail without defer_store, one Q buffer: O is staged in Q's buffer,
// so the tail's pieces return the buffer either way: the piece with the
// tile's first keys after its O's stores have read it, a writer of partial
// O (no store) right away (Q empty is barrier 9: 1 + 4 x 2).
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d64_split_tail_one_q(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, split_tail = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d64_split_tail_one_q
// CHECK: %[[BAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: %[[STARTS:.*]] = arith.cmpi eq, %[[FIRST:[^ ]*]], %c0_i32{{[_0-9]*}} : i32
// CHECK: %[[WRITES:.*]] = arith.cmpi ne, %[[FIRST]], %c0_i32{{[_0-9]*}} : i32
// CHECK: scf.if %[[STARTS]] {
// CHECK: nvvm.stmatrix
// CHECK: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%c9]
// CHECK: scf.if %[[WRITES]] {
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: nvgpu.mbarrier.arrive %[[BAR]][%c9]
// CHECK: gpu.return


// -----

// q_in_registers: after Q's full barrier each consumer reads its 64 rows of
// Q into registers, one ldmatrix.x4 per k-step (8 at head dim 128), and
// every Q.K^T takes A from those registers (inline PTX, the k-major K
// descriptor untransposed), the first k-step with scale-d = 0. No wgmma
// reads Q from shared memory.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_q_in_registers(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_q_in_registers
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: nvgpu.mbarrier.try_wait.parity %{{.*}}[%c0{{[_0-9]*}}], %false
// CHECK: %[[X0:.*]] = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NEXT: %[[A0:.*]] = llvm.extractvalue %[[X0]][0]
// CHECK-NEXT: %[[A1:.*]] = llvm.extractvalue %[[X0]][1]
// CHECK-NEXT: %[[A2:.*]] = llvm.extractvalue %[[X0]][2]
// CHECK-NEXT: %[[A3:.*]] = llvm.extractvalue %[[X0]][3]
// CHECK-COUNT-7: nvvm.ldmatrix
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[UNSET:.*]] = llvm.mlir.poison : f32
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 0, 0;{{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}{$128, $129, $130, $131}, $132, p, 1, 1, 0;{{.*}}" %[[UNSET]], %[[UNSET]], {{.*}}, %[[UNSET]], %[[A0]], %[[A1]], %[[A2]], %[[A3]], %{{[0-9]+}} :
// CHECK-COUNT-7: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 1, 0;{{.*}}m64n128k16{{.*}}, p, 1, 1, 0;
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// The block loop: Q.K^T (scale-d 0, then 1) from the same registers, then P.V (B transposed).
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 0, 0;{{.*}}m64n128k16{{.*}}, p, 1, 1, 0;{{.*}}, %[[A0]], %[[A1]], %[[A2]], %[[A3]], %{{[0-9]+}} :
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}setp.ne.b32 p, 1, 0;{{.*}}m64n128k16{{.*}}, p, 1, 1, 1;
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: gpu.return

// -----

// uniform_ring: in the consumer, each block's ring position (the tile's
// base + the block) and Q's shared-memory base go through redux.sync, so
// ptxas keeps the stage, phase, barrier and descriptor arithmetic uniform.
// The producer (one thread) has no redux.sync: it needs the whole warp.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_uniform_ring(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, persistent = true,
                                   tma_store = true, uniform_ring = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_uniform_ring
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK-NOT: nvvm.redux.sync
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The overlapped block loop: block it's ring position, then it - 1's.
// CHECK: scf.for %[[IT:.*]] = %c1{{(_[0-9]+)?}} to
// CHECK-NEXT: %[[POS:.*]] = arith.addi %[[BASE:.*]], %[[IT]] : index
// CHECK-NEXT: %[[RAW:.*]] = arith.index_castui %[[POS]] : index to i32
// CHECK: %[[UNI:.*]] = nvvm.redux.sync {{ *}}umin %[[RAW]], %c-1_i32
// CHECK-NEXT: %[[RING:.*]] = arith.index_castui %[[UNI]] : i32 to index
// CHECK: arith.divui %[[RING]], %c2
// CHECK: arith.remui %[[RING]], %c2
// CHECK: %[[PREV:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT: %[[PRAW:.*]] = arith.index_castui %[[PREV]] : index to i32
// CHECK: nvvm.redux.sync {{ *}}umin %[[PRAW]], %c-1_i32
// Q's base before the first Q.K^T's descriptor.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[QRAW:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[QUNI:.*]] = nvvm.redux.sync {{ *}}umin %[[QRAW]], %c-1_i32
// CHECK-NEXT: %[[QBASE:.*]] = arith.index_castui %[[QUNI]] : i32 to index
// CHECK-NEXT: arith.addi %{{.*}}, %[[QBASE]] : index
// CHECK: nvvm.wgmma.mma_async

// -----

// uniform_ring in a one-tile block: the block index itself is the ring
// position; it and Q's base go through redux.sync.
!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d256_uniform_ring_one_tile(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, tma_store = true,
                                   uniform_ring = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d256_uniform_ring_one_tile
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK-NOT: nvvm.redux.sync
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// CHECK: scf.for %[[IT:.*]] = %c1{{(_[0-9]+)?}} to
// CHECK-NEXT: %[[RAW:.*]] = arith.index_castui %[[IT]] : index to i32
// CHECK: %[[UNI:.*]] = nvvm.redux.sync {{ *}}umin %[[RAW]], %c-1_i32
// CHECK-NEXT: %[[RING:.*]] = arith.index_castui %[[UNI]] : i32 to index
// CHECK: arith.remui %[[RING]], %c2
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[QUNI:.*]] = nvvm.redux.sync {{ *}}umin
// CHECK-NEXT: %[[QBASE:.*]] = arith.index_castui %[[QUNI]] : i32 to index
// CHECK-NEXT: arith.addi %{{.*}}, %[[QBASE]] : index
// CHECK: nvvm.wgmma.mma_async

// -----

// kv_multicast: a cluster of two blocks on neighbouring query tiles; each
// producer loads its half (64 of 128 rows) of every K and V block into both
// blocks (multicast mask 0b11) and expects the whole block's bytes; the K/V
// empty barriers count both blocks' consumer warps (2 x 8), whose releases
// also arrive on the peer's copy (mapa). The barriers' init is published to
// the cluster before anyone uses them, and the blocks meet again at the end
// so none exits while the other may still arrive on its barriers.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @bf16_d128_kv_multicast(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma,
                                   producer = tma, swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true, kv_multicast = true>)
      : !head, !head, !head, !head, !lse
  return
}
// CHECK-LABEL: gpu.module @bf16_d128_kv_multicast
// CHECK: gpu.func @bf16_d128_kv_multicast
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: box_rows = 128 : i64, operand = "q"
// CHECK-SAME: box_rows = 64 : i64, operand = "k"
// CHECK-SAME: box_rows = 64 : i64, operand = "v"
// CHECK: %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT: %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK-COUNT-5: nvgpu.mbarrier.init %{{.*}}, %c1{{(_[0-9]+)?}} :
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.*}}, %c16{{(_[0-9]+)?}} :
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// Q is this block's own: no multicast.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// CHECK-NOT: multicast_mask
// CHECK: nvgpu.tma.async.load %{{.*}} to %{{.*}} : <tensor = memref<1x1x128x64xbf16, 3>
// K: the whole block's 32 KiB expected, this block's 64 rows from row
// rank * 64, at byte rank * 64 * 128 of each atom.
// CHECK: scf.for
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %c64
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[FIRST]] : index
// CHECK: arith.muli %[[FIRST]], %c128
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0{{(_[0-9]+)?}}, %[[ROW]], {{.*}} multicast_mask = %c3_i16 : <tensor = memref<1x1x64x64xbf16, 3>
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64{{(_[0-9]+)?}}, %[[ROW]], {{.*}} multicast_mask = %c3_i16
// V the same way.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// CHECK-COUNT-2: nvgpu.tma.async.load {{.*}} multicast_mask = %c3_i16
// A consumer's release: here, then on the peer's barrier.
// CHECK: nvgpu.mbarrier.arrive %[[BARS:.*]][%[[B:.*]]] :
// CHECK-NEXT: %[[ADDR:.*]] = nvgpu.mbarrier.get %[[BARS]][%[[B]]]
// CHECK-NEXT: %[[LOCAL:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<3>
// CHECK: %[[PEER:.*]] = arith.xori %{{.*}}, %c1_i32
// CHECK-NEXT: %[[REMOTE:.*]] = nvvm.mapa %[[LOCAL]], %[[PEER]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
