//===- ScoreOps.cpp - Modifications of the scores ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The verifiers of score bodies: tiledattn.score_mod's and the score_mod
// region of tiledattn.sdpa.
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
                                               StringRef meaning) {
  if (body.getArgumentTypes() != arguments) {
    std::string expected, got;
    llvm::raw_string_ostream e(expected), g(got);
    llvm::interleaveComma(arguments, e);
    llvm::interleaveComma(body.getArgumentTypes(), g);
    return op->emitOpError("expected the score body's arguments to be (")
           << expected << "): " << meaning << ", but got (" << got << ")";
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().getTypes() !=
                    TypeRange{Float32Type::get(op->getContext())})
    return op->emitOpError("expected the score body to end in a "
                           "tiledattn.yield of one f32 (the new score)");
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

LogicalResult SdpaOp::verifyRegions() {
  if (getScoreMod().empty())
    return success();
  Type f32 = Float32Type::get(getContext());
  Type index = IndexType::get(getContext());
  return verifyScoreBody(*this, getScoreMod().front(),
                         {f32, index, index, index, index},
                         "the scaled score, batch, head, query row and key "
                         "row");
}
