//===- HopperTileLoops.cpp - Tile loops -------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Which tiles a block runs: one, a static persistent loop, a split tail,
// or tiles taken from a global counter (dynamic_tiles).
//
//===----------------------------------------------------------------------===//

#include "HopperKernelEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::hopper;

void HopperKernelEmitter::setTile(Value qBlockIndex, Value headIndex,
                                  Value batchIndex) {
  qBlock = qBlockIndex;
  head = headIndex;
  batch = batchIndex;
  headKV = kvHeadOf(head);
  qRow0 = mul(qBlock, blockM);
  Value kvEnd = seqK;
  if (causal)
    kvEnd = arith::MinUIOp::create(b, loc, seqK, add(qRow0, blockM));
  numBlocks = div(add(kvEnd, blockN - 1), blockN);
}

/// Tile `rank` (i32) of the persistent order, with `qBlocks` query blocks
/// per head (i32). tile_order = by_head: query blocks fastest, so the blocks
/// running at the same time share few heads' K and V in L2; across_heads:
/// heads and batches fastest. Causal query blocks run from the last (the
/// longest) down. The arithmetic is 32-bit: 64-bit divisions cost the
/// producer registers it has given away.
void HopperKernelEmitter::setTileOfRank(Value rank, Value qBlocks) {
  Value heads = toI32(headsQ);
  Value qIndex, headBatch;
  if (schedule.getTileOrder() == TileOrder::by_head) {
    qIndex = arith::RemUIOp::create(b, loc, rank, qBlocks);
    headBatch = arith::DivUIOp::create(b, loc, rank, qBlocks);
  } else {
    Value headsTimesBatch =
        arith::MulIOp::create(b, loc, heads, toI32(batches));
    qIndex = arith::DivUIOp::create(b, loc, rank, headsTimesBatch);
    headBatch = arith::RemUIOp::create(b, loc, rank, headsTimesBatch);
  }
  if (causal)
    qIndex = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, qBlocks, i32(1)), qIndex);
  Value headIndex = arith::RemUIOp::create(b, loc, headBatch, heads);
  Value batchIndex = arith::DivUIOp::create(b, loc, headBatch, heads);
  setTile(toIndex(qIndex), toIndex(headIndex), toIndex(batchIndex));
}

void HopperKernelEmitter::setTileOfBlock() {
  Value blockX = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (causal) // Longest rows first, so short blocks fill the tail.
    blockX = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x), idx(1)),
        blockX);
  Value blockY = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value blockZ = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  setTile(blockX, blockY, blockZ);
  ringBase = idx(0);
  qBuffer = idx(0);
  tileParity = arith::ConstantIntOp::create(b, loc, 0, 1);
}

void HopperKernelEmitter::setTileBuffer(Value done) {
  Value uses = done; // of the tile's Q buffer, before this tile
  qBuffer = idx(0);
  if (qBuffers > 1) {
    qBuffer = toIndex(arith::RemUIOp::create(b, loc, done, i32(qBuffers)));
    uses = arith::DivUIOp::create(b, loc, done, i32(qBuffers));
  }
  tileParity = arith::TruncIOp::create(b, loc, b.getI1Type(), uses);
  tilesDone = done;
}

void HopperKernelEmitter::forEachTile(function_ref<void(Regs &)> body,
                                      bool producer, Regs &carried) {
  if (!schedule.getPersistent()) { // The one tile was set up by emit().
    body(carried);
    return;
  }
  Value qBlocks = toI32(div(add(seqQ, blockM - 1), blockM));
  numTiles = arith::MulIOp::create(
      b, loc, qBlocks, toI32(arith::MulIOp::create(b, loc, headsQ, batches)));
  if (schedule.getDynamicTiles())
    return forEachTileDynamic(body, producer, qBlocks, carried);
  if (schedule.getSplitTail())
    return forEachTileSplit(body, producer, qBlocks, carried);
  Value blockX = toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  // Loop state: the ring position of the tile's first K/V block and the
  // number of tiles done (modulo q_buffers: the tile's Q buffer; the next
  // bit: the phase of that buffer's barriers), then `carried`.
  Regs inits = {i32(0), i32(0)};
  inits.append(carried.begin(), carried.end());
  auto loop = scf::ForOp::create(b, loc, blockX, numTiles, gridX, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  Value rank = t;
  if (causal && schedule.getTileOrder() == TileOrder::across_heads)
    rank = mirrorOddRounds(b, loc, t, gridX, numTiles);
  setTileOfRank(rank, qBlocks);
  runTile(loop, body);
  carried.assign(loop.getResults().begin() + 2, loop.getResults().end());
}

void HopperKernelEmitter::runTile(scf::ForOp loop,
                                  function_ref<void(Regs &)> body) {
  Value ring = loop.getRegionIterArgs()[0];
  Value done = loop.getRegionIterArgs()[1];
  ringBase = toIndex(ring);
  setTileBuffer(done);
  Regs values(loop.getRegionIterArgs().drop_front(2));
  body(values);
  Regs yields = {arith::AddIOp::create(b, loc, ring, toI32(numBlocks)),
                 arith::AddIOp::create(b, loc, done, i32(1))};
  yields.append(values.begin(), values.end());
  scf::YieldOp::create(b, loc, yields);
}

/// split_tail. With G = gridDim.x blocks and T tiles of NB K/V blocks each
/// (no mask: all equal), the first T - T mod G tiles run as usual, block j
/// taking j, j + G, ...; the last T mod G (the tail) would leave a part of
/// the grid running one more tile alone. Their (tile, K/V block) steps,
/// I = (T mod G) * NB of them, are shared out instead: block j takes steps
/// [j * I / G, (j + 1) * I / G), one or two pieces of tiles (a share is
/// under a tile, as T mod G < G). A piece that does not start at its
/// tile's first block writes its partial O to the workspace; the piece
/// that does merges those (mergePartials). A block's writing piece is its
/// first in the tail and merging ones come after, so no block waits for
/// one that waits. The arithmetic is 32-bit, as for the tile ranks.
/// The full rounds and the pieces are two loops, each with its own copy of
/// the tile body: in one loop the pieces' dynamic first block and count
/// and their conditional stores cost every tile about 2% (ninth session).
void HopperKernelEmitter::forEachTileSplit(function_ref<void(Regs &)> body,
                                           bool producer, Value qBlocks,
                                           Regs &carried) {
  auto i32Op = [&](auto op, Value x, Value y) {
    return decltype(op)::create(b, loc, x, y);
  };
  auto addI = [&](Value x, Value y) { return i32Op(arith::AddIOp(), x, y); };
  auto subI = [&](Value x, Value y) { return i32Op(arith::SubIOp(), x, y); };
  auto mulI = [&](Value x, Value y) { return i32Op(arith::MulIOp(), x, y); };
  auto divI = [&](Value x, Value y) { return i32Op(arith::DivUIOp(), x, y); };
  Value blockX = toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  fullBlocks = toI32(div(add(seqK, blockN - 1), blockN));
  // A tail of fewer steps than blocks runs as a round of its own: shares
  // of at least one step each keep every block between a tile's merging
  // piece and its last a writer of it.
  Value tail = arith::RemUIOp::create(b, loc, numTiles, gridX);
  tail = arith::SelectOp::create(
      b, loc, cmp(arith::CmpIPredicate::uge, mulI(tail, fullBlocks), gridX),
      tail, i32(0));
  Value fullRounds = subI(numTiles, tail); // tiles before the tail
  tailBlocks = mulI(tail, fullBlocks);
  Value shareBegin = divI(mulI(blockX, tailBlocks), gridX);
  Value shareEnd = divI(mulI(addI(blockX, i32(1)), tailBlocks), gridX);
  Value firstTail = divI(shareBegin, fullBlocks);
  Value lastTail = divI(addI(shareEnd, subI(fullBlocks, i32(1))), fullBlocks);
  lastTail = arith::SelectOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, shareBegin, shareEnd), lastTail,
      firstTail);

  // This block's tiles of the full rounds: j, j + G, ... below fullRounds.
  Regs inits = {i32(0), i32(0)};
  inits.append(carried.begin(), carried.end());
  auto rounds = scf::ForOp::create(b, loc, blockX, fullRounds, gridX, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rounds.getBody());
    setTileOfRank(rounds.getInductionVar(), qBlocks);
    runTile(rounds, body);
  }

  // Its pieces of the tail: tile u of it, the piece's steps [from, to).
  auto pieces = scf::ForOp::create(b, loc, firstTail, lastTail, i32(1),
                                   rounds.getResults());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pieces.getBody());
    Value u = pieces.getInductionVar();
    Value tileStart = mulI(u, fullBlocks);
    Value from = arith::MaxUIOp::create(b, loc, shareBegin, tileStart);
    Value to =
        arith::MinUIOp::create(b, loc, shareEnd, addI(tileStart, fullBlocks));
    Value first = subI(from, tileStart);
    Value count = subI(to, from);
    setTileOfRank(addI(fullRounds, u), qBlocks);
    numBlocks = toIndex(count);
    kvBlock0 = toIndex(first);
    tailTile = u;
    startsTile = cmp(arith::CmpIPredicate::eq, first, i32(0));
    writesPartial = cmp(arith::CmpIPredicate::ne, first, i32(0));
    mergesPartials = arith::AndIOp::create(
        b, loc, startsTile, cmp(arith::CmpIPredicate::ult, count, fullBlocks));
    runTile(pieces, body);
    // Defined in this loop only.
    kvBlock0 = startsTile = writesPartial = mergesPartials = tailTile = {};
  }
  carried.assign(pieces.getResults().begin() + 2, pieces.getResults().end());
}

/// dynamic_tiles. The producer starts at tile blockIdx.x and, at the start
/// of each tile, asks the counter for the one after it (gridDim.x + the
/// counter's old value: the first gridDim.x tiles need no atomic), so the
/// atomic's latency hides under the tile's loads; the last add of the launch
/// puts the counter back to 0. It writes each rank into
/// the Q buffer's slot before the Q load's arrive; when the ranks run out
/// it writes numTiles there and arrives without a load, which ends the
/// consumers' loops, which read the slot after waiting for Q.
void HopperKernelEmitter::forEachTileDynamic(function_ref<void(Regs &)> body,
                                             bool producer, Value qBlocks,
                                             Regs &carried) {
  Type i32Type = b.getI32Type();
  // Loop state: (producer only) the tile's rank, then as in forEachTile the
  // ring position, the number of tiles done and `carried`. The condition
  // passes on the rank, ring position, tiles done and `carried`.
  SmallVector<Value> inits = {i32(0), i32(0)};
  if (producer)
    inits.insert(inits.begin(),
                 toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x)));
  inits.append(carried.begin(), carried.end());
  SmallVector<Type> types = llvm::to_vector(ValueRange(inits).getTypes());
  SmallVector<Type> passed = {i32Type, i32Type, i32Type};
  passed.append(llvm::to_vector(ValueRange(carried).getTypes()));
  auto loop = scf::WhileOp::create(b, loc, passed, inits);
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                SmallVector<Location>(types.size(), loc));
  Block *after = b.createBlock(&loop.getAfter(), {}, passed,
                               SmallVector<Location>(passed.size(), loc));
  b.setInsertionPointToStart(before);
  int64_t firstCarried = producer ? 3 : 2;
  Value rank, ring, done;
  if (producer) {
    rank = before->getArgument(0);
    ring = before->getArgument(1);
    done = before->getArgument(2);
  } else {
    ring = before->getArgument(0);
    done = before->getArgument(1);
    setTileBuffer(done);
    waitParity(qFull(qBuffer), tileParity);
    rank = LLVM::LoadOp::create(b, loc, i32Type, tileSlot(qBuffer));
    rank = warpUniform(rank); // keeps the tile arithmetic uniform
  }
  Regs conditionArgs = {rank, ring, done};
  conditionArgs.append(before->getArguments().begin() + firstCarried,
                       before->getArguments().end());
  scf::ConditionOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, rank, numTiles), conditionArgs);

  b.setInsertionPointToStart(after);
  rank = after->getArgument(0);
  ring = after->getArgument(1);
  done = after->getArgument(2);
  Value next, counter, old;
  if (producer) {
    auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
    counter = LLVM::AddrSpaceCastOp::create(b, loc, global, tileCounter);
    old = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add, counter,
                                    i32(1), LLVM::AtomicOrdering::monotonic);
    next = arith::AddIOp::create(
        b, loc, old, toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x)));
  }
  tileRank = rank;
  setTileOfRank(rank, qBlocks);
  ringBase = toIndex(ring);
  setTileBuffer(done);
  Regs values(after->getArguments().drop_front(3));
  body(values);
  if (producer) {
    // Every tile run makes one add, so the adds return 0 .. numTiles - 1
    // and the one that got numTiles - 1 was the launch's last: it zeroes
    // the counter for the next launch on the stream (no memset per call).
    // Checked after the tile's loads, not right after the add. (ptxas
    // still reads the add's result early, in the warp-aggregated form it
    // gives the atomic, before the Q-empty wait.)
    Value last = arith::SubIOp::create(b, loc, numTiles, i32(1));
    ifThen(cmp(arith::CmpIPredicate::eq, old, last),
           [&] { LLVM::StoreOp::create(b, loc, i32(0), counter); });
  }
  SmallVector<Value> yields = {
      arith::AddIOp::create(b, loc, ring, toI32(numBlocks)),
      arith::AddIOp::create(b, loc, done, i32(1))};
  if (producer)
    yields.insert(yields.begin(), next);
  yields.append(values.begin(), values.end());
  scf::YieldOp::create(b, loc, yields);
  carried.assign(loop.getResults().begin() + 3, loop.getResults().end());

  if (!producer)
    return;
  // No tile left: hand the consumers the end mark in the next Q buffer.
  b.setInsertionPointAfter(loop);
  setTileBuffer(loop.getResult(2));
  waitParity(qEmpty(qBuffer), flip(tileParity));
  LLVM::StoreOp::create(b, loc, numTiles, tileSlot(qBuffer));
  arrive(qFull(qBuffer));
}

/// Issues S = Q.K^T for this consumer's 64 rows and commits the group:
/// head_dim / 16 wgmma.m64nNk16 with N = `n` (block_n unless narrow: the
/// first n keys of the block), Q and K both K-major in shared memory.
/// Returns the accumulator struct, valid after a wait.
