//===- ScoreOps.cpp - Modifications of the scores ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The verifier of tiledattn.score_mod.
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

LogicalResult ScoreModOp::verifyRegions() {
  Block &body = getBody().front();
  Type f32 = Float32Type::get(getContext());
  Type index = IndexType::get(getContext());
  if (body.getArgumentTypes() != TypeRange{f32, index, index})
    return emitOpError("expected the body's arguments to be (f32, index, "
                       "index): the score, its query row and its key row, "
                       "but got (")
           << body.getArgumentTypes() << ")";
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().getTypes() != TypeRange{f32})
    return emitOpError("expected the body to end in a tiledattn.yield of "
                       "one f32 (the new score)");
  WalkResult walk = body.walk([&](Operation *op) {
    auto isTile = [](Type type) { return isa<TileType>(type); };
    if (llvm::any_of(op->getOperandTypes(), isTile) ||
        llvm::any_of(op->getResultTypes(), isTile)) {
      op->emitOpError("takes or makes a tile inside a tiledattn.score_mod "
                      "body, which works on one score at a time");
      return WalkResult::interrupt();
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || !mayWrite(op))
      return WalkResult::advance();
    op->emitOpError("may write memory inside a tiledattn.score_mod body, "
                    "which runs once per score and may only read");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}
