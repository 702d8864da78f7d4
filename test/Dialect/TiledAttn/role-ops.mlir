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

// The tile loop: q blocks, heads, batches, the tile's coordinates and the
// count of tiles before it as arguments, and values carried from tile to tile.
// CHECK-LABEL: func.func @tiles
// CHECK-SAME: (%[[QB:.*]]: index, %[[H:.*]]: index, %[[B:.*]]: index, %[[INIT:.*]]: index)
// CHECK-NEXT: %[[R:.*]] = tiledattn.for_each_tile %[[QB]], %[[H]], %[[B]] longest_first iter_args(%[[INIT]] : index) -> index {
// CHECK-NEXT: ^bb0(%[[X:.*]]: index, %[[Y:.*]]: index, %[[Z:.*]]: index, %[[DONE:.*]]: index, %[[KV:.*]]: index):
// CHECK-NEXT: %[[NEXT:.*]] = "test.tile"(%[[X]], %[[Y]], %[[Z]], %[[DONE]], %[[KV]]) : (index, index, index, index, index) -> index
// CHECK-NEXT: tiledattn.yield %[[NEXT]] : index
// CHECK-NEXT: }
// CHECK-NEXT: tiledattn.for_each_tile %[[QB]], %[[H]], %[[B]] {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: tiledattn.yield
// CHECK-NEXT: }
// CHECK-NEXT: tiledattn.for_each_tile %[[QB]], %[[H]], %[[B]] longest_first across_heads {
// CHECK: tiledattn.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @tiles(%qb: index, %h: index, %b: index, %init: index) -> index {
  %r = tiledattn.for_each_tile %qb, %h, %b longest_first iter_args(%init : index) -> index {
  ^bb0(%x: index, %y: index, %z: index, %done: index, %kv: index):
    %next = "test.tile"(%x, %y, %z, %done, %kv) : (index, index, index, index, index) -> index
    tiledattn.yield %next : index
  }
  tiledattn.for_each_tile %qb, %h, %b {
  ^bb0(%x: index, %y: index, %z: index, %done: index):
    tiledattn.yield
  }
  tiledattn.for_each_tile %qb, %h, %b longest_first across_heads {
  ^bb0(%x: index, %y: index, %z: index, %done: index):
    tiledattn.yield
  }
  return %r : index
}

// The dynamic forms: the producer's body takes the tile's rank, a consumer's
// the slot of Q's ring it took (whose tag was the rank) and its token.
!dq = !tiledattn.ring<2, 128x128xbf16>
// CHECK-LABEL: func.func @dynamic_tiles
// CHECK: %{{.*}} = tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first dynamic iter_args(%{{.*}} : index) -> index {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[RANK:.*]]: i32, %{{.*}}: index):
// CHECK-NEXT: "test.put"(%[[RANK]])
// CHECK: tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} longest_first dynamic ranks_from %{{.*}} : !tiledattn.ring<2, 128x128xbf16> {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[SLOT:.*]]: !tiledattn.smem<128x128xbf16>, %[[TOKEN:.*]]: !tiledattn.token):
// CHECK-NEXT: "test.use"(%[[SLOT]])
// CHECK-NEXT: tiledattn.ring.release %{{.*}}, %[[TOKEN]] : !tiledattn.ring<2, 128x128xbf16>
func.func @dynamic_tiles(%qb: index, %h: index, %b: index, %init: index) -> index {
  %q = tiledattn.ring releases(8) : !dq
  %n = tiledattn.for_each_tile %qb, %h, %b longest_first dynamic iter_args(%init : index) -> index {
  ^bb0(%x: index, %y: index, %z: index, %done: index, %rank: i32, %count: index):
    "test.put"(%rank) : (i32) -> ()
    tiledattn.yield %count : index
  }
  tiledattn.for_each_tile %qb, %h, %b longest_first dynamic ranks_from %q : !dq {
  ^bb0(%x: index, %y: index, %z: index, %done: index, %slot: !tiledattn.smem<128x128xbf16>, %token: !tiledattn.token):
    "test.use"(%slot) : (!tiledattn.smem<128x128xbf16>) -> ()
    tiledattn.ring.release %q, %token : !dq
    tiledattn.yield
  }
  return %n : index
}

// split_tail: a piece's first block, blocks and holders, and the merge of a
// tile's pieces.
// CHECK-LABEL: func.func @split_tail
// CHECK: %{{.*}} = tiledattn.for_each_tile %{{.*}}, %{{.*}}, %{{.*}} split_tail(%{{.*}}) iter_args(%{{.*}} : index) -> index {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[FIRST:.*]]: index, %[[COUNT:.*]]: index, %[[HOLDERS:.*]]: index, %{{.*}}: index):
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = tiledattn.merge_pieces %{{.*}}, %{{.*}}, %{{.*}} first(%[[FIRST]]) holders(%[[HOLDERS]]) : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
func.func @split_tail(%qb: index, %h: index, %b: index, %blocks: index, %init: index) -> index {
  %n = tiledattn.for_each_tile %qb, %h, %b split_tail(%blocks) iter_args(%init : index) -> index {
  ^bb0(%x: index, %y: index, %z: index, %done: index, %first: index, %count: index, %holders: index, %kv: index):
    %o = "test.acc"() : () -> !tiledattn.tile<64x128xf32>
    %m = "test.rows"() : () -> !tiledattn.tile<64xf32>
    %o2, %m2, %l2 = tiledattn.merge_pieces %o, %m, %m first(%first) holders(%holders) : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
    %next = arith.addi %kv, %count : index
    tiledattn.yield %next : index
  }
  return %n : index
}

// CHECK-LABEL: gpu.func @uniform
// CHECK: tiledattn.warp_specialize producer regs(24) {
// CHECK-NEXT: } consumers(3) regs(160) uniform_index {
module attributes {gpu.container_module} {
  gpu.module @u {
    gpu.func @uniform() kernel attributes {known_block_size = array<i32: 512, 1, 1>} {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(3) regs(160) uniform_index {
      ^bb0(%c: index):
        "test.use"(%c) : (index) -> ()
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @narrow
// CHECK: } consumers(2) regs(240) uniform_index narrow_index {
module attributes {gpu.container_module} {
  gpu.module @n {
    gpu.func @narrow() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) uniform_index narrow_index {
      ^bb0(%c: index):
        "test.use"(%c) : (index) -> ()
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: func.func @uniform_value
// CHECK: %{{.*}} = tiledattn.uniform %{{.*}} : index
func.func @uniform_value(%n: index) -> index {
  %u = tiledattn.uniform %n : index
  return %u : index
}

// CHECK-LABEL: func.func @first_query_block
// CHECK: %{{.*}} = tiledattn.first_query_block %{{.*}} of %{{.*}} rows(64) keys(128)
// CHECK-NEXT: %{{.*}} = tiledattn.first_query_block %{{.*}} of %{{.*}} rows(64) keys(128) causal
func.func @first_query_block(%kt: index, %qb: index) -> (index, index) {
  %a = tiledattn.first_query_block %kt of %qb rows(64) keys(128)
  %b = tiledattn.first_query_block %kt of %qb rows(64) keys(128) causal
  return %a, %b : index, index
}

// CHECK-LABEL: func.func @key_block_end
// CHECK: %{{.*}} = tiledattn.key_block_end %{{.*}} of %{{.*}} rows(128) keys(64)
// CHECK-NEXT: %{{.*}} = tiledattn.key_block_end %{{.*}} of %{{.*}} rows(128) keys(64) causal
func.func @key_block_end(%qt: index, %kb: index) -> (index, index) {
  %a = tiledattn.key_block_end %qt of %kb rows(128) keys(64)
  %b = tiledattn.key_block_end %qt of %kb rows(128) keys(64) causal
  return %a, %b : index, index
}

// CHECK-LABEL: func.func @uniform_condition
// CHECK: %{{.*}} = tiledattn.uniform %{{.*}} : i1
func.func @uniform_condition(%c: i1) -> i1 {
  %u = tiledattn.uniform %c : i1
  return %u : i1
}

// CHECK-LABEL: gpu.func @consumers_meet
// CHECK: tiledattn.consumers_sync
module attributes {gpu.container_module} {
  gpu.module @m2 {
    gpu.func @consumers_meet() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        tiledattn.consumers_sync
      }
      gpu.return
    }
  }
}
