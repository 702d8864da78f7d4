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
// read it. With pingpong the consumers issue their mmas in turns. The
// sdpa's score_mod, if any, becomes a tiledattn.score_mod on the scaled
// scores after S's wait (before the mask); the softmax then takes scale 1.
//
// The schedule's refinements (persistent tiles, overlapped softmax, the TMA
// store, ...) are not written yet: the pass refuses a schedule that sets one
// (ScheduleAttr::getHopperRefinements), naming it.
//
//===----------------------------------------------------------------------===//

#include "TileSdpa.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tiledattn;

LogicalResult mlir::tiledattn::checkWarpSpecializedSchedule(SdpaOp op) {
  ScheduleAttr schedule = op.getSchedule();
  SmallVector<StringRef> refinements = schedule.getHopperRefinements();
  if (!refinements.empty())
    return op.emitOpError("has a producer = tma schedule that sets ")
           << llvm::join(refinements, ", ")
           << ", which tiledattn-tile-sdpa does not write into the tile "
              "program yet; leave them out (they change the kernel's speed, "
              "not its results) or lower the sdpa with "
              "convert-sdpa-to-hopper (the default pipeline)";
  return success();
}

namespace {
/// Builds the program of one sdpa op; see the file comment.
class WarpSpecializedWriter {
public:
  explicit WarpSpecializedWriter(SdpaOp op)
      : op(op), b(op), loc(op.getLoc()), schedule(op.getSchedule()),
        elementType(op.getQ().getType().getElementType()),
        headDim(op.getQ().getType().getShape()[3]) {}

  void write() {
    int64_t consumers = schedule.getConsumerWarpgroups();
    // Every consumer warp releases each slot it read.
    int64_t releases = 4 * consumers;
    qRing = RingOp::create(b, loc, ringType(1, schedule.getBlockM()), releases);
    kRing = RingOp::create(b, loc, ringType(schedule.getNumStages(), blockN()),
                           releases);
    vRing = RingOp::create(b, loc, kRing.getType(), releases);
    at = emitBlockCoordinates(b, op);
    KeyRange keys = emitKeyRange(b, op, at);
    blocks = arith::CeilDivUIOp::create(b, loc, keys.end, idx(blockN()));
    unmaskedBlocks =
        arith::DivUIOp::create(b, loc, keys.unmaskedEnd, idx(blockN()));

    auto roles =
        WarpSpecializeOp::create(b, loc, consumers, schedule.getProducerRegs(),
                                 schedule.getConsumerRegs());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getProducer().emplaceBlock());
    writeProducer();
    Block &consumer = roles.getConsumer().emplaceBlock();
    Value c = consumer.addArgument(b.getIndexType(), loc);
    b.setInsertionPointToStart(&consumer);
    writeConsumer(c);
    op.erase();
  }

private:
  SdpaOp op;
  OpBuilder b;
  Location loc;
  ScheduleAttr schedule;
  Type elementType;
  int64_t headDim;
  RingOp qRing, kRing, vRing;
  BlockCoordinates at;
  /// K/V blocks [0, blocks) take part; [0, unmaskedBlocks) need no mask.
  Value blocks, unmaskedBlocks;

  int64_t blockN() const { return schedule.getBlockN(); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  RingType ringType(int64_t depth, int64_t rows) {
    return RingType::get(
        b.getContext(), depth,
        SmemType::get(b.getContext(), rows, headDim, elementType));
  }
  TileType tile(ArrayRef<int64_t> shape, Type t) {
    return TileType::get(b.getContext(), shape, t);
  }

  /// `ring.put ring[position] { tma_load source[batch, head, row] }`.
  void put(RingOp ring, Value position, Value source, Value head, Value row) {
    auto put = RingPutOp::create(b, loc, ring, position);
    OpBuilder::InsertionGuard guard(b);
    Block &body = put.getBody().emplaceBlock();
    Value slot = body.addArgument(ring.getType().getSlotType(), loc);
    b.setInsertionPointToStart(&body);
    TmaLoadOp::create(b, loc, source, at.batch, head, row, slot);
  }

  RingGetOp get(RingOp ring, Value position) {
    return RingGetOp::create(b, loc, ring.getType().getSlotType(),
                             TokenType::get(b.getContext()), ring, position);
  }

  /// One thread issues every copy: Q, then K and V block by block, each
  /// into the next slot of its ring once the consumers have freed it.
  void writeProducer() {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    put(qRing, idx(0), op.getQ(), at.head, at.row);
    auto loop = scf::ForOp::create(b, loc, idx(0), blocks, idx(1));
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value row = arith::MulIOp::create(b, loc, j, idx(blockN()));
    put(kRing, j, op.getK(), at.headKV, row);
    put(vRing, j, op.getV(), at.headKV, row);
  }

  /// `mma_async` on its own or, with pingpong, inside a turn; then its wait.
  Value mma(Value a, Value aRow, Value bSlot, Value acc, bool transposeB,
            TileType result) {
    auto futureType = FutureType::get(b.getContext(), result);
    auto issue = [&] {
      return MmaAsyncOp::create(b, loc, futureType, a, aRow, bSlot, acc,
                                transposeB)
          .getResult();
    };
    Value future;
    if (!schedule.getPingpong()) {
      future = issue();
    } else {
      auto turn = TurnOp::create(b, loc, TypeRange{futureType});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&turn.getBody().emplaceBlock());
      YieldOp::create(b, loc, ValueRange{issue()});
      future = turn.getResult(0);
    }
    return WaitOp::create(b, loc, result, future);
  }

  /// The sdpa's score_mod on the scaled scores of the tile at (row, col):
  /// a tiledattn.score_mod whose body scales the score and runs a copy of
  /// the sdpa's body with this block's batch and head.
  Value applyScoreMod(Value scores, Value row, Value col) {
    auto mod = ScoreModOp::create(b, loc, scores.getType(), scores, row, col);
    OpBuilder::InsertionGuard guard(b);
    Block &body = mod.getBody().emplaceBlock();
    Value score = body.addArgument(b.getF32Type(), loc);
    Value qIdx = body.addArgument(b.getIndexType(), loc);
    Value kvIdx = body.addArgument(b.getIndexType(), loc);
    b.setInsertionPointToStart(&body);
    Block &user = op.getScoreMod().front();
    IRMapping map;
    map.map(user.getArgument(0),
            arith::MulFOp::create(b, loc, score, op.getScale()).getResult());
    map.map(user.getArgument(1), at.batch);
    map.map(user.getArgument(2), at.head);
    map.map(user.getArgument(3), qIdx);
    map.map(user.getArgument(4), kvIdx);
    for (Operation &inner : user)
      b.clone(inner, map);
    return mod.getResult();
  }

  /// The consumer warpgroup `c`: rows 64c .. 64c + 63 of the block's tile.
  void writeConsumer(Value c) {
    Type f32 = b.getF32Type();
    TileType accType = tile({kWarpgroupRows, headDim}, f32);
    TileType scoreType = tile({kWarpgroupRows, blockN()}, f32);
    TileType rowType = tile({kWarpgroupRows}, f32);
    auto fill = [&](TileType t, double v) -> Value {
      return ConstantOp::create(b, loc, t, b.getF32FloatAttr(v));
    };
    Value acc0 = fill(accType, 0.0);
    Value rowMax0 = fill(rowType, -std::numeric_limits<double>::infinity());
    Value rowSum0 = fill(rowType, 0.0);
    // With a score_mod the scores reach the softmax scaled already.
    Value softmaxScale =
        op.getScoreMod().empty()
            ? op.getScale()
            : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0))
                  .getResult();
    Value slotRow = arith::MulIOp::create(b, loc, c, idx(kWarpgroupRows));
    Value row = arith::AddIOp::create(b, loc, at.row, slotRow);
    auto q = get(qRing, idx(0));

    auto emitLoop = [&](Value begin, Value end, ValueRange inits, bool mask) {
      auto loop = scf::ForOp::create(b, loc, begin, end, idx(1), inits);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      Value acc = loop.getRegionIterArg(0);
      Value rowMax = loop.getRegionIterArg(1);
      Value rowSum = loop.getRegionIterArg(2);
      auto k = get(kRing, j);
      Value scores = mma(q.getSlot(), slotRow, k.getSlot(), Value(),
                         /*transposeB=*/true, scoreType);
      RingReleaseOp::create(b, loc, kRing, k.getToken());
      Value col = arith::MulIOp::create(b, loc, j, idx(blockN()));
      if (!op.getScoreMod().empty())
        scores = applyScoreMod(scores, row, col);
      if (mask)
        scores = MaskOp::create(b, loc, scoreType, scores, row, col, at.seqK,
                                op.getCausal());
      auto softmax = OnlineSoftmaxOp::create(b, loc, scores, rowMax, rowSum,
                                             softmaxScale, elementType);
      Value rescaled =
          RescaleOp::create(b, loc, accType, acc, softmax.getRescale());
      auto v = get(vRing, j);
      Value next = mma(softmax.getProbs(), Value(), v.getSlot(), rescaled,
                       /*transposeB=*/false, accType);
      RingReleaseOp::create(b, loc, vRing, v.getToken());
      scf::YieldOp::create(
          b, loc,
          ValueRange{next, softmax.getNewRowMax(), softmax.getNewRowSum()});
      return loop;
    };
    // Blocks that need no mask first, then the rest (the diagonal, the
    // ragged end), as in the mma_sync program.
    SmallVector<Value> inits{acc0, rowMax0, rowSum0};
    if (schedule.getSplitKvLoop()) {
      scf::ForOp unmasked =
          emitLoop(idx(0), unmaskedBlocks, inits, /*mask=*/false);
      inits.assign(unmasked.getResults().begin(), unmasked.getResults().end());
    }
    scf::ForOp loop = emitLoop(unmaskedBlocks, blocks, inits, /*mask=*/true);
    RingReleaseOp::create(b, loc, qRing, q.getToken());
    StoreOp::create(b, loc, loop.getResult(0), loop.getResult(1),
                    loop.getResult(2), op.getO(), at.batch, at.head, row,
                    op.getLse());
  }
};
} // namespace

void mlir::tiledattn::writeWarpSpecializedProgram(SdpaOp op) {
  WarpSpecializedWriter(op).write();
}
