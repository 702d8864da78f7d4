// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the ring types and ops, one per split.

// expected-error @+1 {{expected a shared-memory tile of f16 or bf16, but got 'f32'}}
func.func private @smem_f32(!tiledattn.smem<64x64xf32>)

// -----

// expected-error @+1 {{expected 1 to 256 rows (a TMA box), but got 512}}
func.func private @smem_rows(!tiledattn.smem<512x64xbf16>)

// -----

// expected-error @+1 {{expected a positive multiple of 64 columns (128-byte swizzle atoms), but got 96}}
func.func private @smem_cols(!tiledattn.smem<64x96xbf16>)

// -----

// expected-error @+1 {{expected a shared-memory tile of rank 2 (rows x columns), but got rank 3}}
func.func private @smem_rank(!tiledattn.smem<2x64x64xbf16>)

// -----

// expected-error @+1 {{expected a ring of at least 1 slot, but got 0}}
func.func private @ring_depth(!tiledattn.ring<0, 64x64xbf16>)

// -----

func.func @ring_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{expected to be in the entry block of a function (its barriers are set up once, before any role runs), but it is in scf.for}}
    %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  }
  return
}

// -----

func.func @ring_no_releases() {
  // expected-error @+1 {{attribute 'releases' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = tiledattn.ring releases(0) : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_slot_type(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the body to take one argument, the slot, of type '!tiledattn.smem<64x64xbf16>', but it takes 1 argument(s) of types '!tiledattn.smem<128x64xbf16>'}}
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x64xbf16>):
  }
  return
}

// -----

func.func @put_no_load(%i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the body to fill each slot with one tiledattn.tma_load, but slot #0 has 0}}
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
  }
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_two_loads(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the body to fill each slot with one tiledattn.tma_load, but slot #0 has 2}}
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_outside_put(%k: !head, %i: index, %slot: !tiledattn.smem<64x64xbf16>) {
  // expected-error @+1 {{expected to be in the body of a tiledattn.ring.put (its copy completes on the slot's full barrier), but it is in func.func}}
  tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_into_other_slot(%k: !head, %i: index, %other: !tiledattn.smem<64x64xbf16>) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected to copy into a slot of its tiledattn.ring.put, but `dest` is another value}}
    tiledattn.tma_load %k[%i, %i, %i] into %other : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_element_type(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected the source's element type to be the slot's, 'bf16', but got 'f16'}}
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_head_dim(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected the source's head dim (its last dimension) to fill the slot's 64 columns (in 64-column atoms), but got 128}}
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, 1, ?], offset: ?>>
func.func @load_inner_stride(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected a unit innermost stride (TMA copies whole rows), but got ?}}
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

func.func @release_foreign_token(%i: index) {
  %a = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  %b = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  %s, %t = tiledattn.ring.get %a[%i] : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected `token` to come from a tiledattn.ring.get on the same ring, but it comes from one on another}}
  tiledattn.ring.release %b, %t : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @release_argument_token(%t: !tiledattn.token) {
  %a = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected `token` to come from a tiledattn.ring.get, directly or through tiledattn.turn results}}
  tiledattn.ring.release %a, %t : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @get_slot_type(%i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{failed to verify that the slot has the ring's slot type}}
  %s:2 = "tiledattn.ring.get"(%r, %i) : (!tiledattn.ring<2, 64x64xbf16>, index) -> (!tiledattn.smem<128x64xbf16>, !tiledattn.token)
  return
}

// -----

func.func @get_never_released(%i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the token to be released once, by a tiledattn.ring.release (every path that takes a slot gives it back), but it has 0 uses}}
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @released_twice(%i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the token to be released once, by a tiledattn.ring.release (every path that takes a slot gives it back), but it has 2 uses}}
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @released_under_a_branch(%i: index, %c: i1) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the token to be released in the block it is taken in (a release under a branch or in a loop may not run once per get)}}
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  scf.if %c {
    tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  }
  return
}

// -----

func.func @released_on_one_path(%i: index, %c: i1) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the token to be released once, by a tiledattn.ring.release (every path that takes a slot gives it back), but it has 0 uses}}
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  scf.if %c {
    tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  } else {
    %unused = arith.constant 0 : index
  }
  return
}

// -----

func.func @token_elsewhere(%i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the token to go to a tiledattn.ring.release or out of a tiledattn.turn, but it goes to func.call}}
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  func.call @keep(%t) : (!tiledattn.token) -> ()
  return
}
func.func private @keep(!tiledattn.token)

// -----

func.func @alloc_in_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{expected to be in the entry block of a function (shared memory is laid out once, for the whole kernel), but it is in scf.for}}
    %s = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_of_128_rows(%o: !o, %acc: !tiledattn.tile<128x128xf32>, %r: !tiledattn.tile<128xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected a warpgroup's acc tile of 64 rows (one TMA box a 64-column atom), but got '!tiledattn.tile<128x128xf32>'}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<128x128xf32>, !o, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<128xf32>, !tiledattn.tile<128xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_to_another_element_type(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<64x128xf16>
  // expected-error @+1 {{expected the stage's element type to be dest's, 'bf16', but got 'f16'}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<64x128xf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_via_a_narrow_stage(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
  // expected-error @+1 {{expected a stage of at least the acc tile's 128 columns, but got '!tiledattn.smem<64x64xbf16>'}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<64x64xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_via_a_short_stage(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<32x128xbf16>
  // expected-error @+1 {{expected a stage of at least the acc tile's 64 rows, but got '!tiledattn.smem<32x128xbf16>'}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<32x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_off_the_swizzle(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{expected stage_row to be a multiple of 8 (the swizzle's period) with the acc tile's 64 rows inside the stage's 128, but got 4}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%c4]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_past_the_stage(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  %c72 = arith.constant 72 : index
  // expected-error @+1 {{expected stage_row to be a multiple of 8 (the swizzle's period) with the acc tile's 64 rows inside the stage's 128, but got 72}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%c72]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_of_another_head_dim(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected dest head dim 128 (the acc tile's column count), or one it fills in 64-column atoms, but got 64}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xf32>, !o, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @tma_store_lse_without_statistics(%o: !o, %lse: !lse, %acc: !tiledattn.tile<64x128xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected row_max and row_sum with lse (the lse is computed from them)}}
  "tiledattn.tma_store"(%acc, %o, %i, %i, %i, %s, %i, %lse) {operandSegmentSizes = array<i32: 1, 0, 0, 1, 1, 1, 1, 1, 1, 1>}
      : (!tiledattn.tile<64x128xf32>, !o, index, index, index, !tiledattn.smem<128x128xbf16>, index, !lse) -> ()
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_packed_to_another_type(%o: !o, %acc: !tiledattn.tile<64x128xf16>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected an f32 acc tile or one packed to dest's element type 'bf16', but got '!tiledattn.tile<64x128xf16>'}}
  tiledattn.tma_store %acc into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xf16>, !o, !tiledattn.smem<128x128xbf16>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_packed_with_statistics(%o: !o, %acc: !tiledattn.tile<64x128xbf16>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected no row_max and row_sum with a packed acc tile (O normalized already), but got them}}
  tiledattn.tma_store %acc, %r, %r into %o[%i, %i, %i] via %s[%i]
      : !tiledattn.tile<64x128xbf16>, !o, !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

!o = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tma_store_with_one_statistic(%o: !o, %acc: !tiledattn.tile<64x128xf32>, %r: !tiledattn.tile<64xf32>, %i: index) {
  %s = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
  // expected-error @+1 {{expected both row_max and row_sum (O normalized here) or neither (O stored as it is)}}
  "tiledattn.tma_store"(%acc, %r, %o, %i, %i, %i, %s, %i) {operandSegmentSizes = array<i32: 1, 1, 0, 1, 1, 1, 1, 1, 1, 0>}
      : (!tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>, !o, index, index, index, !tiledattn.smem<128x128xbf16>, index) -> ()
  return
}

// -----

!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @finish_rows_of_128(%lse: !lse, %r: !tiledattn.tile<128xf32>, %i: index) {
  // expected-error @+1 {{expected a warpgroup's row tiles, !tiledattn.tile<64xf32>, but got '!tiledattn.tile<128xf32>'}}
  %inv = tiledattn.finish_rows %r, %r into %lse[%i, %i, %i] : !tiledattn.tile<128xf32>, !lse
  return
}

// -----

func.func @ring_parts_not_atoms() {
  // expected-error @+1 {{expected parts to divide the slot's 4 64-column atoms (each part whole atoms), but got 3}}
  %r = tiledattn.ring releases(8) parts(3) : !tiledattn.ring<1, 128x256xbf16>
  return
}

// -----

func.func @ring_zero_parts() {
  // expected-error @+1 {{attribute 'parts' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = tiledattn.ring releases(8) parts(0) : !tiledattn.ring<1, 128x256xbf16>
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_parts_out_of_range(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  // expected-error @+1 {{expected parts(first to end) with 0 <= first < end <= 4 (the ring's parts), but got parts(2 to 5)}}
  tiledattn.ring.put %r[%i] parts(2 to 5) : !tiledattn.ring<1, 128x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_no_parts(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  // expected-error @+1 {{expected parts(first to end) with 0 <= first < end <= 4 (the ring's parts), but got parts(1 to 1)}}
  tiledattn.ring.put %r[%i] parts(1 to 1) : !tiledattn.ring<1, 128x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_one_slot(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  %k = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x256xbf16>
  // expected-error @+1 {{expected the body to take two arguments, the slots, of types '!tiledattn.smem<128x256xbf16>', '!tiledattn.smem<64x256xbf16>', but it takes 1 argument(s) of types '!tiledattn.smem<128x256xbf16>'}}
  tiledattn.ring.put %r[%i] with %k[%i] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_itself(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<2, 128x256xbf16>
  // expected-error @+1 {{expected `with` to name another ring}}
  tiledattn.ring.put %r[%i] with %r[%i] : !tiledattn.ring<2, 128x256xbf16>, !tiledattn.ring<2, 128x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %other: !tiledattn.smem<128x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
    tiledattn.tma_load %q[%i, %i, %i] into %other : !head, !tiledattn.smem<128x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!v = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_other_columns(%q: !head, %vh: !v, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  %v = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x128xbf16>
  // expected-error @+1 {{expected the `with` slot to have this slot's 256 columns (the parts split both alike), but got '!tiledattn.smem<64x128xbf16>'}}
  tiledattn.ring.put %r[%i] with %v[%i] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x128xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %other: !tiledattn.smem<64x128xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
    tiledattn.tma_load %vh[%i, %i, %i] into %other : !v, !tiledattn.smem<64x128xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_parted_ring(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  %k = tiledattn.ring releases(8) parts(2) : !tiledattn.ring<2, 64x256xbf16>
  // expected-error @+1 {{expected the `with` ring to have no parts of its own (its columns arrive on this ring's), but it has 2}}
  tiledattn.ring.put %r[%i] with %k[%i] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %other: !tiledattn.smem<64x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
    tiledattn.tma_load %q[%i, %i, %i] into %other : !head, !tiledattn.smem<64x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_slot_unfilled(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  %k = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x256xbf16>
  // expected-error @+1 {{expected the body to fill each slot with one tiledattn.tma_load, but slot #1 has 0}}
  tiledattn.ring.put %r[%i] with %k[%i] : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %other: !tiledattn.smem<64x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!qring = !tiledattn.ring<1, 128x256xbf16>
!kring = !tiledattn.ring<2, 64x256xbf16>
func.func @put_with_ring_no_position(%q: !head, %i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !qring
  %k = tiledattn.ring releases(8) : !kring
  // expected-error @+1 {{expected `with` to name a ring and a position}}
  "tiledattn.ring.put"(%r, %i, %k) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({
  ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %other: !tiledattn.smem<64x256xbf16>):
    tiledattn.tma_load %q[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x256xbf16>
    tiledattn.tma_load %q[%i, %i, %i] into %other : !head, !tiledattn.smem<64x256xbf16>
  }) : (!qring, index, !kring) -> ()
  return
}

// -----

func.func @partial_get_never_waited(%i: index) {
  %r = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
  // expected-error @+1 {{expected a partial get's token to be named in the after_parts of a tiledattn.mma_async (nothing else waits for the slot's parts)}}
  %s, %t = tiledattn.ring.get %r[%i] partial : !tiledattn.ring<1, 128x256xbf16>
  tiledattn.ring.release %r, %t : !tiledattn.ring<1, 128x256xbf16>
  return
}

// -----

func.func @skip_every_reader(%i: index) {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected fewer readers than the ring's 8 releases (some warp reads each use), but got 8}}
  tiledattn.ring.skip %r[%i] readers(8) : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @skip_no_reader(%i: index) {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{attribute 'readers' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  tiledattn.ring.skip %r[%i] readers(0) : !tiledattn.ring<2, 64x64xbf16>
  return
}

// -----

func.func @untagged_put_copies_nothing(%i: index) {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected the body to fill each slot with one tiledattn.tma_load, but slot #0 has 0}}
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
  }
  return
}

// -----

func.func @tag_only_put_with_other_slot(%i: index, %t: i32) {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x64xbf16>
  %k = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected a put that copies nothing to fill no `with` slot}}
  tiledattn.ring.put %r[%i] with %k[%i] tag(%t) : !tiledattn.ring<1, 128x64xbf16>, !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x64xbf16>, %other: !tiledattn.smem<64x64xbf16>):
  }
  return
}

// -----

func.func @tag_of_other_ring(%i: index) -> i32 {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  %o = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  %s, %t = tiledattn.ring.get %r[%i] : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected `token` to come from a tiledattn.ring.get on the same ring, but it comes from one on another}}
  %tag = tiledattn.ring.tag %o, %t : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  return %tag : i32
}

// -----

func.func @tag_of_token_argument(%t: !tiledattn.token) -> i32 {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected `token` to come from a tiledattn.ring.get, directly or through tiledattn.turn results}}
  %tag = tiledattn.ring.tag %r, %t : !tiledattn.ring<2, 64x64xbf16>
  return %tag : i32
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tag_of_partial_get(%i: index, %p: !tiledattn.tile<64x64xbf16>) -> i32 {
  %r = tiledattn.ring releases(8) : !tiledattn.ring<2, 64x64xbf16>
  %s, %t = tiledattn.ring.get %r[%i] partial : !tiledattn.ring<2, 64x64xbf16>
  // expected-error @+1 {{expected a get that waited for the slot (the tag is written before the slot is full), but the get is partial}}
  %tag = tiledattn.ring.tag %r, %t : !tiledattn.ring<2, 64x64xbf16>
  %f = tiledattn.mma_async %p, %s transpose_b after_parts(%t) : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<64x64xbf16> -> !tiledattn.future<64x64xf32>
  %o = tiledattn.wait %f : !tiledattn.future<64x64xf32>
  tiledattn.ring.release %r, %t : !tiledattn.ring<2, 64x64xbf16>
  return %tag : i32
}

// -----

// A load in pieces: equal pieces of whole swizzle periods (8 rows).
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_pieces_uneven(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected 1 row or a number of rows that cuts the slot's 64 rows into equal pieces of a multiple of 8 rows, but got 3 rows}}
    tiledattn.tma_load %k[%i, %i, %i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_pieces_short(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected 1 row or a number of rows that cuts the slot's 64 rows into equal pieces of a multiple of 8 rows, but got 16 rows}}
    tiledattn.tma_load %k[%i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i, %i] into %slot : !head, !tiledattn.smem<64x64xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// (The custom form takes at least one row; the generic one may give none.)
func.func @load_no_row(%k: !head, %i: index) {
  %r = tiledattn.ring releases(4) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 64x64xbf16> {
  ^bb0(%slot: !tiledattn.smem<64x64xbf16>):
    // expected-error @+1 {{expected 1 row or a number of rows that cuts the slot's 64 rows into equal pieces of a multiple of 8 rows, but got 0 rows}}
    "tiledattn.tma_load"(%k, %i, %i, %slot) : (!head, index, index, !tiledattn.smem<64x64xbf16>) -> ()
  }
  return
}

// -----

func.func @ring_cluster_of_three() {
  // expected-error @+1 {{expected cluster(2) (a slot shared by a pair of blocks), but got cluster(3)}}
  %r = tiledattn.ring releases(8) cluster(3) : !tiledattn.ring<2, 128x128xbf16>
  return
}

// -----

func.func @ring_cluster_odd_halves() {
  // expected-error @+1 {{expected a cluster ring's slot rows to halve into multiples of 8 (the swizzle's period), but got 72 rows}}
  %r = tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 72x128xbf16>
  return
}

// -----

func.func @ring_cluster_with_parts() {
  // expected-error @+1 {{expected no parts on a cluster ring (its halves arrive on one full barrier), but got parts(2)}}
  %r = tiledattn.ring releases(8) parts(2) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_cluster_ring_with_tag(%k: !head, %i: index, %t: i32) {
  %r = tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
  // expected-error @+1 {{expected a put on a cluster ring to fill its slot alone (no `with`, no `tag`): both blocks of the cluster fill it in halves}}
  tiledattn.ring.put %r[%i] tag(%t) : !tiledattn.ring<2, 128x128xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x128xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @put_with_cluster_ring(%k: !head, %i: index) {
  %q = tiledattn.ring releases(8) : !tiledattn.ring<1, 128x128xbf16>
  %r = tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
  // expected-error @+1 {{expected the `with` ring not to be a cluster ring: both blocks of the cluster fill its slots in halves}}
  tiledattn.ring.put %q[%i] with %r[%i] : !tiledattn.ring<1, 128x128xbf16>, !tiledattn.ring<2, 128x128xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>, %kslot: !tiledattn.smem<128x128xbf16>):
    tiledattn.tma_load %k[%i, %i, %i] into %slot : !head, !tiledattn.smem<128x128xbf16>
    tiledattn.tma_load %k[%i, %i, %i] into %kslot : !head, !tiledattn.smem<128x128xbf16>
  }
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @load_pages_into_cluster_ring(%k: !head, %i: index) {
  %r = tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
  tiledattn.ring.put %r[%i] : !tiledattn.ring<2, 128x128xbf16> {
  ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
    // expected-error @+1 {{expected 1 row into a cluster ring's slot (each block copies one half of it), but got 2 rows}}
    tiledattn.tma_load %k[%i, %i, %i, %i] into %slot : !head, !tiledattn.smem<128x128xbf16>
  }
  return
}
