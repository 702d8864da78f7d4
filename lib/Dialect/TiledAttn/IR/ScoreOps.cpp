//===- ScoreOps.cpp - Modifications of the scores ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The verifiers of what changes the scores: the score bodies of
// tiledattn.score_mod and of tiledattn.sdpa's score_mod region, the sdpa's
// block_map (which blocks of scores are computed at all) and kv_rows (where
// in k and v each block is).
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tiledattn;

LogicalResult ScoreModOp::verify() {
  TileType t = getScores().getType();
  if (t.getRank() != 2 || !t.getElementType().isF32())
    return emitOpError("expected a rank-2 f32 score tile, but got ") << t;
  return success();
}

/// Whether `op` may write memory (or has effects it does not declare).
static bool mayWrite(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return !isa<MemoryEffects::Read>(e.getEffect());
  });
}

LogicalResult mlir::tiledattn::verifyScoreBody(Operation *op, Block &body,
                                               TypeRange arguments,
                                               StringRef meaning, Type yielded,
                                               StringRef yieldedMeaning) {
  if (!yielded)
    yielded = Float32Type::get(op->getContext());
  if (body.getArgumentTypes() != arguments) {
    std::string expected, got;
    llvm::raw_string_ostream e(expected), g(got);
    llvm::interleaveComma(arguments, e);
    llvm::interleaveComma(body.getArgumentTypes(), g);
    return op->emitOpError("expected the score body's arguments to be (")
           << expected << "): " << meaning << ", but got (" << got << ")";
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().getTypes() != TypeRange{yielded}) {
    std::string type; // unquoted, as in the body's text
    llvm::raw_string_ostream(type) << yielded;
    return op->emitOpError("expected the score body to end in a "
                           "tiledattn.yield of one ")
           << type << " (" << yieldedMeaning << ")";
  }
  WalkResult walk = body.walk([&](Operation *inner) {
    auto isTile = [](Type type) { return isa<TileType>(type); };
    if (llvm::any_of(inner->getOperandTypes(), isTile) ||
        llvm::any_of(inner->getResultTypes(), isTile)) {
      inner->emitOpError("takes or makes a tile inside a score body, which "
                         "works on one score at a time");
      return WalkResult::interrupt();
    }
    if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        !mayWrite(inner))
      return WalkResult::advance();
    inner->emitOpError("may write memory inside a score body, which runs "
                       "once per score and may only read");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult ScoreModOp::verifyRegions() {
  Type f32 = Float32Type::get(getContext());
  Type index = IndexType::get(getContext());
  return verifyScoreBody(*this, getBody().front(), {f32, index, index},
                         "the score, its query row and its key row");
}

/// The schedule fields a block_map excludes, and why.
static LogicalResult verifyBlockMap(SdpaOp op) {
  ScheduleAttr schedule = op.getSchedule();
  if (!schedule.isWarpSpecialized())
    return op.emitOpError("has a block_map, which only the producer = tma "
                          "program reads (its K/V loop takes the blocks from "
                          "the map), so expected producer = tma, but got "
                          "producer = ")
           << stringifyProducer(schedule.getProducer());
  if (op.getCausal())
    return op.emitOpError("has a block_map and causal: the map lists the "
                          "blocks each tile reads and its partial blocks "
                          "carry any mask, causal included, so expected no "
                          "causal with a block_map");
  if (schedule.getSplitTail())
    return op.emitOpError("schedule field split_tail: shares out tiles by "
                          "ranges of K/V blocks, not by a block_map's lists, "
                          "so expected false with a block_map, but got true");
  if (schedule.getKvMulticast())
    return op.emitOpError("schedule field kv_multicast: a cluster's two "
                          "tiles read the same K/V blocks, which a block_map "
                          "may not give them, so expected false with a "
                          "block_map, but got true");
  return success();
}

/// What kv_rows needs: the producer = tma program, whose producer alone
/// loads K/V, and a block_map, which says which keys a sequence has.
static LogicalResult verifyKvRows(SdpaOp op) {
  ScheduleAttr schedule = op.getSchedule();
  if (!schedule.isWarpSpecialized())
    return op.emitOpError("has kv_rows, which only the producer = tma "
                          "program applies (its producer's K/V loads), so "
                          "expected producer = tma, but got producer = ")
           << stringifyProducer(schedule.getProducer());
  if (!op.getBlockMap())
    return op.emitOpError("has kv_rows but no block_map: with K/V rows "
                          "anywhere in k and v, the map must list the blocks "
                          "each tile reads (k's length is not a sequence's)");
  if (std::optional<int64_t> span = op.getKvSpan()) {
    int64_t blockN = schedule.getBlockN();
    if (*span < 8 || *span % 8 || blockN % *span)
      return op.emitOpError("expected kv_span to be a multiple of 8 that "
                            "divides block_n = ")
             << blockN << " (each run of keys a whole number of the "
             << "128-byte swizzle's 8-row periods), but got " << *span;
  }
  Type index = IndexType::get(op.getContext());
  return verifyScoreBody(op, op.getKvRows().front(), {index, index, index},
                         "the batch, K/V head and first key of a block", index,
                         "the row of k and v that holds that key");
}

LogicalResult SdpaOp::verifyRegions() {
  if (getBlockMap() && failed(verifyBlockMap(*this)))
    return failure();
  if (!getKvRows().empty() && failed(verifyKvRows(*this)))
    return failure();
  if (getKvSpan() && getKvRows().empty())
    return emitOpError("has kv_span but no kv_rows: the span is of the runs "
                       "of keys whose rows kv_rows gives");
  Type f32 = Float32Type::get(getContext());
  Type index = IndexType::get(getContext());
  for (Region *region : {&getScoreMod(), &getMaskMod()})
    if (!region->empty() &&
        failed(verifyScoreBody(*this, region->front(),
                               {f32, index, index, index, index},
                               "the scaled score, batch, head, query row and "
                               "key row")))
      return failure();
  return success();
}
