// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics

// One verifier failure per block: the tile type, the schedule attribute (each
// field and each cross-field rule), then every op verifier.

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected a tile of rank 1 or 2, but got rank 3}}
func.func private @tile_rank_3(!tiledattn.tile<16x16x16xf32>)

// -----

// expected-error @+1 {{expected a tile of rank 1 or 2, but got rank 0}}
func.func private @tile_rank_0(!tiledattn.tile<f32>)

// -----

// expected-error @+1 {{expected positive tile dimensions, but got 0x64}}
func.func private @tile_zero_dim(!tiledattn.tile<0x64xf32>)

// -----

// expected-error @+1 {{expected tile element type f16, bf16 or f32, but got 'i32'}}
func.func private @tile_integer_element(!tiledattn.tile<64xi32>)

// -----

// expected-error @+1 {{expected tile element type f16, bf16 or f32, but got 'f64'}}
func.func private @tile_f64_element(!tiledattn.tile<64x64xf64>)

// -----

// expected-error @+1 {{expected static shape}}
func.func private @tile_dynamic_dim(!tiledattn.tile<?x64xf32>)

//===----------------------------------------------------------------------===//
// ScheduleAttr: each field alone
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{schedule field block_m: expected a multiple of 16 in [16, 256], but got 40}}
func.func private @schedule_block_m_not_multiple_of_16() attributes {s = #tiledattn.schedule<block_m = 40, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field block_m: expected a multiple of 16 in [16, 256], but got 0}}
func.func private @schedule_block_m_zero() attributes {s = #tiledattn.schedule<block_m = 0, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field block_m: expected a multiple of 16 in [16, 256], but got 512}}
func.func private @schedule_block_m_too_large() attributes {s = #tiledattn.schedule<block_m = 512, block_n = 64, num_stages = 1, warps = 32, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field block_n: expected a multiple of 16 in [16, 256], but got 24}}
func.func private @schedule_block_n_not_multiple_of_16() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 24, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field block_n: expected a multiple of 16 in [16, 256], but got -16}}
func.func private @schedule_block_n_negative() attributes {s = #tiledattn.schedule<block_m = 64, block_n = -16, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field block_n: expected a multiple of 16 in [16, 256], but got 272}}
func.func private @schedule_block_n_too_large() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 272, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field num_stages: expected a value in [1, 8], but got 0}}
func.func private @schedule_num_stages_zero() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 0, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field num_stages: expected a value in [1, 8], but got 9}}
func.func private @schedule_num_stages_too_many() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 9, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field warps: expected a value in [1, 32], but got 0}}
func.func private @schedule_warps_zero() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 0, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field warps: expected a value in [1, 32], but got 64}}
func.func private @schedule_warps_too_many() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 64, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field swizzle: expected 0, 32, 64 or 128 bytes, but got 16}}
func.func private @schedule_swizzle_not_a_mode() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 16>}

// -----

// expected-error @+2 {{expected one of [mma_sync, wgmma] for matrix instruction family, got: mfma}}
// expected-error @+1 {{failed to parse TiledAttn_ScheduleAttr parameter 'mma'}}
func.func private @schedule_unknown_mma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mfma, producer = direct, swizzle = 0>}

// -----

// expected-error @+2 {{expected one of [direct, cp_async, tma] for how K/V tiles reach the mma, got: ldg}}
// expected-error @+1 {{failed to parse TiledAttn_ScheduleAttr parameter 'producer'}}
func.func private @schedule_unknown_producer() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = ldg, swizzle = 0>}

// -----

// expected-error @+1 {{struct is missing required parameter: swizzle}}
func.func private @schedule_missing_field() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct>}

//===----------------------------------------------------------------------===//
// ScheduleAttr: fields against each other
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{schedule field block_m: mma_sync gives each warp 16 query rows, so expected block_m = 16 * warps = 128, but got 64}}
func.func private @schedule_mma_sync_warps_mismatch() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 8, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field warps: wgmma runs on whole warpgroups, so expected a multiple of 4, but got 6}}
func.func private @schedule_wgmma_partial_warpgroup() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 6, mma = wgmma, producer = cp_async, swizzle = 128>}

// -----

// expected-error @+1 {{schedule field mma: producer = tma feeds the warp-specialized wgmma kernel, so expected wgmma, but got mma_sync}}
func.func private @schedule_tma_mma_sync() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = tma, swizzle = 128>}

// -----

// expected-error @+1 {{schedule field consumer_warpgroups: expected 1, 2 or 3, but got 4}}
func.func private @schedule_tma_four_consumers() attributes {s = #tiledattn.schedule<block_m = 256, block_n = 64, num_stages = 2, warps = 20, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 4, consumer_regs = 96>}

// -----

// expected-error @+1 {{schedule field consumer_warpgroups: expected 1, 2 or 3, but got 0}}
func.func private @schedule_tma_no_consumers() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 0>}

// -----

// expected-error @+1 {{schedule field warps: producer = tma runs one producer warpgroup and consumer_warpgroups = 2 consumer warpgroups, so expected warps = 12, but got 8}}
func.func private @schedule_tma_warps() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>}

// -----

// expected-error @+1 {{schedule field block_m: each consumer warpgroup owns 64 query rows, so expected block_m = 64 * consumer_warpgroups = 128, but got 64}}
func.func private @schedule_tma_block_m() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>}

// -----

// expected-error @+1 {{schedule field swizzle: producer = tma loads 64-element (128-byte) boxes that wgmma reads with the 128-byte swizzle, so expected 128, but got 64}}
func.func private @schedule_tma_swizzle() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 64, consumer_warpgroups = 2>}

// -----

// expected-error @+1 {{schedule field producer_regs: setmaxnreg takes a multiple of 8 in [24, 256], but got 20}}
func.func private @schedule_tma_producer_regs() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 20>}

// -----

// expected-error @+1 {{schedule field consumer_regs: setmaxnreg takes a multiple of 8 in [24, 256], but got 250}}
func.func private @schedule_tma_consumer_regs() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, consumer_regs = 250>}

// -----

// expected-error @+1 {{schedule fields producer_regs, consumer_regs: 128 * (producer_regs + consumer_warpgroups * consumer_regs) = 68608 registers, but a multiprocessor has 65536}}
func.func private @schedule_tma_register_file() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 40, consumer_regs = 248>}

// -----

// expected-error @+1 {{schedule field pingpong: takes turns between consumer warpgroups, so expected consumer_warpgroups >= 2, but got 1}}
func.func private @schedule_tma_pingpong_one_consumer() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, pingpong = true>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_hopper_fields_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, overlap_softmax = true>}

// -----

// Each Hopper-only field alone: a register budget without producer = tma.
// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = direct}}
func.func private @schedule_consumer_regs_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0, consumer_regs = 232>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_persistent_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, persistent = true>}

// -----

// expected-error @+1 {{schedule field raw_maxima: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = direct}}
func.func private @schedule_raw_maxima_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0, raw_maxima = true>}

// -----

// expected-error @+1 {{schedule field one_thread_producer: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_one_thread_producer_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, one_thread_producer = true>}

// -----

// expected-error @+1 {{schedule field narrow_consumer_index: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = direct}}
func.func private @schedule_narrow_consumer_index_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0, narrow_consumer_index = true>}

// -----

// expected-error @+1 {{schedule field overlap_epilogue: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_overlap_epilogue_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, overlap_epilogue = true>}

// -----

// expected-error @+1 {{schedule field overlap_epilogue: runs the rows' totals under the tile's last P.V, which only overlap_softmax leaves in flight, for O stored by TMA after it, so expected overlap_softmax = true, tma_store = true and defer_store = false with it, but got overlap_softmax = false, tma_store = false, defer_store = false}}
func.func private @schedule_overlap_epilogue_without_overlap() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_epilogue = true>}

// -----

// expected-error @+1 {{schedule field overlap_epilogue: runs the rows' totals under the tile's last P.V, which only overlap_softmax leaves in flight, for O stored by TMA after it, so expected overlap_softmax = true, tma_store = true and defer_store = false with it, but got overlap_softmax = true, tma_store = false, defer_store = false}}
func.func private @schedule_overlap_epilogue_without_tma_store() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, overlap_epilogue = true>}

// -----

// expected-error @+1 {{schedule field overlap_epilogue: runs the rows' totals under the tile's last P.V, which only overlap_softmax leaves in flight, for O stored by TMA after it, so expected overlap_softmax = true, tma_store = true and defer_store = false with it, but got overlap_softmax = true, tma_store = true, defer_store = true}}
func.func private @schedule_overlap_epilogue_deferred() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, tma_store = true, q_buffers = 2, defer_store = true, overlap_epilogue = true>}

// -----

// expected-error @+1 {{schedule field defer_store: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_defer_store_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, defer_store = true>}

// -----

// expected-error @+1 {{schedule field defer_store: stores a tile's O under the next tile's first Q.K^T, so expected persistent = true, tma_store = true, q_buffers = 2 and overlap_softmax = true with it, but got persistent = false, tma_store = true, q_buffers = 1, overlap_softmax = true}}
func.func private @schedule_defer_store_not_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, tma_store = true, defer_store = true>}

// -----

// expected-error @+1 {{schedule field defer_store: stores a tile's O under the next tile's first Q.K^T, so expected persistent = true, tma_store = true, q_buffers = 2 and overlap_softmax = true with it, but got persistent = true, tma_store = false, q_buffers = 2, overlap_softmax = true}}
func.func private @schedule_defer_store_without_tma_store() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, q_buffers = 2, defer_store = true>}

// -----

// expected-error @+1 {{schedule field defer_store: stores a tile's O under the next tile's first Q.K^T, so expected persistent = true, tma_store = true, q_buffers = 2 and overlap_softmax = true with it, but got persistent = true, tma_store = true, q_buffers = 1, overlap_softmax = true}}
func.func private @schedule_defer_store_one_q_buffer() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, tma_store = true, defer_store = true>}

// -----

// expected-error @+1 {{schedule field defer_store: stores a tile's O under the next tile's first Q.K^T, so expected persistent = true, tma_store = true, q_buffers = 2 and overlap_softmax = true with it, but got persistent = true, tma_store = true, q_buffers = 2, overlap_softmax = false}}
func.func private @schedule_defer_store_without_overlap() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, q_buffers = 2, defer_store = true>}

// -----

// Three consumers need the register file split three ways: 240 each is too many.
// expected-error @+1 {{schedule fields producer_regs, consumer_regs: 128 * (producer_regs + consumer_warpgroups * consumer_regs) = 95232 registers, but a multiprocessor has 65536}}
func.func private @schedule_tma_three_consumers_registers() attributes {s = #tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2, warps = 16, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 3>}

// -----

// expected-error @+1 {{schedule field block_m: wgmma covers 64 rows per warpgroup, so expected a multiple of 64, but got 96}}
func.func private @schedule_wgmma_block_m() attributes {s = #tiledattn.schedule<block_m = 96, block_n = 64, num_stages = 2, warps = 4, mma = wgmma, producer = cp_async, swizzle = 128>}

// -----

// expected-error @+1 {{schedule field num_stages: producer = direct stages nothing in shared memory, so expected 1, but got 2}}
func.func private @schedule_direct_with_stages() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>}

// -----

// expected-error @+1 {{schedule field swizzle: producer = direct stages nothing in shared memory, so expected 0, but got 128}}
func.func private @schedule_direct_with_swizzle() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 128>}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

// -----

!f32head = memref<?x?x?x64xf32>
!lse = memref<?x?x?xf32>
func.func @sdpa_f32_heads(%q: !f32head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{'tiledattn.sdpa' op expected q element type f16 or bf16, but got 'f32'}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !f32head, !f32head, !f32head, !f32head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_integer_heads(%q: memref<?x?x?x64xi16>, %k: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{operand #0 must be 4D memref of 16-bit float or bfloat16 type or 32-bit float values}}
  tiledattn.sdpa %q, %k, %k, %scale into %k, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x?x?x64xi16>, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_rank_3_head(%q: memref<?x?x64xf16>, %k: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{operand #0 must be 4D memref}}
  tiledattn.sdpa %q, %k, %k, %scale into %k, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x?x64xf16>, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
func.func @sdpa_rank_4_lse(%q: !head, %lse: memref<?x?x?x1xf32>, %scale: f32) {
  // expected-error @+1 {{operand #5 must be 3D memref of 32-bit float values}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, memref<?x?x?x1xf32>
  return
}

// -----

!head = memref<?x?x?x?xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_dynamic_head_dim(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected a static head dim (dimension 3 of q)}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_k_element_type_mismatch(%q: !head, %k: memref<?x?x?x64xbf16>, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected k element type 'f16' (the element type of q), but got 'bf16'}}
  tiledattn.sdpa %q, %k, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, memref<?x?x?x64xbf16>, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_o_head_dim_not_v(%q: !head, %v: memref<?x?x?x128xf16>, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected o head dim (dimension 3) 128 (the head dim of v), but got 64}}
  tiledattn.sdpa %q, %q, %v, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, memref<?x?x?x128xf16>, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_k_head_dim_not_q(%q: !head, %k: memref<?x?x?x128xf16>, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected k head dim (dimension 3) 64 (the head dim of q), but got 128}}
  tiledattn.sdpa %q, %k, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, memref<?x?x?x128xf16>, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!vo = memref<?x?x?x128xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_mma_sync_value_head_dim(%q: !head, %v: !vo, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected the value head dim to equal the head dim 64 (a value head dim of its own needs producer = tma), but got 128}}
  tiledattn.sdpa %q, %q, %v, %scale into %v, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !vo, !vo, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_v_dynamic_head_dim(%q: !head, %v: memref<?x?x?x?xf16>, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected a static value head dim (dimension 3 of v)}}
  tiledattn.sdpa %q, %q, %v, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, memref<?x?x?x?xf16>, !head, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_o_dynamic_head_dim(%q: !head, %o: memref<?x?x?x?xf16>, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected o head dim (dimension 3) 64 (the head dim of v), but got ?}}
  tiledattn.sdpa %q, %q, %q, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, memref<?x?x?x?xf16>, !lse
  return
}

// -----

!head = memref<?x?x?x64xf16>
!strided = memref<?x?x?x64xf16, strided<[?, ?, ?, 2], offset: ?>>
!lse = memref<?x?x?xf32>
func.func @sdpa_non_unit_inner_stride(%q: !head, %o: !strided, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected o to have a unit innermost stride, but got 'memref<?x?x?x64xf16, strided<[?, ?, ?, 2], offset: ?>>'}}
  tiledattn.sdpa %q, %q, %q, %scale into %o, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !strided, !lse
  return
}

// -----

!head = memref<?x?x?x32xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_head_dim_32(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected head dim 64 or 128 (192 and 256 need producer = tma), but got 32}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x96xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_head_dim_96(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected head dim 64 or 128 (192 and 256 need producer = tma), but got 96}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x256xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_head_dim_256(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected head dim 64 or 128 (192 and 256 need producer = tma), but got 256}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_cp_async_shared_memory_over_227_kib(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs 262144 bytes of shared memory (block_m, block_n, num_stages, q_buffers, dynamic_tiles with head dim 128), but sm_90 gives a block at most 232448}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 4, warps = 8, mma = mma_sync, producer = cp_async, swizzle = 128>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_shared_memory_over_227_kib(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs 558080 bytes of shared memory}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 8, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

// -----

func.func @constant_f16_tile() {
  // expected-error @+1 {{'tiledattn.constant' op expected an f32 result tile, but got '!tiledattn.tile<64x64xf16>'}}
  %0 = tiledattn.constant 0.0 : !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @constant_non_tile_result() {
  // expected-error @+1 {{'tiledattn.constant' op result #0 must be tiledattn tile, but got 'f32'}}
  %0 = tiledattn.constant 0.0 : f32
  return
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

// -----

func.func @load_rank_1_tile(%src: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.load' op expected a rank-2 result tile, but got '!tiledattn.tile<64xf16>'}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x?x64xf16> -> !tiledattn.tile<64xf16>
  return
}

// -----

func.func @load_element_type_mismatch(%src: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{expected result element type 'f16' (the source's), but got 'bf16'}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x?x64xf16> -> !tiledattn.tile<64x64xbf16>
  return
}

// -----

func.func @load_column_count_mismatch(%src: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{expected the tile's column count to equal the source head dim 64, but got 128}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x?x64xf16> -> !tiledattn.tile<64x128xf16>
  return
}

// -----

func.func @load_rank_3_source(%src: memref<?x?x64xf16>, %i: index) {
  // expected-error @+1 {{operand #0 must be 4D memref}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x64xf16> -> !tiledattn.tile<64x64xf16>
  return
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

// -----

func.func @mma_rank_1_lhs(%a: !tiledattn.tile<64xf16>, %b: !tiledattn.tile<64x64xf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{'tiledattn.mma' op expected rank-2 lhs, rhs and acc tiles}}
  %0 = tiledattn.mma %a, %b, %c : !tiledattn.tile<64xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_f32_lhs(%a: !tiledattn.tile<64x64xf32>, %b: !tiledattn.tile<64x64xf32>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{expected lhs element type f16 or bf16, but got 'f32'}}
  %0 = tiledattn.mma %a, %b, %c : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_rhs_element_type_mismatch(%a: !tiledattn.tile<64x64xf16>, %b: !tiledattn.tile<64x64xbf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{expected rhs element type 'f16' (the lhs's), but got 'bf16'}}
  %0 = tiledattn.mma %a, %b, %c : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xbf16>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_f16_acc(%a: !tiledattn.tile<64x64xf16>, %b: !tiledattn.tile<64x64xf16>, %c: !tiledattn.tile<64x64xf16>) {
  // expected-error @+1 {{expected acc element type f32, but got 'f16'}}
  %0 = tiledattn.mma %a, %b, %c : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @mma_reduction_dim_mismatch(%a: !tiledattn.tile<64x64xf16>, %b: !tiledattn.tile<32x64xf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{expected rhs reduction dim 64 (lhs is 64x64) as dim 0 of rhs, but got 32}}
  %0 = tiledattn.mma %a, %b, %c : !tiledattn.tile<64x64xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_transposed_reduction_dim_mismatch(%a: !tiledattn.tile<64x128xf16>, %b: !tiledattn.tile<64x64xf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{expected rhs reduction dim 128 (lhs is 64x128) as dim 1 of the transposed rhs, but got 64}}
  %0 = tiledattn.mma %a, %b transposed, %c : !tiledattn.tile<64x128xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_acc_shape_mismatch(%a: !tiledattn.tile<64x64xf16>, %b: !tiledattn.tile<32x64xf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{expected acc tile shape MxN = 64x32, but got 64x64}}
  %0 = tiledattn.mma %a, %b transposed, %c : !tiledattn.tile<64x64xf16>, !tiledattn.tile<32x64xf16>, !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @mma_result_type_mismatch(%a: !tiledattn.tile<64x64xf16>, %c: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{failed to verify that all of {acc, result} have same type}}
  %0 = "tiledattn.mma"(%a, %a, %c) : (!tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x64xf32>) -> !tiledattn.tile<64x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// MaskOp
//===----------------------------------------------------------------------===//

// -----

func.func @mask_f16_scores(%s: !tiledattn.tile<64x64xf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.mask' op expected a rank-2 f32 score tile, but got '!tiledattn.tile<64x64xf16>'}}
  %0 = tiledattn.mask %s, %i, %i, %i : !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @mask_rank_1_scores(%s: !tiledattn.tile<64xf32>, %i: index) {
  // expected-error @+1 {{expected a rank-2 f32 score tile, but got '!tiledattn.tile<64xf32>'}}
  %0 = tiledattn.mask %s, %i, %i, %i causal : !tiledattn.tile<64xf32>
  return
}

//===----------------------------------------------------------------------===//
// OnlineSoftmaxOp
//===----------------------------------------------------------------------===//

// -----

func.func @online_softmax_f16_scores(%s: !tiledattn.tile<64x64xf16>, %m: !tiledattn.tile<64xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.online_softmax' op expected a rank-2 f32 score tile, but got '!tiledattn.tile<64x64xf16>'}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @online_softmax_exp2_on_fma_zero(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.online_softmax' op expected exp2_on_fma in [1, 32] (a thread's scores per block) but got 0}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale exp2_on_fma(0) : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @online_softmax_exp2_on_fma_past_the_scores(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.online_softmax' op expected exp2_on_fma in [1, 32] (a thread's scores per block) but got 33}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale exp2_on_fma(33) : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @online_softmax_row_max_rows(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<32xf32>, %scale: f32) {
  // expected-error @+1 {{expected row_max to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<32xf32>'}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<64x64xf32>, !tiledattn.tile<32xf32> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @online_softmax_rank_2_row_max(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64x1xf32>, %scale: f32) {
  // expected-error @+1 {{expected row_max to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<64x1xf32>'}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64x1xf32> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @online_softmax_row_sum_type_mismatch(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %l: !tiledattn.tile<32xf32>, %scale: f32) {
  // expected-error @+1 {{failed to verify that all of {row_max, row_sum, new_row_max, new_row_sum, rescale} have same type}}
  %p:4 = "tiledattn.online_softmax"(%s, %m, %l, %scale) : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<32xf32>, f32) -> (!tiledattn.tile<64x64xf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>)
  return
}

// -----

func.func @online_softmax_probs_shape_mismatch(%s: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %scale: f32) {
  // expected-error @+1 {{expected probs to be !tiledattn.tile<64x64xf16>, bf16 or f32, but got '!tiledattn.tile<64x32xbf16>'}}
  %p:4 = tiledattn.online_softmax %s, %m, %m, %scale : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32> -> !tiledattn.tile<64x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// RescaleOp
//===----------------------------------------------------------------------===//

// -----

func.func @scale_max_of_a_score_tile(%s: !tiledattn.tile<64x64xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.scale_max' op expected row_max to be a rank-1 f32 tile (a row's value each), but got '!tiledattn.tile<64x64xf32>'}}
  %m = tiledattn.scale_max %s, %scale : !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @rescale_f16_acc(%acc: !tiledattn.tile<64x64xf16>, %f: !tiledattn.tile<64xf32>) {
  // expected-error @+1 {{'tiledattn.rescale' op expected a rank-2 f32 acc tile, but got '!tiledattn.tile<64x64xf16>'}}
  %0 = tiledattn.rescale %acc, %f : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64xf32>
  return
}

// -----

func.func @rescale_factor_rows(%acc: !tiledattn.tile<64x64xf32>, %f: !tiledattn.tile<128xf32>) {
  // expected-error @+1 {{expected factor to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<128xf32>'}}
  %0 = tiledattn.rescale %acc, %f : !tiledattn.tile<64x64xf32>, !tiledattn.tile<128xf32>
  return
}

//===----------------------------------------------------------------------===//
// StoreOp
//===----------------------------------------------------------------------===//

// -----

func.func @store_rank_1_acc(%acc: !tiledattn.tile<64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.store' op expected a rank-2 f32 acc tile, but got '!tiledattn.tile<64xf32>'}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf16>
  return
}

// -----

func.func @store_row_max_rows(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<16xf32>, %o: memref<?x?x?x64xf16>, %i: index) {
  // expected-error @+1 {{expected row_max to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<16xf32>'}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<16xf32>, memref<?x?x?x64xf16>
  return
}

// -----

func.func @store_f32_dest(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{expected dest element type f16 or bf16, but got 'f32'}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf32>
  return
}

// -----

func.func @store_dest_head_dim_mismatch(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x128xbf16>, %i: index) {
  // expected-error @+1 {{expected dest head dim 64 (the acc tile's column count), or one it fills in 64-column atoms, but got 128}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x128xbf16>
  return
}

// -----

func.func @store_dest_dynamic_head_dim(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x?xf16>, %i: index) {
  // expected-error @+1 {{expected dest head dim 64 (the acc tile's column count), or one it fills in 64-column atoms, but got ?}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x?xf16>
  return
}

// -----

func.func @store_rank_2_lse(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x64xf16>, %lse: memref<?x?xf32>, %i: index) {
  // expected-error @+1 {{operand #7 must be 3D memref of 32-bit float values, but got 'memref<?x?xf32>'}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] lse(%lse) : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf16>, memref<?x?xf32>
  return
}

//===----------------------------------------------------------------------===//
// Regressions
//===----------------------------------------------------------------------===//

// -----

// The dynamic head dim used to print as -9223372036854775808.
func.func @load_dynamic_head_dim(%src: memref<?x?x?x?xf16>, %i: index) {
  // expected-error @+1 {{expected the tile's column count to equal the source head dim ?, but got 64}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x?x?xf16> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

// A strided row used to reach vector.load in convert-tiledattn-to-nvgpu and
// fail verification after the pass.
func.func @load_non_unit_inner_stride(%src: memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>>, %i: index) {
  // expected-error @+1 {{'tiledattn.load' op expected source to have a unit innermost stride, but got 'memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>>'}}
  %0 = tiledattn.load %src[%i, %i, %i] : memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>> -> !tiledattn.tile<64x64xf16>
  return
}

// -----

func.func @store_non_unit_inner_stride(%acc: !tiledattn.tile<64x64xf32>, %m: !tiledattn.tile<64xf32>, %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>>, %i: index) {
  // expected-error @+1 {{'tiledattn.store' op expected dest to have a unit innermost stride, but got 'memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>>'}}
  tiledattn.store %acc, %m, %m into %o[%i, %i, %i] : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>, memref<?x?x?x64xf16, strided<[?, ?, ?, 2]>>
  return
}

// -----

// Static sizes that disagree made the kernel read out of bounds.
func.func @sdpa_batch_mismatch(%q: memref<2x8x128x64xf16>, %k: memref<3x8x128x64xf16>, %lse: memref<2x8x128xf32>, %scale: f32) {
  // expected-error @+1 {{expected k batch (dimension 0) 2 (the batch (dimension 0) of q), but got 3}}
  tiledattn.sdpa %q, %k, %k, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<2x8x128x64xf16>, memref<3x8x128x64xf16>, memref<3x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128xf32>
  return
}

// -----

func.func @sdpa_kv_sequence_mismatch(%q: memref<?x?x?x64xf16>, %k: memref<?x?x128x64xf16>, %v: memref<?x?x96x64xf16>, %lse: memref<?x?x?xf32>, %scale: f32) {
  // expected-error @+1 {{expected v sequence length (dimension 2) 128 (the sequence length (dimension 2) of k), but got 96}}
  tiledattn.sdpa %q, %k, %v, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x?x?x64xf16>, memref<?x?x128x64xf16>, memref<?x?x96x64xf16>, memref<?x?x?x64xf16>, memref<?x?x?xf32>
  return
}

// -----

func.func @sdpa_lse_heads_mismatch(%q: memref<?x8x?x64xf16>, %lse: memref<?x4x?xf32>, %scale: f32) {
  // expected-error @+1 {{expected lse heads (dimension 1) 8 (the heads (dimension 1) of q), but got 4}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x4x?xf32>
  return
}

// -----

// Hq / Hkv rounded down (or to zero) maps query heads to the wrong K/V head.
func.func @sdpa_gqa_heads_not_a_multiple(%q: memref<?x8x?x64xf16>, %k: memref<?x3x?x64xf16>, %lse: memref<?x?x?xf32>, %scale: f32) {
  // expected-error @+1 {{expected the query heads (dimension 1 of q) to be a multiple of the key/value heads (dimension 1 of k), but got 8 and 3}}
  tiledattn.sdpa %q, %k, %k, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x8x?x64xf16>, memref<?x3x?x64xf16>, memref<?x3x?x64xf16>, memref<?x8x?x64xf16>, memref<?x?x?xf32>
  return
}

// -----

func.func @sdpa_gqa_more_kv_heads_than_q(%q: memref<?x2x?x64xf16>, %k: memref<?x4x?x64xf16>, %lse: memref<?x?x?xf32>, %scale: f32) {
  // expected-error @+1 {{but got 2 and 4}}
  tiledattn.sdpa %q, %k, %k, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
      : memref<?x2x?x64xf16>, memref<?x4x?x64xf16>, memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x?x?xf32>
  return
}

// -----

!head = memref<?x?x?x256xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_registers(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs about 254 registers per consumer thread (block_n = 128, head dim 256), but consumer_regs is 240; lower block_n or raise consumer_regs}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 1, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x72xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_head_dim(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected head dim a positive multiple of 16 up to 256 (producer = tma runs it on tiles of whole 64-column boxes, wgmma takes N <= 256), but got 72}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// A head dim of 0 (the tiles would have no columns; a fuzzed program with it
// and q_in_registers crashed tiledattn-lower-mma).
!head = memref<?x?x?x0xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_head_dim_zero(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected head dim a positive multiple of 16 up to 256 (producer = tma runs it on tiles of whole 64-column boxes, wgmma takes N <= 256), but got 0}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

!head = memref<?x?x?x128xbf16>
!vo = memref<?x?x?x320xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_value_head_dim(%q: !head, %v: !vo, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{expected value head dim a positive multiple of 16 up to 256 (producer = tma runs it on tiles of whole 64-column boxes, wgmma takes N <= 256), but got 320}}
  tiledattn.sdpa %q, %q, %v, %scale into %v, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2>)
      : !head, !head, !vo, !vo, !lse
  return
}

// -----

// expected-error @+1 {{schedule field ctas_per_sm: expected 1 or 2, but got 3}}
func.func private @schedule_tma_ctas_per_sm() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, ctas_per_sm = 3>}

// -----

// expected-error @+1 {{schedule fields producer_regs, consumer_regs: 128 * (producer_regs + consumer_warpgroups * consumer_regs) = 33792 registers per block, times ctas_per_sm = 2, but a multiprocessor has 65536}}
func.func private @schedule_tma_two_ctas_registers() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, ctas_per_sm = 2>}

// -----

// expected-error @+1 {{schedule fields producer_regs, consumer_regs: with ctas_per_sm = 2 a thread starts with 128 registers, so expected producer_regs <= 128 <= consumer_regs, but got 24 and 120}}
func.func private @schedule_tma_two_ctas_entry() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, consumer_regs = 120, ctas_per_sm = 2>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_ctas_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, ctas_per_sm = 2>}

// -----

// One consumer, block_n 32: shared memory fits two blocks, but the m64n256
// P.V accumulator (128 registers) does not fit .maxnreg 128.
!head256 = memref<?x?x?x256xbf16>
!lse256 = memref<?x?x?xf32>
func.func @sdpa_tma_two_ctas_wide_wgmma(%q: !head256, %lse: !lse256, %scale: f32) {
  // expected-error @+1 {{schedule field ctas_per_sm: 2 blocks per multiprocessor build the kernel with .maxnreg 128, but its widest wgmma (m64n256, block_n 32 and head dim 256) needs about 158; expected ctas_per_sm = 1 here}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 32, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, consumer_regs = 232, ctas_per_sm = 2>)
      : !head256, !head256, !head256, !head256, !lse256
  return
}

// -----

!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_two_ctas_shared_memory(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs 148480 bytes of shared memory per block, and ctas_per_sm = 2 blocks of it (plus 1024 each) exceed the 233472 bytes of a multiprocessor}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 64, block_n = 128, num_stages = 2, warps = 8, mma = wgmma, producer = tma, swizzle = 128, consumer_regs = 232, ctas_per_sm = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// Three consumers split the register file 32 + 3 x 160: block_n 96 at head
// dim 128 needs more than 160 (ptxas spills there).
!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_three_consumers_registers(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs about 166 registers per consumer thread (block_n = 96, head dim 128), but consumer_regs is 160; lower block_n or raise consumer_regs}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 192, block_n = 96, num_stages = 2, warps = 16, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 3, producer_regs = 32, consumer_regs = 160>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_tma_store_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, tma_store = true>}

// -----

// expected-error @+1 {{schedule field tile_order: only a persistent block chooses the order of its tiles (a grid of one block per tile runs by_head), so expected by_head without persistent = true, but got across_heads}}
func.func private @schedule_tile_order_not_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, tile_order = across_heads>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_tile_order_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, tile_order = across_heads>}

// -----

// expected-error @+2 {{expected one of [by_head, across_heads] for the order a persistent kernel runs its (query block, head, batch) tiles in, got: sideways}}
// expected-error @+1 {{failed to parse TiledAttn_ScheduleAttr parameter 'tile_order'}}
func.func private @schedule_tile_order_unknown() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tile_order = sideways>}

// -----

// A persistent kernel with two Q buffers that stores O by TMA stages it in a
// tile of its own: 1024 + 2 x Q 128 x 128 x 2 + 3 x 2 x 128 x 128 x 2
// + O 128 x 128 x 2 + 16 bytes of tile slots, where one Q buffer (O staged
// in it, no slots) would fit.
!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_tma_store_persistent_shared_memory(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs 295952 bytes of shared memory (block_m, block_n, num_stages, q_buffers, dynamic_tiles with head dim 128), but sm_90 gives a block at most 232448}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 3, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 32, consumer_regs = 232, persistent = true, tma_store = true, q_buffers = 2, dynamic_tiles = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule field q_buffers: expected 1 or 2, but got 3}}
func.func private @schedule_q_buffers_range() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, q_buffers = 3>}

// -----

// expected-error @+1 {{schedule field q_buffers: a second Q buffer holds the next tile's Q, which only a persistent block has, so expected 1 without persistent = true, but got 2}}
func.func private @schedule_q_buffers_not_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, q_buffers = 2>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_q_buffers_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, q_buffers = 2>}

// -----

// expected-error @+1 {{schedule field dynamic_tiles: hands the tiles of a persistent block out one at a time, so expected persistent = true with it, but got persistent = false}}
func.func private @schedule_dynamic_tiles_not_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, dynamic_tiles = true>}

// -----

// expected-error @+1 {{schedule fields consumer_warpgroups, producer_regs, consumer_regs, pingpong, overlap_softmax, ctas_per_sm, persistent, tma_store, q_buffers, dynamic_tiles and tile_order shape the warp-specialized kernel and need producer = tma, but got producer = cp_async}}
func.func private @schedule_dynamic_tiles_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, dynamic_tiles = true>}

// -----

// Two Q tiles count twice: 1024 + 2 x Q 128 x 128 x 2 + 3 x 2 x 128 x 128 x 2
// + O 128 x 128 x 2 fits no block, where one Q tile and 2 stages would.
!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_q_buffers_shared_memory(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs 295936 bytes of shared memory (block_m, block_n, num_stages, q_buffers, dynamic_tiles with head dim 128), but sm_90 gives a block at most 232448}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 3, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, persistent = true, tma_store = true, q_buffers = 2>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{expected tiledattn.min_seqlen_k to be a positive integer (a key/value length), but got 0 : i64}}
func.func private @min_seqlen_k_zero() attributes {tiledattn.min_seqlen_k = 0 : i64}

// -----

// expected-error @+1 {{expected tiledattn.max_seqlen_k to be a positive integer (a key/value length), but got "long"}}
func.func private @max_seqlen_k_string() attributes {tiledattn.max_seqlen_k = "long"}

// -----

// expected-error @+1 {{expected tiledattn.min_seqlen_k to be a positive integer (a key/value length), but got true}}
func.func private @min_seqlen_k_bool() attributes {tiledattn.min_seqlen_k = true}

// -----

// expected-error @+1 {{expected tiledattn.min_seqlen_k <= tiledattn.max_seqlen_k, but got 4096 and 2048}}
func.func private @seqlen_k_range_empty() attributes {tiledattn.min_seqlen_k = 4096 : i64, tiledattn.max_seqlen_k = 2048 : i64}

// -----

// expected-error @+1 {{expected tiledattn.max_seqlen_k on the function that holds tiledattn.sdpa, but it is on builtin.module}}
module attributes {tiledattn.max_seqlen_k = 2048 : i64} {}

// -----

// Schedules that still ask for the removed convert-sdpa-to-hopper are told so.
// expected-error @+1 {{tiledattn.hopper_emitter: the lowering it picked, convert-sdpa-to-hopper, is gone; every schedule lowers through its tile program now, so remove the attribute}}
func.func private @hopper_emitter() attributes {tiledattn.hopper_emitter}

// -----

// expected-error @+1 {{schedule field narrow_diagonal: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_narrow_diagonal_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, narrow_diagonal = true>}

// -----

// expected-error @+1 {{schedule field narrow_diagonal: computes the first 64 of a block's block_n keys, so expected overlap_softmax = true and block_n > 64 with it, but got overlap_softmax = false, block_n = 128}}
func.func private @schedule_narrow_diagonal_without_overlap() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, narrow_diagonal = true>}

// -----

// expected-error @+1 {{schedule field narrow_diagonal: computes the first 64 of a block's block_n keys, so expected overlap_softmax = true and block_n > 64 with it, but got overlap_softmax = true, block_n = 64}}
func.func private @schedule_narrow_diagonal_block_n_64() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, narrow_diagonal = true>}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32>
func.func @sdpa_narrow_diagonal_not_causal(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule field narrow_diagonal: narrows the causal diagonal, so expected false without causal, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, narrow_diagonal = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule field skip_masked_blocks: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_skip_masked_blocks_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, skip_masked_blocks = true>}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32>
func.func @sdpa_skip_masked_blocks_not_causal(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule field skip_masked_blocks: skips blocks the causal mask hides, so expected false without causal, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, skip_masked_blocks = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule field uniform_consumer: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_uniform_consumer_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, uniform_consumer = true>}

// -----

// expected-error @+1 {{schedule field hold_packed: packs the O that defer_store holds for the next tile, so expected defer_store = true with it, but got defer_store = false}}
func.func private @schedule_hold_packed_without_defer_store() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, tma_store = true, q_buffers = 2, hold_packed = true>}

// -----

// expected-error @+1 {{schedule field hold_packed: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_hold_packed_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, hold_packed = true>}

// -----

// expected-error @+1 {{schedule field split_tail: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_split_tail_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, split_tail = true>}

// -----

// expected-error @+1 {{schedule field split_tail: cuts the last round's tiles of the static persistent order and merges them before the rows' totals, so expected persistent = true, tma_store = true, dynamic_tiles = false and overlap_epilogue = false with it, but got persistent = true, tma_store = false, dynamic_tiles = false, overlap_epilogue = false}}
func.func private @schedule_split_tail_without_tma_store() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, split_tail = true>}

// -----

// expected-error @+1 {{schedule field split_tail: cuts the last round's tiles of the static persistent order and merges them before the rows' totals, so expected persistent = true, tma_store = true, dynamic_tiles = false and overlap_epilogue = false with it, but got persistent = true, tma_store = true, dynamic_tiles = true, overlap_epilogue = false}}
func.func private @schedule_split_tail_dynamic() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, tma_store = true, q_buffers = 2, defer_store = true, dynamic_tiles = true, split_tail = true>}

// -----

// expected-error @+1 {{schedule field split_tail: cuts the last round's tiles of the static persistent order and merges them before the rows' totals, so expected persistent = true, tma_store = true, dynamic_tiles = false and overlap_epilogue = false with it, but got persistent = true, tma_store = true, dynamic_tiles = false, overlap_epilogue = true}}
func.func private @schedule_split_tail_overlap_epilogue() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, tma_store = true, overlap_epilogue = true, split_tail = true>}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32>
func.func @sdpa_split_tail_causal(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule field split_tail: shares out the last round's tiles by their keys, all of equal length only without a mask, so expected false with causal, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, persistent = true, tma_store = true, q_buffers = 2, defer_store = true, split_tail = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule field exp2_on_fma: counts the probabilities per thread and block (block_n / 2 = 64) taken on the FMA pipe, so expected a value in [0, 64], but got 65}}
func.func private @schedule_exp2_on_fma_too_many() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, exp2_on_fma = 65>}

// -----

// expected-error @+1 {{schedule field exp2_on_fma: counts the probabilities per thread and block (block_n / 2 = 64) taken on the FMA pipe, so expected a value in [0, 64], but got -1}}
func.func private @schedule_exp2_on_fma_negative() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, exp2_on_fma = -1>}

// -----

// expected-error @+1 {{schedule field exp2_on_fma: only the warp-specialized kernel has it, so expected 0 without producer = tma, but got 8 with producer = cp_async}}
func.func private @schedule_exp2_on_fma_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, exp2_on_fma = 8>}

// -----

// expected-error @+1 {{schedule field q_by_atom: gives a one-tile block's Q a barrier per 64-column atom, waited for in the first block (issued on its own by overlap_softmax), so expected persistent = false and overlap_softmax = true with it, but got persistent = true, overlap_softmax = true}}
func.func private @schedule_q_by_atom_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, q_by_atom = true>}

// -----

// expected-error @+1 {{schedule field q_by_atom: gives a one-tile block's Q a barrier per 64-column atom, waited for in the first block (issued on its own by overlap_softmax), so expected persistent = false and overlap_softmax = true with it, but got persistent = false, overlap_softmax = false}}
func.func private @schedule_q_by_atom_without_overlap() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, q_by_atom = true>}

// -----

// expected-error @+1 {{schedule field k0_by_atom: puts the first K block on q_by_atom's per-atom barriers, so expected q_by_atom = true with it, but got q_by_atom = false}}
func.func private @schedule_k0_by_atom_alone() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, k0_by_atom = true>}

// -----

// expected-error @+1 {{schedule field q_by_atom: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_q_by_atom_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, q_by_atom = true>}


// -----

// expected-error @+1 {{schedule field q_in_registers: copies the tile's whole Q into registers before the first Q.K^T, which q_by_atom starts on Q's first atom, so expected q_by_atom = false with it, but got true}}
func.func private @schedule_q_in_registers_by_atom() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, q_by_atom = true, q_in_registers = true>}

// -----

// expected-error @+1 {{schedule field q_in_registers: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_q_in_registers_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, q_in_registers = true>}

// -----

!head = memref<?x?x?x256xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_q_in_registers_head_dim(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule field q_in_registers: Q's fragments take head dim / 4 registers per consumer thread, which only fit next to O and S up to head dim 128, so expected false at head dim 256, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// 190 registers without Q's fragments fit 216; with them (32 more) not.
!head = memref<?x?x?x128xbf16>
!lse = memref<?x?x?xf32>
func.func @sdpa_q_in_registers_budget(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule needs about 222 registers per consumer thread (block_n = 128, head dim 128, q_in_registers), but consumer_regs is 216; lower block_n or raise consumer_regs}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, consumer_regs = 216, q_in_registers = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

// expected-error @+1 {{schedule field uniform_ring: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_uniform_ring_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, uniform_ring = true>}

// -----

// expected-error @+1 {{schedule field kv_multicast: shares each K/V block between the two blocks of a cluster, which must run one tile each, so expected persistent = false with it, but got true}}
func.func private @schedule_kv_multicast_persistent() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, overlap_softmax = true, persistent = true, kv_multicast = true>}

// -----

// expected-error @+1 {{schedule field kv_multicast: multicasts K's blocks in halves, but k0_by_atom loads the first one whole with Q, so expected k0_by_atom = false with it, but got true}}
func.func private @schedule_kv_multicast_k0_by_atom() attributes {s = #tiledattn.schedule<block_m = 128, block_n = 80, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, q_by_atom = true, k0_by_atom = true, kv_multicast = true>}

// -----

// expected-error @+1 {{schedule field kv_multicast: only the warp-specialized kernel has it, so expected false without producer = tma, but got true with producer = cp_async}}
func.func private @schedule_kv_multicast_without_tma() attributes {s = #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 2, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, kv_multicast = true>}

// -----

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32>
func.func @sdpa_kv_multicast_causal(%q: !head, %lse: !lse, %scale: f32) {
  // expected-error @+1 {{schedule field kv_multicast: the two blocks of a cluster read the same K/V blocks, all of them only without a mask, so expected false with causal, but got true}}
  tiledattn.sdpa %q, %q, %q, %scale into %q, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, kv_multicast = true>)
      : !head, !head, !head, !head, !lse
  return
}

// -----

func.func @resize_element_type(%p: !tiledattn.tile<64x64xbf16>) {
  // expected-error @+1 {{'tiledattn.resize' op expected two 64-row tiles of one element type (a warpgroup's registers), but got '!tiledattn.tile<64x64xbf16>' and '!tiledattn.tile<64x128xf16>'}}
  %wide = tiledattn.resize %p : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xf16>
  return
}

// -----

func.func @resize_columns(%p: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{'tiledattn.resize' op expected columns that are multiples of 16, but got 64 and 72}}
  %wide = tiledattn.resize %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x72xf32>
  return
}

// -----

func.func @truncate_from_half(%p: !tiledattn.tile<64x64xf16>) {
  // expected-error @+1 {{'tiledattn.truncate' op expected a 64-row f32 tile to f16 or bf16 of its shape, but got '!tiledattn.tile<64x64xf16>' to '!tiledattn.tile<64x64xbf16>'}}
  %p16 = tiledattn.truncate %p : !tiledattn.tile<64x64xf16> to !tiledattn.tile<64x64xbf16>
  return
}

// -----

func.func @truncate_columns(%p: !tiledattn.tile<64x40xf32>) {
  // expected-error @+1 {{'tiledattn.truncate' op expected columns that are a multiple of 16 (a k-step of the mma's A), but got 40}}
  %p16 = tiledattn.truncate %p : !tiledattn.tile<64x40xf32> to !tiledattn.tile<64x40xbf16>
  return
}

// -----

func.func @row_dot_of_row_tiles(%a: !tiledattn.tile<64xf32>) {
  // expected-error @+1 {{'tiledattn.row_dot' op expected two M x N tiles of f32, f16 or bf16, but got '!tiledattn.tile<64xf32>'}}
  %d = tiledattn.row_dot %a, %a : !tiledattn.tile<64xf32> -> !tiledattn.tile<64xf32>
  return
}

// -----

func.func @row_dot_into_other_rows(%a: !tiledattn.tile<64x64xf32>) {
  // expected-error @+1 {{'tiledattn.row_dot' op expected the result to be a rank-1 f32 tile of the operands' 64 rows, but got '!tiledattn.tile<32xf32>'}}
  %d = tiledattn.row_dot %a, %a : !tiledattn.tile<64x64xf32> -> !tiledattn.tile<32xf32>
  return
}

// -----

func.func @store_rows_of_a_matrix(%a: !tiledattn.tile<64x64xf32>, %dest: memref<?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.store_rows' op expected rows to be a rank-1 f32 tile (a row's value each), but got '!tiledattn.tile<64x64xf32>'}}
  tiledattn.store_rows %a into %dest[%i, %i, %i] : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
  return
}

// -----

func.func @exp_from_lse_of_rows(%a: !tiledattn.tile<64xf32>, %lse: memref<?x?x?xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'tiledattn.exp_from_lse' op expected scores to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<64xf32>'}}
  %p = tiledattn.exp_from_lse %a, %lse[%i, %i, %i], %s : !tiledattn.tile<64xf32>, memref<?x?x?xf32>
  return
}

// -----

func.func @exp_from_lse_of_128_rows(%a: !tiledattn.tile<128x64xf32>, %lse: memref<?x?x?xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'tiledattn.exp_from_lse' op expected scores to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<128x64xf32>'}}
  %p = tiledattn.exp_from_lse %a, %lse[%i, %i, %i], %s : !tiledattn.tile<128x64xf32>, memref<?x?x?xf32>
  return
}

// -----

func.func @softmax_grad_of_bf16(%a: !tiledattn.tile<64x64xbf16>, %delta: memref<?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.softmax_grad' op expected probs to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<64x64xbf16>'}}
  %ds = tiledattn.softmax_grad %a, %a, %delta[%i, %i, %i] : !tiledattn.tile<64x64xbf16>, memref<?x?x?xf32>
  return
}

// -----

func.func @softmax_grad_of_other_shapes(%p: !tiledattn.tile<64x64xf32>, %dp: !tiledattn.tile<64x32xf32>, %delta: memref<?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.softmax_grad' op failed to verify that all of {probs, grad, result} have same type}}
  %ds = "tiledattn.softmax_grad"(%p, %dp, %delta, %i, %i, %i) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0>}> : (!tiledattn.tile<64x64xf32>, !tiledattn.tile<64x32xf32>, memref<?x?x?xf32>, index, index, index) -> !tiledattn.tile<64x64xf32>
  return
}

// -----

func.func @load_rows_of_128(%lse: memref<?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.load_rows' op expected rows to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<128xf32>'}}
  %r = tiledattn.load_rows %lse[%i, %i, %i] outside(0.0) : memref<?x?x?xf32> -> !tiledattn.tile<128xf32>
  return
}

// -----

func.func @exp_from_lse_rows_not_per_row(%s: !tiledattn.tile<64x64xf32>, %rows: !tiledattn.tile<64xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.exp_from_lse' op expected per_row with lse as a tile of rows (a tile holds a query per row)}}
  %p = tiledattn.exp_from_lse %s, %rows, %scale : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

func.func @exp_from_lse_memref_without_indices(%s: !tiledattn.tile<64x64xf32>, %lse: memref<?x?x?xf32>, %scale: f32) {
  // expected-error @+1 {{'tiledattn.exp_from_lse' op expected [batch, head, col] after the memref lse}}
  %p = tiledattn.exp_from_lse %s, %lse per_row, %scale : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32>
  return
}

// -----

func.func @softmax_grad_rows_with_indices(%p: !tiledattn.tile<64x64xf32>, %rows: !tiledattn.tile<64xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.softmax_grad' op expected no indices after delta, a tile of rows (tiledattn.load_rows reads them)}}
  %ds = tiledattn.softmax_grad %p, %p, %rows[%i, %i, %i] per_row : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
  return
}

// -----

func.func @softmax_grad_rows_of_bf16(%p: !tiledattn.tile<64x64xf32>, %rows: !tiledattn.tile<64xbf16>) {
  // expected-error @+1 {{'tiledattn.softmax_grad' op expected delta to be !tiledattn.tile<64xf32>, but got '!tiledattn.tile<64xbf16>'}}
  %ds = tiledattn.softmax_grad %p, %p, %rows per_row : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xbf16>
  return
}

// -----

func.func @bulk_reduce_add_of_bf16(%a: !tiledattn.tile<64x128xbf16>, %f: memref<?x?x?x?xf32>, %s: !tiledattn.smem<128x128xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.bulk_reduce_add' op expected acc to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<64x128xbf16>'}}
  tiledattn.bulk_reduce_add %a into %f[%i, %i, %i] via %s : !tiledattn.tile<64x128xbf16>, memref<?x?x?x?xf32>, !tiledattn.smem<128x128xbf16>
  return
}

// -----

func.func @bulk_reduce_add_into_row_major(%a: !tiledattn.tile<64x128xf32>, %f: memref<?x?x?x128xf32>, %s: !tiledattn.smem<128x128xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.bulk_reduce_add' op expected dest's dimension 3 to be the tile's 8192 values (64 x 128, a fragment-ordered block), but got 128}}
  tiledattn.bulk_reduce_add %a into %f[%i, %i, %i] via %s : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xf32>, !tiledattn.smem<128x128xbf16>
  return
}

// -----

func.func @bulk_reduce_add_into_strided(%a: !tiledattn.tile<64x128xf32>, %f: memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, %s: !tiledattn.smem<128x128xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.bulk_reduce_add' op expected a contiguous dest (identity layout: the bulk reduction adds one run of bytes), but got 'memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>'}}
  tiledattn.bulk_reduce_add %a into %f[%i, %i, %i] via %s : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>, !tiledattn.smem<128x128xbf16>
  return
}

// -----

func.func @bulk_reduce_add_via_small_stage(%a: !tiledattn.tile<64x128xf32>, %f: memref<?x?x?x?xf32>, %s: !tiledattn.smem<64x128xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.bulk_reduce_add' op expected a stage of at least 32768 bytes (the tile's f32 values), but got '!tiledattn.smem<64x128xbf16>' (16384 bytes)}}
  tiledattn.bulk_reduce_add %a into %f[%i, %i, %i] via %s : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xf32>, !tiledattn.smem<64x128xbf16>
  return
}

// -----

func.func @reduce_add_of_bf16(%a: !tiledattn.tile<64x128xbf16>, %dq: memref<?x?x?x128xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.reduce_add' op expected acc to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<64x128xbf16>'}}
  tiledattn.reduce_add %a into %dq[%i, %i, %i] : !tiledattn.tile<64x128xbf16>, memref<?x?x?x128xf32>
  return
}

// -----

func.func @reduce_add_into_other_width(%a: !tiledattn.tile<64x128xf32>, %dq: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.reduce_add' op expected dest's dimension 3 to be the tile's 128 columns, but got 64}}
  tiledattn.reduce_add %a into %dq[%i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x64xf32>
  return
}

// -----

func.func @stage_of_8_columns(%a: !tiledattn.tile<64x8xf32>, %buf: !tiledattn.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.stage' op expected a warpgroup's f32 accumulator tile (64 x N, N a multiple of 16), but got '!tiledattn.tile<64x8xf32>'}}
  tiledattn.stage %a into %buf[%i] : !tiledattn.tile<64x8xf32>, !tiledattn.smem<64x64xbf16>
  return
}

// -----

func.func @stage_into_a_narrow_buffer(%a: !tiledattn.tile<64x128xf32>, %buf: !tiledattn.smem<64x64xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.stage' op expected a stage of at least the acc tile's 64 x 128, but got '!tiledattn.smem<64x64xbf16>'}}
  tiledattn.stage %a into %buf[%i] : !tiledattn.tile<64x128xf32>, !tiledattn.smem<64x64xbf16>
  return
}

// -----

func.func @stage_at_an_odd_row(%a: !tiledattn.tile<64x64xf32>, %buf: !tiledattn.smem<128x64xbf16>) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tiledattn.stage' op expected stage_row to be a multiple of 8 (the swizzle's period) with the acc tile's 64 rows inside the stage's 128, but got 4}}
  tiledattn.stage %a into %buf[%c4] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<128x64xbf16>
  return
}

// -----

func.func @stage_at_an_odd_column(%a: !tiledattn.tile<64x32xf32>, %buf: !tiledattn.smem<64x64xbf16>, %i: index) {
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{'tiledattn.stage' op expected stage_col to be a multiple of 16 with the acc tile's 32 columns inside the stage's 64, but got 8}}
  tiledattn.stage %a into %buf[%i, %c8] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
  return
}

// -----

func.func @stage_past_the_last_column(%a: !tiledattn.tile<64x32xf32>, %buf: !tiledattn.smem<64x64xbf16>, %i: index) {
  %c48 = arith.constant 48 : index
  // expected-error @+1 {{'tiledattn.stage' op expected stage_col to be a multiple of 16 with the acc tile's 32 columns inside the stage's 64, but got 48}}
  tiledattn.stage %a into %buf[%i, %c48] : !tiledattn.tile<64x32xf32>, !tiledattn.smem<64x64xbf16>
  return
}

// -----

func.func @columns_of_other_rows(%t: !tiledattn.smem<64x256xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.columns' op expected a view of the tile's rows and element type, a multiple of 64 columns up to its 256, but got '!tiledattn.smem<128x128xbf16>' of '!tiledattn.smem<64x256xbf16>'}}
  %v = tiledattn.columns %t[%i] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<128x128xbf16>
  return
}

// -----

func.func @columns_wider_than_the_tile(%t: !tiledattn.smem<64x256xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.columns' op expected a view of the tile's rows and element type, a multiple of 64 columns up to its 256, but got '!tiledattn.smem<64x320xbf16>' of '!tiledattn.smem<64x256xbf16>'}}
  %v = tiledattn.columns %t[%i] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x320xbf16>
  return
}

// -----

func.func @columns_from_inside_an_atom(%t: !tiledattn.smem<64x256xbf16>) {
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{'tiledattn.columns' op expected col to be a multiple of 64 (a 64-column atom) with the view's 128 columns inside the tile's 256, but got 32}}
  %v = tiledattn.columns %t[%c32] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
  return
}

// -----

func.func @columns_past_the_tile(%t: !tiledattn.smem<64x256xbf16>) {
  %c192 = arith.constant 192 : index
  // expected-error @+1 {{'tiledattn.columns' op expected col to be a multiple of 64 (a 64-column atom) with the view's 128 columns inside the tile's 256, but got 192}}
  %v = tiledattn.columns %t[%c192] : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
  return
}

// -----

func.func @store_tile_of_rows(%a: !tiledattn.tile<64xf32>, %g: memref<?x?x?x?xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.store_tile' op expected acc to be a warpgroup's f32 accumulator tile (64 x N, N a multiple of 8), but got '!tiledattn.tile<64xf32>'}}
  tiledattn.store_tile %a into %g[%i, %i, %i] : !tiledattn.tile<64xf32>, memref<?x?x?x?xbf16>
  return
}

// -----

func.func @store_tile_into_f32(%a: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x?xf32>, %i: index) {
  // expected-error @+1 {{'tiledattn.store_tile' op expected dest element type f16 or bf16, but got 'f32'}}
  tiledattn.store_tile %a into %g[%i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x?xf32>
  return
}

// -----

func.func @store_tile_of_other_columns(%a: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tiledattn.store_tile' op expected dest's dimension 3 to be the tile's 128 columns, but got 64}}
  tiledattn.store_tile %a into %g[%i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x64xbf16>
  return
}

// -----

func.func @store_tile_at_an_odd_column(%a: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x256xbf16>, %i: index) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tiledattn.store_tile' op expected col to be a multiple of 8, but got 4}}
  tiledattn.store_tile %a into %g[%i, %i, %i, %c4] : !tiledattn.tile<64x128xf32>, memref<?x?x?x256xbf16>
  return
}

// -----

func.func @store_tile_past_the_last_column(%a: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x256xbf16>, %i: index) {
  %c192 = arith.constant 192 : index
  // expected-error @+1 {{'tiledattn.store_tile' op expected dest's dimension 3 to hold col plus the tile's 128 columns, but got 256}}
  tiledattn.store_tile %a into %g[%i, %i, %i, %c192] : !tiledattn.tile<64x128xf32>, memref<?x?x?x256xbf16>
  return
}

// -----

func.func @store_tile_strided(%a: !tiledattn.tile<64x128xf32>, %g: memref<?x?x?x128xbf16, strided<[?, ?, ?, 2]>>, %i: index) {
  // expected-error @+1 {{'tiledattn.store_tile' op expected dest to have a unit innermost stride, but got 'memref<?x?x?x128xbf16, strided<[?, ?, ?, 2]>>'}}
  tiledattn.store_tile %a into %g[%i, %i, %i] : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16, strided<[?, ?, ?, 2]>>
  return
}
