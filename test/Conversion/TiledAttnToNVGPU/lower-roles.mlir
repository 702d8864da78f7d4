// RUN: tiledattn-opt %s -split-input-file -allow-unregistered-dialect --tiledattn-lower-roles --canonicalize --cse | FileCheck %s
// RUN: tiledattn-opt %s -split-input-file -allow-unregistered-dialect --tiledattn-lower-roles=register-budgets=0 | FileCheck %s --check-prefix=NO-BUDGETS

// NO-BUDGETS-NOT: nvvm.setmaxregister
// NO-BUDGETS: nvvm.barrier
// NO-BUDGETS-NOT: nvvm.setmaxregister

// tiledattn-lower-roles on a kernel of a producer and two consumers that
// take turns: the warpgroup split with the register budgets, consumer 0's
// first turn opened by the last consumer, and each turn a sync on the
// consumer's named barrier and an arrive on the next one's.

module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @k(%n: index) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      tiledattn.warp_specialize producer regs(24) {
        "test.produce"() : () -> ()
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        scf.for %j = %c0 to %n step %c1 {
          %v = tiledattn.turn -> index {
            %w = "test.issue"(%c) : (index) -> index
            tiledattn.yield %w : index
          }
          "test.use"(%v) : (index) -> ()
        }
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @k
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[WG:.*]] = arith.divui %[[TID]], %c128
// CHECK-NEXT: %[[PRODUCER:.*]] = arith.cmpi eq, %[[WG]], %c0
// CHECK-NEXT: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister {{ *}}decrease 24
// CHECK-NEXT: "test.produce"()
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[C:.*]] = arith.subi %[[WG]], %c1
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 240
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[C]], %c1
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// Barrier 1 + c is warpgroup c + 1 (folded): sync, issue, then arrive on
// the next consumer's, 1 + (c + 1) mod 2.
// CHECK-NEXT: %[[MINE:.*]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: nvvm.barrier id = %[[MINE]] number_of_threads = %c256_i32
// CHECK-NEXT: %[[W:.*]] = "test.issue"(%[[C]])
// CHECK-NEXT: %[[NEXTC:.*]] = arith.remui %[[WG]], %c2
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[NEXTC]], %c1
// CHECK-NEXT: %[[NEXT32:.*]] = arith.index_castui %[[NEXT]] : index to i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT32]] number_of_threads = %c256_i32
// CHECK-NEXT: "test.use"(%[[W]])
// CHECK-NOT: tiledattn.

// -----

// A producer with nothing to do, consumers without turns: no opening arrive.
// CHECK-LABEL: gpu.func @quiet
// CHECK: scf.if
// CHECK-NEXT: nvvm.setmaxregister {{ *}}decrease 32
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.subi
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 160
// CHECK-NEXT: "test.consume"
// CHECK-NEXT: }
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @quiet() kernel {
      tiledattn.warp_specialize producer regs(32) {
      } consumers(3) regs(160) {
      ^bb0(%c: index):
        "test.consume"(%c) : (index) -> ()
      }
      gpu.return
    }
  }
}

// -----

// uniform_index: the consumer index goes through redux.sync (a warp's
// minimum: the same value, known uniform to ptxas).
// CHECK-LABEL: gpu.func @uniform
// CHECK: } else {
// CHECK-NEXT: %[[C:.*]] = arith.subi %{{.*}}, %c1
// CHECK-NEXT: %[[C32:.*]] = arith.index_castui %[[C]] : index to i32
// CHECK-NEXT: %[[SAME:.*]] = nvvm.redux.sync umin %[[C32]], %c-1_i32 : i32 -> i32
// CHECK-NEXT: %[[UNIFORM:.*]] = arith.index_castui %[[SAME]] : i32 to index
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 160
// CHECK-NEXT: "test.consume"(%[[UNIFORM]])
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @uniform() kernel {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(3) regs(160) uniform_index {
      ^bb0(%c: index):
        "test.consume"(%c) : (index) -> ()
      }
      gpu.return
    }
  }
}

// -----

// tiledattn.uniform: the value through redux.sync, like the consumer index;
// an empty turn is the turn's barriers alone.
// CHECK-LABEL: gpu.func @uniform_value
// CHECK: %[[N:.*]] = arith.addi %{{.*}}, %c64
// CHECK-NEXT: %[[N32:.*]] = arith.index_castui %[[N]] : index to i32
// CHECK-NEXT: %[[SAME:.*]] = nvvm.redux.sync umin %[[N32]], %c-1_i32 : i32 -> i32
// CHECK-NEXT: %[[BOUND:.*]] = arith.index_castui %[[SAME]] : i32 to index
// CHECK-NEXT: scf.for %{{.*}} = %[[BOUND]] to
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.barrier.arrive
// CHECK-NOT: tiledattn.uniform
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @uniform_value(%n: index) kernel {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %c1 = arith.constant 1 : index
        %c64 = arith.constant 64 : index
        %rows = arith.muli %c, %c64 : index
        %end = arith.addi %rows, %c64 : index
        %mine = tiledattn.uniform %end : index
        scf.for %j = %mine to %n step %c1 {
          tiledattn.turn {
          }
        }
      }
      gpu.return
    }
  }
}

// -----

// tiledattn.uniform of a condition: through vote.sync (any lane, all the same).
// CHECK-LABEL: gpu.func @uniform_condition
// CHECK: %[[ABOVE:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[SAME:.*]] = nvvm.vote.sync any %c-1_i32, %[[ABOVE]] -> i1
// CHECK-NEXT: scf.if %[[SAME]] {
// CHECK-NOT: tiledattn.uniform
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @uniform_condition(%n: index) kernel {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        %c64 = arith.constant 64 : index
        %rows = arith.muli %c, %c64 : index
        %above = arith.cmpi uge, %n, %rows : index
        %same = tiledattn.uniform %above : i1
        scf.if %same {
          "test.narrow"() : () -> ()
        }
      }
      gpu.return
    }
  }
}

// -----

// tiledattn.consumers_sync: one named barrier (id 8, after the turns' and
// the warpgroups' own) for the 256 threads of the two consumers.
// CHECK-LABEL: gpu.func @consumers_sync
// CHECK: "test.stage"()
// CHECK-NEXT: nvvm.barrier id = %c8_i32 number_of_threads = %c256_i32
// CHECK-NEXT: "test.read_all"()
// CHECK-NOT: tiledattn.consumers_sync
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @consumers_sync() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) {
      ^bb0(%c: index):
        "test.stage"() : () -> ()
        tiledattn.consumers_sync
        "test.read_all"() : () -> ()
      }
      gpu.return
    }
  }
}

// -----

// narrow_index: the consumer index in 32 bits, zero-extended (one register,
// whose high word LLVM knows to be zero; as an index it took two, and on the
// D = 128 long program ptxas spilled one).
// CHECK-LABEL: gpu.func @narrow
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128
// CHECK: } else {
// CHECK-NEXT: %[[WG32:.*]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[C32:.*]] = arith.subi %[[WG32]], %c1_i32 : i32
// CHECK-NEXT: %[[C:.*]] = arith.index_castui %[[C32]] : i32 to index
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 240
// CHECK-NEXT: "test.consume"(%[[C]])
module attributes {gpu.container_module} {
  gpu.module @roles {
    gpu.func @narrow() kernel {
      tiledattn.warp_specialize producer regs(24) {
      } consumers(2) regs(240) narrow_index {
      ^bb0(%c: index):
        "test.consume"(%c) : (index) -> ()
      }
      gpu.return
    }
  }
}

// -----

// tiledattn.first_query_block: causal, the block of the tile's first key
// (key tile * keys / rows), at most the query blocks; without a mask, 0.
// CHECK-LABEL: func.func @first_query_block
// CHECK-SAME: (%[[KT:.*]]: index, %[[QB:.*]]: index)
// CHECK: %[[KEY:.*]] = arith.muli %[[KT]], %c128 : index
// CHECK: %[[BLOCK:.*]] = arith.divui %[[KEY]], %c64 : index
// CHECK: %[[FIRST:.*]] = arith.minui %[[BLOCK]], %[[QB]] : index
// CHECK: return %c0, %[[FIRST]]
// CHECK-NOT: tiledattn.first_query_block
func.func @first_query_block(%kt: index, %qb: index) -> (index, index) {
  %none = tiledattn.first_query_block %kt of %qb rows(64) keys(128)
  %causal = tiledattn.first_query_block %kt of %qb rows(64) keys(128) causal
  return %none, %causal : index, index
}

// -----

// tiledattn.key_block_end: causal, one past the block of the tile's last
// query's key (ceil((query tile + 1) * rows / keys)), at most the key
// blocks; without a mask, the key blocks.
// CHECK-LABEL: func.func @key_block_end
// CHECK-SAME: (%[[QT:.*]]: index, %[[KB:.*]]: index)
// CHECK: %[[NEXT:.*]] = arith.addi %[[QT]], %c1 : index
// CHECK: %[[QUERIES:.*]] = arith.muli %[[NEXT]], %c128 : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[QUERIES]], %c64 : index
// CHECK: %[[END:.*]] = arith.minui %[[BLOCKS]], %[[KB]] : index
// CHECK: return %[[KB]], %[[END]]
// CHECK-NOT: tiledattn.key_block_end
func.func @key_block_end(%qt: index, %kb: index) -> (index, index) {
  %none = tiledattn.key_block_end %qt of %kb rows(128) keys(64)
  %causal = tiledattn.key_block_end %qt of %kb rows(128) keys(64) causal
  return %none, %causal : index, index
}
