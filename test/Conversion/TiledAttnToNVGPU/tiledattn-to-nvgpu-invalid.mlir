// RUN: tiledattn-opt %s -split-input-file -convert-tiledattn-to-nvgpu -verify-diagnostics

// Every diagnostic of convert-tiledattn-to-nvgpu. Kernels use one warp and
// 16-row tiles unless the case is about that.


// A producer = tma program moves into a gpu.func with its warp roles, which
// set the block's size: it needs exactly one warp_specialize, agreeing with
// the schedule's warps.
// expected-error @+1 {{'func.func' op with a producer = tma schedule expects one tiledattn.warp_specialize (the kernel's warp roles), but found 0}}
func.func @tma_program_without_roles() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  return
}

// -----

func.func @tma_program_with_other_roles() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  // expected-error @+1 {{'tiledattn.warp_specialize' op has 2 consumers, so the block has 384 threads, but the kernel's schedule says warps = 8 (256 threads)}}
  tiledattn.warp_specialize producer regs(24) {
  } consumers(2) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// persistent launches at most one block per multiprocessor: a program that
// does not walk its tiles with tiledattn.for_each_tile would leave most
// tiles undone.
// expected-error @+1 {{'func.func' op has a schedule with persistent = true, but its program has no tiledattn.for_each_tile: the grid would hold one block per multiprocessor and each would run one tile; walk the tiles with tiledattn.for_each_tile (in each role) or leave persistent out}}
func.func @persistent_without_tile_loop() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true>} {
  tiledattn.warp_specialize producer regs(24) {
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// A ring shared by a cluster's blocks needs the clusters kv_multicast
// launches.
// expected-error @+1 {{'func.func' op has a ring shared by a cluster's blocks (cluster(2)), but its schedule launches no clusters: expected kv_multicast = true with it, but got false}}
func.func @cluster_ring_without_clusters() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, tma_store = true>} {
  %r = tiledattn.ring releases(4) cluster(2) : !tiledattn.ring<2, 64x64xbf16>
  tiledattn.warp_specialize producer regs(24) {
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// dynamic_tiles launches with a tile counter, which only a dynamic tile loop
// takes tiles from.
// expected-error @+1 {{'gpu.func' op has a schedule with dynamic_tiles = true, whose launch hands tiles out from a counter, but no dynamic tiledattn.for_each_tile takes them; add `dynamic` to the tile loops or leave dynamic_tiles out}}
func.func @dynamic_tiles_without_dynamic_loop(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true, dynamic_tiles = true>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %n, %n, %n {
    ^bb0(%x: index, %y: index, %z: index, %done: index):
      tiledattn.yield
    }
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// split_tail launches with a workspace for the pieces of the last round,
// which only a split_tail tile loop cuts.
// expected-error @+1 {{'gpu.func' op has a schedule with split_tail = true, whose launch gives the tiles of the last round out in pieces, but no tiledattn.for_each_tile has split_tail; add it to the tile loops or leave split_tail out}}
func.func @split_tail_without_split_loop(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, split_tail = true>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %n, %n, %n {
    ^bb0(%x: index, %y: index, %z: index, %done: index):
      tiledattn.yield
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// The pieces of a split tile must meet before the store.
// expected-error @+1 {{'gpu.func' op has split_tail tile loops but no tiledattn.merge_pieces: the pieces of a tile would each be stored alone; merge them after the last P.V}}
func.func @split_tail_without_merge(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, split_tail = true>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %n, %n, %n split_tail(%n) {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %first: index, %count: index, %holders: index):
      tiledattn.yield
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// A split_tail loop needs the workspace split_tail launches with.
func.func @split_loop_without_split_tail(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true>} {
  tiledattn.warp_specialize producer regs(24) {
    // expected-error @+1 {{'tiledattn.for_each_tile' op has split_tail, which cuts the last round of a persistent grid into pieces, but the kernel's schedule has split_tail = false (no workspace for the pieces); set split_tail = true and persistent = true or leave split_tail out}}
    tiledattn.for_each_tile %n, %n, %n split_tail(%n) {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %first: index, %count: index, %holders: index):
      tiledattn.yield
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// merge_pieces merges the pieces of its tile loop.
func.func @merge_pieces_outside_tile_loop(%n: index, %o: !tiledattn.tile<64x128xf32>, %m: !tiledattn.tile<64xf32>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, split_tail = true>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %n, %n, %n split_tail(%n) {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %first: index, %count: index, %holders: index):
      tiledattn.yield
    }
  } consumers(2) regs(240) {
  ^bb0(%c: index):
    // expected-error @+1 {{'tiledattn.merge_pieces' op expected to be in a tiledattn.for_each_tile with split_tail (the pieces it merges are that loop's), but it is in no tile loop}}
    %o2, %m2, %l2 = tiledattn.merge_pieces %o, %m, %m first(%n) holders(%n) : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
  }
  return
}

// -----

// A dynamic tile loop needs the counter dynamic_tiles launches with.
func.func @dynamic_loop_without_dynamic_tiles(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, persistent = true>} {
  tiledattn.warp_specialize producer regs(24) {
    // expected-error @+1 {{'tiledattn.for_each_tile' op is dynamic, which takes its tiles from the launch's counter, but the kernel's schedule has dynamic_tiles = false (no counter, and a grid of one block per multiprocessor); set dynamic_tiles = true or leave `dynamic` out}}
    tiledattn.for_each_tile %n, %n, %n dynamic {
    ^bb0(%x: index, %y: index, %z: index, %done: index, %rank: i32):
      tiledattn.yield
    }
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// producer = cp_async stages only loads that stream with the loop.
func.func @cp_async_rhs_outside_a_loop(%q: memref<?x?x?x32xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 2, warps = 1, mma = mma_sync, producer = cp_async, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x32xf16> -> !tiledattn.tile<16x32xf16>
  // expected-error @+1 {{'tiledattn.load' op is an mma rhs, which producer = cp_async stages through shared memory; expected it directly in an scf.for body with the loop's induction variable as its row and the loop step as its row count}}
  %kt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x32xf16> -> !tiledattn.tile<16x32xf16>
  %s = tiledattn.mma %qt, %kt transposed, %acc : !tiledattn.tile<16x32xf16>, !tiledattn.tile<16x32xf16>, !tiledattn.tile<16x16xf32>
  return
}

// -----

// 16 rows of 4 chunks are 64 copies, fewer than the block's 128 threads.
func.func @cp_async_chunks_do_not_divide(%q: memref<?x?x?x32xf16>, %n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 16, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<64x16xf32>
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x32xf16> -> !tiledattn.tile<64x32xf16>
  %r = scf.for %j = %c0 to %n step %c16 iter_args(%a = %acc) -> (!tiledattn.tile<64x16xf32>) {
    // expected-error @+1 {{'tiledattn.load' op expected the tile's 16-byte chunks (16 x 4) to divide evenly among 128 threads for cp.async}}
    %kt = tiledattn.load %q[%c0, %c0, %j] : memref<?x?x?x32xf16> -> !tiledattn.tile<16x32xf16>
    %s = tiledattn.mma %qt, %kt transposed, %a : !tiledattn.tile<64x32xf16>, !tiledattn.tile<16x32xf16>, !tiledattn.tile<64x16xf32>
    scf.yield %s : !tiledattn.tile<64x16xf32>
  }
  return
}

// -----

func.func @cp_async_swizzle_wider_than_a_row(%q: memref<?x?x?x32xf16>, %n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 2, warps = 1, mma = mma_sync, producer = cp_async, swizzle = 128>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x32xf16> -> !tiledattn.tile<16x32xf16>
  %r = scf.for %j = %c0 to %n step %c16 iter_args(%a = %acc) -> (!tiledattn.tile<16x16xf32>) {
    // expected-error @+1 {{'tiledattn.load' op schedule field swizzle: 128 bytes spans more than a 64-byte tile row}}
    %kt = tiledattn.load %q[%c0, %c0, %j] : memref<?x?x?x32xf16> -> !tiledattn.tile<16x32xf16>
    %s = tiledattn.mma %qt, %kt transposed, %a : !tiledattn.tile<16x32xf16>, !tiledattn.tile<16x32xf16>, !tiledattn.tile<16x16xf32>
    scf.yield %s : !tiledattn.tile<16x16xf32>
  }
  return
}

// -----

// expected-error @+1 {{'func.func' op is marked tiledattn.kernel but has no tiledattn.schedule attribute}}
func.func @kernel_without_schedule() attributes {tiledattn.kernel} {
  return
}

// -----

// expected-error @+1 {{is marked tiledattn.kernel but has no tiledattn.schedule attribute}}
func.func @kernel_schedule_not_a_schedule() attributes {tiledattn.kernel, tiledattn.schedule = 64 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op a kernel function must return nothing}}
func.func @kernel_with_results(%x: f32) -> f32 attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  return %x : f32
}

// -----

// Regression: a kernel declaration crashed the emitter.
// expected-error @+1 {{'func.func' op is marked tiledattn.kernel but has no body}}
func.func private @kernel_declaration() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// Regression: blocks after the entry block were dropped, leaving a branch
// to a block of the erased function.
// expected-error @+1 {{'func.func' op expected a kernel body of one block, but got 2}}
func.func @kernel_with_two_blocks() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  cf.br ^bb1
^bb1:
  return
}

// -----

// Regression: a tile argument has no fragments; using it crashed the emitter.
// expected-error @+1 {{'func.func' op expected kernel arguments that are not tiles, but argument #0 is '!tiledattn.tile<16x16xf16>'}}
func.func @kernel_with_tile_argument(%t: !tiledattn.tile<16x16xf16>, %k: memref<?x?x?x16xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %kt = tiledattn.load %k[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  %s = tiledattn.mma %t, %kt transposed, %acc : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
  return
}

// -----

func.func @tile_used_with_two_layouts(%k: memref<?x?x?x16xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %qt = tiledattn.load %k[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  %kt = tiledattn.load %k[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  // expected-note @+1 {{other use here}}
  %s = tiledattn.mma %qt, %kt transposed, %acc : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
  // expected-error @+1 {{'tiledattn.mma' op uses a tile as mma lhs, but it is also used as transposed mma rhs; convert-tiledattn-to-nvgpu gives every tile one layout}}
  %t = tiledattn.mma %kt, %qt transposed, %acc : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
  return
}

// -----

func.func @non_tiledattn_op_touching_a_tile() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op takes or makes a tile, which convert-tiledattn-to-nvgpu cannot lower outside the tiledattn ops, scf.for and scf.yield}}
  %x = builtin.unrealized_conversion_cast %acc : !tiledattn.tile<16x16xf32> to i32
  return
}

// -----

func.func @scf_if_yielding_a_tile(%c: i1) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  // expected-error @+1 {{'scf.if' op takes or makes a tile}}
  %r = scf.if %c -> !tiledattn.tile<16xf32> {
    %a = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
    scf.yield %a : !tiledattn.tile<16xf32>
  } else {
    %b = tiledattn.constant 1.0 : !tiledattn.tile<16xf32>
    scf.yield %b : !tiledattn.tile<16xf32>
  }
  return
}

// -----

func.func @tiledattn_op_inside_scf_if(%o: memref<?x?x?x16xf16>, %c: i1) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %m = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
  // expected-error @+1 {{'scf.if' op holds tiledattn ops in a region, which convert-tiledattn-to-nvgpu cannot lower (only scf.for may)}}
  scf.if %c {
    tiledattn.store %acc, %m, %m into %o[%c0, %c0, %c0] : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>, memref<?x?x?x16xf16>
  }
  return
}

// -----

func.func @block_m_mismatch(%q: memref<?x?x?x16xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tiledattn.load' op expected a tile of block_m = 16 rows (mma_sync splits them 16 per warp), but got 32}}
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<32x16xf16>
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<32x32xf32>
  %kt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<32x16xf16>
  %s = tiledattn.mma %qt, %kt transposed, %acc : !tiledattn.tile<32x16xf16>, !tiledattn.tile<32x16xf16>, !tiledattn.tile<32x32xf32>
  return
}

// -----

func.func @block_m_mismatch_constant() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  // expected-error @+1 {{'tiledattn.constant' op expected a tile of block_m = 16 rows (mma_sync splits them 16 per warp), but got 64}}
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<64x16xf32>
  %f = tiledattn.constant 1.0 : !tiledattn.tile<64xf32>
  %r = tiledattn.rescale %acc, %f : !tiledattn.tile<64x16xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

func.func @lhs_columns_not_multiple_of_16(%q: memref<?x?x?x8xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  // expected-error @+1 {{'tiledattn.load' op expected tile columns to be a multiple of 16 for mma_sync m16n8k16 fragments, but got 8}}
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x8xf16> -> !tiledattn.tile<16x8xf16>
  %kt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x8xf16> -> !tiledattn.tile<16x8xf16>
  %s = tiledattn.mma %qt, %kt transposed, %acc : !tiledattn.tile<16x8xf16>, !tiledattn.tile<16x8xf16>, !tiledattn.tile<16x16xf32>
  return
}

// -----

func.func @transposed_rhs_rows_not_multiple_of_8(%q: memref<?x?x?x16xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %qt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  // expected-error @+1 {{'tiledattn.load' op expected tile rows to be a multiple of 8 for mma_sync m16n8k16 fragments, but got 12}}
  %kt = tiledattn.load %q[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<12x16xf16>
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x12xf32>
  %s = tiledattn.mma %qt, %kt transposed, %acc : !tiledattn.tile<16x16xf16>, !tiledattn.tile<12x16xf16>, !tiledattn.tile<16x12xf32>
  return
}

// -----

func.func @rhs_rows_not_multiple_of_16(%v: memref<?x?x?x8xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x8xf32>
  // expected-error @+1 {{'tiledattn.load' op expected tile rows to be a multiple of 16 for mma_sync m16n8k16 fragments, but got 8}}
  %vt = tiledattn.load %v[%c0, %c0, %c0] : memref<?x?x?x8xf16> -> !tiledattn.tile<8x8xf16>
  %pt = tiledattn.load %v[%c0, %c0, %c0] : memref<?x?x?x8xf16> -> !tiledattn.tile<16x8xf16>
  %s = tiledattn.mma %pt, %vt, %acc : !tiledattn.tile<16x8xf16>, !tiledattn.tile<8x8xf16>, !tiledattn.tile<16x8xf32>
  return
}

// -----

func.func @accumulator_columns_not_multiple_of_8(%q: memref<?x?x?x16xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tiledattn.constant' op expected tile columns to be a multiple of 8 for mma_sync m16n8k16 fragments, but got 4}}
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x4xf32>
  %f = tiledattn.constant 1.0 : !tiledattn.tile<16xf32>
  %r = tiledattn.rescale %acc, %f : !tiledattn.tile<16x4xf32>, !tiledattn.tile<16xf32>
  return
}

// -----

func.func @softmax_f32_probs_on_mma_sync(%q: memref<?x?x?x16xf16>, %scale: f32) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %s = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %m = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
  // expected-error @+1 {{'tiledattn.online_softmax' op has f32 probs (packed later by tiledattn.truncate), which only a warp-specialized (producer = tma) program lowers; expected f16 or bf16 probs here}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32> -> !tiledattn.tile<16x16xf32>
  return
}

// -----

func.func @softmax_raw_max_on_mma_sync(%q: memref<?x?x?x16xf16>, %scale: f32) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %s = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  %m = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
  // expected-error @+1 {{'tiledattn.online_softmax' op keeps raw_max maxima, which only a warp-specialized (producer = tma) program lowers; expected maxima of the scaled scores here}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale raw_max : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32> -> !tiledattn.tile<16x16xf16>
  return
}

// -----

func.func @softmax_columns_not_multiple_of_16(%q: memref<?x?x?x16xf16>, %scale: f32) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %s = tiledattn.constant 0.0 : !tiledattn.tile<16x8xf32>
  %m = tiledattn.constant 0.0 : !tiledattn.tile<16xf32>
  // expected-error @+1 {{'tiledattn.online_softmax' op expected tile columns to be a multiple of 16 for mma_sync m16n8k16 fragments, but got 8}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<16x8xf32>, !tiledattn.tile<16xf32> -> !tiledattn.tile<16x8xf16>
  return
}

// -----

func.func @f32_load_used_as_accumulator(%q: memref<?x?x?x16xf16>, %o: memref<?x?x?x16xf32>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %f = tiledattn.constant 1.0 : !tiledattn.tile<16xf32>
  // expected-error @+1 {{'tiledattn.load' op loads an f16/bf16 tile that is used as accumulator, which must be f32}}
  %acc = tiledattn.load %o[%c0, %c0, %c0] : memref<?x?x?x16xf32> -> !tiledattn.tile<16x16xf32>
  %r = tiledattn.rescale %acc, %f : !tiledattn.tile<16x16xf32>, !tiledattn.tile<16xf32>
  return
}

// -----

func.func @loop_carrying_an_rhs_tile(%k: memref<?x?x?x16xf16>, %n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %kt = tiledattn.load %k[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  %qt = tiledattn.load %k[%c0, %c0, %c0] : memref<?x?x?x16xf16> -> !tiledattn.tile<16x16xf16>
  %acc = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  // expected-error @+1 {{'scf.for' op iterates on a tile that has no lowering}}
  %r = scf.for %i = %c0 to %n step %n iter_args(%t = %kt) -> (!tiledattn.tile<16x16xf16>) {
    %s = tiledattn.mma %qt, %t transposed, %acc : !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf16>, !tiledattn.tile<16x16xf32>
    scf.yield %t : !tiledattn.tile<16x16xf16>
  }
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_not_expanded(%q: !head, %lse: !lse, %scale: f32) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>} {
  // expected-error @+1 {{'tiledattn.sdpa' op must be expanded by tiledattn-tile-sdpa first}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

func.func @score_mod_on_mma_sync(%q: memref<?x?x?x32xf16>) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  %c0 = arith.constant 0 : index
  %s = tiledattn.constant 0.0 : !tiledattn.tile<16x16xf32>
  // expected-error @+1 {{'tiledattn.score_mod' op is lowered on warpgroup accumulators (producer = tma programs, tiledattn-lower-mma) so far, not on mma_sync fragments}}
  %r = tiledattn.score_mod %s[%c0, %c0] : !tiledattn.tile<16x16xf32> {
  ^bb0(%x: f32, %i: index, %j: index):
    tiledattn.yield %x : f32
  }
  return
}

// -----

// A block walks its tiles once per role: tile loops do not nest.
func.func @nested_tile_loops(%n: index) attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128>} {
  tiledattn.warp_specialize producer regs(24) {
    tiledattn.for_each_tile %n, %n, %n {
    ^bb0(%x: index, %y: index, %z: index, %done: index):
      // expected-error @+1 {{'tiledattn.for_each_tile' op expected no enclosing tiledattn.for_each_tile (a block walks its tiles once per role)}}
      tiledattn.for_each_tile %n, %n, %n {
      ^bb0(%x2: index, %y2: index, %z2: index, %done2: index):
        tiledattn.yield
      }
      tiledattn.yield
    }
  } consumers(1) regs(240) {
  ^bb0(%c: index):
  }
  return
}

// -----

// The warp-specialized program's ops (here a shared tile) have no mma_sync
// lowering.
func.func @mma_sync_with_alloc() attributes {tiledattn.kernel, tiledattn.schedule = #tiledattn.schedule<block_m = 16, block_n = 16, num_stages = 1, warps = 1, mma = mma_sync, producer = direct, swizzle = 0>} {
  // expected-error @+1 {{'tiledattn.alloc' op is lowered only in producer = tma programs (warp roles, rings, shared memory), not by the mma_sync emitter}}
  %s = tiledattn.alloc : !tiledattn.smem<64x64xbf16>
  return
}
