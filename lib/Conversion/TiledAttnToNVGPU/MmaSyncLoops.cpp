//===- MmaSyncLoops.cpp - Loops, rings and blocks ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// scf.for over K/V blocks with the cp.async ring (producer = cp_async),
// its yield, and the walk over a block's ops.
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::mmasync;

LogicalResult MmaSyncEmitter::emitFor(scf::ForOp loop) {
  Location loc = loop.getLoc();
  SmallVector<Value> inits;
  SmallVector<std::pair<int64_t, int64_t>> slices; // per iter arg
  for (Value init : loop.getInitArgs()) {
    int64_t start = inits.size();
    if (isTile(init)) {
      auto it = frags.find(init);
      if (it == frags.end())
        return loop.emitOpError("iterates on a tile that has no lowering");
      inits.append(it->second);
    } else {
      inits.push_back(map.lookup(init));
    }
    slices.push_back({start, static_cast<int64_t>(inits.size()) - start});
  }
  SmallVector<LoadOp> staged;
  if (schedule.getProducer() == Producer::cp_async &&
      failed(prepareRings(loop, staged)))
    return failure();
  Value lb = map.lookup(loop.getLowerBound());
  Value step = map.lookup(loop.getStep());
  int64_t stages = schedule.getNumStages();
  // Prologue: the first num_stages - 1 blocks are in flight before the
  // loop starts.
  for (int64_t s = 0; s + 1 < stages && !staged.empty(); ++s) {
    Value row = arith::AddIOp::create(
        b, loc, lb, arith::MulIOp::create(b, loc, step, idx(loc, s)));
    issueCopies(loc, staged, row, idx(loc, s));
  }
  // The wait op's token operand only orders it in the IR (the PTX waits
  // on a count), so after the loop any group issued before it will do.
  Value groupBeforeLoop = lastGroup;
  auto newLoop = scf::ForOp::create(
      b, loc, lb, map.lookup(loop.getUpperBound()), step, inits);
  map.map(loop.getInductionVar(), newLoop.getInductionVar());
  auto bind = [&](ValueRange from, ValueRange to) {
    for (auto [i, v] : llvm::enumerate(from)) {
      auto [start, len] = slices[i];
      if (isTile(v))
        frags[v] = Regs(to.begin() + start, to.begin() + start + len);
      else
        map.map(v, to[start]);
    }
  };
  bind(loop.getRegionIterArgs(), newLoop.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(newLoop.getBody());
    if (!staged.empty()) {
      // Issue block i + num_stages - 1, wait until block i has landed,
      // and make every thread's copies visible before any ldmatrix.
      Value iv = newLoop.getInductionVar();
      Value iter = arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
      Value ahead = arith::AddIOp::create(
          b, loc, iv,
          arith::MulIOp::create(b, loc, step, idx(loc, stages - 1)));
      Value aheadStage = arith::RemUIOp::create(
          b, loc, add(loc, iter, stages - 1), idx(loc, stages));
      issueCopies(loc, staged, ahead, aheadStage);
      nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                       b.getI32IntegerAttr(stages - 1));
      if (wgmmaPad) // wgmma reads through the async proxy.
        fenceProxyAsyncShared(b, loc);
      gpu::BarrierOp::create(b, loc);
      Value stage = arith::RemUIOp::create(b, loc, iter, idx(loc, stages));
      for (LoadOp load : staged)
        streamed[load.getResult()].stage = stage;
      barrierBeforeYield.insert(loop);
    }
    if (failed(emitBlock(*loop.getBody())))
      return failure();
  }
  // Prefetches past the last block may still be in flight; drain them.
  // With one stage every iteration already waited for all its copies.
  if (!staged.empty() && groupBeforeLoop)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, groupBeforeLoop,
                                     b.getI32IntegerAttr(0));
  bind(loop.getResults(), newLoop.getResults());
  return success();
}

LogicalResult MmaSyncEmitter::prepareRings(scf::ForOp loop,
                                           SmallVectorImpl<LoadOp> &staged) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  // Loops run one after another and each drains its ring before it ends,
  // so every loop's rings start at offset 0 of the same shared memory.
  int64_t offset = 0;
  for (LoadOp load : loop.getBody()->getOps<LoadOp>()) {
    std::optional<Layout> layout = la.lookup(load.getResult());
    if (layout != Layout::Rhs && layout != Layout::RhsT)
      continue;
    TileType tile = load.getResult().getType();
    if (load.getRow() != loop.getInductionVar() || !step ||
        *step != tile.getNumRows())
      continue; // emitLoad reports it.
    int64_t rows = tile.getNumRows(), cols = tile.getNumCols();
    int64_t chunksPerRow = cols / 8;
    if (cols % 8 != 0 || (rows * chunksPerRow) % schedule.getNumThreads() ||
        schedule.getNumThreads() % chunksPerRow)
      return load.emitOpError("expected the tile's 16-byte chunks (")
             << rows << " x " << chunksPerRow << ") to divide evenly among "
             << schedule.getNumThreads() << " threads for cp.async";
    if (schedule.getSwizzle() / 16 > chunksPerRow)
      return load.emitOpError("schedule field swizzle: ")
             << schedule.getSwizzle() << " bytes spans more than a " << cols * 2
             << "-byte tile row";
    Location loc = load.getLoc();
    auto ringType =
        MemRefType::get({schedule.getNumStages(), rows, cols},
                        tile.getElementType(), MemRefLayoutAttrInterface(),
                        cast<MemRefType>(smemBase.getType()).getMemorySpace());
    Value shift = idx(loc, offset);
    if (wgmmaPad)
      shift = arith::AddIOp::create(b, loc, wgmmaPad,
                                    idx(loc, offset + kWgmmaFixedBytes));
    Value ring =
        memref::ViewOp::create(b, loc, ringType, smemBase, shift, ValueRange{});
    int64_t stageBytes =
        rows * cols * tile.getElementType().getIntOrFloatBitWidth() / 8;
    ringByteOffset[ring] = {offset, stageBytes};
    offset += schedule.getNumStages() * stageBytes;
    streamed[load.getResult()] = {ring, Value()};
    staged.push_back(load);
  }
  if (wgmmaPad) // The pad (up to 1 KiB), then Q and P, then the rings.
    offset += kWgmmaAlignment + kWgmmaFixedBytes;
  smemBytes = std::max(smemBytes, offset);
  if (offset > kMaxSharedMemoryBytes)
    return loop.emitOpError("stages ")
           << offset << " bytes of K/V tiles in shared memory, but sm_90 "
           << "gives a block at most " << kMaxSharedMemoryBytes;
  return success();
}

void MmaSyncEmitter::issueCopies(Location loc, ArrayRef<LoadOp> staged,
                                 Value row, Value stage) {
  SmallVector<Value> tokens;
  for (LoadOp load : staged) {
    const Streamed &st = streamed[load.getResult()];
    TileType tile = load.getResult().getType();
    int64_t rows = tile.getNumRows(), chunksPerRow = tile.getNumCols() / 8;
    int64_t threads = schedule.getNumThreads();
    Value src = map.lookup(load.getSource());
    Value seqLen = memref::DimOp::create(b, loc, src, idx(loc, 2));
    Value lastRow = arith::SubIOp::create(b, loc, seqLen, idx(loc, 1));
    Value chunk = arith::RemUIOp::create(b, loc, tid, idx(loc, chunksPerRow));
    Value col = arith::MulIOp::create(b, loc, chunk, idx(loc, 8));
    Value firstRow =
        arith::DivUIOp::create(b, loc, tid, idx(loc, chunksPerRow));
    for (int64_t r0 = 0; r0 < rows; r0 += threads / chunksPerRow) {
      Value r = add(loc, firstRow, r0);
      Value global = arith::AddIOp::create(b, loc, row, r);
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global, seqLen);
      Value srcElements =
          arith::SelectOp::create(b, loc, inside, idx(loc, 8), idx(loc, 0));
      auto token = nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), st.ring,
          ValueRange{stage, r, swizzle(loc, r, col)}, src,
          ValueRange{map.lookup(load.getBatch()), map.lookup(load.getHead()),
                     clampRow(loc, global, lastRow), col},
          b.getIndexAttr(8), srcElements, b.getUnitAttr());
      tokens.push_back(token);
    }
  }
  lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

LogicalResult MmaSyncEmitter::emitYield(scf::YieldOp yield) {
  // The next iteration refills the stage this one read.
  if (barrierBeforeYield.contains(yield->getParentOp()))
    gpu::BarrierOp::create(b, yield.getLoc());
  SmallVector<Value> operands;
  for (Value v : yield.getOperands()) {
    if (isTile(v))
      operands.append(frags[v]);
    else
      operands.push_back(map.lookup(v));
  }
  scf::YieldOp::create(b, yield.getLoc(), operands);
  return success();
}

LogicalResult MmaSyncEmitter::emitBlock(Block &block) {
  for (Operation &op : block) {
    LogicalResult r =
        TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](LoadOp o) { return emitLoad(o); })
            .Case([&](ConstantOp o) { return emitConstant(o); })
            .Case([&](MmaOp o) { return emitMma(o); })
            .Case([&](MaskOp o) { return emitMask(o); })
            .Case([&](OnlineSoftmaxOp o) { return emitOnlineSoftmax(o); })
            .Case([&](RescaleOp o) { return emitRescale(o); })
            .Case([&](StoreOp o) { return emitStore(o); })
            .Case([&](scf::ForOp o) { return emitFor(o); })
            .Case([&](scf::YieldOp o) { return emitYield(o); })
            .Case([&](func::ReturnOp o) {
              gpu::ReturnOp::create(b, o.getLoc());
              return success();
            })
            .Case([&](SdpaOp o) {
              return o.emitOpError(
                  "must be expanded by tiledattn-tile-sdpa first");
            })
            .Default([&](Operation *other) -> LogicalResult {
              // Rings, roles, shared tiles, asynchronous mmas and TMA
              // stores: the warp-specialized program's ops.
              if (isa<TiledAttnDialect>(other->getDialect()))
                return other->emitOpError(
                    "is lowered only in producer = tma programs (warp "
                    "roles, rings, shared memory), not by the mma_sync "
                    "emitter");
              bool nested = false;
              other->walk([&](Operation *inner) {
                if (inner != other &&
                    isa<TiledAttnDialect>(inner->getDialect()))
                  nested = true;
              });
              if (nested)
                return other->emitOpError(
                    "holds tiledattn ops in a region, which "
                    "convert-tiledattn-to-nvgpu cannot lower (only scf.for "
                    "may)");
              b.clone(*other, map);
              return success();
            });
    if (failed(r))
      return failure();
  }
  return success();
}
