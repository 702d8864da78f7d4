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
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
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

/// split_tail. With G = gridDim.x blocks and T tiles of NB K/V blocks each
/// (the loop's operand), the first T - T mod G tiles run as in
/// lowerPersistent; the (tile, block) steps of the last T mod G, I of them,
/// are shared out: block j takes steps [j * I / G, (j + 1) * I / G), one or
/// two pieces of tiles (a share is under a tile, as T mod G < G). A tail of
/// fewer steps than blocks runs as a round of its own: shares of at least
/// one step keep every block between a tile's first piece and its last a
/// holder of it. The full rounds and the pieces are two loops, each with
/// its own copy of the body (in one loop the pieces' dynamic first block
/// and count cost every tile about 2%, docs/perf-notes.md); in the full
/// rounds' copy tiledattn.merge_pieces is its operands.
void lowerSplitTail(RewriterBase &rewriter, ForEachTileOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  TileArithmetic t(rewriter, op);
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(rewriter, loc, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubIOp::create(rewriter, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulIOp::create(rewriter, loc, x, y);
  };
  auto div = [&](Value x, Value y) -> Value {
    return arith::DivUIOp::create(rewriter, loc, x, y);
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(rewriter, loc, p, x, y);
  };
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(rewriter, loc, c, x, y);
  };
  Value blockX = t.blockX(), gridX = t.gridX();
  Value tileBlocks = t.toI32(op.getSplitTail());
  Value tail = arith::RemUIOp::create(rewriter, loc, t.tiles, gridX);
  tail = select(cmp(arith::CmpIPredicate::uge, mul(tail, tileBlocks), gridX),
                tail, t.i32(0));
  Value fullRounds = sub(t.tiles, tail);
  Value steps = mul(tail, tileBlocks);
  Value shareBegin = div(mul(blockX, steps), gridX);
  Value shareEnd = div(mul(add(blockX, t.i32(1)), steps), gridX);
  Value firstPiece = div(shareBegin, tileBlocks);
  Value endPiece = select(
      cmp(arith::CmpIPredicate::ult, shareBegin, shareEnd),
      div(add(shareEnd, sub(tileBlocks, t.i32(1))), tileBlocks), firstPiece);

  // The full rounds: tiles blockIdx.x, + G, ... below fullRounds, each
  // whole (first 0, all its blocks, no holders), merge_pieces its operands.
  SmallVector<Value> inits{t.i32(0)};
  inits.append(op.getInits().begin(), op.getInits().end());
  auto rounds =
      scf::ForOp::create(rewriter, loc, blockX, fullRounds, gridX, inits);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(rounds.getBody());
    Value rank = rounds.getInductionVar();
    if (op.getAcrossHeads() && op.getLongestFirst())
      rank = mirrorOddRounds(rewriter, loc, rank, gridX, fullRounds);
    Value done = rounds.getRegionIterArg(0);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    IRMapping map;
    Block &body = op.getBody().front();
    SmallVector<Value> args = t.tileOfRank(rank);
    args.append({t.toIndex(done), zero, op.getSplitTail(), zero});
    args.append(rounds.getRegionIterArgs().begin() + 1,
                rounds.getRegionIterArgs().end());
    map.map(body.getArguments(), args);
    for (Operation &inner : body.without_terminator())
      rewriter.clone(inner, map);
    SmallVector<Value> next{add(done, t.i32(1))};
    for (Value v : cast<YieldOp>(body.getTerminator()).getValues())
      next.push_back(map.lookupOrDefault(v));
    scf::YieldOp::create(rewriter, loc, next);
    rounds.getBody()->walk([&](MergePiecesOp merge) {
      rewriter.replaceOp(merge, merge->getOperands().take_front(3));
    });
  }

  // Its pieces of the tail: tail tile u, steps [from, to) of it.
  auto pieces = scf::ForOp::create(rewriter, loc, firstPiece, endPiece,
                                   t.i32(1), rounds.getResults());
  rewriter.setInsertionPointToStart(pieces.getBody());
  Value u = pieces.getInductionVar();
  Value tileStart = mul(u, tileBlocks);
  Value from = arith::MaxUIOp::create(rewriter, loc, shareBegin, tileStart);
  Value to = arith::MinUIOp::create(rewriter, loc, shareEnd,
                                    add(tileStart, tileBlocks));
  Value first = sub(from, tileStart), count = sub(to, from);
  // The blocks after this one up to the one with the tile's last step:
  // block j's share starts at step j * I / G, so the last block to start at
  // or before step x is ((x + 1) * G - 1) / I.
  Value lastStep = mul(add(u, t.i32(1)), tileBlocks);
  Value lastHolder = div(sub(mul(lastStep, gridX), t.i32(1)), steps);
  Value startsSplit = arith::AndIOp::create(
      rewriter, loc, cmp(arith::CmpIPredicate::eq, first, t.i32(0)),
      cmp(arith::CmpIPredicate::ult, count, tileBlocks));
  Value holders = select(startsSplit, sub(lastHolder, blockX), t.i32(0));
  Value done = pieces.getRegionIterArg(0);
  SmallVector<Value> args = t.tileOfRank(add(fullRounds, u));
  args.append({t.toIndex(done), t.toIndex(first), t.toIndex(count),
               t.toIndex(holders)});
  args.append(pieces.getRegionIterArgs().begin() + 1,
              pieces.getRegionIterArgs().end());
  SmallVector<Value> next{add(done, t.i32(1))};
  moveBody(rewriter, op, pieces.getBody(), args, [&](ValueRange values) {
    next.append(values.begin(), values.end());
    scf::YieldOp::create(rewriter, loc, next);
  });
  rewriter.replaceOp(op, pieces.getResults().drop_front());
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

/// split_tail: checks that the schedule and the loops agree, and gives the
/// kernel the launch's workspace (the manifest's `workspace`, after the
/// function's arguments and before the tensor maps tiledattn-lower-rings
/// adds), marked for tiledattn.merge_pieces.
LogicalResult addSplitTailWorkspace(gpu::GPUFuncOp kernel,
                                    ScheduleAttr schedule,
                                    ArrayRef<ForEachTileOp> loops) {
  for (ForEachTileOp op : loops)
    if (op.getSplitTail() &&
        (!schedule.getSplitTail() || !schedule.getPersistent()))
      return op.emitOpError("has split_tail, which cuts the last round of a "
                            "persistent grid "
                            "into pieces, but the kernel's schedule has ")
             << (schedule.getPersistent() ? "split_tail = false (no "
                                            "workspace for the pieces)"
                                          : "persistent = false")
             << "; set split_tail = true and persistent = true or leave "
                "split_tail out";
  SmallVector<MergePiecesOp> merges;
  WalkResult outside = kernel.walk([&](MergePiecesOp merge) {
    if (!merge->getParentOfType<ForEachTileOp>()) {
      merge.emitOpError("expected to be in a tiledattn.for_each_tile with "
                        "split_tail (the pieces it merges are that loop's), "
                        "but it is in no tile loop");
      return WalkResult::interrupt();
    }
    merges.push_back(merge);
    return WalkResult::advance();
  });
  if (outside.wasInterrupted())
    return failure();
  if (!schedule.getSplitTail())
    return success();
  if (llvm::none_of(loops, [](ForEachTileOp op) { return op.getSplitTail(); }))
    return kernel.emitOpError(
        "has a schedule with split_tail = true, whose launch gives the "
        "tiles of the last round out in pieces, but no tiledattn.for_each_tile "
        "has split_tail; add it to the tile loops or leave split_tail out");
  if (merges.empty())
    return kernel.emitOpError(
        "has split_tail tile loops but no tiledattn.merge_pieces: the pieces "
        "of a tile would each be stored alone; merge them after the last "
        "P.V");
  int64_t headDimV = merges.front().getAcc().getType().getNumCols();
  for (MergePiecesOp merge : merges)
    if (merge.getAcc().getType().getNumCols() != headDimV)
      return merge.emitOpError("expected every merge_pieces of the kernel to "
                               "take ")
             << headDimV << " columns of O (one workspace slot size), but "
             << "this one takes " << merge.getAcc().getType().getNumCols();
  int64_t consumers = 0;
  kernel.walk(
      [&](WarpSpecializeOp roles) { consumers = roles.getConsumers(); });
  unsigned index = kernel.getNumArguments();
  auto ptr = LLVM::LLVMPointerType::get(kernel.getContext());
  if (failed(kernel.insertArgument(index, ptr, {}, kernel.getLoc())))
    return failure();
  Builder b(kernel.getContext());
  kernel.setArgAttr(index, kWorkspaceArgAttrName, b.getUnitAttr());
  kernel->setAttr(
      kWorkspaceBytesAttrName,
      b.getI64IntegerAttr(splitTailWorkspaceBytes(consumers, headDimV)));
  return success();
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
  if (failed(addSplitTailWorkspace(kernel, schedule, loops)))
    return failure();
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
    if (op.getSplitTail())
      lowerSplitTail(rewriter, op);
    else if (op.getRanksFrom())
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
