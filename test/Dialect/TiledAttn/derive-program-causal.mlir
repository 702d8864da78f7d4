// RUN: tiledattn-opt %s -allow-unregistered-dialect -split-input-file --tiledattn-derive-program="mask=causal" | FileCheck %s
// RUN: tiledattn-opt %s -allow-unregistered-dialect -split-input-file --tiledattn-derive-program="mask=causal element-type=f16 head-dim=96" | FileCheck %s --check-prefix=ALL

// A backward program's causal form (tiledattn.backward_kernels.CAUSAL_FORMS):
// the program marks where its mask goes, a tiledattn.mask with no bound
// (the identity) and a tiledattn.first_query_block where its loops start
// (or a tiledattn.key_block_end where they end: the deterministic dQ);
// mask=causal makes them causal and names the function for it.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @bwd_main_bf16_d128_rows_causal(
// CHECK-SAME: attributes {tiledattn.causal}
// CHECK: %[[FIRST:.*]] = tiledattn.first_query_block %{{.*}} of %{{.*}} rows(64) keys(128) causal
// CHECK: scf.for %{{.*}} = %[[FIRST]] to
// CHECK: tiledattn.mask %{{.*}}, %{{.*}}, %{{.*}} causal : !tiledattn.tile<64x64xf32>
// ALL-LABEL: func.func @bwd_main_f16_d96_rows_causal(
// ALL-SAME: memref<?x?x?x96xf16
// ALL: first_query_block {{.*}} causal
// ALL: tiledattn.mask {{.*}} causal
func.func @bwd_main_bf16_d128_rows(%q: !head, %kt: index, %qb: index, %s: !tiledattn.tile<64x64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %from = tiledattn.first_query_block %kt of %qb rows(64) keys(128)
  scf.for %i = %from to %qb step %c1 {
    %row = arith.muli %i, %c64 : index
    %m = tiledattn.mask %s, %row, %kt : !tiledattn.tile<64x64xf32>
    "test.use"(%m) : (!tiledattn.tile<64x64xf32>) -> ()
  }
  return
}

// -----

// CHECK-LABEL: func.func @bwd_dq_bf16_d128_causal(
// CHECK-SAME: attributes {tiledattn.causal}
// CHECK: %[[END:.*]] = tiledattn.key_block_end %{{.*}} of %{{.*}} rows(128) keys(64) causal
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]]
// CHECK: tiledattn.mask %{{.*}}, %{{.*}}, %{{.*}} causal : !tiledattn.tile<64x64xf32>
func.func @bwd_dq_bf16_d128(%q: memref<?x?x?x128xbf16>, %qt: index, %kb: index, %s: !tiledattn.tile<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %end = tiledattn.key_block_end %qt of %kb rows(128) keys(64)
  scf.for %j = %c0 to %end step %c1 {
    %key = arith.muli %j, %c64 : index
    %m = tiledattn.mask %s, %qt, %key : !tiledattn.tile<64x64xf32>
    "test.use"(%m) : (!tiledattn.tile<64x64xf32>) -> ()
  }
  return
}
