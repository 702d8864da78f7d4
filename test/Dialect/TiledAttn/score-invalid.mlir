// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics

// Every verifier error of tiledattn.score_mod.

func.func @not_a_score_tile(%s: !tiledattn.tile<64xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.score_mod' op expected a rank-2 f32 score tile, but got '!tiledattn.tile<64xf32>'}}
  %r = tiledattn.score_mod %s[%i, %i] : !tiledattn.tile<64xf32> {
  ^bb0(%x: f32, %q: index, %k: index):
    tiledattn.yield %x : f32
  }
  return
}

// -----

func.func @wrong_arguments(%s: !tiledattn.tile<64x64xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.score_mod' op expected the score body's arguments to be (f32, index, index): the score, its query row and its key row, but got (f32, index)}}
  %r = tiledattn.score_mod %s[%i, %i] : !tiledattn.tile<64x64xf32> {
  ^bb0(%x: f32, %q: index):
    tiledattn.yield %x : f32
  }
  return
}

// -----

func.func @yields_two_values(%s: !tiledattn.tile<64x64xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.score_mod' op expected the score body to end in a tiledattn.yield of one f32 (the new score)}}
  %r = tiledattn.score_mod %s[%i, %i] : !tiledattn.tile<64x64xf32> {
  ^bb0(%x: f32, %q: index, %k: index):
    tiledattn.yield %x, %x : f32, f32
  }
  return
}

// -----

func.func @writes_memory(%s: !tiledattn.tile<64x64xf32>, %i: index, %m: memref<?xf32>) {
  %r = tiledattn.score_mod %s[%i, %i] : !tiledattn.tile<64x64xf32> {
  ^bb0(%x: f32, %q: index, %k: index):
    // expected-error @+1 {{'memref.store' op may write memory inside a score body, which runs once per score and may only read}}
    memref.store %x, %m[%q] : memref<?xf32>
    tiledattn.yield %x : f32
  }
  return
}

// -----

func.func @touches_a_tile(%s: !tiledattn.tile<64x64xf32>, %i: index) {
  %r = tiledattn.score_mod %s[%i, %i] : !tiledattn.tile<64x64xf32> {
  ^bb0(%x: f32, %q: index, %k: index):
    // expected-error @+1 {{'tiledattn.constant' op takes or makes a tile inside a score body, which works on one score at a time}}
    %t = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf32>
    tiledattn.yield %x : f32
  }
  return
}

// -----

func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{'tiledattn.yield' op expects parent op to be one of 'tiledattn.turn, tiledattn.score_mod, tiledattn.sdpa, tiledattn.for_each_tile'}}
  tiledattn.yield %x : f32
}

// -----

// tiledattn.sdpa's score_mod region: the scaled score, batch, head, query
// row and key row.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @sdpa_score_mod_wrong_arguments(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected the score body's arguments to be (f32, index, index, index, index): the scaled score, batch, head, query row and key row, but got (f32, index, index)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      score_mod {
  ^bb0(%s: f32, %i: index, %j: index):
    tiledattn.yield %s : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// A block_map lists blocks for the warp-specialized program's K/V loop.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @block_map_mma_sync(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op has a block_map, which only the producer = tma program reads (its K/V loop takes the blocks from the map), so expected producer = tma, but got producer = direct}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      block_map(%map : memref<?x?x?x?xi32>) : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @block_map_causal(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op has a block_map and causal: the map lists the blocks each tile reads and its partial blocks carry any mask, causal included, so expected no causal with a block_map}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @block_map_split_tail(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op schedule field split_tail: shares out tiles by ranges of K/V blocks, not by a block_map's lists, so expected false with a block_map, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, split_tail = true>)
      block_map(%map : memref<?x?x?x?xi32>) : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @block_map_kv_multicast(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op schedule field kv_multicast: a cluster's two tiles read the same K/V blocks, which a block_map may not give them, so expected false with a block_map, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, kv_multicast = true>)
      block_map(%map : memref<?x?x?x?xi32>) : !head, !head, !head, !head, !lse
  return
}

// -----

// The map is i32 of rank 4.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @block_map_i64(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi64>) {
  // expected-error @+1 {{'tiledattn.sdpa' op operand #6 must be 4D memref of 32-bit signless integer values, but got 'memref<?x?x?x?xi64>'}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi64>) : !head, !head, !head, !head, !lse
  return
}

// -----

// The mask_mod region takes what the score_mod region takes.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @sdpa_mask_mod_wrong_arguments(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected the score body's arguments to be (f32, index, index, index, index): the scaled score, batch, head, query row and key row, but got (f32, index)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      mask_mod {
  ^bb0(%s: f32, %i: index):
    tiledattn.yield %s : f32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// kv_rows moves the producer's K/V loads: the producer = tma program only.
!head = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_rows_mma_sync(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op has kv_rows, which only the producer = tma program applies (its producer's K/V loads), so expected producer = tma, but got producer = direct}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// A sequence's keys are what a block_map lists when they may be anywhere.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_rows_without_map(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op has kv_rows but no block_map: with K/V rows anywhere in k and v, the map must list the blocks each tile reads (k's length is not a sequence's)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_rows_arguments(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected the score body's arguments to be (index, index, index): the batch, K/V head and first key of a block, but got (index, index)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_rows {
  ^bb0(%b: index, %key: index):
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_rows_yields_a_row(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected the score body to end in a tiledattn.yield of one index (the row of k and v that holds that key)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    %row = arith.index_cast %key : index to i32
    tiledattn.yield %row : i32
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_rows_writes(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>, %table: memref<?x?xi32>) {
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    %zero = arith.constant 0 : i32
    // expected-error @+1 {{'memref.store' op may write memory inside a score body, which runs once per score and may only read}}
    memref.store %zero, %table[%b, %h] : memref<?x?xi32>
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

// kv_span: runs of keys in whole swizzle periods that tile a block.
!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_span_uneven(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected kv_span to be a multiple of 8 that divides block_n = 128 (each run of keys a whole number of the 128-byte swizzle's 8-row periods), but got 24}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_span(24) kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_span_short(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected kv_span to be a multiple of 8 that divides block_n = 128 (each run of keys a whole number of the 128-byte swizzle's 8-row periods), but got 4}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_span(4) kv_rows {
  ^bb0(%b: index, %h: index, %key: index):
    tiledattn.yield %key : index
  } : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @kv_span_without_rows(%q: !head, %lse: !lse, %scale: f32, %map: memref<?x?x?x?xi32>) {
  // expected-error @+1 {{'tiledattn.sdpa' op has kv_span but no kv_rows: the span is of the runs of keys whose rows kv_rows gives}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      block_map(%map : memref<?x?x?x?xi32>) kv_span(16) : !head, !head, !head, !head, !lse
  return
}
