//===- TileSdpa.cpp - Expand tiledattn.sdpa into a tile program -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites tiledattn.sdpa into the program one thread block runs: the
// FlashAttention forward loop over K/V blocks with an online softmax, spelled
// in tile ops so that it can be read and edited before it is lowered.
//
//===----------------------------------------------------------------------===//

#include "TileSdpa.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_TILESDPAPASS
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

LogicalResult mlir::tiledattn::verifyKernelFunction(func::FuncOp func) {
  SmallVector<SdpaOp> ops(func.getOps<SdpaOp>());
  if (ops.size() > 1)
    return ops[1].emitOpError("expected one tiledattn.sdpa per function (the "
                              "function becomes the kernel), but found ")
           << ops.size();
  if (func.getFunctionType().getNumResults() != 0)
    return func.emitOpError("a kernel function must return nothing, but it "
                            "returns ")
           << func.getFunctionType().getNumResults() << " values";
  // Every thread block runs the whole function, so anything else with a
  // side effect would run once per block.
  for (Operation &other : func.getBody().getOps()) {
    if (isa<SdpaOp, func::ReturnOp>(other) || isMemoryEffectFree(&other))
      continue;
    return other.emitOpError("has side effects, but a kernel function holds "
                             "only one tiledattn.sdpa and side-effect-free "
                             "ops (it runs once per thread block)");
  }
  return success();
}

BlockCoordinates mlir::tiledattn::emitTileCoordinates(OpBuilder &b, SdpaOp op,
                                                      Value qBlock, Value head,
                                                      Value batch) {
  Location loc = op.getLoc();
  BlockCoordinates at;
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value c2 = arith::ConstantIndexOp::create(b, loc, 2);
  at.head = head;
  at.batch = batch;
  at.seqK = memref::DimOp::create(b, loc, op.getK(), c2);
  Value headsQ = memref::DimOp::create(b, loc, op.getQ(), c1);
  Value headsKV = memref::DimOp::create(b, loc, op.getK(), c1);
  // Grouped-query attention: query head h reads K/V head h / (Hq / Hkv).
  Value group = arith::DivUIOp::create(b, loc, headsQ, headsKV);
  at.headKV = arith::DivUIOp::create(b, loc, at.head, group);
  at.row = arith::MulIOp::create(
      b, loc, qBlock,
      arith::ConstantIndexOp::create(b, loc, op.getSchedule().getBlockM()));
  return at;
}

BlockCoordinates mlir::tiledattn::emitBlockCoordinates(OpBuilder &b,
                                                       SdpaOp op) {
  Location loc = op.getLoc();
  Value qBlock = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (op.getCausal()) {
    Value blocks = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
    qBlock = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, blocks,
                              arith::ConstantIndexOp::create(b, loc, 1)),
        qBlock);
  }
  Value head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  return emitTileCoordinates(b, op, qBlock, head, batch);
}

KeyRange mlir::tiledattn::emitKeyRange(OpBuilder &b, SdpaOp op,
                                       const BlockCoordinates &at) {
  Location loc = op.getLoc();
  ScheduleAttr schedule = op.getSchedule();
  int64_t blockM = schedule.getBlockM(), blockN = schedule.getBlockN();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Causal (top-left): rows row .. row + block_m - 1 see keys up to the last
  // of those rows.
  KeyRange keys;
  keys.end = at.seqK;
  if (op.getCausal()) {
    Value diag = arith::AddIOp::create(b, loc, at.row, cst(blockM));
    keys.end = arith::MinUIOp::create(b, loc, at.seqK, diag);
  }
  if (!schedule.getSplitKvLoop()) {
    keys.unmaskedEnd = cst(0);
    return keys;
  }
  Value fullBlocks = arith::DivUIOp::create(b, loc, at.seqK, cst(blockN));
  if (op.getCausal())
    fullBlocks = arith::MinUIOp::create(
        b, loc, fullBlocks,
        arith::DivUIOp::create(b, loc,
                               arith::AddIOp::create(b, loc, at.row, cst(1)),
                               cst(blockN)));
  keys.unmaskedEnd = arith::MulIOp::create(b, loc, fullBlocks, cst(blockN));
  return keys;
}

BlockMapRow mlir::tiledattn::emitBlockMapRow(OpBuilder &b, SdpaOp op,
                                             const BlockCoordinates &at) {
  Location loc = op.getLoc();
  Value map = op.getBlockMap();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto along = [&](int64_t dim, Value i) -> Value {
    Value size = memref::DimOp::create(b, loc, map, cst(dim));
    Value one =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, cst(1));
    return arith::SelectOp::create(b, loc, one, cst(0), i);
  };
  return {along(0, at.batch), along(1, at.head),
          arith::DivUIOp::create(b, loc, at.row,
                                 cst(op.getSchedule().getBlockM()))};
}

Value mlir::tiledattn::emitBlockMapEntry(OpBuilder &b, SdpaOp op,
                                         const BlockMapRow &row, Value i) {
  Location loc = op.getLoc();
  SmallVector<Value, 4> indices(row.begin(), row.end());
  indices.push_back(i);
  Value entry = memref::LoadOp::create(b, loc, op.getBlockMap(), indices);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), entry);
}

Value mlir::tiledattn::emitScoreMods(OpBuilder &b, SdpaOp op,
                                     const BlockCoordinates &at, Value scores,
                                     Value row, Value col, bool score,
                                     bool mask, bool scaled, Value unscale) {
  Location loc = op.getLoc();
  auto mod = ScoreModOp::create(b, loc, scores.getType(), scores, row, col);
  OpBuilder::InsertionGuard guard(b);
  Block &body = mod.getBody().emplaceBlock();
  Value x = body.addArgument(b.getF32Type(), loc);
  Value qIdx = body.addArgument(b.getIndexType(), loc);
  Value kvIdx = body.addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(&body);
  if (!scaled)
    x = arith::MulFOp::create(b, loc, x, op.getScale());
  for (auto [region, applies] :
       {std::pair{&op.getScoreMod(), score}, {&op.getMaskMod(), mask}}) {
    if (!applies)
      continue;
    Block &user = region->front();
    IRMapping map;
    map.map(user.getArgument(0), x);
    map.map(user.getArgument(1), at.batch);
    map.map(user.getArgument(2), at.head);
    map.map(user.getArgument(3), qIdx);
    map.map(user.getArgument(4), kvIdx);
    for (Operation &inner : user.without_terminator())
      b.clone(inner, map);
    x = map.lookupOrDefault(user.getTerminator()->getOperand(0));
  }
  if (unscale)
    x = arith::MulFOp::create(b, loc, x, unscale);
  YieldOp::create(b, loc, x);
  return mod.getResult();
}

SmallVector<Value> mlir::tiledattn::emitKvRows(OpBuilder &b, SdpaOp op,
                                               Value batch, Value headKV,
                                               Value key) {
  if (op.getKvRows().empty())
    return {key};
  Block &user = op.getKvRows().front();
  Location loc = op.getLoc();
  int64_t blockN = op.getSchedule().getBlockN();
  int64_t span = op.getKvSpan().value_or(blockN);
  SmallVector<Value> rows;
  for (int64_t run = 0; run < blockN; run += span) {
    IRMapping map;
    map.map(user.getArgument(0), batch);
    map.map(user.getArgument(1), headKV);
    map.map(user.getArgument(2),
            run ? arith::AddIOp::create(
                      b, loc, key, arith::ConstantIndexOp::create(b, loc, run))
                : key);
    for (Operation &inner : user.without_terminator())
      b.clone(inner, map);
    rows.push_back(map.lookupOrDefault(user.getTerminator()->getOperand(0)));
  }
  return rows;
}

namespace {
/// Emits the tile program of `op` in place of it: one warp group or a few
/// warps (mma_sync), each on its own rows, with its K/V tiles from loads.
void writeTileProgram(SdpaOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  ScheduleAttr schedule = op.getSchedule();
  MLIRContext *ctx = b.getContext();
  Type elementType = op.getQ().getType().getElementType();
  int64_t headDim = op.getQ().getType().getShape()[3];
  int64_t blockM = schedule.getBlockM(), blockN = schedule.getBlockN();
  Type f32 = b.getF32Type();

  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto tile = [&](ArrayRef<int64_t> shape, Type t) {
    return TileType::get(ctx, shape, t);
  };
  auto fill = [&](TileType t, double v) -> Value {
    return ConstantOp::create(b, loc, t, b.getF32FloatAttr(v));
  };

  BlockCoordinates at = emitBlockCoordinates(b, op);
  Value batch = at.batch, head = at.head, headKV = at.headKV, row = at.row;
  Value seqK = at.seqK;

  auto qTileType = tile({blockM, headDim}, elementType);
  auto kvTileType = tile({blockN, headDim}, elementType);
  auto accType = tile({blockM, headDim}, f32);
  auto scoreType = tile({blockM, blockN}, f32);
  auto rowType = tile({blockM}, f32);

  Value qTile = LoadOp::create(b, loc, qTileType, op.getQ(), batch, head, row);
  Value acc0 = fill(accType, 0.0);
  Value rowMax0 = fill(rowType, -std::numeric_limits<double>::infinity());
  Value rowSum0 = fill(rowType, 0.0);
  Value zeroScores = fill(scoreType, 0.0);
  KeyRange keys = emitKeyRange(b, op, at);

  auto emitLoop = [&](Value begin, Value end, ValueRange inits, bool mask) {
    auto loop = scf::ForOp::create(b, loc, begin, end, cst(blockN), inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value acc = loop.getRegionIterArg(0);
    Value rowMax = loop.getRegionIterArg(1);
    Value rowSum = loop.getRegionIterArg(2);
    Value kTile =
        LoadOp::create(b, loc, kvTileType, op.getK(), batch, headKV, j);
    Value scores = MmaOp::create(b, loc, scoreType, qTile, kTile, zeroScores,
                                 /*transposed=*/true);
    if (mask)
      scores = MaskOp::create(b, loc, scoreType, scores, row, j, seqK,
                              op.getCausal());
    auto softmax = OnlineSoftmaxOp::create(b, loc, scores, rowMax, rowSum,
                                           op.getScale(), elementType);
    Value rescaled =
        RescaleOp::create(b, loc, accType, acc, softmax.getRescale());
    Value vTile =
        LoadOp::create(b, loc, kvTileType, op.getV(), batch, headKV, j);
    Value next = MmaOp::create(b, loc, accType, softmax.getProbs(), vTile,
                               rescaled, /*transposed=*/false);
    scf::YieldOp::create(
        b, loc,
        ValueRange{next, softmax.getNewRowMax(), softmax.getNewRowSum()});
    return loop;
  };
  // Key blocks that need no mask come first, in a loop without one; the
  // rest (the diagonal, the ragged end) are masked.
  SmallVector<Value> inits{acc0, rowMax0, rowSum0};
  if (schedule.getSplitKvLoop()) {
    scf::ForOp unmasked =
        emitLoop(cst(0), keys.unmaskedEnd, inits, /*mask=*/false);
    inits.assign(unmasked.getResults().begin(), unmasked.getResults().end());
  }
  auto loop = emitLoop(keys.unmaskedEnd, keys.end, inits, /*mask=*/true);
  StoreOp::create(b, loc, loop.getResult(0), loop.getResult(1),
                  loop.getResult(2), op.getO(), batch, head, row, op.getLse());
  op.erase();
}

class TileSdpaPass : public tiledattn::impl::TileSdpaPassBase<TileSdpaPass> {
public:
  void runOnOperation() override {
    // An sdpa nested in a region (scf.if, ...) or outside any function was
    // skipped and left in the module for the later passes to choke on.
    WalkResult nested = getOperation().walk([&](SdpaOp op) {
      if (isa<func::FuncOp>(op->getParentOp()))
        return WalkResult::advance();
      op.emitOpError("expected to be directly in the body of a func.func "
                     "(the function becomes the kernel), but its parent is ")
          << op->getParentOp()->getName();
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return signalPassFailure();
    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      SmallVector<SdpaOp> ops(func.getOps<SdpaOp>());
      if (ops.empty())
        return WalkResult::advance();
      if (failed(verifyKernelFunction(func)))
        return WalkResult::interrupt();
      SdpaOp op = ops.front();
      bool warpSpecialized = op.getSchedule().isWarpSpecialized();
      for (auto [region, name] : {std::pair{&op.getMaskMod(), "mask_mod"},
                                  std::pair{&op.getScoreMod(), "score_mod"}}) {
        if (region->empty() || warpSpecialized)
          continue;
        op.emitOpError("has a ")
            << name
            << ", which tiledattn-tile-sdpa writes into the warp-specialized "
               "program (producer = tma schedules) only; the mma_sync "
               "program does not lower it yet";
        return WalkResult::interrupt();
      }
      // What the kernel computes, for tiledattn-compile's manifest, now
      // that the sdpa op goes.
      func->setAttr(kScheduleAttrName, op.getSchedule());
      func->setAttr(kKernelAttrName, UnitAttr::get(func.getContext()));
      if (op.getCausal())
        func->setAttr(kCausalAttrName, UnitAttr::get(func.getContext()));
      if (warpSpecialized)
        writeWarpSpecializedProgram(op);
      else
        writeTileProgram(op);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
