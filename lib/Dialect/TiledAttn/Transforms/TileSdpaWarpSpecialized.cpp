//===- TileSdpaWarpSpecialized.cpp - The producer = tma program -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-tile-sdpa for producer = tma schedules: FlashAttention-3's
// warp-specialized forward as a tile program. The producer warpgroup fills
// three rings by TMA (Q once, then K and V block by block); each consumer
// warpgroup takes 64 query rows and runs the online softmax loop over the
// K/V blocks with asynchronous warpgroup mmas, S = Q K^T from shared memory
// and O += P V with P from registers, releasing each slot once its mma has
// read it. With pingpong the consumers issue their mmas in turns, each slot
// taken inside the turn just before its mma. The softmax of a block no mask
// or score_mod touched is `finite` (no -inf guard). The
// sdpa's score_mod, if any, becomes a tiledattn.score_mod on the scaled
// scores after S's wait (before the mask); the softmax then takes scale 1.
// Its mask_mod runs after it, in the same tiledattn.score_mod. With a
// block_map the tile's loops take their blocks from its row of the map,
// the mask_mod and mask running on the partial ones only.
//
// With overlap_softmax each consumer issues S of block j with P.V of block
// j - 1 and runs block j's softmax while the P.V runs. With persistent the
// roles walk every grid-th tile (tiledattn.for_each_tile), with q_buffers = 2
// the next tile's Q arrives under this one. With tma_store each consumer
// stages O in shared memory and stores it by TMA (tiledattn.tma_store): in
// its rows of the Q slot, released once the copy has read them, or, where
// the schedule gives O a tile of its own (ScheduleAttr::stagesOInItsOwnTile),
// in a tiledattn.alloc, waited for before the next tile writes it again.
// With defer_store a tile's O is carried to the next tile and stored between
// the issue and the wait of that tile's first S; with hold_packed it is
// normalized (finish_rows, rescale, its lse written) and packed (truncate)
// at the end of its tile, so half the registers cross the back edge. With
// overlap_epilogue the rows' 1 / l and lse (tiledattn.finish_rows) are computed
// under the last P.V, and O, normalized after it, is stored as it is;
// tile_order, uniform_consumer and uniform_ring become attributes of the tile
// loops, the roles, and the ring gets and Q's mmas (`uniform_a`). With
// q_in_registers each consumer reads its rows of Q into registers once per tile
// (tiledattn.read_rows) and every S takes A from there. With q_by_atom Q's ring
// fills in parts, one per atom (the first before the first K block, the rest
// after it), and the tile's first S takes Q `partial`, waiting for each atom
// before its k-steps (`after_parts`); with k0_by_atom the first K block comes
// in the same put as Q (`with`), each of its atoms on Q's atom's barrier, and
// the first S takes it `partial` too. With skip_masked_blocks (causal) each
// consumer's loops end at the last block its own rows reach (a bound said
// warp-uniform, tiledattn.uniform), it takes an empty turn for each later block
// of the tile, and the producer releases those blocks' slots for it
// (tiledattn.ring.skip). With narrow_diagonal (causal, overlap_softmax) a
// masked block whose keys from 64 on are right of all the consumer's rows takes
// a narrow form in a warp-uniform scf.if: S over its first 64 keys (`mma_async
// ... b_rows(64)`), P in f32, packed after the P.V's wait
// (`tiledattn.truncate`) and widened with zeros to the block's
// (`tiledattn.resize`), and for the last block a P.V over those 64 keys. With
// dynamic_tiles the tile loops are `dynamic`: the producer's thread takes each
// next tile from the launch's counter and tags Q's put with its rank, ending
// with an end mark (a tagged put with no copy); the consumers' loops take Q's
// slot and read the rank from its tag (`ranks_from`). With kv_multicast the
// K and V rings are `cluster(2)`: the pair of blocks of a cluster shares
// them, each block copying half of every K/V block into both.
//
//===----------------------------------------------------------------------===//

#include "WarpSpecializedWriter.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::warpspecialized;

void WarpSpecializedWriter::write() {
  int64_t consumers = schedule.getConsumerWarpgroups();
  // Every consumer warp releases each slot it read.
  int64_t releases = kWarpsPerWarpgroup * consumers;
  // With q_buffers = 2 the producer loads a tile's Q while the consumers
  // still work on the tile before (persistent); with q_by_atom Q's slot
  // fills atom by atom.
  qRing = RingOp::create(
      b, loc, ringType(schedule.getQBuffers(), schedule.getBlockM(), headDim),
      releases,
      schedule.getQByAtom() ? b.getI64IntegerAttr(qParts()) : IntegerAttr(),
      /*cluster=*/IntegerAttr());
  // kv_multicast: the K/V rings are shared by the cluster's pair of blocks.
  IntegerAttr cluster =
      schedule.getKvMulticast() ? b.getI64IntegerAttr(2) : IntegerAttr();
  kRing = RingOp::create(b, loc,
                         ringType(schedule.getNumStages(), blockN(), headDim),
                         releases, IntegerAttr(), cluster);
  vRing = RingOp::create(b, loc,
                         ringType(schedule.getNumStages(), blockN(), headDimV),
                         releases, IntegerAttr(), cluster);
  if (schedule.stagesOInItsOwnTile(headDim, headDimV))
    oStage = AllocOp::create(b, loc,
                             SmemType::get(b.getContext(), schedule.getBlockM(),
                                           headDimV, elementType));
  auto roles = WarpSpecializeOp::create(
      b, loc, consumers, schedule.getProducerRegs(), schedule.getConsumerRegs(),
      /*uniform_index=*/schedule.getUniformConsumer(),
      /*narrow_index=*/schedule.getNarrowConsumerIndex());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&roles.getProducer().emplaceBlock());
  writeProducer();
  Block &consumer = roles.getConsumer().emplaceBlock();
  Value c = consumer.addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(&consumer);
  writeConsumer(c);
  op.erase();
}

/// Runs `issue` (ring gets and the mmas on their slots) on its own or,
/// with pingpong, inside one turn; returns what it returns (futures and
/// the slots' tokens). The gets go inside the turn so that each slot's
/// wait comes after the turn starts and just before its mma: waits
/// before the turn delay the turn itself (docs/perf-notes.md, eleventh
/// session, wait_before_turn: 1.5-4% slower).
SmallVector<Value>
WarpSpecializedWriter::issueInTurn(function_ref<SmallVector<Value>()> issue) {
  if (!schedule.getPingpong())
    return issue();
  auto turn = TurnOp::create(b, loc, TypeRange{});
  OpBuilder::InsertionGuard guard(b);
  Block &body = turn.getBody().emplaceBlock();
  b.setInsertionPointToStart(&body);
  SmallVector<Value> results = issue();
  YieldOp::create(b, loc, results);
  // The turn's results are what the body yields: rebuild it with their
  // types.
  b.setInsertionPoint(turn);
  auto typed = TurnOp::create(b, loc, ValueRange(results).getTypes());
  typed.getBody().takeBody(turn.getBody());
  turn.erase();
  return SmallVector<Value>(typed.getResults());
}

/// With uniform_ring a shared-memory A's address is made uniform too
/// (`uniform_a`), as the ring positions are. `afterParts`: partial
/// gets' tokens whose parts the mma waits for.
/// `bRows`: only B's first rows take part (`b_rows`), if not 0.
Value WarpSpecializedWriter::mmaAsync(Value a, Value aRow, Value bSlot,
                                      Value acc, bool transposeB,
                                      TileType result, ValueRange afterParts,
                                      int64_t bRows) {
  bool uniformA = aRow && schedule.getUniformRing();
  return MmaAsyncOp::create(b, loc, FutureType::get(b.getContext(), result), a,
                            aRow, bSlot, /*b_row=*/Value(), acc,
                            /*acc_in_flight=*/Value(), afterParts,
                            /*transpose_a=*/false, transposeB, uniformA,
                            bRows ? b.getI64IntegerAttr(bRows) : IntegerAttr(),
                            /*b_col=*/IntegerAttr())
      .getResult();
}

/// Takes the slot at `position` of `ring` and issues `mma_async` on it,
/// both in one turn with pingpong. `afterParts`: as mmaAsync's; with
/// `partialB` the slot is taken `partial` and waited for there too.
WarpSpecializedWriter::Issued
WarpSpecializedWriter::issue(Value a, Value aRow, RingOp ring, Value position,
                             Value acc, bool transposeB, TileType result,
                             ValueRange afterParts, bool partialB,
                             int64_t bRows) {
  SmallVector<Value> issued = issueInTurn([&]() -> SmallVector<Value> {
    RingGetOp slot = get(ring, position, partialB);
    SmallVector<Value> after(afterParts);
    if (partialB)
      after.push_back(slot.getToken());
    return {mmaAsync(a, aRow, slot.getSlot(), acc, transposeB, result, after,
                     bRows),
            slot.getToken()};
  });
  return {issued[0], issued[1]};
}

/// issue, then its wait; then the slot goes back to the producer.
Value WarpSpecializedWriter::mma(Value a, Value aRow, RingOp ring,
                                 Value position, Value acc, bool transposeB,
                                 TileType result) {
  Issued issued = issue(a, aRow, ring, position, acc, transposeB, result);
  Value out = WaitOp::create(b, loc, result, issued.future);
  RingReleaseOp::create(b, loc, ring, issued.token);
  return out;
}

/// The sdpa's score_mod (`score`) and mask_mod (`mask`) on the scores
/// of the tile at (row, col), unscaled after unless scoresScaled.
Value WarpSpecializedWriter::applyMods(Value scores, Value row, Value col,
                                       bool score, bool mask, bool scaled,
                                       Value unscale) {
  return emitScoreMods(b, op, at, scores, row, col, score, mask, scaled,
                       scoresScaled() ? Value() : unscale);
}

/// The scores of K/V block `j` once waited for, with the mods and (if
/// `mask`) the mask applied. With a block_map the mask_mod runs on the
/// map's partial blocks only (`mask`), which leaves the full ones as they
/// were.
Value WarpSpecializedWriter::modAndMask(const Consumer &c, Value scores,
                                        Value j, bool mask) {
  bool maskMod = hasMaskMod() && (mask || !blockMap());
  if (!hasScoreMod() && !maskMod && !mask)
    return scores;
  Value col = firstKey(j);
  if (hasScoreMod() || maskMod)
    scores = applyMods(scores, c.row, col, hasScoreMod(), maskMod,
                       /*scaled=*/false, c.unscale);
  if (mask)
    scores = MaskOp::create(b, loc, scores.getType(), scores, c.row, col,
                            at.seqK, op.getCausal());
  return scores;
}

/// `unmasked`: no mask touched the scores, and with no score_mod they
/// are finite (`finite`: no -inf guard). With raw_maxima the maxima are
/// of the raw scores (`raw_max`).
/// `probsType`: P's element type, the mma's (default) or f32 (packed
/// later, tiledattn.truncate).
OnlineSoftmaxOp WarpSpecializedWriter::softmax(const Consumer &c, Value scores,
                                               Value rowMax, Value rowSum,
                                               bool unmasked, Type probsType) {
  auto softmax = OnlineSoftmaxOp::create(
      b, loc, scores, rowMax, rowSum, c.softmaxScale,
      probsType ? probsType : elementType,
      unmasked && !hasScoreMod() && (!hasMaskMod() || blockMap()),
      schedule.getRawMaxima());
  if (int64_t n = op.getSchedule().getExp2OnFma())
    softmax.setExp2OnFma(n);
  return softmax;
}

/// The loop's row maxima in the units the ops after it take (store,
/// tma_store, finish_rows, merge_pieces): scaled by tiledattn.scale_max
/// where raw_maxima keeps them raw.
Value WarpSpecializedWriter::scaledMax(const Consumer &c, Value rowMax) {
  if (!schedule.getRawMaxima())
    return rowMax;
  return ScaleMaxOp::create(b, loc, rowMax.getType(), rowMax, c.softmaxScale);
}

/// The loops over K/V blocks: those that need no mask first, then the
/// rest (the diagonal, the ragged end), as in the mma_sync program. The
/// first loop starts at block `first`, after any written before them.
/// `body(j, state, mask)` returns the next iteration's state.
SmallVector<Value> WarpSpecializedWriter::emitBlockLoops(
    int64_t first, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange, bool)> body) {
  auto emitLoop = [&](Value begin, Value end, ValueRange state, bool mask) {
    auto loop = scf::ForOp::create(b, loc, begin, end, idx(1), state);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    // A masked block's first key from the map: read before the block's
    // mmas are issued, so that the load is under them.
    if (blockMap() && mask)
      mappedFirstKeys[loop.getInductionVar()] =
          firstKey(loop.getInductionVar());
    scf::YieldOp::create(
        b, loc, body(loop.getInductionVar(), loop.getRegionIterArgs(), mask));
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> state(inits);
  Value begin = idx(first), maskedBegin = begin;
  if (schedule.getSplitKvLoop()) {
    maskedBegin =
        first == 0
            ? unmaskedBlocks
            : arith::MaxUIOp::create(b, loc, unmaskedBlocks, begin).getResult();
    state = emitLoop(begin, maskedBegin, state, /*mask=*/false);
  }
  return emitLoop(maskedBegin, consumerBlocks, state, /*mask=*/true);
}

/// The consumer warpgroup `c`: rows 64c .. 64c + 63 of the block's tile.
void WarpSpecializedWriter::writeConsumer(Value consumer) {
  Type f32 = b.getF32Type();
  Consumer c;
  c.accType = tile({kWarpgroupRows, headDimV}, f32);
  c.scoreType = tile({kWarpgroupRows, blockN()}, f32);
  TileType rowType = tile({kWarpgroupRows}, f32);
  auto fill = [&](TileType t, double v) -> Value {
    return ConstantOp::create(b, loc, t, b.getF32FloatAttr(v));
  };
  Value acc0 = fill(c.accType, 0.0);
  Value rowMax0 = fill(rowType, -std::numeric_limits<double>::infinity());
  Value rowSum0 = fill(rowType, 0.0);
  // With mods the scores reach the softmax scaled already, unless only a
  // block_map's partial blocks take one (then it scales them back).
  if (!scoresScaled() && hasMaskMod())
    c.unscale = arith::DivFOp::create(
        b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0)),
        op.getScale());
  c.softmaxScale =
      !scoresScaled()
          ? op.getScale()
          : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0))
                .getResult();
  c.slotRow = arith::MulIOp::create(b, loc, consumer, idx(kWarpgroupRows));
  // defer_store: no O is held before the first tile.
  SmallVector<Value> noneHeld;
  auto nothingHeld = [&](Value acc, Value rowMax, Value rowSum) {
    return HeldO{acc,
                 rowMax,
                 rowSum,
                 idx(0),
                 idx(0),
                 idx(0),
                 arith::ConstantIntOp::create(b, loc, 0, 1)}
        .values();
  };
  if (schedule.getHoldPacked()) {
    Type oElement = op.getO().getType().getElementType();
    packedZero = TruncateOp::create(
        b, loc, tile({kWarpgroupRows, headDimV}, oElement), acc0);
    noneHeld = nothingHeld(packedZero, Value(), Value());
  } else if (schedule.getDeferStore()) {
    noneHeld = nothingHeld(acc0, rowMax0, rowSum0);
  }
  SmallVector<Value> last = forEachTile(
      /*producer=*/false,
      [&](ValueRange carried) -> SmallVector<Value> {
        if (schedule.getDeferStore())
          held = HeldO::from(carried);
        c.row = arith::AddIOp::create(b, loc, at.row, c.slotRow);
        consumerBlocks = blocks;
        if (skipsMaskedBlocks()) // the same in the warpgroup: said so
          consumerBlocks =
              UniformOp::create(b, loc, b.getIndexType(),
                                blocksReachedBy(arith::AddIOp::create(
                                    b, loc, c.row, idx(kWarpgroupRows))));
        if (dynamicTiles()) { // the loop took Q's slot, for its rank
          c.qSlot = heldQ.slot;
          c.qToken = heldQ.token;
        } else { // q_by_atom: the first S waits for Q's atoms one by one
          auto q = get(qRing, tilesDone, /*partial=*/schedule.getQByAtom());
          c.qSlot = q.getSlot();
          c.qToken = q.getToken();
        }
        c.qA = c.qSlot;
        c.qARow = c.slotRow;
        if (schedule.getQInRegisters()) {
          c.qA = ReadRowsOp::create(
              b, loc, tile({kWarpgroupRows, headDim}, elementType), c.qSlot,
              c.slotRow);
          c.qARow = Value();
        }
        SmallVector<Value> out =
            schedule.getOverlapSoftmax()
                ? writeOverlappedBlocks(c, {acc0, rowMax0, rowSum0})
                : writeBlocks(c, {acc0, rowMax0, rowSum0});
        if (out[1]) // (none with overlap_epilogue: finish_rows took them)
          out[1] = scaledMax(c, out[1]);
        if (skipsMaskedBlocks())
          skipTurns();
        if (splitTail()) { // a piece's O to the one that stores its tile
          auto merged = MergePiecesOp::create(
              b, loc, out[0].getType(), out[1].getType(), out[2].getType(),
              out[0], out[1], out[2], piece.first, piece.holders);
          out.assign(merged->result_begin(), merged->result_end());
        }
        if (!schedule.getDeferStore()) {
          writeEpilogue(c, out);
          return {};
        }
        // Held until the next tile has issued its first S.
        RingReleaseOp::create(b, loc, qRing, c.qToken);
        Value valid = storesTile();
        if (schedule.getHoldPacked())
          return HeldO{
              packHeld(c, out, valid), {}, {}, c.row, at.head, at.batch, valid}
              .values();
        return HeldO{out[0], out[1], out[2], c.row, at.head, at.batch, valid}
            .values();
      },
      noneHeld);
  if (schedule.getDeferStore()) { // The last tile's.
    held = HeldO::from(last);
    storeHeld(c);
  }
  if (oStage) // The block's shared memory outlives the last copy's reads.
    TmaStoreWaitOp::create(b, loc);
}

/// skip_masked_blocks with pingpong: the tile's blocks this consumer
/// does not read get its empty turns (one per block, two without
/// overlap_softmax), since the other consumers wait for them.
void WarpSpecializedWriter::skipTurns() {
  if (!schedule.getPingpong())
    return;
  auto loop = scf::ForOp::create(b, loc, consumerBlocks, blocks, idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  for (int t = 0; t < (schedule.getOverlapSoftmax() ? 1 : 2); ++t)
    issueInTurn([] { return SmallVector<Value>(); });
}

/// hold_packed: the rows' 1 / l and lse (finish_rows), O scaled by them
/// and packed (truncate), at the end of the tile; with split_tail only in
/// the piece that stores the tile (the others hold zeros, never stored).
Value WarpSpecializedWriter::packHeld(const Consumer &c, ArrayRef<Value> out,
                                      Value valid) {
  auto pack = [&]() -> Value {
    Value inv = FinishRowsOp::create(b, loc, out[1].getType(), out[1], out[2],
                                     op.getLse(), at.batch, at.head, c.row);
    Value scaled = RescaleOp::create(b, loc, c.accType, out[0], inv);
    return TruncateOp::create(b, loc, packedZero.getType(), scaled);
  };
  if (!splitTail())
    return pack();
  auto ifOp = scf::IfOp::create(b, loc, packedZero.getType(), valid,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(b, loc, pack());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, packedZero);
  return ifOp.getResult(0);
}

/// Stores the held O, if there is one, through the O tile (once the copy
/// before has read it); a packed one as it is.
void WarpSpecializedWriter::storeHeld(const Consumer &c) {
  ifThen(held.valid, [&] {
    TmaStoreWaitOp::create(b, loc);
    TmaStoreOp::create(b, loc, held.acc, held.rowMax, held.rowSum, op.getO(),
                       held.batch, held.head, held.row, oStage, c.slotRow,
                       held.rowMax ? op.getLse() : Value());
  });
}

/// O and lse of the consumer's rows, and Q's slot back to the producer.
/// `out`: O and the rows' max and sum, or (overlap_epilogue) O normalized
/// and no statistics (the lse is stored).
void WarpSpecializedWriter::writeEpilogue(const Consumer &c, ValueRange out) {
  auto tmaStore = [&](Value stage) {
    TmaStoreOp::create(b, loc, out[0], out[1], out[2], op.getO(), at.batch,
                       at.head, c.row, stage, c.slotRow,
                       out[1] ? op.getLse() : Value());
  };
  // split_tail: only the piece that starts its tile stores.
  auto storeIfWhole = [&](function_ref<void()> store) {
    if (splitTail())
      ifThen(storesTile(), store);
    else
      store();
  };
  if (!schedule.getTmaStore()) {
    RingReleaseOp::create(b, loc, qRing, c.qToken);
    storeIfWhole([&] {
      StoreOp::create(b, loc, out[0], out[1], out[2], op.getO(), at.batch,
                      at.head, c.row, op.getLse());
    });
  } else if (oStage) {
    RingReleaseOp::create(b, loc, qRing, c.qToken);
    storeIfWhole([&] {
      TmaStoreWaitOp::create(b, loc); // the tile before's copy read it
      tmaStore(oStage);
    });
  } else {
    storeIfWhole([&] {
      tmaStore(c.qSlot);
      TmaStoreWaitOp::create(b, loc);
    });
    RingReleaseOp::create(b, loc, qRing, c.qToken);
  }
}

/// Block by block in order: S = Q K_j^T, its softmax, O += P V_j, each
/// mma waited for before the next step. Returns O, row max and row sum.
SmallVector<Value> WarpSpecializedWriter::writeBlocks(const Consumer &c,
                                                      ValueRange inits) {
  return emitBlockLoops(
      0, inits,
      [&](Value j, ValueRange state, bool mask) -> SmallVector<Value> {
        Value scores = mma(c.qA, c.qARow, kRing, kv(j), Value(),
                           /*transposeB=*/true, c.scoreType);
        scores = modAndMask(c, scores, j, mask);
        auto sm = softmax(c, scores, state[1], state[2], !mask);
        Value rescaled =
            RescaleOp::create(b, loc, c.accType, state[0], sm.getRescale());
        Value next = mma(sm.getProbs(), Value(), vRing, kv(j), rescaled,
                         /*transposeB=*/false, c.accType);
        return {next, sm.getNewRowMax(), sm.getNewRowSum()};
      });
}

/// overlap_softmax, FlashAttention-3's intra-warpgroup overlap: block 0's
/// S and softmax alone, then per block j, S_j = Q K_j^T and O += P_{j-1}
/// V_{j-1} issued together, S_j waited for and its softmax run while the
/// P.V still runs; then the last block's P.V. Returns O, row max, sum.
SmallVector<Value>
WarpSpecializedWriter::writeOverlappedBlocks(const Consumer &c,
                                             ValueRange inits) {
  // q_by_atom: Q's atoms waited for one by one; k0_by_atom: the first K
  // block came with them (its own barrier completes at their issue).
  SmallVector<Value> qParts;
  if (schedule.getQByAtom())
    qParts.push_back(c.qToken);
  Issued firstS = issue(c.qA, c.qARow, kRing, kvFirst, Value(),
                        /*transposeB=*/true, c.scoreType, qParts,
                        /*partialB=*/schedule.getK0ByAtom());
  // defer_store: the tile before's O goes out under this tile's first S.
  if (schedule.getDeferStore())
    storeHeld(c);
  Value scores = WaitOp::create(b, loc, c.scoreType, firstS.future);
  RingReleaseOp::create(b, loc, kRing, firstS.token);
  // Block 0 is masked only when it is the diagonal or the ragged end.
  bool maskAlways = !schedule.getSplitKvLoop();
  if (maskAlways) {
    scores = modAndMask(c, scores, idx(0), /*mask=*/true);
  } else {
    scores = modAndMask(c, scores, idx(0), /*mask=*/false);
    Value masked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         unmaskedBlocks, idx(0));
    auto ifMasked = scf::IfOp::create(b, loc, c.scoreType, masked,
                                      /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifMasked.getThenRegion().front());
    // With a block_map the mask_mod, which the line above left out, runs
    // here with the mask.
    Value col = firstKey(idx(0));
    Value partial = scores;
    if (blockMap() && hasMaskMod())
      partial = applyMods(scores, c.row, col, /*score=*/false, /*mask=*/true,
                          /*scaled=*/hasScoreMod(), c.unscale);
    scf::YieldOp::create(b, loc,
                         MaskOp::create(b, loc, c.scoreType, partial, c.row,
                                        col, at.seqK, op.getCausal())
                             .getResult());
    b.setInsertionPointToStart(&ifMasked.getElseRegion().front());
    scf::YieldOp::create(b, loc, scores);
    scores = ifMasked.getResult(0);
  }
  // Block 0 may have been masked (the scf.if above): guarded.
  auto first = softmax(c, scores, inits[1], inits[2], /*unmasked=*/false);
  SmallVector<Value> state{inits[0], first.getNewRowMax(), first.getNewRowSum(),
                           first.getProbs()};
  state = emitBlockLoops(
      1, state,
      [&](Value j, ValueRange state, bool mask) -> SmallVector<Value> {
        if (!mask || !narrowDiagonal())
          return overlappedBlock(c, j, state, mask, /*narrow=*/false);
        return ifNarrow(c, j, ValueRange(state).getTypes(), [&](bool narrow) {
          return overlappedBlock(c, j, state, mask, narrow);
        });
      });
  Value last = arith::SubIOp::create(b, loc, consumerBlocks, idx(1));
  if (!narrowDiagonal())
    return lastPV(c, last, state, /*narrow=*/false);
  // (Placeholders for the types: overlap_epilogue yields no statistics.)
  SmallVector<Type> types{c.accType};
  if (!schedule.getOverlapEpilogue())
    types.append({state[1].getType(), state[2].getType()});
  SmallVector<Value> out = ifNarrow(c, last, types, [&](bool narrow) {
    SmallVector<Value> out = lastPV(c, last, state, narrow);
    return SmallVector<Value>(llvm::make_filter_range(
        out, [](Value v) { return static_cast<bool>(v); }));
  });
  out.resize(3);
  return out;
}

/// `scf.if` on whether block `j` is narrow for consumer `c` (the same in
/// the warpgroup: said so), each branch what `branch(narrow)` writes,
/// yielded as `types`.
SmallVector<Value> WarpSpecializedWriter::ifNarrow(
    const Consumer &c, Value j, TypeRange types,
    function_ref<SmallVector<Value>(bool narrow)> branch) {
  Value narrow =
      UniformOp::create(b, loc, b.getI1Type(),
                        cmp(arith::CmpIPredicate::uge, firstKey(j), c.row));
  auto ifOp = scf::IfOp::create(b, loc, types, narrow,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  for (bool n : {true, false}) {
    b.setInsertionPointToStart(n ? &ifOp.getThenRegion().front()
                                 : &ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, branch(n));
  }
  return SmallVector<Value>(ifOp.getResults());
}

/// Block j of the overlapped loops: S_j = Q K_j^T issued with O +=
/// P_{j-1} V_{j-1}, S_j waited for and its softmax run while the P.V
/// runs. `state`: O, row max, row sum, P_{j-1}. `narrow`: S_j over the
/// block's first 64 keys, its P widened with zeros to the block's.
SmallVector<Value> WarpSpecializedWriter::overlappedBlock(
    const Consumer &c, Value j, ValueRange state, bool mask, bool narrow) {
  Value kPosition = kv(j);
  Value vPosition = kv(arith::SubIOp::create(b, loc, j, idx(1)));
  TileType scoreType =
      narrow ? tile({kWarpgroupRows, kWarpgroupRows}, b.getF32Type())
             : c.scoreType;
  // V_{j-1}'s slot is waited for after S_j's issue.
  SmallVector<Value> issued = issueInTurn([&]() -> SmallVector<Value> {
    RingGetOp k = get(kRing, kPosition);
    Value s = mmaAsync(c.qA, c.qARow, k.getSlot(), Value(),
                       /*transposeB=*/true, scoreType, {},
                       narrow ? kWarpgroupRows : 0);
    RingGetOp v = get(vRing, vPosition);
    Value pv = mmaAsync(state[3], Value(), v.getSlot(), state[0],
                        /*transposeB=*/false, c.accType);
    return {s, pv, k.getToken(), v.getToken()};
  });
  Value scores = WaitOp::create(b, loc, scoreType, issued[0]);
  RingReleaseOp::create(b, loc, kRing, issued[2]);
  scores = modAndMask(c, scores, j, mask);
  // A narrow block's P is packed after the P.V's wait: packed under the
  // P.V, which reads the registers of P_{j-1}, it made ptxas serialize
  // every wgmma of the kernel (C7513).
  auto sm = softmax(c, scores, state[1], state[2], !mask,
                    narrow ? b.getF32Type() : elementType);
  Value acc = WaitOp::create(b, loc, c.accType, issued[1]);
  RingReleaseOp::create(b, loc, vRing, issued[3]);
  acc = RescaleOp::create(b, loc, c.accType, acc, sm.getRescale());
  Value probs = sm.getProbs();
  if (narrow)
    probs = ResizeOp::create(
        b, loc, state[3].getType(),
        TruncateOp::create(b, loc,
                           tile({kWarpgroupRows, kWarpgroupRows}, elementType),
                           probs));
  return {acc, sm.getNewRowMax(), sm.getNewRowSum(), probs};
}

/// The last block's P.V (`last`, of the consumer's blocks) after the
/// overlapped loops; `narrow`: over its first 64 keys. Returns O and the
/// rows' max and sum, or (overlap_epilogue) O normalized, the rows' 1 / l
/// and lse computed under the P.V, and no statistics.
SmallVector<Value> WarpSpecializedWriter::lastPV(const Consumer &c, Value last,
                                                 ValueRange state,
                                                 bool narrow) {
  Value probs = state[3];
  if (narrow)
    probs = ResizeOp::create(
        b, loc, tile({kWarpgroupRows, kWarpgroupRows}, elementType), probs);
  int64_t rows = narrow ? kWarpgroupRows : 0;
  Value position = kv(last);
  if (schedule.getOverlapEpilogue()) {
    // The rows' 1 / l and lse under the last P.V; O normalized after it.
    Issued pv = issue(probs, Value(), vRing, position, state[0],
                      /*transposeB=*/false, c.accType, {}, false, rows);
    Value inv =
        FinishRowsOp::create(b, loc, state[1].getType(), scaledMax(c, state[1]),
                             state[2], op.getLse(), at.batch, at.head, c.row);
    Value acc = WaitOp::create(b, loc, c.accType, pv.future);
    RingReleaseOp::create(b, loc, vRing, pv.token);
    return {RescaleOp::create(b, loc, c.accType, acc, inv), Value(), Value()};
  }
  Issued pv = issue(probs, Value(), vRing, position, state[0],
                    /*transposeB=*/false, c.accType, {}, false, rows);
  Value acc = WaitOp::create(b, loc, c.accType, pv.future);
  RingReleaseOp::create(b, loc, vRing, pv.token);
  return {acc, state[1], state[2]};
}

void mlir::tiledattn::writeWarpSpecializedProgram(SdpaOp op) {
  WarpSpecializedWriter(op).write();
}
