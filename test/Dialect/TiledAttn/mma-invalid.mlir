// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of !tiledattn.future and the asynchronous mma ops, one
// per split.

!slot = !tiledattn.smem<128x128xbf16>
!f = !tiledattn.future<64x128xf32>

// expected-error @+1 {{expected an mma result: a rank-2 tile of f32, but got '!tiledattn.tile<64x128xbf16>'}}
func.func private @future_bf16(!tiledattn.future<64x128xbf16>)

// -----

// expected-error @+1 {{expected an mma result: a rank-2 tile of f32, but got '!tiledattn.tile<64xf32>'}}
func.func private @future_rank1(!tiledattn.future<64xf32>)

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @no_a_row(%q: !slot, %k: !slot) {
  // expected-error @+1 {{expected `a_row`, the first of the 64 rows of the shared-memory A to multiply}}
  %f = tiledattn.mma_async %q, %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @a_too_short(%q: !tiledattn.smem<32x128xbf16>, %k: !tiledattn.smem<128x128xbf16>, %r: index) {
  // expected-error @+1 {{expected a shared-memory A of at least 64 rows, but got '!tiledattn.smem<32x128xbf16>'}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !tiledattn.smem<32x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @a_row_off_swizzle(%q: !slot, %k: !slot) {
  %r = arith.constant 4 : index
  // expected-error @+1 {{expected `a_row` to be a multiple of 8 (the swizzle's period) with rows a_row .. a_row + 63 inside A's 128, but got 4}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @a_row_past_end(%q: !slot, %k: !slot) {
  %r = arith.constant 72 : index
  // expected-error @+1 {{inside A's 128, but got 72}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @a_row_with_registers(%p: !tiledattn.tile<64x128xbf16>, %v: !slot, %r: index) {
  // expected-error @+1 {{expected no `a_row` with A in registers (a tile is the 64 rows it multiplies)}}
  %f = tiledattn.mma_async %p[%r], %v : !tiledattn.tile<64x128xbf16>, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @registers_not_64_rows(%p: !tiledattn.tile<128x128xbf16>, %v: !slot) {
  // expected-error @+1 {{expected a register A of 64 x K f16 or bf16 (one warpgroup's rows), but got '!tiledattn.tile<128x128xbf16>'}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<128x128xbf16>, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @registers_f32(%p: !tiledattn.tile<64x128xf32>, %v: !slot) {
  // expected-error @+1 {{expected a register A of 64 x K f16 or bf16 (one warpgroup's rows), but got '!tiledattn.tile<64x128xf32>'}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x128xf32>, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @mixed_types(%p: !tiledattn.tile<64x128xf16>, %v: !tiledattn.smem<128x128xbf16>) {
  // expected-error @+1 {{expected A and B of one element type, but got 'f16' and 'bf16'}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x128xf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @k_not_16(%p: !tiledattn.tile<64x24xbf16>, %v: !tiledattn.smem<24x128xbf16>) {
  // expected-error @+1 {{expected K, A's columns, to be a multiple of 16 (wgmma's k16), but got 24}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x24xbf16>, !tiledattn.smem<24x128xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @b_wrong_k(%q: !tiledattn.smem<128x128xbf16>, %k: !tiledattn.smem<128x64xbf16>, %r: index) {
  // expected-error @+1 {{expected B to be N x K with K = 128 (A's columns), but got '!tiledattn.smem<128x64xbf16>'}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x64xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @b_wrong_k_not_transposed(%p: !tiledattn.tile<64x128xbf16>, %v: !tiledattn.smem<64x128xbf16>) {
  // expected-error @+1 {{expected B to be K x N with K = 128 (A's columns), but got '!tiledattn.smem<64x128xbf16>'}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @n_not_8(%q: !tiledattn.smem<64x64xbf16>, %k: !tiledattn.smem<12x64xbf16>, %r: index) {
  // expected-error @+1 {{expected N, the result's columns, to be a multiple of 8 up to 256 (one wgmma), but got 12}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<12x64xbf16> -> !tiledattn.future<64x12xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x12xf32>
  return
}

// -----

func.func @n_too_wide(%p: !tiledattn.tile<64x64xbf16>, %v: !tiledattn.smem<64x512xbf16>) {
  // expected-error @+1 {{expected N, the result's columns, to be a multiple of 8 up to 256 (one wgmma), but got 512}}
  %f = tiledattn.mma_async %p, %v : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x512xbf16> -> !tiledattn.future<64x512xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x512xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @wrong_result(%q: !slot, %k: !slot, %r: index) {
  // expected-error @+1 {{expected a result of 64 x 128 (A's rows by B's rows), but got '!tiledattn.future<64x64xf32>'}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x64xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @wrong_acc(%q: !slot, %k: !slot, %r: index, %acc: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{the accumulator is the result's tile}}
  %f = "tiledattn.mma_async"(%q, %r, %k, %acc) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0>, transpose_b}> : (!slot, index, !slot, !tiledattn.tile<64x64xf32>) -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @never_waited(%q: !slot, %k: !slot, %r: index) {
  // expected-error @+1 {{expected the result to be waited for once, by a tiledattn.wait (an mma nobody waits for leaves its registers undefined), but it has 0 uses}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @waited_twice(%q: !slot, %k: !slot, %r: index) {
  // expected-error @+1 {{but it has 2 uses}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  %t = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @waited_under_a_branch(%q: !slot, %k: !slot, %r: index, %c: i1) {
  // expected-error @+1 {{expected the result to be waited for in the block it is made in (a wait under a branch or in a loop may not run once per mma)}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  scf.if %c {
    %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  }
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @future_returned(%q: !slot, %k: !slot, %r: index) -> !tiledattn.future<64x128xf32> {
  // expected-error @+1 {{expected the result to go to a tiledattn.wait, a later tiledattn.mma_async's acc_in_flight or out of a tiledattn.turn, but it goes to func.return}}
  %f = tiledattn.mma_async %q[%r], %k transpose_b : !slot, !slot -> !tiledattn.future<64x128xf32>
  return %f : !tiledattn.future<64x128xf32>
}

// -----

func.func @wait_wrong_type(%f: !tiledattn.future<64x128xf32>) {
  // expected-error @+1 {{the result is the future's tile}}
  %s = "tiledattn.wait"(%f) : (!tiledattn.future<64x128xf32>) -> !tiledattn.tile<64x64xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @uniform_a_with_registers(%p: !tiledattn.tile<64x128xbf16>, %v: !slot) {
  // expected-error @+1 {{expected no `uniform_a` with A in registers (it makes a shared-memory A's address uniform)}}
  %f = tiledattn.mma_async %p uniform_a, %v : !tiledattn.tile<64x128xbf16>, !slot -> !tiledattn.future<64x128xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @read_rows_wrong_result(%q: !slot, %r: index) {
  // expected-error @+1 {{expected the result to be the warpgroup's 64 rows of the tile, '!tiledattn.tile<64x128xbf16>', but got '!tiledattn.tile<64x128xf16>'}}
  %a = tiledattn.read_rows %q[%r] : !slot -> !tiledattn.tile<64x128xf16>
  return
}

// -----

!slot = !tiledattn.smem<128x128xbf16>
func.func @read_rows_past_end(%q: !slot) {
  %r = arith.constant 96 : index
  // expected-error @+1 {{expected `row` to be a multiple of 8 (the swizzle's period) with rows row .. row + 63 inside the tile's 128, but got 96}}
  %a = tiledattn.read_rows %q[%r] : !slot -> !tiledattn.tile<64x128xbf16>
  return
}

// -----

!qring = !tiledattn.ring<1, 128x256xbf16>
!kring = !tiledattn.ring<2, 64x256xbf16>
func.func @after_parts_of_full_get(%i: index) {
  %qr = tiledattn.ring releases(8) parts(4) : !qring
  %kr = tiledattn.ring releases(8) : !kring
  %q, %qt = tiledattn.ring.get %qr[%i] : !qring
  %k, %kt = tiledattn.ring.get %kr[%i] : !kring
  // expected-error @+1 {{expected after_parts to name the tokens of partial tiledattn.ring.gets (a get that waited left no parts to wait for)}}
  %f = tiledattn.mma_async %q[%i], %k transpose_b after_parts(%qt) : !tiledattn.smem<128x256xbf16>, !tiledattn.smem<64x256xbf16> -> !tiledattn.future<64x64xf32>
  %s = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  tiledattn.ring.release %kr, %kt : !kring
  tiledattn.ring.release %qr, %qt : !qring
  return
}

// -----

!vring = !tiledattn.ring<2, 64x128xbf16>
func.func @after_parts_of_mn_major_b(%i: index, %p: !tiledattn.tile<64x64xbf16>) {
  %vr = tiledattn.ring releases(8) parts(2) : !vring
  %v, %vt = tiledattn.ring.get %vr[%i] partial : !vring
  // expected-error @+1 {{expected each after_parts token to be for A's slot or, with transpose_b, B's (whose columns are K, which the parts split), but one is for another slot}}
  %f = tiledattn.mma_async %p, %v after_parts(%vt) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
  %o = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  tiledattn.ring.release %vr, %vt : !vring
  return
}

// -----

func.func @b_rows_not_below(%q: !tiledattn.smem<128x128xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected b_rows to be a multiple of 8 below B's 128 rows (without it the mma reads them all), but got 128}}
  %sf = tiledattn.mma_async %q[%c0], %k b_rows(128) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @b_rows_not_a_multiple_of_8(%q: !tiledattn.smem<128x128xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected b_rows to be a multiple of 8 below B's 128 rows (without it the mma reads them all), but got 60}}
  %sf = tiledattn.mma_async %q[%c0], %k b_rows(60) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x60xf32>
  return
}

// -----

func.func @b_rows_and_k(%p: !tiledattn.tile<64x128xbf16>, %v: !tiledattn.smem<128x128xbf16>) {
  // expected-error @+1 {{'tiledattn.mma_async' op expected B to be K x N with K = 128 (A's columns), but got '!tiledattn.smem<128x128xbf16>'}}
  %of = tiledattn.mma_async %p, %v b_rows(64) : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @transpose_a_in_registers(%a: !tiledattn.tile<64x64xbf16>, %k: !tiledattn.smem<64x128xbf16>) {
  // expected-error @+1 {{'tiledattn.mma_async' op expected a shared-memory A with transpose_a (a register A is read as it is)}}
  %f = tiledattn.mma_async %a transpose_a, %k : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
  %o = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @transpose_a_past_its_rows(%a: !tiledattn.smem<128x64xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected `a_row` to be a multiple of 8 with rows a_row .. a_row + 127 (K = B's 128) inside A's 128 with transpose_a, but got 64}}
  %f = tiledattn.mma_async %a[%c64] transpose_a, %k : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  %o = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  return
}

// -----

!aring = !tiledattn.ring<1, 64x128xbf16>
func.func @transpose_a_after_parts(%i: index, %k: !tiledattn.smem<64x128xbf16>) {
  %ar = tiledattn.ring releases(8) parts(2) : !aring
  %a, %at = tiledattn.ring.get %ar[%i] partial : !aring
  // expected-error @+1 {{'tiledattn.mma_async' op expected no after_parts with transpose_a (A's parts would split M, not K)}}
  %f = tiledattn.mma_async %a[%i] transpose_a, %k after_parts(%at) : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
  %o = tiledattn.wait %f : !tiledattn.future<64x128xf32>
  tiledattn.ring.release %ar, %at : !aring
  return
}

// -----

func.func @b_col_with_transpose_b(%q: !tiledattn.smem<128x128xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected no b_col with transpose_b (B's columns are then K; b_rows takes fewer of its rows)}}
  %sf = tiledattn.mma_async %q[%c0], %k b_col(64) transpose_b : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @b_col_inside_an_atom(%p: !tiledattn.tile<64x64xbf16>, %k: !tiledattn.smem<64x128xbf16>) {
  // expected-error @+1 {{'tiledattn.mma_async' op expected b_col to be a multiple of 64 (a 64-column atom) with columns b_col .. b_col + N - 1 (N = 64, the result's) inside B's 128, but got 32}}
  %f = tiledattn.mma_async %p, %k b_col(32) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x64xf32>
  return
}

// -----

func.func @b_col_past_b(%p: !tiledattn.tile<64x64xbf16>, %k: !tiledattn.smem<64x128xbf16>) {
  // expected-error @+1 {{'tiledattn.mma_async' op expected b_col to be a multiple of 64 (a 64-column atom) with columns b_col .. b_col + N - 1 (N = 128, the result's) inside B's 128, but got 64}}
  %f = tiledattn.mma_async %p, %k b_col(64) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x128xbf16> -> !tiledattn.future<64x128xf32>
  return
}

// -----

func.func @b_row_past_b(%q: !tiledattn.smem<64x128xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c72 = arith.constant 72 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected `b_row` to be a multiple of 8 (the swizzle's period) with rows b_row .. b_row + 63 inside B's 128, but got 72}}
  %sf = tiledattn.mma_async %q[%c0], %k[%c72] b_rows(64) transpose_b : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  return
}

// -----

func.func @b_row_inside_a_period(%q: !tiledattn.smem<64x128xbf16>, %k: !tiledattn.smem<128x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tiledattn.mma_async' op expected `b_row` to be a multiple of 8 (the swizzle's period) with rows b_row .. b_row + 63 inside B's 128, but got 4}}
  %sf = tiledattn.mma_async %q[%c0], %k[%c4] b_rows(64) transpose_b : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16> -> !tiledattn.future<64x64xf32>
  return
}

// -----

!ds = !tiledattn.smem<128x64xbf16>
!k = !tiledattn.smem<128x128xbf16>
func.func @chained_and_waited(%ds: !ds, %k: !k) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{expected the result to be waited for once, by a tiledattn.wait (an mma nobody waits for leaves its registers undefined), but it has 2 uses}}
  %f0 = tiledattn.mma_async %ds[%c0], %k[%c0] b_rows(64) b_col(0) : !ds, !k -> !tiledattn.future<64x64xf32>
  %d0 = tiledattn.wait %f0 : !tiledattn.future<64x64xf32>
  %f = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0) acc_in_flight(%f0) : !ds, !k -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// -----

!ds = !tiledattn.smem<128x64xbf16>
!k = !tiledattn.smem<128x128xbf16>
func.func @two_accumulators(%ds: !ds, %k: !k, %acc: !tiledattn.tile<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %f0 = tiledattn.mma_async %ds[%c0], %k[%c0] b_rows(64) b_col(0) : !ds, !k -> !tiledattn.future<64x64xf32>
  // expected-error @+1 {{expected one accumulator, `acc` (a waited tile) or `acc_in_flight` (an mma still in flight), but got both}}
  %f = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0) acc(%acc) acc_in_flight(%f0) : !ds, !k -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// -----

!ds = !tiledattn.smem<128x64xbf16>
!k = !tiledattn.smem<128x128xbf16>
func.func @in_flight_from_elsewhere(%ds: !ds, %k: !k, %f0: !tiledattn.future<64x64xf32>) {
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{expected acc_in_flight to be the result of a tiledattn.mma_async (whose wgmmas this one continues)}}
  %f = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0) acc_in_flight(%f0) : !ds, !k -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}

// -----

!ds = !tiledattn.smem<128x64xbf16>
!k = !tiledattn.smem<128x128xbf16>
func.func @continued_under_a_branch(%ds: !ds, %k: !k, %p: i1) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{expected the mma that continues this one (acc_in_flight) in the block it is made in}}
  %f0 = tiledattn.mma_async %ds[%c0], %k[%c0] b_rows(64) b_col(0) : !ds, !k -> !tiledattn.future<64x64xf32>
  scf.if %p {
    %f = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0) acc_in_flight(%f0) : !ds, !k -> !tiledattn.future<64x64xf32>
    %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  }
  return
}

// -----

!ds = !tiledattn.smem<128x64xbf16>
!k = !tiledattn.smem<128x128xbf16>
func.func @in_flight_of_another_shape(%ds: !ds, %k: !k) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %f0 = tiledattn.mma_async %ds[%c0], %k[%c0] b_rows(64) : !ds, !k -> !tiledattn.future<64x128xf32>
  // expected-error @+1 {{the accumulator in flight is the result's future}}
  %f = "tiledattn.mma_async"(%ds, %c64, %k, %c64, %f0) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0>, b_rows = 64 : i64, b_col = 0 : i64}> : (!ds, index, !k, index, !tiledattn.future<64x128xf32>) -> !tiledattn.future<64x64xf32>
  %dq = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  return
}
