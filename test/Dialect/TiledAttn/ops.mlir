// RUN: tiledattn-opt %s | FileCheck %s
// RUN: tiledattn-opt %s -mlir-print-op-generic | tiledattn-opt | FileCheck %s

// Round-trip of every tiledattn op, the tile type and the schedule attribute.

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!bhead = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func private @tile_types
// CHECK-SAME: !tiledattn.tile<64x128xf16>
// CHECK-SAME: !tiledattn.tile<64x128xbf16>
// CHECK-SAME: !tiledattn.tile<64xf32>
// CHECK-SAME: !tiledattn.tile<16x8xf32>
func.func private @tile_types(!tiledattn.tile<64x128xf16>, !tiledattn.tile<64x128xbf16>,
                              !tiledattn.tile<64xf32>, !tiledattn.tile<16x8xf32>)

// CHECK-LABEL: func.func private @schedule_attrs
// CHECK-SAME: sched.a = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>
// The Hopper fields print only when not at their defaults.
// CHECK-SAME: sched.b = #tiledattn.schedule<block_m = 128, block_n = 32, num_stages = 3, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, consumer_regs = 232, pingpong = true, overlap_softmax = true>
// CHECK-SAME: sched.c = #tiledattn.schedule<block_m = 64, block_n = 16, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 64>
// split_kv_loop prints only when it is not the default (true).
// CHECK-SAME: sched.d = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 3, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, split_kv_loop = false>
// CHECK-SAME: sched.e = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 3, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128>
// Three consumers and a persistent block.
// CHECK-SAME: sched.f = #tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2, warps = 16, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 3, producer_regs = 32, consumer_regs = 160, pingpong = true, persistent = true>}
func.func private @schedule_attrs() attributes {
  sched.a = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4,
                                mma = mma_sync, producer = direct, swizzle = 0>,
  sched.b = #tiledattn.schedule<block_m = 128, block_n = 32, num_stages = 3, warps = 12,
                                mma = wgmma, producer = tma, swizzle = 128,
                                consumer_warpgroups = 2, producer_regs = 24,
                                consumer_regs = 232, pingpong = true,
                                overlap_softmax = true>,
  sched.c = #tiledattn.schedule<block_m = 64, block_n = 16, num_stages = 2, warps = 4,
                                mma = mma_sync, producer = cp_async, swizzle = 64>,
  sched.d = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 3, warps = 4,
                                mma = mma_sync, producer = cp_async, swizzle = 128,
                                split_kv_loop = false>,
  sched.e = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 3, warps = 4,
                                mma = mma_sync, producer = cp_async, swizzle = 128,
                                split_kv_loop = true>,
  sched.f = #tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2, warps = 16,
                                mma = wgmma, producer = tma, swizzle = 128,
                                consumer_warpgroups = 3, producer_regs = 32,
                                consumer_regs = 160, pingpong = true, persistent = true>}

// CHECK-LABEL: func @sdpa_causal
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[K:[^:]*]]: {{[^%]*}}%[[V:[^:]*]]: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]: {{[^%]*}}%[[SCALE:[^:]*]]: f32)
// CHECK: tiledattn.sdpa %[[Q]], %[[K]], %[[V]], %[[SCALE]] into %[[O]], %[[LSE]] causal
// CHECK-SAME: schedule(<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
// CHECK-SAME: : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @sdpa_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK-LABEL: func @sdpa_bf16_staged
// CHECK: tiledattn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} schedule(<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
// CHECK-NOT: causal
// CHECK-SAME: memref<?x?x?x128xbf16
func.func @sdpa_bf16_staged(%q: !bhead, %k: !bhead, %v: !bhead, %o: !bhead, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma, swizzle = 128,
                                   consumer_warpgroups = 2>)
      : !bhead, !bhead, !bhead, !bhead, !lse
  return
}

// CHECK-LABEL: func @tile_program
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^%]*}}%[[K:[^:]*]]: {{[^%]*}}%[[O:[^:]*]]: {{[^%]*}}%[[LSE:[^:]*]]: {{[^%]*}}%[[SCALE:[^:]*]]: f32, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[R:[^:]*]]: index, %[[SK:[^:]*]]: index)
func.func @tile_program(%q: !head, %k: !head, %o: !head, %lse: !lse, %scale: f32,
                        %b: index, %h: index, %r: index, %sk: index) {
  // CHECK: %[[ACC:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x64xf32>
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf32>
  // CHECK: %[[M:.*]] = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
  %m = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
  // CHECK: %[[L:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64xf32>
  %l = tiledattn.constant 0.0 : !tiledattn.tile<64xf32>
  // CHECK: %[[QT:.*]] = tiledattn.load %[[Q]][%[[B]], %[[H]], %[[R]]] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !tiledattn.tile<64x64xf16>
  %qt = tiledattn.load %q[%b, %h, %r] : !head -> !tiledattn.tile<64x64xf16>
  // CHECK: %[[KT:.*]] = tiledattn.load %[[K]][%[[B]], %[[H]], %[[R]]] : {{.*}} -> !tiledattn.tile<32x64xf16>
  %kt = tiledattn.load %k[%b, %h, %r] : !head -> !tiledattn.tile<32x64xf16>
  // CHECK: %[[Z:.*]] = tiledattn.constant 0.000000e+00 : !tiledattn.tile<64x32xf32>
  %z = tiledattn.constant 0.0 : !tiledattn.tile<64x32xf32>
  // CHECK: %[[S:.*]] = tiledattn.mma %[[QT]], %[[KT]] transposed, %[[Z]] : !tiledattn.tile<64x64xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x32xf32>
  %s = tiledattn.mma %qt, %kt transposed, %z
      : !tiledattn.tile<64x64xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x32xf32>
  // CHECK: %[[SM:.*]] = tiledattn.mask %[[S]], %[[R]], %[[R]], %[[SK]] causal : !tiledattn.tile<64x32xf32>
  %sm = tiledattn.mask %s, %r, %r, %sk causal : !tiledattn.tile<64x32xf32>
  // CHECK: %[[SN:.*]] = tiledattn.mask %[[SM]], %[[R]], %[[R]], %[[SK]] : !tiledattn.tile<64x32xf32>
  %sn = tiledattn.mask %sm, %r, %r, %sk : !tiledattn.tile<64x32xf32>
  // CHECK: %[[SC:.*]] = tiledattn.mask %[[SN]], %[[R]], %[[R]] causal : !tiledattn.tile<64x32xf32>
  %sc = tiledattn.mask %sn, %r, %r causal : !tiledattn.tile<64x32xf32>
  // CHECK: %[[P:.*]], %[[M1:.*]], %[[L1:.*]], %[[ALPHA:.*]] = tiledattn.online_softmax %[[SN]], %[[M]], %[[L]], %[[SCALE]] : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  %p, %m1, %l1, %alpha = tiledattn.online_softmax %sn, %m, %l, %scale
      : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  // CHECK: tiledattn.online_softmax %[[SN]], %[[M]], %[[L]], %[[SCALE]] finite : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  %pf:4 = tiledattn.online_softmax %sn, %m, %l, %scale finite
      : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  // CHECK: tiledattn.online_softmax %[[SN]], %[[M]], %[[L]], %[[SCALE]] finite exp2_on_fma(16) : !tiledattn.tile<64x32xf32>
  %pe:4 = tiledattn.online_softmax %sn, %m, %l, %scale finite exp2_on_fma(16)
      : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  // CHECK: %{{.*}}, %[[MR:.*]], %{{.*}}, %{{.*}} = tiledattn.online_softmax %[[SN]], %[[M]], %[[L]], %[[SCALE]] finite raw_max : !tiledattn.tile<64x32xf32>
  %pr:4 = tiledattn.online_softmax %sn, %m, %l, %scale finite raw_max
      : !tiledattn.tile<64x32xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xf16>
  // CHECK: tiledattn.scale_max %[[MR]], %[[SCALE]] : !tiledattn.tile<64xf32>
  %mx = tiledattn.scale_max %pr#1, %scale : !tiledattn.tile<64xf32>
  // CHECK: %[[ACC1:.*]] = tiledattn.rescale %[[ACC]], %[[ALPHA]] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  %acc1 = tiledattn.rescale %acc, %alpha : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  // CHECK: %[[VT:.*]] = tiledattn.load %[[K]][%[[B]], %[[H]], %[[R]]] : {{.*}} -> !tiledattn.tile<32x64xf16>
  %vt = tiledattn.load %k[%b, %h, %r] : !head -> !tiledattn.tile<32x64xf16>
  // CHECK: %[[ACC2:.*]] = tiledattn.mma %[[P]], %[[VT]], %[[ACC1]] : !tiledattn.tile<64x32xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x64xf32>
  %acc2 = tiledattn.mma %p, %vt, %acc1
      : !tiledattn.tile<64x32xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x64xf32>
  // CHECK: tiledattn.store %[[ACC2]], %[[M1]], %[[L1]] into %[[O]][%[[B]], %[[H]], %[[R]]] lse(%[[LSE]]) : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  tiledattn.store %acc2, %m1, %l1 into %o[%b, %h, %r] lse(%lse)
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !head, !lse
  // CHECK: tiledattn.store %[[ACC2]], %[[M1]], %[[L1]] into %[[O]][%[[B]], %[[H]], %[[R]]] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>{{$}}
  tiledattn.store %acc2, %m1, %l1 into %o[%b, %h, %r]
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !head
  return
}

// CHECK-LABEL: func @bf16_program
func.func @bf16_program(%q: !bhead, %b: index, %h: index, %r: index, %scale: f32) {
  // CHECK: tiledattn.load %{{.*}} -> !tiledattn.tile<64x128xbf16>
  %qt = tiledattn.load %q[%b, %h, %r] : !bhead -> !tiledattn.tile<64x128xbf16>
  %z = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf32>
  // CHECK: tiledattn.mma {{.*}} transposed, {{.*}} : !tiledattn.tile<64x128xbf16>, !tiledattn.tile<64x128xbf16>, !tiledattn.tile<64x64xf32>
  %s = tiledattn.mma %qt, %qt transposed, %z
      : !tiledattn.tile<64x128xbf16>, !tiledattn.tile<64x128xbf16>, !tiledattn.tile<64x64xf32>
  %m = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
  // CHECK: tiledattn.online_softmax {{.*}} -> !tiledattn.tile<64x64xbf16>
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xbf16>
  return
}

// The key/value lengths a schedule's kernel is meant for.
// CHECK-LABEL: func.func private @seqlen_k_range()
// CHECK-SAME: tiledattn.max_seqlen_k = 8192 : i64, tiledattn.min_seqlen_k = 2048 : i64
func.func private @seqlen_k_range() attributes {tiledattn.min_seqlen_k = 2048 : i64, tiledattn.max_seqlen_k = 8192 : i64}

// CHECK-LABEL: func.func @resize
// CHECK: %[[WIDE:.*]] = tiledattn.resize %{{.*}} : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xbf16>
// CHECK: tiledattn.resize %[[WIDE]] : !tiledattn.tile<64x128xbf16> to !tiledattn.tile<64x64xbf16>
func.func @resize(%p: !tiledattn.tile<64x64xbf16>) -> !tiledattn.tile<64x64xbf16> {
  %wide = tiledattn.resize %p : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xbf16>
  %narrow = tiledattn.resize %wide : !tiledattn.tile<64x128xbf16> to !tiledattn.tile<64x64xbf16>
  return %narrow : !tiledattn.tile<64x64xbf16>
}

// CHECK-LABEL: func.func @truncate
// CHECK: %[[P:.*]], %{{.*}}, %{{.*}}, %{{.*}} = tiledattn.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf32>
// CHECK: tiledattn.truncate %[[P]] : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
func.func @truncate(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %scale: f32) -> !tiledattn.tile<64x64xbf16> {
  %p, %m1, %l1, %alpha = tiledattn.online_softmax %s, %m, %m, %scale
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf32>
  %p16 = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
  return %p16 : !tiledattn.tile<64x64xbf16>
}

// The backward's preprocess: D = rowsum(dO * O), a row's value each, stored
// per query row.
// CHECK-LABEL: func.func @row_dot_and_store_rows
// CHECK: %[[D:.*]] = tiledattn.row_dot %{{.*}}, %{{.*}} : !tiledattn.tile<64x128xbf16> -> !tiledattn.tile<64xf32>
// CHECK: tiledattn.store_rows %[[D]] into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @row_dot_and_store_rows(%do: !tiledattn.tile<64x128xbf16>, %o: !tiledattn.tile<64x128xbf16>,
                                  %delta: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                                  %b: index, %h: index, %row: index) {
  %d = tiledattn.row_dot %do, %o : !tiledattn.tile<64x128xbf16> -> !tiledattn.tile<64xf32>
  tiledattn.store_rows %d into %delta[%b, %h, %row]
      : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}

// The backward's main loop, transposed (a key per row, a query per column):
// P^T from the saved lse, then dS^T from dP^T and D, both read per column.
// CHECK-LABEL: func.func @exp_from_lse_and_softmax_grad
// CHECK: %[[P:.*]] = tiledattn.exp_from_lse %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: tiledattn.softmax_grad %[[P]], %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @exp_from_lse_and_softmax_grad(%st: !tiledattn.tile<64x64xf32>, %dpt: !tiledattn.tile<64x64xf32>,
                                         %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                                         %delta: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                                         %b: index, %h: index, %col: index, %scale: f32) {
  %p = tiledattn.exp_from_lse %st, %lse[%b, %h, %col], %scale
      : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  %ds = tiledattn.softmax_grad %p, %dpt, %delta[%b, %h, %col]
      : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}

// load_rows reads the rows early; per_row then takes them as a tile.
// CHECK-LABEL: func.func @load_rows
// CHECK: %[[L:.*]] = tiledattn.load_rows %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] outside(0xFF800000) : memref<?x?x?xf32> -> !tiledattn.tile<64xf32>
// CHECK: %[[D:.*]] = tiledattn.load_rows %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] outside(0.000000e+00) : memref<?x?x?xf32> -> !tiledattn.tile<64xf32>
// CHECK: %[[P:.*]] = tiledattn.exp_from_lse %{{.*}}, %[[L]] per_row, %{{.*}} : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
// CHECK: tiledattn.softmax_grad %[[P]], %{{.*}}, %[[D]] per_row : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
func.func @load_rows(%s: !tiledattn.tile<64x64xf32>, %dp: !tiledattn.tile<64x64xf32>,
                     %lse: memref<?x?x?xf32>, %delta: memref<?x?x?xf32>,
                     %b: index, %h: index, %row: index, %scale: f32) {
  %l = tiledattn.load_rows %lse[%b, %h, %row] outside(0xFF800000)
      : memref<?x?x?xf32> -> !tiledattn.tile<64xf32>
  %d = tiledattn.load_rows %delta[%b, %h, %row] outside(0.0)
      : memref<?x?x?xf32> -> !tiledattn.tile<64xf32>
  %p = tiledattn.exp_from_lse %s, %l per_row, %scale
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  %ds = tiledattn.softmax_grad %p, %dp, %d per_row
      : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  return
}

// per_row: the same on S and dP as they are (a query per row).
// CHECK-LABEL: func.func @per_row
// CHECK: %[[P:.*]] = tiledattn.exp_from_lse %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] per_row, %{{.*}} : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
// CHECK: tiledattn.softmax_grad %[[P]], %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] per_row : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
func.func @per_row(%s: !tiledattn.tile<64x64xf32>, %dp: !tiledattn.tile<64x64xf32>,
                   %lse: memref<?x?x?xf32>, %delta: memref<?x?x?xf32>,
                   %b: index, %h: index, %row: index, %scale: f32) {
  %p = tiledattn.exp_from_lse %s, %lse[%b, %h, %row] per_row, %scale
      : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
  %ds = tiledattn.softmax_grad %p, %dp, %delta[%b, %h, %row] per_row
      : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
  return
}

// The softmax's scale taken into dS; dK written once as bf16.
// CHECK-LABEL: func.func @scaled_grad_and_store_tile
// CHECK: %[[DS:.*]] = tiledattn.softmax_grad %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] per_row scale(%{{.*}}) : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
// CHECK: tiledattn.store_tile %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xbf16>
func.func @scaled_grad_and_store_tile(%p: !tiledattn.tile<64x64xf32>, %dp: !tiledattn.tile<64x64xf32>,
                                      %delta: memref<?x?x?xf32>, %dk: !tiledattn.tile<64x128xf32>,
                                      %grad_k: memref<?x?x?x?xbf16>, %i: index, %scale: f32) {
  %ds = tiledattn.softmax_grad %p, %dp, %delta[%i, %i, %i] per_row scale(%scale)
      : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
  tiledattn.store_tile %dk into %grad_k[%i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xbf16>
  return
}


// CHECK-LABEL: func.func @bulk_reduce_add
// CHECK: tiledattn.bulk_reduce_add %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] via %{{.*}} : !tiledattn.tile<64x128xf32>, memref<?x?x?x8192xf32>, !tiledattn.smem<128x128xbf16>
func.func @bulk_reduce_add(%dq: !tiledattn.tile<64x128xf32>, %frags: memref<?x?x?x8192xf32>,
                           %buf: !tiledattn.smem<128x128xbf16>, %b: index, %h: index, %i: index) {
  tiledattn.bulk_reduce_add %dq into %frags[%b, %h, %i] via %buf
      : !tiledattn.tile<64x128xf32>, memref<?x?x?x8192xf32>, !tiledattn.smem<128x128xbf16>
  return
}

// dQ's partial sums, added atomically into an f32 accumulator.
// CHECK-LABEL: func.func @reduce_add
// CHECK: tiledattn.reduce_add %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @reduce_add(%dq: !tiledattn.tile<64x128xf32>,
                      %accum: memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>,
                      %b: index, %h: index, %row: index) {
  tiledattn.reduce_add %dq into %accum[%b, %h, %row]
      : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// dS^T staged into shared memory for dQ's mma.
// CHECK-LABEL: func.func @stage
// CHECK: tiledattn.stage %{{.*}} into %{{.*}}[%{{.*}}] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<64x64xbf16>
func.func @stage(%ds: !tiledattn.tile<64x64xf32>, %buf: !tiledattn.smem<64x64xbf16>, %row: index) {
  tiledattn.stage %ds into %buf[%row] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<64x64xbf16>
  return
}

// A consumer's columns of a staged tile, and a view of a slot's columns.
// CHECK-LABEL: func.func @stage_at_a_column
// CHECK: tiledattn.stage %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
// CHECK: tiledattn.columns %{{.*}}[%{{.*}}] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
func.func @stage_at_a_column(%p: !tiledattn.tile<64x32xf32>, %buf: !tiledattn.smem<64x64xbf16>, %slot: !tiledattn.smem<64x256xbf16>, %row: index, %col: index) -> !tiledattn.smem<64x128xbf16> {
  tiledattn.stage %p into %buf[%row, %col] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
  %half = tiledattn.columns %slot[%col] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
  return %half : !tiledattn.smem<64x128xbf16>
}

// CHECK-LABEL: func.func @store_tile_at_a_column
// CHECK: tiledattn.store_tile %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xbf16>
func.func @store_tile_at_a_column(%dk: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x?xbf16>, %i: index) {
  tiledattn.store_tile %dk into %g[%i, %i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xbf16>
  return
}
