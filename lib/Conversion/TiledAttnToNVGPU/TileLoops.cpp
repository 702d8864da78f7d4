//===- TileLoops.cpp - tiledattn.for_each_tile to GPU code ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tiles a thread block runs, as the launch in the bundle's manifest
// (gridRules in lib/Target/Bundle.cpp) gives them out: one per block on a
// (query blocks, heads, batches) grid, or with persistent a grid of at most
// one block per multiprocessor striding over the tiles, query blocks
// fastest (tile_order = by_head) or, across_heads, heads and batches
// fastest (tile_order = across_heads). The persistent
// arithmetic is 32-bit: a 64-bit division costs the producer registers it
// has given away (24).
//
//===----------------------------------------------------------------------===//

#include "TileLoops.h"
#include "tiledattn/Conversion/NVVMHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// `op`'s body inlined before it with `args`; its results are the body's
/// yield operands.
void inlineTile(RewriterBase &rewriter, ForEachTileOp op,
                ArrayRef<Value> args) {
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> next(yield.getValues());
  rewriter.inlineBlockBefore(&body, op, args);
  rewriter.replaceOp(op, next);
  rewriter.eraseOp(yield);
}

void lowerOneTile(RewriterBase &rewriter, ForEachTileOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value qBlock = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
  if (op.getLongestFirst()) {
    Value grid = gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x);
    Value last = arith::SubIOp::create(
        rewriter, loc, grid, arith::ConstantIndexOp::create(rewriter, loc, 1));
    qBlock = arith::SubIOp::create(rewriter, loc, last, qBlock);
  }
  SmallVector<Value> args{
      qBlock, gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::y),
      gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::z),
      arith::ConstantIndexOp::create(rewriter, loc, 0)};
  args.append(op.getInits().begin(), op.getInits().end());
  inlineTile(rewriter, op, args);
}

void lowerPersistent(RewriterBase &rewriter, ForEachTileOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Type i32 = rewriter.getI32Type();
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(rewriter, loc, i32, v);
  };
  auto toIndex = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v);
  };
  Value qBlocks = toI32(op.getQBlocks()), heads = toI32(op.getHeads());
  Value tiles = arith::MulIOp::create(
      rewriter, loc, qBlocks,
      arith::MulIOp::create(rewriter, loc, heads, toI32(op.getBatches())));
  Value first = toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x));
  Value step = toI32(gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x));
  SmallVector<Value> inits{arith::ConstantIntOp::create(rewriter, loc, 0, 32)};
  inits.append(op.getInits().begin(), op.getInits().end());
  auto loop = scf::ForOp::create(rewriter, loc, first, tiles, step, inits);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value rank = loop.getInductionVar();
  Value qBlock, headBatch;
  if (!op.getAcrossHeads()) { // query blocks fastest
    qBlock = arith::RemUIOp::create(rewriter, loc, rank, qBlocks);
    headBatch = arith::DivUIOp::create(rewriter, loc, rank, qBlocks);
  } else { // heads and batches fastest
    if (op.getLongestFirst())
      rank = mirrorOddRounds(rewriter, loc, rank, step, tiles);
    Value headsTimesBatches =
        arith::MulIOp::create(rewriter, loc, heads, toI32(op.getBatches()));
    qBlock = arith::DivUIOp::create(rewriter, loc, rank, headsTimesBatches);
    headBatch = arith::RemUIOp::create(rewriter, loc, rank, headsTimesBatches);
  }
  if (op.getLongestFirst())
    qBlock = arith::SubIOp::create(
        rewriter, loc,
        arith::SubIOp::create(
            rewriter, loc, qBlocks,
            arith::ConstantIntOp::create(rewriter, loc, 1, 32)),
        qBlock);
  Value head = arith::RemUIOp::create(rewriter, loc, headBatch, heads);
  Value batch = arith::DivUIOp::create(rewriter, loc, headBatch, heads);
  Value done = loop.getRegionIterArg(0);
  SmallVector<Value> args{toIndex(qBlock), toIndex(head), toIndex(batch),
                          toIndex(done)};
  args.append(loop.getRegionIterArgs().begin() + 1,
              loop.getRegionIterArgs().end());
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> next{arith::AddIOp::create(
      rewriter, loc, done, arith::ConstantIntOp::create(rewriter, loc, 1, 32))};
  next.append(yield.getValues().begin(), yield.getValues().end());
  rewriter.setInsertionPoint(yield);
  scf::YieldOp::create(rewriter, loc, next);
  rewriter.eraseOp(yield);
  // The body (now ending in the scf.yield) follows the tile's coordinates.
  rewriter.inlineBlockBefore(&body, loop.getBody(), loop.getBody()->end(),
                             args);
  rewriter.replaceOp(op, loop.getResults().drop_front());
}
} // namespace

LogicalResult mlir::tiledattn::lowerTileLoops(gpu::GPUFuncOp kernel,
                                              ScheduleAttr schedule) {
  SmallVector<ForEachTileOp> loops;
  kernel.walk([&](ForEachTileOp op) { loops.push_back(op); });
  IRRewriter rewriter(kernel.getContext());
  for (ForEachTileOp op : loops) {
    if (op->getParentOfType<ForEachTileOp>())
      return op.emitOpError("expected no enclosing tiledattn.for_each_tile "
                            "(a block walks its tiles once per role)");
    if (schedule.getPersistent())
      lowerPersistent(rewriter, op);
    else
      lowerOneTile(rewriter, op);
  }
  return success();
}
