//===- TiledAttnAttrs.td - TiledAttn attributes ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNATTRS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNATTRS_TD

include "tiledattn/Dialect/TiledAttn/IR/TiledAttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TiledAttn_MmaKind : I32EnumAttr<"MmaKind", "matrix instruction family", [
    I32EnumAttrCase<"mma_sync", 0>,
    I32EnumAttrCase<"wgmma", 1>
  ]> {
  let cppNamespace = "::mlir::tiledattn";
  let genSpecializedAttr = 0;
}

def TiledAttn_Producer : I32EnumAttr<"Producer", "how K/V tiles reach the mma", [
    I32EnumAttrCase<"direct", 0>,
    I32EnumAttrCase<"cp_async", 1>,
    I32EnumAttrCase<"tma", 2>
  ]> {
  let cppNamespace = "::mlir::tiledattn";
  let genSpecializedAttr = 0;
}

def TiledAttn_TileOrder : I32EnumAttr<"TileOrder",
    "the order a persistent kernel runs its (query block, head, batch) tiles in", [
    I32EnumAttrCase<"by_head", 0>,
    I32EnumAttrCase<"across_heads", 1>
  ]> {
  let cppNamespace = "::mlir::tiledattn";
  let genSpecializedAttr = 0;
}

def TiledAttn_ScheduleAttr : AttrDef<TiledAttn_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "How one tiledattn.sdpa is tiled and mapped onto the GPU";
  let description = [{
    The schedule is the editable surface of a kernel. Fields:

    - `block_m`: query rows per thread block (multiple of 16).
    - `block_n`: key/value rows per loop iteration (multiple of 16).
    - `num_stages`: depth of the K/V shared-memory ring (1 = no ring).
    - `warps`: warps per thread block.
    - `mma`: `mma_sync` (warp-level m16n8k16) or `wgmma` (Hopper warpgroup).
    - `producer`: `direct` (operands loaded from global memory straight into
      registers), `cp_async` or `tma` (staged through shared memory).
    - `swizzle`: shared-memory swizzle in bytes: 0 (none), 32, 64 or 128.
    - `split_kv_loop` (default `true`): run the K/V blocks that need no mask
      (inside the sequence and, when causal, left of the diagonal) in a loop
      of their own without `tiledattn.mask`; `false` masks every block in
      one loop (smaller code, sometimes fewer registers).

    Fields of the warp-specialized Hopper path (`producer = tma`, which
    needs `mma = wgmma`); other producers must leave them at their defaults:

    - `consumer_warpgroups` (default 1, at most 3): warpgroups that run the
      mma and softmax, 64 query rows each (so
      `block_m = 64 * consumer_warpgroups`).
      One more warpgroup is the producer that issues the TMA loads, so
      `warps = 4 * (consumer_warpgroups + 1)`.
    - `producer_regs` / `consumer_regs` (default 24 / 240): registers per
      thread each role keeps after `setmaxnreg`; the sum over all threads
      must fit the 64 K registers of a multiprocessor.
    - `pingpong` (default `false`): the consumer warpgroups take turns on
      the tensor cores in a fixed rotation (named barriers), so one's
      softmax overlaps the others' mmas. Needs `consumer_warpgroups >= 2`.
    - `overlap_softmax` (default `false`): issue the next block's Q.K^T
      before this block's softmax, so the tensor cores work through it.
    - `ctas_per_sm` (default 1): thread blocks meant to share a
      multiprocessor (1 or 2). With 2 the kernel is built with `.maxnreg`
      and `.minnctapersm` for that, so one block's start and end overlap the
      other's mmas (short sequences); registers and shared memory of both
      must fit the multiprocessor.
    - `persistent` (default `false`): launch one block per multiprocessor
      (times `ctas_per_sm`) that loops over the (query block, head, batch)
      tiles, so the producer loads the next tile's Q, K and V while the
      consumers finish the current one (short sequences). Causal tiles run
      longest first.
    - `tma_store` (default `false`): O leaves through shared memory
      (stmatrix, into Q's buffer, or a buffer of its own when `persistent`)
      and a TMA store per 64 x 64 box, instead of 4-byte stores from
      registers; the runtime passes a tensor map for the output.
    - `q_buffers` (default 1): Q tiles in shared memory. With 2 (needs
      `persistent`) the producer loads the next tile's Q into the other
      buffer while the consumers still read this one, so a tile starts with
      its Q already there instead of waiting for the load (short sequences,
      where a tile has few K/V blocks to hide it under).
    - `dynamic_tiles` (default `false`): a persistent block takes its next
      tile from a global counter (one atomic add per tile, by the producer,
      handed to the consumers with the tile's Q) instead of a fixed
      round-robin, so blocks that drew short tiles take more, as the
      hardware's block dispatch does. Needs `persistent`; the runtime passes
      a zeroed 32-bit counter (`tile_counter` in the manifest).
    - `tile_order` (default `by_head`): the order of a persistent kernel's
      tiles. `by_head`: query blocks fastest (causal: the last, longest
      one first), one head and batch after another, the order the hardware
      dispatches a one-block-per-tile grid in; the blocks running at once
      share few heads' K and V. `across_heads`: heads and batches fastest,
      query blocks from the last (causal: every head's longest tiles first,
      the short ones fill the end; a fixed assignment mirrors every other
      round). Needs `persistent` for `across_heads`.
    - `overlap_epilogue` (default `false`): the rows' sums, 1 / sum and lse
      (softmax statistics only) are computed and lse stored while the
      tile's last P.V runs, instead of after its wait. Needs
      `overlap_softmax` and `tma_store`, and no `defer_store` (the tile's
      own O is normalized under its last P.V).
    - `defer_store` (default `false`): a persistent consumer keeps a tile's
      O in registers and stores it while the next tile's first Q.K^T runs
      (the last tile's after the loop), instead of between the two tiles.
      Needs `persistent`, `tma_store`, `q_buffers = 2` (O staged in its own
      tile, not in Q's) and `overlap_softmax`.
    - `narrow_diagonal` (default `false`): causal only. Where a consumer's
      64 rows end before a block's key 64 (its half of the diagonal block
      when block_m = block_n = 128), the block's columns from 64 on are
      masked for all of them: that consumer computes S with N = 64 and
      P.V with 4 k-steps there. Needs `overlap_softmax` and block_n > 64.
    - `skip_masked_blocks` (default `false`): causal only. Each consumer
      stops at the last K/V block its own 64 rows reach; the tile's blocks
      after it (masked for all its rows: with block_n = 64 consumer 0's
      last block of every tile) are only released, with an empty turn
      each under `pingpong`. Needs `producer = tma`.
    - `uniform_consumer` (default `false`): the consumer warpgroup's index
      passes through redux.sync, which tells ptxas it is warp-uniform, so
      the arithmetic that depends on it can use the uniform datapath.
      ptxas then allocates differently: faster for some kernels, slower
      for others (docs/Schedules.md). Needs `producer = tma`.
    - `split_tail` (default `false`): without a mask, the tiles left after
      the last full round of a persistent grid (tiles mod gridDim.x) are
      cut along the keys into one contiguous share per block, so every
      block ends at about the same time instead of a part of the grid
      running one more tile alone. A block that computed a tile's later
      keys leaves its partial O and row statistics in a workspace the
      runtime provides; the block with the tile's first keys merges them
      and stores O. Needs `persistent` and `tma_store`, and no
      `dynamic_tiles` or `overlap_epilogue` (the rows' totals follow the
      merge).
    - `hold_packed` (default `false`): with `defer_store`, the held O is
      multiplied by 1 / sum and packed into 16-bit pairs at the end of its
      tile, so the next tile's deferred store reads registers ptxas knows
      are settled (the held wgmma registers made it inject a wait for the
      next tile's first Q.K^T, C7517) and half as many stay live.
    - `q_by_atom` (default `false`): a one-tile block's Q arrives as one
      TMA load per 64-column atom, each on its own full barrier, the first
      atom before the first K block and the rest after it, and the first
      Q.K^T waits for each atom just before its k-steps: it starts once
      16 rows x 128 bytes per row of Q and K's first block are in, not all
      of Q. Needs `producer = tma` and no `persistent`.
    - `k0_by_atom` (default `false`): with `q_by_atom`, the first K
      block's atoms ride on the same per-atom barriers, loaded between
      Q's (Q atom 0, K atom 0, Q atom 1, ...), so the first Q.K^T k-step
      waits for 16 + 8 KiB at D=256 instead of Q's first atom and all of K.
    - `q_in_registers` (default `false`): each consumer copies its 64 rows
      of Q from shared memory into registers once per tile (ldmatrix, the
      wgmma A-fragment layout: head dim / 4 registers per thread) and
      issues S = Q.K^T with A from registers, so the tensor cores read only
      K from shared memory during Q.K^T (2 KiB less per k-step). Needs
      `producer = tma`, no `q_by_atom` (Q is read whole) and head dim 128
      or less (the fragments would take 64 registers at D=256).
    - `uniform_ring` (default `false`): the consumers pass each block's
      K/V ring position (in a persistent block the tile's ring base plus
      the block) and Q's shared-memory base through redux.sync, so ptxas
      knows they are warp-uniform and keeps the stage, phase, barrier and
      descriptor arithmetic of the block loop on the uniform datapath.
      Without it ptxas put that arithmetic on the vector datapath in the
      persistent D=256 kernel (505 instead of 411 instructions per block)
      and Q's descriptors in the one-tile D=256 kernel (458 instead of
      447); in the D=64 persistent one it costs 12 more. Needs
      `producer = tma`.
    - `kv_multicast` (default `false`): blocks run in clusters of two on
      neighbouring query tiles of one head, and each block's producer loads
      half of every K and V block (block_n / 2 rows) and multicasts it into
      both blocks' shared memory: each block reads half the K/V bytes from
      L2. A stage is free again once the consumers of both blocks released
      it (they arrive on both blocks' empty barriers). The grid's query
      tiles are rounded up to even; a block past seqlen_q loads, computes
      and stores nothing visible. Needs `producer = tma`, no `persistent`,
      no `k0_by_atom` (K's first block comes whole with Q there), block_n
      a multiple of 16 (each half starts on the 8-row swizzle period) and
      no causal mask (both blocks must read the same K/V blocks). The tile
      program's K and V rings are `cluster(2)` then.
    - `exp2_on_fma` (default `0`): of the block_n / 2 probabilities a
      consumer thread computes per unmasked block, this many take 2^x as
      a degree-3 polynomial on the FMA pipe (x clamped to -126, split into
      round(x) by the 1.5 * 2^23 trick and a fraction in [-0.5, 0.5],
      relative error 7.5e-5, under half an f16 ulp) instead of MUFU.EX2:
      the exp2 of a block then shares out over both pipes. Masked blocks
      keep MUFU (exp2(-inf) must be 0). Needs `producer = tma`; at most
      block_n / 2.
    - `raw_maxima` (default `false`): the tile program's online softmax
      keeps the row maxima of the raw scores (`online_softmax ... raw_max`),
      scaled where the exponents and the lse need them
      (`tiledattn.scale_max`), instead of the maxima of the scaled scores.
      The same results (scale > 0); ptxas schedules the block loop's P.V
      wait differently (D = 128: 107 instructions after S's wait instead of
      49). Two more live registers a thread. Needs `producer = tma`.
    - `one_thread_producer` (default `false`): the producer's first thread
      runs the whole tile loop (the tile program's `scf.if` around
      `tiledattn.for_each_tile`, as `dynamic_tiles` always has it) instead
      of the producer warpgroup walking the tiles with the `if` around each
      tile's copies. ptxas then keeps the loop's ring positions and
      addresses on the uniform datapath (bf16 D = 128: 83 SASS instructions
      per K/V block instead of 102). Needs `producer = tma`.
    - `narrow_consumer_index` (default `false`): the tile program's
      `warp_specialize ... narrow_index`: the consumer warpgroup's index
      computed in 32 bits and zero-extended, so LLVM knows its high word is
      zero and it takes one register. It changes no result, only how ptxas
      allocates registers: on the D = 128 `_long` program it removes a
      4-byte spill (the index, live across the persistent tile loop); on
      every schedule at once it cost up to 6% (causal D = 128 and D = 256 at
      16k keys), so it is a field. Needs `producer = tma`.

    The attribute verifier checks each field alone and the fields against
    each other; `tiledattn.sdpa` checks them against its operands (head dim,
    shared memory). docs/Schedules.md says what each field changes.

    Example:

    ```mlir
    #tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1, warps = 4,
                        mma = mma_sync, producer = direct, swizzle = 0>
    ```
  }];
  let parameters = (ins "int64_t":$block_m, "int64_t":$block_n,
                        "int64_t":$num_stages, "int64_t":$warps,
                        "::mlir::tiledattn::MmaKind":$mma,
                        "::mlir::tiledattn::Producer":$producer,
                        "int64_t":$swizzle,
                        DefaultValuedParameter<"bool", "true">:$split_kv_loop,
                        DefaultValuedParameter<"int64_t", "1">:$consumer_warpgroups,
                        DefaultValuedParameter<"int64_t", "24">:$producer_regs,
                        DefaultValuedParameter<"int64_t", "240">:$consumer_regs,
                        DefaultValuedParameter<"bool", "false">:$pingpong,
                        DefaultValuedParameter<"bool", "false">:$overlap_softmax,
                        DefaultValuedParameter<"int64_t", "1">:$ctas_per_sm,
                        DefaultValuedParameter<"bool", "false">:$persistent,
                        DefaultValuedParameter<"bool", "false">:$tma_store,
                        DefaultValuedParameter<"int64_t", "1">:$q_buffers,
                        DefaultValuedParameter<"bool", "false">:$dynamic_tiles,
                        DefaultValuedParameter<"::mlir::tiledattn::TileOrder",
                            "::mlir::tiledattn::TileOrder::by_head">:$tile_order,
                        DefaultValuedParameter<"bool", "false">:$overlap_epilogue,
                        DefaultValuedParameter<"bool", "false">:$defer_store,
                        DefaultValuedParameter<"bool", "false">:$narrow_diagonal,
                        DefaultValuedParameter<"bool", "false">:$skip_masked_blocks,
                        DefaultValuedParameter<"bool", "false">:$uniform_consumer,
                        DefaultValuedParameter<"bool", "false">:$split_tail,
                        DefaultValuedParameter<"int64_t", "0">:$exp2_on_fma,
                        DefaultValuedParameter<"bool", "false">:$hold_packed,
                        DefaultValuedParameter<"bool", "false">:$q_by_atom,
                        DefaultValuedParameter<"bool", "false">:$k0_by_atom,
                        DefaultValuedParameter<"bool", "false">:$q_in_registers,
                        DefaultValuedParameter<"bool", "false">:$uniform_ring,
                        DefaultValuedParameter<"bool", "false">:$kv_multicast,
                        DefaultValuedParameter<"bool", "false">:$raw_maxima,
                        DefaultValuedParameter<"bool", "false">:$one_thread_producer,
                        DefaultValuedParameter<"bool", "false">:$narrow_consumer_index);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getNumThreads() const { return getWarps() * 32; }
    /// True for the warp-specialized TMA + wgmma path.
    bool isWarpSpecialized() const {
      return getProducer() == ::mlir::tiledattn::Producer::tma;
    }
    /// Registers per thread at kernel entry when several blocks share a
    /// multiprocessor (the .maxnreg the kernel is built with), else 0.
    int64_t getEntryRegs() const {
      if (getCtasPerSm() <= 1)
        return 0;
      return entryRegisters(getNumThreads(), getCtasPerSm());
    }
    /// Bytes of shared memory the schedule needs for a head dim and element
    /// width (Q tiles plus the K/V ring; 0 when nothing is staged).
    /// A value head dim of 0 is the head dim.
    int64_t getSharedMemoryBytes(int64_t headDim, int64_t elementBytes,
                                 int64_t headDimV = 0) const;
    /// With tma_store, whether O is staged in a shared tile of its own
    /// rather than in the consumer's rows of its Q buffer: a persistent
    /// kernel with two Q buffers (the next tile's Q may be arriving in the
    /// other), and a value head dim wider than Q's.
    bool stagesOInItsOwnTile(int64_t headDim, int64_t headDimV) const;
  }];
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNATTRS_TD
