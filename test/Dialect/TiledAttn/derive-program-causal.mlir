// RUN: tiledattn-opt %s -allow-unregistered-dialect --tiledattn-derive-program="mask=causal" | FileCheck %s
// RUN: tiledattn-opt %s -allow-unregistered-dialect --tiledattn-derive-program="mask=causal element-type=f16 head-dim=96" | FileCheck %s --check-prefix=ALL

// A backward program's causal form (tiledattn.backward_kernels.CAUSAL_FORMS):
// the program marks where its mask goes, a tiledattn.mask with no bound
// (the identity) and a tiledattn.first_query_block where its loops start;
// mask=causal makes both causal and names the function for it.

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
