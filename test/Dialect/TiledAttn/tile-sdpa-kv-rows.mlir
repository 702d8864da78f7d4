// RUN: tiledattn-opt %s | tiledattn-opt | FileCheck %s --check-prefix=ROUND
// RUN: tiledattn-opt %s -tiledattn-tile-sdpa | FileCheck %s

// kv_rows: a paged KV cache (pages of 256 keys, a table of pages per
// sequence). The producer's K and V copies of a block load from the row
// the body yields for the block's first key (from the block_map); the
// consumers' masks and mods still see the key itself, and no consumer reads
// the table.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// ROUND-LABEL: func.func @paged
// ROUND: block_map(%{{.*}} : memref<?x?x?x?xi32>) mask_mod {
// ROUND: } kv_rows {
// ROUND: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// ROUND: memref.load %{{.*}} : memref<?x?xi32>
// ROUND: tiledattn.yield %{{.*}} : index

// CHECK-LABEL: func.func @paged
// CHECK-SAME: %[[LENGTHS:[^:]*]]: memref<?xi32>, %[[TABLE:[^:]*]]: memref<?x?xi32>, %[[MAP:[^:]*]]: memref<?x?x?x?xi32>)
// CHECK: tiledattn.warp_specialize producer
// CHECK:   tiledattn.for_each_tile
// CHECK:   ^bb0(%{{[^:]*}}: index, %{{[^:]*}}: index, %[[PZ:[^:]*]]: index,
// CHECK:     scf.for %[[J:.*]] = %c0{{.*}} to
// CHECK:       %[[E:.*]] = arith.addi %[[J]], %c2
// CHECK:       %[[BLK32:.*]] = memref.load %[[MAP]][%{{.*}}, %{{.*}}, %{{.*}}, %[[E]]]
// CHECK:       %[[BLK:.*]] = arith.index_castui %[[BLK32]]
// CHECK:       %[[KEY:.*]] = arith.muli %[[BLK]], %c128
// CHECK:       %[[N:.*]] = arith.divui %[[KEY]], %[[P:.*]] : index
// CHECK:       %[[AT:.*]] = arith.remui %[[KEY]], %[[P]] : index
// CHECK:       %[[PAGE32:.*]] = memref.load %[[TABLE]][%[[PZ]], %[[N]]] : memref<?x?xi32>
// CHECK:       %[[PAGE:.*]] = arith.index_cast %[[PAGE32]] : i32 to index
// CHECK:       %[[ROW0:.*]] = arith.muli %[[PAGE]], %[[P]] : index
// CHECK:       %[[ROW:.*]] = arith.addi %[[ROW0]], %[[AT]] : index
// CHECK:       tiledattn.tma_load %{{.*}}[%[[PZ]], %{{.*}}, %[[ROW]]]
// CHECK:       tiledattn.tma_load %{{.*}}[%[[PZ]], %{{.*}}, %[[ROW]]]
// CHECK: } consumers(2)
// CHECK-NOT: %[[TABLE]]
// CHECK:   tiledattn.score_mod
// CHECK:     memref.load %[[LENGTHS]]
// CHECK-NOT: %[[TABLE]]
// CHECK: return
func.func @paged(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32,
                 %lengths: memref<?xi32>, %table: memref<?x?xi32>,
                 %map: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      block_map(%map : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %n32 = memref.load %lengths[%b] : memref<?xi32>
    %n = arith.index_cast %n32 : i32 to index
    %keep = arith.cmpi ult, %ki, %n : index
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %s, %ninf : f32
    tiledattn.yield %y : f32
  } kv_rows {
  ^bb0(%b: index, %hkv: index, %key: index):
    %page_keys = arith.constant 256 : index
    %n = arith.divui %key, %page_keys : index
    %at = arith.remui %key, %page_keys : index
    %page = memref.load %table[%b, %n] : memref<?x?xi32>
    %first = arith.index_cast %page : i32 to index
    %row0 = arith.muli %first, %page_keys : index
    %row = arith.addi %row0, %at : index
    tiledattn.yield %row : index
  } : !head, !head, !head, !head, !lse
  return
}

// kv_span(16): pages of 16 keys, eight to a block of 128. The body runs for
// each run's first key (the block's first key + 16 r), and each of K and V
// is one tma_load of the eight rows it yields.
// ROUND-LABEL: func.func @paged16
// ROUND: } kv_span(16) kv_rows {

// CHECK-LABEL: func.func @paged16
// CHECK-SAME: %[[TABLE:[^:]*]]: memref<?x?xi32>, %[[MAP:[^:]*]]: memref<?x?x?x?xi32>)
// CHECK: tiledattn.warp_specialize producer
// CHECK:     scf.for %[[J:.*]] = %c0{{.*}} to
// CHECK:       %[[KEY:.*]] = arith.muli %{{.*}}, %c128
// CHECK:       %[[N0:.*]] = arith.divui %[[KEY]], %[[P:.*]] : index
// CHECK:       memref.load %[[TABLE]][%{{.*}}, %[[N0]]]
// CHECK:       %[[R0:.*]] = arith.addi
// CHECK:       %[[K1:.*]] = arith.addi %[[KEY]], %c16
// CHECK:       arith.divui %[[K1]]
// CHECK:       %[[R1:.*]] = arith.addi
// CHECK:       %[[K2:.*]] = arith.addi %[[KEY]], %c32
// CHECK:       %[[R2:.*]] = arith.addi
// CHECK:       %[[K3:.*]] = arith.addi %[[KEY]], %c48
// CHECK:       %[[R3:.*]] = arith.addi
// CHECK:       %[[K4:.*]] = arith.addi %[[KEY]], %c64
// CHECK:       %[[R4:.*]] = arith.addi
// CHECK:       %[[K5:.*]] = arith.addi %[[KEY]], %c80
// CHECK:       %[[R5:.*]] = arith.addi
// CHECK:       %[[K6:.*]] = arith.addi %[[KEY]], %c96
// CHECK:       %[[R6:.*]] = arith.addi
// CHECK:       %[[K7:.*]] = arith.addi %[[KEY]], %c112
// CHECK:       %[[R7:.*]] = arith.addi
// CHECK:       tiledattn.tma_load %{{.*}}[%{{.*}}, %{{.*}}, %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]]] into
// CHECK:       tiledattn.tma_load %{{.*}}[%{{.*}}, %{{.*}}, %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]]] into
// CHECK: } consumers(2)
func.func @paged16(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32,
                 %lengths: memref<?xi32>, %table: memref<?x?xi32>,
                 %map: memref<?x?x?x?xi32>) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true, overlap_softmax = true>)
      block_map(%map : memref<?x?x?x?xi32>)
      mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
    %n32 = memref.load %lengths[%b] : memref<?xi32>
    %n = arith.index_cast %n32 : i32 to index
    %keep = arith.cmpi ult, %ki, %n : index
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %s, %ninf : f32
    tiledattn.yield %y : f32
  } kv_span(16) kv_rows {
  ^bb0(%b: index, %hkv: index, %key: index):
    %page_keys = arith.constant 16 : index
    %n = arith.divui %key, %page_keys : index
    %at = arith.remui %key, %page_keys : index
    %page = memref.load %table[%b, %n] : memref<?x?xi32>
    %first = arith.index_cast %page : i32 to index
    %row0 = arith.muli %first, %page_keys : index
    %row = arith.addi %row0, %at : index
    tiledattn.yield %row : index
  } : !head, !head, !head, !head, !lse
  return
}
