// RUN: tiledattn-opt %s -split-input-file -tiledattn-tile-sdpa | FileCheck %s

// tiledattn-tile-sdpa expands tiledattn.sdpa into the FlashAttention forward
// loop of one thread block.

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal_f16_d64
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^%]*}}%[[K:[^:]*]]: {{[^%]*}}%[[V:[^:]*]]: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]: {{[^%]*}}%[[SCALE:[^:]*]]: f32)
// CHECK-SAME: attributes {tiledattn.causal, tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0, split_kv_loop = false>}
// Causal: the last query block (the most keys) runs first.
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[LASTB:.*]] = arith.subi %[[GRID]], %[[C1]] : index
// CHECK: %[[BX:.*]] = arith.subi %[[LASTB]], %[[BID]] : index
// CHECK: %[[BY:.*]] = gpu.block_id y
// CHECK: %[[BZ:.*]] = gpu.block_id z
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[SK:.*]] = memref.dim %[[K]], %[[C2]]
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %[[ONE]]
// CHECK: %[[HKV:.*]] = memref.dim %[[K]], %[[ONE]]
// GQA: query head h reads K/V head h / (Hq / Hkv).
// CHECK: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HKV]] : index
// CHECK: %[[HEADKV:.*]] = arith.divui %[[BY]], %[[GROUP]] : index
// CHECK: %[[BM:.*]] = arith.constant 64 : index
// CHECK: %[[ROW:.*]] = arith.muli %[[BX]], %[[BM]] : index
// CHECK: %[[QT:.*]] = tiledattn.load %[[Q]][%[[BZ]], %[[BY]], %[[ROW]]] : {{.*}} -> !tiledattn.tile<64x64xf16>
// CHECK: %[[ACC0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x64xf32>
// CHECK: %[[M0:.*]] = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
// CHECK: %[[L0:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64xf32>
// CHECK: %[[ZERO:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x64xf32>
// The causal loop stops at the block's diagonal: min(Sk, row + block_m).
// CHECK: %[[BM2:.*]] = arith.constant 64 : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[ROW]], %[[BM2]] : index
// CHECK: %[[END:.*]] = arith.minui %[[SK]], %[[DIAG]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[BN:.*]] = arith.constant 64 : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %[[END]] step %[[BN]] iter_args(%[[ACC:.*]] = %[[ACC0]], %[[M:.*]] = %[[M0]], %[[L:.*]] = %[[L0]]) -> (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>) {
// CHECK:   %[[KT:.*]] = tiledattn.load %[[K]][%[[BZ]], %[[HEADKV]], %[[J]]] : {{.*}} -> !tiledattn.tile<64x64xf16>
// CHECK:   %[[S:.*]] = tiledattn.mma %[[QT]], %[[KT]] transposed, %[[ZERO]] : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf32>
// CHECK:   %[[SM:.*]] = tiledattn.mask %[[S]], %[[ROW]], %[[J]], %[[SK]] causal : !tiledattn.tile<64x64xf32>
// CHECK:   %[[P:.*]], %[[M1:.*]], %[[L1:.*]], %[[ALPHA:.*]] = tiledattn.online_softmax %[[SM]], %[[M]], %[[L]], %[[SCALE]] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf16>
// CHECK:   %[[RS:.*]] = tiledattn.rescale %[[ACC]], %[[ALPHA]] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
// CHECK:   %[[VT:.*]] = tiledattn.load %[[V]][%[[BZ]], %[[HEADKV]], %[[J]]] : {{.*}} -> !tiledattn.tile<64x64xf16>
// CHECK:   %[[NEXT:.*]] = tiledattn.mma %[[P]], %[[VT]], %[[RS]] : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf32>
// CHECK:   scf.yield %[[NEXT]], %[[M1]], %[[L1]] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
// CHECK: }
// CHECK: tiledattn.store %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2 into %[[O]][%[[BZ]], %[[BY]], %[[ROW]]] lse(%[[LSE]])
// CHECK-NOT: tiledattn.sdpa
// CHECK: return
func.func @causal_f16_d64(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0,
                                   split_kv_loop = false>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// Non-causal with split_kv_loop (the default): the whole key blocks run in
// a loop without a mask, then the ragged end, masked.
// CHECK-LABEL: func.func @noncausal_bf16_d128
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^%]*}}%[[K:[^:]*]]: {{[^%]*}}%[[V:[^:]*]]: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]: {{[^%]*}}%[[SCALE:[^:]*]]: f32)
// CHECK-SAME: tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 32, num_stages = 1, warps = 8, mma = mma_sync, producer = direct, swizzle = 0>
// CHECK-NOT: gpu.grid_dim
// CHECK: %[[SK:.*]] = memref.dim %[[K]], %{{.*}}
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: %[[HEADKV:.*]] = arith.divui %{{.*}}, %[[GROUP]]
// CHECK: %[[BM:.*]] = arith.constant 128 : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[BM]] : index
// CHECK: tiledattn.load %[[Q]]{{.*}} -> !tiledattn.tile<128x128xbf16>
// CHECK: tiledattn.constant 0.000000e+00 : !tiledattn.tile<128x128xf32>
// CHECK: tiledattn.constant 0xFF800000 : !tiledattn.tile<128xf32>
// CHECK: tiledattn.constant 0.000000e+00 : !tiledattn.tile<128xf32>
// CHECK: tiledattn.constant 0.000000e+00 : !tiledattn.tile<128x32xf32>
// CHECK-NOT: arith.minui
// Whole blocks: floor(Sk / 32) * 32.
// CHECK: %[[NFULL:.*]] = arith.divui %[[SK]], %{{.*}} : index
// CHECK: %[[FULLEND:.*]] = arith.muli %[[NFULL]], %{{.*}} : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[FULL:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %[[FULLEND]] step %{{.*}} iter_args
// CHECK:   tiledattn.load %[[K]][%{{.*}}, %[[HEADKV]], %[[J]]] : {{.*}} -> !tiledattn.tile<32x128xbf16>
// CHECK:   %[[S:.*]] = tiledattn.mma {{.*}} transposed, {{.*}} : !tiledattn.tile<128x128xbf16>, !tiledattn.tile<32x128xbf16>, !tiledattn.tile<128x32xf32>
// CHECK-NOT: tiledattn.mask
// CHECK:   tiledattn.online_softmax %[[S]], {{.*}}, %[[SCALE]] : !tiledattn.tile<128x32xf32>, !tiledattn.tile<128xf32> -> !tiledattn.tile<128x32xbf16>
// CHECK:   scf.yield
// CHECK: scf.for %[[J2:.*]] = %[[FULLEND]] to %[[SK]] step %{{.*}} iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
// CHECK:   tiledattn.load %[[K]][%{{.*}}, %[[HEADKV]], %[[J2]]] : {{.*}} -> !tiledattn.tile<32x128xbf16>
// CHECK:   %[[SM:.*]] = tiledattn.mask %{{.*}}, %[[ROW]], %[[J2]], %[[SK]] : !tiledattn.tile<128x32xf32>
// CHECK:   tiledattn.online_softmax %[[SM]], {{.*}}, %[[SCALE]] : !tiledattn.tile<128x32xf32>, !tiledattn.tile<128xf32> -> !tiledattn.tile<128x32xbf16>
// CHECK:   tiledattn.rescale
// CHECK:   tiledattn.load %[[V]][%{{.*}}, %[[HEADKV]], %[[J2]]] : {{.*}} -> !tiledattn.tile<32x128xbf16>
// CHECK:   tiledattn.mma %{{.*}}, %{{.*}}, %{{.*}} : !tiledattn.tile<128x32xbf16>, !tiledattn.tile<32x128xbf16>, !tiledattn.tile<128x128xf32>
// CHECK:   scf.yield
// CHECK: tiledattn.store {{.*}} into %[[O]]{{.*}} lse(%[[LSE]])
// CHECK-NOT: tiledattn.sdpa
func.func @noncausal_bf16_d128(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 32, num_stages = 1,
                                   warps = 8, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// Causal with split_kv_loop: key blocks wholly left of the block's first
// query row need no mask: min(Sk / 64, (row + 1) / 64) * 64 of them.
// CHECK-LABEL: func.func @causal_split
// CHECK: %[[SK:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?x?x64xf16
// CHECK: %[[ROW:.*]] = arith.muli
// CHECK: %[[END:.*]] = arith.minui %[[SK]], %{{.*}} : index
// CHECK: %[[BYSEQ:.*]] = arith.divui %[[SK]], %{{.*}} : index
// CHECK: %[[ROW1:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[BYROW:.*]] = arith.divui %[[ROW1]], %{{.*}} : index
// CHECK: %[[NFULL:.*]] = arith.minui %[[BYSEQ]], %[[BYROW]] : index
// CHECK: %[[FULLEND:.*]] = arith.muli %[[NFULL]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[FULLEND]]
// CHECK-NOT: tiledattn.mask
// CHECK: scf.yield
// CHECK: scf.for %[[J:.*]] = %[[FULLEND]] to %[[END]]
// CHECK: tiledattn.mask %{{.*}}, %[[ROW]], %[[J]], %[[SK]] causal
func.func @causal_split(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// Functions without tiledattn.sdpa are left alone and not marked as kernels.
// CHECK-LABEL: func.func @no_sdpa
// CHECK-NOT: tiledattn.kernel
// CHECK: return
func.func @no_sdpa(%x: index) {
  return
}
