// RUN: tiledattn-opt %s | tiledattn-opt | FileCheck %s

// tiledattn.score_mod round-trips: its body sees the score, its query and
// key rows and values from outside (here ALiBi's slope read from a tensor
// by head).

// CHECK-LABEL: func.func @alibi
// CHECK: %[[R:.*]] = tiledattn.score_mod %{{.*}}[%{{.*}}, %{{.*}}] : !tiledattn.tile<64x128xf32> {
// CHECK: ^bb0(%[[X:.*]]: f32, %[[QI:.*]]: index, %[[KI:.*]]: index):
// CHECK:   %[[SLOPE:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:   %[[D:.*]] = arith.subi %[[KI]], %[[QI]] : index
// CHECK:   tiledattn.yield %{{.*}} : f32
// CHECK: }
// CHECK: return %[[R]]
func.func @alibi(%s: !tiledattn.tile<64x128xf32>, %row: index, %col: index,
                 %slopes: memref<?xf32>, %head: index) -> !tiledattn.tile<64x128xf32> {
  %r = tiledattn.score_mod %s[%row, %col] : !tiledattn.tile<64x128xf32> {
  ^bb0(%x: f32, %q: index, %k: index):
    %slope = memref.load %slopes[%head] : memref<?xf32>
    %d = arith.subi %k, %q : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %y = arith.addf %x, %bias : f32
    tiledattn.yield %y : f32
  }
  return %r : !tiledattn.tile<64x128xf32>
}

// tiledattn.sdpa's score_mod region round-trips after the schedule.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK-LABEL: func.func @sdpa_softcap
// CHECK: tiledattn.sdpa {{.*}} schedule(<{{.*}}>) score_mod {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK:   math.tanh
// CHECK:   tiledattn.yield %{{.*}} : f32
// CHECK: } : memref
func.func @sdpa_softcap(%q: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 30.0 : f32
    %t = arith.divf %s, %cap : f32
    %th = math.tanh %t : f32
    %y = arith.mulf %th, %cap : f32
    tiledattn.yield %y : f32
  } : !head, !head, !head, !head, !lse
  return
}
