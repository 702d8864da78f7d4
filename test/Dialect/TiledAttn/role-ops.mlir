// RUN: tiledattn-opt %s -allow-unregistered-dialect | tiledattn-opt -allow-unregistered-dialect | FileCheck %s
// RUN: tiledattn-opt %s -allow-unregistered-dialect -mlir-print-op-generic | tiledattn-opt -allow-unregistered-dialect | FileCheck %s

// The warp-role ops print and parse back, in the custom and generic form.

// CHECK-LABEL: gpu.func @roles
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK-NEXT: "test.produce"() : () -> ()
// CHECK-NEXT: } consumers(2) regs(240) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: index):
// CHECK-NEXT: %[[V:.*]] = tiledattn.turn -> index {
// CHECK-NEXT: %[[W:.*]] = "test.issue"(%[[C]]) : (index) -> index
// CHECK-NEXT: tiledattn.yield %[[W]] : index
// CHECK-NEXT: }
// CHECK-NEXT: tiledattn.turn {
// CHECK-NEXT: "test.issue_more"() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: "test.use"(%[[V]]) : (index) -> ()
// CHECK-NEXT: }
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @roles() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      tiledattn.warp_specialize producer regs(24) {
        "test.produce"() : () -> ()
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %v = tiledattn.turn -> index {
          %w = "test.issue"(%c) : (index) -> index
          tiledattn.yield %w : index
        }
        tiledattn.turn {
          "test.issue_more"() : () -> ()
        }
        "test.use"(%v) : (index) -> ()
      }
      gpu.return
    }
  }
}
