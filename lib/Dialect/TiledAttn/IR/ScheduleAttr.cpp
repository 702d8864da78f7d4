//===- ScheduleAttr.cpp - The schedule attribute ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The schedule attribute's verifier (each field, and the fields that go
// only with others, each diagnostic naming the field, what was expected
// and what was found), and what it tells the passes: the Hopper
// refinements tiledattn-tile-sdpa does not write yet, where a TMA store
// stages O, and the shared memory a kernel takes.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

using namespace mlir;
using namespace mlir::tiledattn;

/// A bool schedule field as the schedule's text spells it.
static StringRef flag(bool value) { return value ? "true" : "false"; }

/// The name of the first of `fields` (name, value) that is true, if any.
static std::optional<StringRef>
firstSet(ArrayRef<std::pair<StringRef, bool>> fields) {
  for (auto [name, value] : fields)
    if (value)
      return name;
  return std::nullopt;
}

LogicalResult ScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockM,
    int64_t blockN, int64_t numStages, int64_t warps, MmaKind mma,
    Producer producer, int64_t swizzle, bool splitKvLoop,
    int64_t consumerWarpgroups, int64_t producerRegs, int64_t consumerRegs,
    bool pingpong, bool overlapSoftmax, int64_t ctasPerSm, bool persistent,
    bool tmaStore, int64_t qBuffers, bool dynamicTiles, TileOrder tileOrder,
    bool overlapEpilogue, bool deferStore, bool narrowDiagonal,
    bool skipMaskedBlocks, bool uniformConsumer, bool splitTail,
    int64_t exp2OnFma, bool holdPacked, bool qByAtom, bool k0ByAtom,
    bool qInRegisters, bool uniformRing, bool kvMulticast, bool rawMaxima,
    bool oneThreadProducer, bool narrowConsumerIndex) {
  if (blockM <= 0 || blockM % 16 != 0 || blockM > 256)
    return emitError() << "schedule field block_m: expected a multiple of 16 "
                          "in [16, 256], but got "
                       << blockM;
  if (blockN <= 0 || blockN % 16 != 0 || blockN > 256)
    return emitError() << "schedule field block_n: expected a multiple of 16 "
                          "in [16, 256], but got "
                       << blockN;
  if (numStages < 1 || numStages > 8)
    return emitError() << "schedule field num_stages: expected a value in "
                          "[1, 8], but got "
                       << numStages;
  if (warps < 1 || warps > 32)
    return emitError()
           << "schedule field warps: expected a value in [1, 32], but got "
           << warps;
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "schedule field swizzle: expected 0, 32, 64 or 128 "
                          "bytes, but got "
                       << swizzle;
  if (mma == MmaKind::mma_sync && blockM != 16 * warps)
    return emitError() << "schedule field block_m: mma_sync gives each warp "
                          "16 query rows, so expected block_m = 16 * warps = "
                       << 16 * warps << ", but got " << blockM;
  if (mma == MmaKind::wgmma) {
    if (warps % 4 != 0)
      return emitError() << "schedule field warps: wgmma runs on whole "
                            "warpgroups, so expected a multiple of 4, but got "
                         << warps;
    if (blockM % 64 != 0)
      return emitError() << "schedule field block_m: wgmma covers 64 rows "
                            "per warpgroup, so expected a multiple of 64, but "
                            "got "
                         << blockM;
  }
  if (producer == Producer::tma) {
    if (mma != MmaKind::wgmma)
      return emitError() << "schedule field mma: producer = tma feeds the "
                            "warp-specialized wgmma kernel, so expected "
                            "wgmma, but got "
                         << stringifyMmaKind(mma);
    if (consumerWarpgroups < 1 || consumerWarpgroups > 3)
      return emitError() << "schedule field consumer_warpgroups: expected 1, "
                            "2 or 3, but got "
                         << consumerWarpgroups;
    if (warps != 4 * (consumerWarpgroups + 1))
      return emitError() << "schedule field warps: producer = tma runs one "
                            "producer warpgroup and consumer_warpgroups = "
                         << consumerWarpgroups
                         << " consumer warpgroups, so expected warps = "
                         << 4 * (consumerWarpgroups + 1) << ", but got "
                         << warps;
    if (blockM != 64 * consumerWarpgroups)
      return emitError() << "schedule field block_m: each consumer "
                            "warpgroup owns 64 query rows, so expected "
                            "block_m = 64 * consumer_warpgroups = "
                         << 64 * consumerWarpgroups << ", but got " << blockM;
    if (swizzle != 128)
      return emitError() << "schedule field swizzle: producer = tma loads "
                            "64-element (128-byte) boxes that wgmma reads "
                            "with the 128-byte swizzle, so expected 128, but "
                            "got "
                         << swizzle;
    for (auto [name, regs] :
         {std::pair<StringRef, int64_t>{"producer_regs", producerRegs},
          {"consumer_regs", consumerRegs}})
      if (regs < 24 || regs > 256 || regs % 8 != 0)
        return emitError() << "schedule field " << name
                           << ": setmaxnreg takes a multiple of 8 in [24, "
                              "256], but got "
                           << regs;
    if (ctasPerSm < 1 || ctasPerSm > 2)
      return emitError() << "schedule field ctas_per_sm: expected 1 or 2, "
                            "but got "
                         << ctasPerSm;
    int64_t total = 128 * (producerRegs + consumerWarpgroups * consumerRegs);
    if (total * ctasPerSm > 65536) {
      InFlightDiagnostic diag = emitError();
      diag << "schedule fields producer_regs, consumer_regs: 128 * "
              "(producer_regs + consumer_warpgroups * consumer_regs) = "
           << total << " registers";
      if (ctasPerSm > 1)
        diag << " per block, times ctas_per_sm = " << ctasPerSm;
      return diag << ", but a multiprocessor has 65536";
    }
    if (ctasPerSm > 1) {
      // setmaxnreg moves a warpgroup's registers down (producer) or up
      // (consumers) from the count the kernel starts with.
      int64_t entry = (65536 / (ctasPerSm * 32 * warps)) / 8 * 8;
      if (producerRegs > entry || consumerRegs < entry)
        return emitError()
               << "schedule fields producer_regs, consumer_regs: with "
                  "ctas_per_sm = "
               << ctasPerSm << " a thread starts with " << entry
               << " registers, so expected producer_regs <= " << entry
               << " <= consumer_regs, but got " << producerRegs << " and "
               << consumerRegs;
    }
    if (pingpong && consumerWarpgroups < 2)
      return emitError() << "schedule field pingpong: takes turns between "
                            "consumer warpgroups, so expected "
                            "consumer_warpgroups >= 2, but got "
                         << consumerWarpgroups;
    if (qBuffers < 1 || qBuffers > 2)
      return emitError() << "schedule field q_buffers: expected 1 or 2, but "
                            "got "
                         << qBuffers;
    // Only a block that runs several tiles has a next Q to load early.
    if (qBuffers == 2 && !persistent)
      return emitError() << "schedule field q_buffers: a second Q buffer "
                            "holds the next tile's Q, which only a "
                            "persistent block has, so expected 1 without "
                            "persistent = true, but got 2";
    // Without overlap_softmax the last P.V is waited for inside the loop;
    // the totals run under it for the tile's own O, stored by TMA.
    if (overlapEpilogue && (!overlapSoftmax || !tmaStore || deferStore))
      return emitError() << "schedule field overlap_epilogue: runs the rows' "
                            "totals under the tile's last P.V, which only "
                            "overlap_softmax leaves in flight, for O stored "
                            "by TMA after it, so expected overlap_softmax = "
                            "true, tma_store = true and defer_store = false "
                            "with it, but got overlap_softmax = "
                         << flag(overlapSoftmax)
                         << ", tma_store = " << flag(tmaStore)
                         << ", defer_store = " << flag(deferStore);
    // defer_store works on a persistent block's two Q buffers, O leaving
    // by TMA, and a tile's first block issued on its own.
    bool twoQBuffers =
        persistent && tmaStore && qBuffers == 2 && overlapSoftmax;
    auto needsTwoQBuffers = [&](StringRef field, StringRef what) {
      return emitError() << "schedule field " << field << ": " << what
                         << ", so expected persistent = true, tma_store = "
                            "true, q_buffers = 2 and overlap_softmax = true "
                            "with it, but got persistent = "
                         << flag(persistent)
                         << ", tma_store = " << flag(tmaStore)
                         << ", q_buffers = " << qBuffers
                         << ", overlap_softmax = " << flag(overlapSoftmax);
    };
    // The held O is stored under the next tile's first Q.K^T: there must be
    // a next tile, a staging tile of its own (the next Q arrives in the
    // other buffer) and a first block issued on its own.
    if (deferStore && !twoQBuffers)
      return needsTwoQBuffers("defer_store", "stores a tile's O under the "
                                             "next tile's first Q.K^T");
    // The narrow block is issued apart from the rest of the loop only in
    // the overlapped form, and is 64 keys wide.
    if (narrowDiagonal && (!overlapSoftmax || blockN <= 64))
      return emitError() << "schedule field narrow_diagonal: computes the "
                            "first 64 of a block's block_n keys, so expected "
                            "overlap_softmax = true and block_n > 64 with "
                            "it, but got overlap_softmax = "
                         << flag(overlapSoftmax) << ", block_n = " << blockN;
    // One set of per-atom Q barriers, waited for in the tile's first block
    // (a persistent block's Q buffers have barriers of their own).
    if (qByAtom && (persistent || !overlapSoftmax))
      return emitError() << "schedule field q_by_atom: gives a one-tile "
                            "block's Q a barrier per 64-column atom, waited "
                            "for in the first block (issued on its own by "
                            "overlap_softmax), so expected persistent = "
                            "false and overlap_softmax = true with it, but "
                            "got persistent = "
                         << flag(persistent)
                         << ", overlap_softmax = " << flag(overlapSoftmax);
    if (k0ByAtom && !qByAtom)
      return emitError() << "schedule field k0_by_atom: puts the first K "
                            "block on q_by_atom's per-atom barriers, so "
                            "expected q_by_atom = true with it, but got "
                            "q_by_atom = false";
    // The fragments are loaded from the whole tile at once.
    if (qInRegisters && qByAtom)
      return emitError() << "schedule field q_in_registers: copies the "
                            "tile's whole Q into registers before the first "
                            "Q.K^T, which q_by_atom starts on Q's first "
                            "atom, so expected q_by_atom = false with it, "
                            "but got true";
    // Only a deferred store holds O across the tile loop's back edge.
    if (holdPacked && !deferStore)
      return emitError() << "schedule field hold_packed: packs the O that "
                            "defer_store holds for the next tile, so "
                            "expected defer_store = true with it, but got "
                            "defer_store = false";
    // The tail's pieces are tiles of the static persistent order; a
    // writer's O never reaches the TMA store its piece skips; the totals
    // must come after the merge.
    if (splitTail &&
        (!persistent || !tmaStore || dynamicTiles || overlapEpilogue))
      return emitError() << "schedule field split_tail: cuts the last "
                            "round's tiles of the static persistent order "
                            "and merges them before the rows' totals, so "
                            "expected persistent = true, tma_store = true, "
                            "dynamic_tiles = false and overlap_epilogue = "
                            "false with it, but got persistent = "
                         << flag(persistent)
                         << ", tma_store = " << flag(tmaStore)
                         << ", dynamic_tiles = " << flag(dynamicTiles)
                         << ", overlap_epilogue = " << flag(overlapEpilogue);
    // A thread holds block_n / 2 scores of a block (m64nN accumulator).
    if (exp2OnFma < 0 || exp2OnFma > blockN / 2)
      return emitError() << "schedule field exp2_on_fma: counts the "
                            "probabilities per thread and block (block_n / 2 "
                            "= "
                         << blockN / 2 << ") taken on the FMA pipe, so "
                         << "expected a value in [0, " << blockN / 2
                         << "], but got " << exp2OnFma;
    // The two blocks of a cluster must run the same K/V blocks in step;
    // a persistent block's tiles are its own.
    if (kvMulticast && persistent)
      return emitError() << "schedule field kv_multicast: shares each K/V "
                            "block between the two blocks of a cluster, "
                            "which must run one tile each, so expected "
                            "persistent = false with it, but got true";
    if (kvMulticast && k0ByAtom)
      return emitError() << "schedule field kv_multicast: multicasts K's "
                            "blocks in halves, but k0_by_atom loads the "
                            "first one whole with Q, so expected k0_by_atom "
                            "= false with it, but got true";
    // A block that runs one tile has no next tile to ask for.
    if (dynamicTiles && !persistent)
      return emitError() << "schedule field dynamic_tiles: hands the tiles "
                            "of a persistent block out one at a time, so "
                            "expected persistent = true with it, but got "
                            "persistent = false";
    // The hardware dispatches a grid of one block per tile by_head.
    if (tileOrder != TileOrder::by_head && !persistent)
      return emitError() << "schedule field tile_order: only a persistent "
                            "block chooses the order of its tiles (a grid "
                            "of one block per tile runs by_head), so "
                            "expected by_head without persistent = true, but "
                            "got "
                         << stringifyTileOrder(tileOrder);
  } else if (std::optional<StringRef> set =
                 firstSet({{"overlap_epilogue", overlapEpilogue},
                           {"defer_store", deferStore},
                           {"narrow_diagonal", narrowDiagonal},
                           {"skip_masked_blocks", skipMaskedBlocks},
                           {"uniform_consumer", uniformConsumer},
                           {"split_tail", splitTail},
                           {"hold_packed", holdPacked},
                           {"q_by_atom", qByAtom},
                           {"k0_by_atom", k0ByAtom},
                           {"q_in_registers", qInRegisters},
                           {"uniform_ring", uniformRing},
                           {"kv_multicast", kvMulticast},
                           {"raw_maxima", rawMaxima},
                           {"one_thread_producer", oneThreadProducer},
                           {"narrow_consumer_index", narrowConsumerIndex}})) {
    return emitError() << "schedule field " << *set
                       << ": only the warp-specialized kernel has it, so "
                          "expected false without producer = tma, but got "
                          "true with producer = "
                       << stringifyProducer(producer);
  } else if (exp2OnFma != 0) {
    return emitError() << "schedule field exp2_on_fma: only the "
                          "warp-specialized kernel has it, so expected 0 "
                          "without producer = tma, but got "
                       << exp2OnFma
                       << " with producer = " << stringifyProducer(producer);
  } else if (consumerWarpgroups != 1 || producerRegs != 24 ||
             consumerRegs != 240 || pingpong || overlapSoftmax ||
             ctasPerSm != 1 || persistent || tmaStore || qBuffers != 1 ||
             dynamicTiles || tileOrder != TileOrder::by_head) {
    return emitError() << "schedule fields consumer_warpgroups, "
                          "producer_regs, consumer_regs, pingpong, "
                          "overlap_softmax, ctas_per_sm, persistent, "
                          "tma_store, q_buffers, dynamic_tiles and tile_order "
                          "shape the warp-specialized kernel and need "
                          "producer = tma, but got producer = "
                       << stringifyProducer(producer);
  }
  if (producer == Producer::direct) {
    if (numStages != 1)
      return emitError() << "schedule field num_stages: producer = direct "
                            "stages nothing in shared memory, so expected 1, "
                            "but got "
                         << numStages;
    if (swizzle != 0)
      return emitError() << "schedule field swizzle: producer = direct "
                            "stages nothing in shared memory, so expected 0, "
                            "but got "
                         << swizzle;
  }
  return success();
}

bool ScheduleAttr::stagesOInItsOwnTile(int64_t headDim,
                                       int64_t headDimV) const {
  if (!getTmaStore())
    return false;
  return (getPersistent() && getQBuffers() == 2) || headDimV > headDim;
}

int64_t ScheduleAttr::getSharedMemoryBytes(int64_t headDim,
                                           int64_t elementBytes,
                                           int64_t headDimV) const {
  if (!headDimV)
    headDimV = headDim;
  int64_t ring =
      getNumStages() * getBlockN() * (headDim + headDimV) * elementBytes;
  switch (getProducer()) {
  case Producer::direct: // Everything goes straight to registers.
    return 0;
  case Producer::cp_async: // A ring of num_stages K and V tiles; Q in
                           // registers.
    return ring;
  case Producer::tma: {
    // The ring plus the Q tiles, which wgmma reads from shared memory, plus
    // up to 1 KiB to align them for the 128-byte swizzle. A persistent
    // kernel with two Q buffers that stores O by TMA stages it in a tile of
    // its own (the next Q may be arriving in the other), as does one whose
    // V head dim is wider than Q's; else O goes into the Q buffer. With
    // dynamic_tiles one 32-bit tile index per Q buffer follows.
    int64_t tile = getBlockM() * headDim * elementBytes;
    int64_t oStaging = stagesOInItsOwnTile(headDim, headDimV)
                           ? getBlockM() * headDimV * elementBytes
                           : 0;
    int64_t tileSlots = getDynamicTiles() ? kTileSlotBytes : 0;
    return kSwizzleAlignmentBytes + getQBuffers() * tile + ring + oStaging +
           tileSlots;
  }
  }
  llvm_unreachable("unknown producer");
}
