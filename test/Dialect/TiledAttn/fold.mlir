// RUN: tiledattn-opt %s --canonicalize | FileCheck %s

// What folds: a tiledattn.mask with no bound and no causal (the place of a
// program's mask when it has none), tiledattn.first_query_block without a
// mask (0) or with constant operands, and tiledattn.key_block_end likewise
// (all the key blocks without a mask).

// CHECK-LABEL: func.func @mask_without_a_mask
// CHECK-SAME: (%[[S:.*]]: !tiledattn.tile<64x64xf32>,
// CHECK-NEXT: return %[[S]]
func.func @mask_without_a_mask(%s: !tiledattn.tile<64x64xf32>, %r: index) -> !tiledattn.tile<64x64xf32> {
  %m = tiledattn.mask %s, %r, %r : !tiledattn.tile<64x64xf32>
  return %m : !tiledattn.tile<64x64xf32>
}

// CHECK-LABEL: func.func @masks_that_stay
// CHECK: tiledattn.mask %{{.*}}, %{{.*}}, %{{.*}} causal
// CHECK: tiledattn.mask %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
func.func @masks_that_stay(%s: !tiledattn.tile<64x64xf32>, %r: index) -> (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>) {
  %c = tiledattn.mask %s, %r, %r causal : !tiledattn.tile<64x64xf32>
  %b = tiledattn.mask %s, %r, %r, %r : !tiledattn.tile<64x64xf32>
  return %c, %b : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>
}

// Key tile 3 of 128 keys starts at query 384, block 6 of 64; tile 7's
// block 14 is past the 10 blocks there are.
// CHECK-LABEL: func.func @first_query_blocks
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK: %[[DYN:.*]] = tiledattn.first_query_block %{{.*}} of %{{.*}} rows(64) keys(128) causal
// CHECK: return %[[C0]], %[[C6]], %[[C10]], %[[DYN]]
func.func @first_query_blocks(%kt: index) -> (index, index, index, index) {
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c10 = arith.constant 10 : index
  %none = tiledattn.first_query_block %kt of %c10 rows(64) keys(128)
  %six = tiledattn.first_query_block %c3 of %c10 rows(64) keys(128) causal
  %ten = tiledattn.first_query_block %c7 of %c10 rows(64) keys(128) causal
  %dyn = tiledattn.first_query_block %kt of %c10 rows(64) keys(128) causal
  return %none, %six, %ten, %dyn : index, index, index, index
}

// Query tile 2 of 128 queries ends at query 383, in key block 5 of 64: the
// blocks end at 6; tile 9's end, 20, is past the 12 blocks there are.
// CHECK-LABEL: func.func @key_block_ends
// CHECK-SAME: (%[[QT:.*]]: index, %[[KB:.*]]: index)
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK: %[[DYN:.*]] = tiledattn.key_block_end %[[QT]] of %[[C12]] rows(128) keys(64) causal
// CHECK: return %[[KB]], %[[C6]], %[[C12]], %[[DYN]]
func.func @key_block_ends(%qt: index, %kb: index) -> (index, index, index, index) {
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %c12 = arith.constant 12 : index
  %none = tiledattn.key_block_end %qt of %kb rows(128) keys(64)
  %six = tiledattn.key_block_end %c2 of %c12 rows(128) keys(64) causal
  %twelve = tiledattn.key_block_end %c9 of %c12 rows(128) keys(64) causal
  %dyn = tiledattn.key_block_end %qt of %c12 rows(128) keys(64) causal
  return %none, %six, %twelve, %dyn : index, index, index, index
}
