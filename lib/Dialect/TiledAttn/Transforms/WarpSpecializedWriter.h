//===- WarpSpecializedWriter.h - The producer = tma writer ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Internal to tiledattn-tile-sdpa: the class that writes the
// warp-specialized tile program of a producer = tma sdpa
// (TileSdpaWarpSpecialized.cpp says what the program does). Its small
// helpers are here; its other methods live by role: TileSdpaProducer.cpp
// (the tile loop both roles walk, and the producer's copies) and
// TileSdpaWarpSpecialized.cpp (the rings and roles, and the consumers'
// mmas, softmax and epilogue).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_WARPSPECIALIZEDWRITER_H
#define TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_WARPSPECIALIZEDWRITER_H

#include "TileSdpa.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::tiledattn::warpspecialized {
constexpr int64_t kWarpsPerWarpgroup = 4;

/// Builds the program of one sdpa op; see TileSdpaWarpSpecialized.cpp.
class WarpSpecializedWriter {
public:
  explicit WarpSpecializedWriter(SdpaOp op)
      : op(op), b(op), loc(op.getLoc()), schedule(op.getSchedule()),
        elementType(op.getQ().getType().getElementType()),
        headDim(tileColumns(op.getHeadDim())),
        headDimV(tileColumns(op.getHeadDimV())) {}

  void write();

private:
  SdpaOp op;
  OpBuilder b;
  Location loc;
  ScheduleAttr schedule;
  Type elementType;
  /// Of Q and K, and of V and O: their tiles' columns (tileColumns).
  int64_t headDim, headDimV;
  RingOp qRing, kRing, vRing;
  /// tma_store with a tile of O's own: where O is staged (else in Q's slot).
  Value oStage;
  /// The tile being written (forEachTile): where it is, the tiles the block
  /// ran before it, and the ring position of its first K/V block.
  BlockCoordinates at;
  Value tilesDone, kvFirst;
  /// dynamic_tiles: the producer's tile rank; the Q slot a consumer's loop
  /// took.
  Value tileRank;
  struct {
    Value slot, token;
  } heldQ;
  /// K/V blocks [0, blocks) take part; [0, unmaskedBlocks) need no mask.
  /// With split_tail they are the piece's, numbered from its first block.
  Value blocks, unmaskedBlocks;
  /// split_tail: the piece's first K/V block in its tile, and the blocks
  /// after this one that run the rest of the tile (for merge_pieces).
  struct {
    Value first, holders;
  } piece;
  /// block_map: the tile's row of the map (batch, head, query block), and
  /// the first keys of its blocks read at the top of their iterations.
  BlockMapRow mapRow;
  DenseMap<Value, Value> mappedFirstKeys;
  /// The blocks [0, consumerBlocks) the consumer being written reads: all,
  /// or with skip_masked_blocks those its rows reach.
  Value consumerBlocks;

  /// skip_masked_blocks: causal consumers stop at the last block their own
  /// rows reach.
  bool skipsMaskedBlocks() {
    return op.getCausal() && schedule.getSkipMaskedBlocks();
  }
  /// The tile's blocks that rows before `rowsEnd` reach (causal).
  Value blocksReachedBy(Value rowsEnd) {
    Value keysEnd = arith::MinUIOp::create(b, loc, at.seqK, rowsEnd);
    return arith::MinUIOp::create(
        b, loc, blocks,
        arith::CeilDivUIOp::create(b, loc, keysEnd, idx(blockN())));
  }

  int64_t blockN() const { return schedule.getBlockN(); }
  /// q_by_atom: the parts Q's slot fills in, one per 64-column atom.
  int64_t qParts() const { return headDim / 64; }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cmp(arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  }
  /// `scf.if cond { then() }`, the insertion point back after it.
  void ifThen(Value cond, function_ref<void()> then) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    then();
  }
  RingType ringType(int64_t depth, int64_t rows, int64_t cols) {
    return RingType::get(
        b.getContext(), depth,
        SmemType::get(b.getContext(), rows, cols, elementType));
  }
  TileType tile(ArrayRef<int64_t> shape, Type t) {
    return TileType::get(b.getContext(), shape, t);
  }

  /// What a put copies into a slot: `source[batch, head, row]`.
  struct Copy {
    RingOp ring;
    Value position, source, head;
    /// The first row of each of the slot's pieces (one, but for kv_span).
    SmallVector<Value> rows;
  };

  /// In consumer code (the only reader of the rings); uniform_ring: the
  /// position is known warp-uniform. `partial`: taken without waiting, its
  /// parts waited for by the mma that names the token in `after_parts`.
  RingGetOp get(RingOp ring, Value position, bool partial = false) {
    return RingGetOp::create(b, loc, ring.getType().getSlotType(),
                             TokenType::get(b.getContext()), ring, position,
                             /*uniform=*/schedule.getUniformRing(), partial);
  }

  /// The K/V ring position of the tile's block `j`.
  Value kv(Value j) { return arith::AddIOp::create(b, loc, kvFirst, j); }
  /// The first key of block `j` (with split_tail, of the piece's; with a
  /// block_map, of the map's entry j).
  Value firstKey(Value j) {
    if (blockMap()) {
      if (Value key = mappedFirstKeys.lookup(j))
        return key;
      Value block = mapEntry(arith::AddIOp::create(b, loc, j, idx(2)));
      return arith::MulIOp::create(b, loc, block, idx(blockN()));
    }
    if (piece.first)
      j = arith::AddIOp::create(b, loc, piece.first, j);
    return arith::MulIOp::create(b, loc, j, idx(blockN()));
  }
  /// The sdpa's block_map, if any (verifyBlockMap: no causal, no split_tail).
  Value blockMap() { return op.getBlockMap(); }
  /// Entry `i` of the tile's row of the block_map.
  Value mapEntry(Value i) { return emitBlockMapEntry(b, op, mapRow, i); }

  /// split_tail: the tile loops run the last round's tiles in pieces.
  bool splitTail() { return schedule.getSplitTail(); }

  /// The tile grid: query blocks, heads and batches.
  std::array<Value, 3> tileGrid() {
    return {arith::CeilDivUIOp::create(
                b, loc, memref::DimOp::create(b, loc, op.getQ(), idx(2)),
                idx(schedule.getBlockM())),
            memref::DimOp::create(b, loc, op.getQ(), idx(1)),
            memref::DimOp::create(b, loc, op.getQ(), idx(0))};
  }

  /// dynamic_tiles: the tile loops take their tiles one at a time, the
  /// producer's from the launch's counter, the consumers' from the ranks
  /// the producer tags Q's puts with.
  bool dynamicTiles() { return schedule.getDynamicTiles(); }

  /// An mma whose B is a ring slot: its future and the slot's token.
  struct Issued {
    Value future, token;
  };

  bool hasScoreMod() { return !op.getScoreMod().empty(); }
  bool hasMaskMod() { return !op.getMaskMod().empty(); }
  /// Whether the mods reach the softmax scaled on every block (it then
  /// takes scale 1): a score_mod runs on all, a mask_mod without a
  /// block_map too.
  bool scoresScaled() { return hasScoreMod() || (hasMaskMod() && !blockMap()); }

  /// What a consumer's blocks share: its rows, its Q slot, tile types.
  struct Consumer {
    TileType accType, scoreType;
    /// Its first row in the Q slot, and in the sequence.
    Value slotRow, row;
    Value qSlot, qToken;
    /// Each S's A: the consumer's rows of the Q slot (qARow), or with
    /// q_in_registers those rows read into registers once per tile (no
    /// qARow).
    Value qA, qARow;
    /// The online softmax's scale: 1 when the mods scale the scores
    /// (scoresScaled); else the mask_mod's body scales back, by `unscale`.
    Value softmaxScale, unscale;
  };

  /// defer_store: the O a tile hands the next, carried by the tile loop in
  /// this order (values() / from()). With hold_packed, O normalized and
  /// packed (its lse written already), with no row statistics.
  struct HeldO {
    Value acc, rowMax, rowSum;
    /// Where it goes: the consumer's first row, the head and the batch.
    Value row, head, batch;
    /// Whether there is one (i1; not before the first tile).
    Value valid;
    SmallVector<Value> values() const {
      if (!rowMax)
        return {acc, row, head, batch, valid};
      return {acc, rowMax, rowSum, row, head, batch, valid};
    }
    static HeldO from(ValueRange v) {
      if (v.size() == 5)
        return {v[0], Value(), Value(), v[1], v[2], v[3], v[4]};
      return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    }
  };
  /// hold_packed: O's zeros packed (what a tile that stores nothing holds).
  Value packedZero;
  /// hold_packed: the tile's O (`out`: O, scaled row max, row sum)
  /// normalized and packed, its lse written, where `valid` (the tile's
  /// storing piece) says so.
  Value packHeld(const Consumer &c, ArrayRef<Value> out, Value valid);
  HeldO held;

  /// Whether the tile's O is stored here: always, or with split_tail by the
  /// piece with the tile's first block (which merged the others).
  Value storesTile() {
    if (!splitTail())
      return arith::ConstantIntOp::create(b, loc, 1, 1);
    return cmp(arith::CmpIPredicate::eq, piece.first, idx(0));
  }

  /// narrow_diagonal (causal, with overlap_softmax): a block whose keys
  /// from 64 on are right of every row of the consumer takes the narrow
  /// form, S over its first 64 keys and P.V over those only.
  bool narrowDiagonal() {
    return op.getCausal() && schedule.getNarrowDiagonal() &&
           schedule.getOverlapSoftmax() && blockN() > kWarpgroupRows;
  }

  // The methods below are described where they are defined. In
  // TileSdpaProducer.cpp, the tile loop and the producer:
  void put(Copy copy,
           std::optional<std::pair<int64_t, int64_t>> parts = std::nullopt,
           std::optional<Copy> with = std::nullopt, Value tag = Value());
  SmallVector<Value>
  forEachTile(bool producer,
              function_ref<SmallVector<Value>(ValueRange carried)> tileBody,
              ValueRange carried = {});
  void writeProducer();
  void writeTileCopies();

  // In TileSdpaWarpSpecialized.cpp, the consumers:
  SmallVector<Value> issueInTurn(function_ref<SmallVector<Value>()> issue);
  Value mmaAsync(Value a, Value aRow, Value bSlot, Value acc, bool transposeB,
                 TileType result, ValueRange afterParts = {},
                 int64_t bRows = 0);
  Issued issue(Value a, Value aRow, RingOp ring, Value position, Value acc,
               bool transposeB, TileType result, ValueRange afterParts = {},
               bool partialB = false, int64_t bRows = 0);
  Value mma(Value a, Value aRow, RingOp ring, Value position, Value acc,
            bool transposeB, TileType result);
  Value applyMods(Value scores, Value row, Value col, bool score, bool mask,
                  bool scaled, Value unscale);
  Value modAndMask(const Consumer &c, Value scores, Value j, bool mask);
  OnlineSoftmaxOp softmax(const Consumer &c, Value scores, Value rowMax,
                          Value rowSum, bool unmasked, Type probsType = Type());
  Value scaledMax(const Consumer &c, Value rowMax);
  SmallVector<Value> emitBlockLoops(
      int64_t first, ValueRange inits,
      function_ref<SmallVector<Value>(Value, ValueRange, bool)> body);
  void writeConsumer(Value consumer);
  void skipTurns();
  void storeHeld(const Consumer &c);
  void writeEpilogue(const Consumer &c, ValueRange out);
  SmallVector<Value> writeBlocks(const Consumer &c, ValueRange inits);
  SmallVector<Value> writeOverlappedBlocks(const Consumer &c, ValueRange inits);
  SmallVector<Value>
  ifNarrow(const Consumer &c, Value j, TypeRange types,
           function_ref<SmallVector<Value>(bool narrow)> branch);
  SmallVector<Value> overlappedBlock(const Consumer &c, Value j,
                                     ValueRange state, bool mask, bool narrow);
  SmallVector<Value> lastPV(const Consumer &c, Value last, ValueRange state,
                            bool narrow);
};
} // namespace mlir::tiledattn::warpspecialized

#endif // TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_WARPSPECIALIZEDWRITER_H
