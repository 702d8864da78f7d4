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
// fastest (tile_order = across_heads), or with dynamic (dynamic_tiles) the
// same order handed out one tile at a time by a counter: the producer's
// loop takes ranks from it, the consumers' read them from the tags of Q's
// slots. The persistent arithmetic is 32-bit: a 64-bit division costs the
// producer registers it has given away (24).
//
//===----------------------------------------------------------------------===//

#include "TileLoops.h"
#include "tiledattn/Conversion/NVVMHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// 32-bit tile arithmetic: the persistent forms' ranks and counts (a
/// 64-bit division costs the producer registers it has given away).
struct TileArithmetic {
  RewriterBase &rewriter;
  Location loc;
  ForEachTileOp op;
  Value qBlocks, heads, batches, tiles;

  TileArithmetic(RewriterBase &rewriter, ForEachTileOp op)
      : rewriter(rewriter), loc(op.getLoc()), op(op) {
    qBlocks = toI32(op.getQBlocks());
    heads = toI32(op.getHeads());
    batches = toI32(op.getBatches());
    tiles = arith::MulIOp::create(
        rewriter, loc, qBlocks,
        arith::MulIOp::create(rewriter, loc, heads, batches));
  }
  Value toI32(Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI32Type(),
                                        v);
  }
  Value toIndex(Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(rewriter, loc, v, 32);
  }
  Value blockX() {
    return toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x));
  }
  Value gridX() {
    return toI32(gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x));
  }

  /// The query block, head and batch (index) of tile `rank` (i32): query
  /// blocks fastest, or with across_heads heads and batches fastest; with
  /// longest_first the query blocks from the last down.
  SmallVector<Value> tileOfRank(Value rank) {
    Value qBlock, headBatch;
    if (!op.getAcrossHeads()) { // query blocks fastest
      qBlock = arith::RemUIOp::create(rewriter, loc, rank, qBlocks);
      headBatch = arith::DivUIOp::create(rewriter, loc, rank, qBlocks);
    } else { // heads and batches fastest
      Value headsTimesBatches =
          arith::MulIOp::create(rewriter, loc, heads, batches);
      qBlock = arith::DivUIOp::create(rewriter, loc, rank, headsTimesBatches);
      headBatch =
          arith::RemUIOp::create(rewriter, loc, rank, headsTimesBatches);
    }
    if (op.getLongestFirst())
      qBlock = arith::SubIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, qBlocks, i32(1)),
          qBlock);
    Value head = arith::RemUIOp::create(rewriter, loc, headBatch, heads);
    Value batch = arith::DivUIOp::create(rewriter, loc, headBatch, heads);
    return {toIndex(qBlock), toIndex(head), toIndex(batch)};
  }
};

/// Moves `op`'s body to the end of `dest` with `args`, its tiledattn.yield
/// replaced by what `end(values)` builds there (the yield's operands).
void moveBody(RewriterBase &rewriter, ForEachTileOp op, Block *dest,
              ArrayRef<Value> args, function_ref<void(ValueRange values)> end) {
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  rewriter.setInsertionPoint(yield);
  end(yield.getValues());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, dest, dest->end(), args);
}

void lowerPersistent(RewriterBase &rewriter, ForEachTileOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TileArithmetic t(rewriter, op);
  Value first = t.blockX();
  Value step = t.gridX();
  SmallVector<Value> inits{t.i32(0)};
  inits.append(op.getInits().begin(), op.getInits().end());
  auto loop = scf::ForOp::create(rewriter, loc, first, t.tiles, step, inits);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value rank = loop.getInductionVar();
  if (op.getAcrossHeads() && op.getLongestFirst())
    rank = mirrorOddRounds(rewriter, loc, rank, step, t.tiles);
  SmallVector<Value> args = t.tileOfRank(rank);
  Value done = loop.getRegionIterArg(0);
  args.push_back(t.toIndex(done));
  args.append(loop.getRegionIterArgs().begin() + 1,
              loop.getRegionIterArgs().end());
  SmallVector<Value> next{arith::AddIOp::create(rewriter, loc, done, t.i32(1))};
  moveBody(rewriter, op, loop.getBody(), args, [&](ValueRange values) {
    next.append(values.begin(), values.end());
    scf::YieldOp::create(rewriter, loc, next);
  });
  rewriter.replaceOp(op, loop.getResults().drop_front());
}

/// An scf.while of `inits`' types, its regions' blocks created, each taking
/// the loop's values.
scf::WhileOp createWhile(RewriterBase &rewriter, Location loc,
                         ValueRange inits) {
  SmallVector<Type> types(inits.getTypes());
  SmallVector<Location> locs(types.size(), loc);
  auto loop = scf::WhileOp::create(rewriter, loc, types, inits);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.createBlock(&loop.getBefore(), {}, types, locs);
  rewriter.createBlock(&loop.getAfter(), {}, types, locs);
  return loop;
}

/// dynamic, the producer's form: from rank blockIdx.x, each tile asks the
/// launch's counter (`counter`, a pointer to a zeroed i32) for the next one
/// (gridDim.x + the counter's old value: the first gridDim.x ranks need no
/// atomic) at its start, so that the atomic's latency hides under the
/// tile's copies. Every tile run makes one add, so the adds return
/// 0 .. tiles - 1; the one that got tiles - 1 zeroes the counter for the
/// next launch on the stream (no memset per call), after the tile's body.
void lowerDynamicProducer(RewriterBase &rewriter, ForEachTileOp op,
                          Value counter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TileArithmetic t(rewriter, op);
  SmallVector<Value> inits{t.blockX(), t.i32(0)}; // rank, done
  inits.append(op.getInits().begin(), op.getInits().end());
  scf::WhileOp loop = createWhile(rewriter, loc, inits);
  Block *before = loop.getBeforeBody();
  rewriter.setInsertionPointToStart(before);
  scf::ConditionOp::create(
      rewriter, loc,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                            before->getArgument(0), t.tiles),
      before->getArguments());
  Block *after = loop.getAfterBody();
  rewriter.setInsertionPointToStart(after);
  Value rank = after->getArgument(0), done = after->getArgument(1);
  auto global = LLVM::LLVMPointerType::get(rewriter.getContext(), 1);
  Value word = LLVM::AddrSpaceCastOp::create(rewriter, loc, global, counter);
  Value old =
      LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add, word,
                                t.i32(1), LLVM::AtomicOrdering::monotonic);
  Value next = arith::AddIOp::create(rewriter, loc, old, t.gridX());
  SmallVector<Value> args = t.tileOfRank(rank);
  args.push_back(t.toIndex(done));
  args.push_back(rank);
  args.append(after->getArguments().begin() + 2, after->getArguments().end());
  moveBody(rewriter, op, after, args, [&](ValueRange values) {
    Value last = arith::SubIOp::create(rewriter, loc, t.tiles, t.i32(1));
    auto zero = scf::IfOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, old,
                              last),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&zero.getThenRegion().front());
      LLVM::StoreOp::create(rewriter, loc, t.i32(0), word);
    }
    SmallVector<Value> yields{
        next, arith::AddIOp::create(rewriter, loc, done, t.i32(1))};
    yields.append(values.begin(), values.end());
    scf::YieldOp::create(rewriter, loc, yields);
  });
  rewriter.replaceOp(op, loop.getResults().drop_front(2));
}

/// dynamic ranks_from, the consumers' form: each turn of the loop takes the
/// slot of position `done` (a tiledattn.ring.get), reads the rank in its
/// tag (warp-uniform: the tile arithmetic stays on the uniform datapath)
/// and, below the tile count, runs the body with the slot and its token;
/// the end mark's slot is released instead and ends the loop. All of it
/// sits in the scf.while's before region, where the get's token is seen
/// by both releases.
void lowerDynamicConsumer(RewriterBase &rewriter, ForEachTileOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TileArithmetic t(rewriter, op);
  SmallVector<Value> inits{t.i32(0)}; // done
  inits.append(op.getInits().begin(), op.getInits().end());
  scf::WhileOp loop = createWhile(rewriter, loc, inits);
  Block *after = loop.getAfterBody();
  rewriter.setInsertionPointToStart(after);
  scf::YieldOp::create(rewriter, loc, after->getArguments());
  Block *before = loop.getBeforeBody();
  rewriter.setInsertionPointToStart(before);
  Value done = before->getArgument(0);
  ValueRange carried = before->getArguments().drop_front();
  Value ring = op.getRanksFrom();
  auto ringType = cast<RingType>(ring.getType());
  auto get = RingGetOp::create(rewriter, loc, ringType.getSlotType(),
                               TokenType::get(rewriter.getContext()), ring,
                               t.toIndex(done),
                               /*uniform=*/false, /*partial=*/false);
  Value tag = RingTagOp::create(rewriter, loc, rewriter.getI32Type(), ring,
                                get.getToken());
  Value rank = t.toI32(UniformOp::create(rewriter, loc, rewriter.getIndexType(),
                                         t.toIndex(tag)));
  Value more = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                     rank, t.tiles);
  auto run = scf::IfOp::create(rewriter, loc, TypeRange(carried), more,
                               /*withElseRegion=*/true);
  for (Region &region : run->getRegions()) // (terminated when no results)
    if (Block &block = region.front(); !block.empty())
      rewriter.eraseOp(block.getTerminator());
  rewriter.setInsertionPointToStart(&run.getElseRegion().front());
  RingReleaseOp::create(rewriter, loc, ring, get.getToken());
  scf::YieldOp::create(rewriter, loc, carried);
  Block *then = &run.getThenRegion().front();
  rewriter.setInsertionPointToStart(then);
  SmallVector<Value> args = t.tileOfRank(rank);
  args.push_back(t.toIndex(done));
  args.push_back(get.getSlot());
  args.push_back(get.getToken());
  args.append(carried.begin(), carried.end());
  moveBody(rewriter, op, then, args, [&](ValueRange values) {
    scf::YieldOp::create(rewriter, loc, values);
  });
  rewriter.setInsertionPointAfter(run);
  SmallVector<Value> next{arith::AddIOp::create(rewriter, loc, done, t.i32(1))};
  next.append(run.getResults().begin(), run.getResults().end());
  scf::ConditionOp::create(rewriter, loc, more, next);
  rewriter.replaceOp(op, loop.getResults().drop_front());
}
} // namespace

LogicalResult mlir::tiledattn::lowerTileLoops(gpu::GPUFuncOp kernel,
                                              ScheduleAttr schedule) {
  SmallVector<ForEachTileOp> loops;
  kernel.walk([&](ForEachTileOp op) { loops.push_back(op); });
  bool dynamic =
      llvm::any_of(loops, [](ForEachTileOp op) { return op.getDynamic(); });
  if (schedule.getDynamicTiles() && !dynamic)
    return kernel.emitOpError(
        "has a schedule with dynamic_tiles = true, whose launch hands tiles "
        "out from a counter, but no dynamic tiledattn.for_each_tile takes "
        "them; add `dynamic` to the tile loops or leave dynamic_tiles out");
  // The launch's tile counter (the manifest's tile_counter), after the
  // function's arguments (q, k, v, o, lse, scale) and before the tensor
  // maps tiledattn-lower-rings adds.
  Value counter;
  if (schedule.getDynamicTiles()) {
    unsigned index = kernel.getNumArguments();
    auto ptr = LLVM::LLVMPointerType::get(kernel.getContext());
    if (failed(kernel.insertArgument(index, ptr, {}, kernel.getLoc())))
      return failure();
    counter = kernel.getArgument(index);
  }
  IRRewriter rewriter(kernel.getContext());
  for (ForEachTileOp op : loops) {
    if (op->getParentOfType<ForEachTileOp>())
      return op.emitOpError("expected no enclosing tiledattn.for_each_tile "
                            "(a block walks its tiles once per role)");
    if (op.getDynamic() && !schedule.getDynamicTiles())
      return op.emitOpError("is dynamic, which takes its tiles from the "
                            "launch's counter, but the kernel's schedule "
                            "has dynamic_tiles = false (no counter, and a "
                            "grid of ")
             << (schedule.getPersistent() ? "one block per multiprocessor"
                                          : "one block per tile")
             << "); set dynamic_tiles = true or leave `dynamic` out";
    if (op.getRanksFrom())
      lowerDynamicConsumer(rewriter, op);
    else if (op.getDynamic())
      lowerDynamicProducer(rewriter, op, counter);
    else if (schedule.getPersistent())
      lowerPersistent(rewriter, op);
    else
      lowerOneTile(rewriter, op);
  }
  return success();
}
