// RUN: tiledattn-opt %s | tiledattn-opt | FileCheck %s
// RUN: tiledattn-opt %s -mlir-print-op-generic | tiledattn-opt | FileCheck %s

// The asynchronous mma ops and !tiledattn.future print and parse back, in
// the custom and the generic form.

!slot = !tiledattn.smem<128x128xbf16>

// S = Q K^T from two slots, O += P V with P in registers; the second mma
// starts before the first is waited for.
// CHECK-LABEL: func.func @qk_then_pv
// CHECK-SAME: (%[[Q:.*]]: !tiledattn.smem<128x128xbf16>, %[[K:.*]]: !tiledattn.smem<128x128xbf16>, %[[V:.*]]: !tiledattn.smem<128x128xbf16>, %[[P:.*]]: !tiledattn.tile<64x128xbf16>, %[[ACC:.*]]: !tiledattn.tile<64x128xf32>, %[[ROW:.*]]: index)
func.func @qk_then_pv(%q: !slot, %k: !slot, %v: !slot, %p: !tiledattn.tile<64x128xbf16>,
                      %acc: !tiledattn.tile<64x128xf32>, %row: index)
    -> (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>) {
  // CHECK: %[[SF:.*]] = tiledattn.mma_async %[[Q]][%[[ROW]]], %[[K]] transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %sf = tiledattn.mma_async %q[%row], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  // CHECK: tiledattn.mma_async %[[Q]][%[[ROW]]] uniform_a, %[[K]] transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %uf = tiledattn.mma_async %q[%row] uniform_a, %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  // CHECK: %[[OF:.*]] = tiledattn.mma_async %[[P]], %[[V]] acc(%[[ACC]]) : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %of = tiledattn.mma_async %p, %v acc(%acc) : !tiledattn.tile<64x128xbf16>, !slot -> !tiledattn.future<64x128xf32>
  // CHECK: %[[S:.*]] = tiledattn.wait %[[SF]] : !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %sf : !tiledattn.future<64x128xf32>
  %u = tiledattn.wait %uf : !tiledattn.future<64x128xf32>
  // q_in_registers: the consumer's rows of Q read once, then A from registers.
  // CHECK: %[[QA:.*]] = tiledattn.read_rows %[[Q]][%[[ROW]]] : !tiledattn.smem<128x128xbf16> -> !tiledattn.tile<64x128xbf16>
  // CHECK: tiledattn.mma_async %[[QA]], %[[K]] transpose_b : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %qa = tiledattn.read_rows %q[%row] : !slot -> !tiledattn.tile<64x128xbf16>
  %rf = tiledattn.mma_async %qa, %k transpose_b : !tiledattn.tile<64x128xbf16>, !slot -> !tiledattn.future<64x128xf32>
  %r = tiledattn.wait %rf : !tiledattn.future<64x128xf32>
  // CHECK: %[[O:.*]] = tiledattn.wait %[[OF]] : !tiledattn.future<64x128xf32>
  %o = tiledattn.wait %of : !tiledattn.future<64x128xf32>
  return %s, %o : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64x128xf32>
}

// A future leaves the turn that issued the mma and is waited for after it.
// CHECK-LABEL: func.func @future_out_of_a_turn
func.func @future_out_of_a_turn(%q: !slot, %k: !slot, %row: index) {
  tiledattn.warp_specialize producer regs(24) {
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    // CHECK: %[[F:.*]] = tiledattn.turn -> !tiledattn.future<64x128xf32> {
    %f = tiledattn.turn -> !tiledattn.future<64x128xf32> {
      %sf = tiledattn.mma_async %q[%row], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
      tiledattn.yield %sf : !tiledattn.future<64x128xf32>
    }
    // CHECK: tiledattn.wait %[[F]] : !tiledattn.future<64x128xf32>
    %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  }
  return
}

// Narrow and wide N, f16: S over 64 keys at head dim 256 (A and B 256
// columns wide), O over head dim 256 from 64 keys.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%q: !tiledattn.smem<64x256xf16>, %k: !tiledattn.smem<64x256xf16>,
                  %p: !tiledattn.tile<64x64xf16>, %v: !tiledattn.smem<64x256xf16>) {
  %c0 = arith.constant 0 : index
  // CHECK: -> !tiledattn.future<64x64xf32>
  %sf = tiledattn.mma_async %q[%c0], %k transpose_b : !tiledattn.smem<64x256xf16>, !tiledattn.smem<64x256xf16> -> !tiledattn.future<64x64xf32>
  // CHECK: -> !tiledattn.future<64x256xf32>
  %of = tiledattn.mma_async %p, %v : !tiledattn.tile<64x64xf16>, !tiledattn.smem<64x256xf16> -> !tiledattn.future<64x256xf32>
  %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
  %o = tiledattn.wait %of : !tiledattn.future<64x256xf32>
  return
}

// b_rows: the first 64 rows of 128-row slots, S over 64 keys and a P.V over
// those keys only (narrow_diagonal).
// CHECK-LABEL: func.func @first_rows_of_b
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}} b_rows(64) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
// CHECK: tiledattn.mma_async %{{.*}}, %{{.*}} b_rows(64) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
func.func @first_rows_of_b(%q: !tiledattn.smem<128x128xbf16>, %k: !tiledattn.smem<128x128xbf16>,
                           %p: !tiledattn.tile<64x64xbf16>, %v: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  %sf = tiledattn.mma_async %q[%c0], %k b_rows(64) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  %of = tiledattn.mma_async %p, %v b_rows(64) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
  %o = tiledattn.wait %of : !tiledattn.future<64x128xf32>
  return
}

// transpose_a: dQ = dS K, A read transposed from the K x 64 tile that
// tiledattn.stage wrote dS^T into (K = B's 64 rows).
// CHECK-LABEL: func.func @transposed_a
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}] transpose_a, %{{.*}} b_rows(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
func.func @transposed_a(%dst: !tiledattn.smem<64x64xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  %f = tiledattn.mma_async %dst[%c0] transpose_a, %k b_rows(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// [b_row]: B's rows from a later one (a consumer's 64 keys of a K slot;
// the second 64 keys of a dQ = dS K's reduction, in one column half).
// CHECK-LABEL: func.func @rows_of_b_from_an_offset
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] b_rows(64) transpose_b : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] b_rows(64) b_col(64) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
func.func @rows_of_b_from_an_offset(%q: !tiledattn.smem<64x128xbf16>, %k: !tiledattn.smem<128x128xbf16>, %ds: !tiledattn.smem<128x64xbf16>, %row: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sf = tiledattn.mma_async %q[%c0], %k[%row] b_rows(64) transpose_b : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  %s = tiledattn.wait %sf : !tiledattn.future<64x64xf32>
  %df = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(64) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %df : !tiledattn.future<64x64xf32>
  return
}

// b_col: dQ's second 64-column half (B's second atom).
// CHECK-LABEL: func.func @column_window_of_b
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}] transpose_a, %{{.*}} b_col(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
func.func @column_window_of_b(%dst: !tiledattn.smem<64x64xbf16>, %k: !tiledattn.smem<64x128xbf16>) {
  %c0 = arith.constant 0 : index
  %f = tiledattn.mma_async %dst[%c0] transpose_a, %k b_col(64) : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// acc_in_flight: dQ = dS_0 K_0 + dS_1 K_1 as one chain (the first mma's
// future continued by the second, whose future is waited for).
// CHECK-LABEL: func.func @chained_accumulator
// CHECK: %[[F0:.*]] = tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] b_rows(64) b_col(0) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
// CHECK: tiledattn.mma_async %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] b_rows(64) b_col(0) acc_in_flight(%[[F0]]) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
func.func @chained_accumulator(%ds: !tiledattn.smem<128x64xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %f0 = tiledattn.mma_async %ds[%c0], %k[%c0] b_rows(64) b_col(0) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  %f = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0) acc_in_flight(%f0) : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}
