//===- AccumulatorOpsToNVVM.cpp - Tile ops on accumulators ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The forward's tile ops on a warpgroup's wgmma accumulator registers, for
// tiledattn-lower-mma: tiledattn.constant, mask, score_mod, scale_max,
// online_softmax (P packed into an mma's A words), rescale, store and
// tma_store (its rows into the stage; tiledattn-lower-rings issued the copy),
// finish_rows, read_rows, resize, truncate and merge_pieces, with
// AccumulatorMath's and AccumulatorOps.h's functions. Register tiles arrive and
// leave as casts of their structs. The class and the helpers its ops share are
// in AccumulatorLowering.h, the backward's ops in BackwardOpsToNVVM.cpp.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorLowering.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "tiledattn/Conversion/WgmmaHelpers.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::accumulators;

Value mlir::tiledattn::castSource(Value v) {
  auto cast = v.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1)
    return {};
  return cast.getOperand(0);
}

FailureOr<Value> mlir::tiledattn::sharedAddressOf(Operation *op, Value tile,
                                                  StringRef what) {
  Value address = castSource(tile);
  if (!address || !address.getType().isIndex())
    return op->emitOpError("expected the ")
           << what
           << " to be a shared-memory address (run tiledattn-lower-rings "
              "before tiledattn-lower-mma)";
  return address;
}

std::optional<Type> mlir::tiledattn::warpgroupRegisters(TileType tile) {
  MLIRContext *ctx = tile.getContext();
  if (tile.getNumRows() != kWarpgroupRows)
    return std::nullopt;
  if (tile.getElementType().isF32())
    return f32Struct(ctx, tile.getRank() == 1 ? 2 : tile.getNumCols() / 2);
  if (tile.getRank() != 2)
    return std::nullopt;
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(tile.getNumCols() / 4, IntegerType::get(ctx, 32)));
}

Value mlir::tiledattn::loweredRegisters(Value tile) {
  Value regs = castSource(tile);
  std::optional<Type> type = warpgroupRegisters(cast<TileType>(tile.getType()));
  return regs && type && regs.getType() == *type ? regs : Value();
}

LogicalResult AccumulatorLowering::lowerMask(MaskOp op) {
  auto type = cast<TileType>(op.getScores().getType());
  FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
  if (failed(scores))
    return failure();
  AccumulatorPlace p = place();
  Value rowBase = add(op.getRow(), add(p.warpRow, p.group));
  auto firstKey = [&] {
    return add(op.getCol(),
               arith::MulIOp::create(
                   b, loc, p.quad, arith::ConstantIndexOp::create(b, loc, 2)));
  };
  BlockMask mask{firstKey, rowBase, op.getSeqlenK(), op.getCausal()};
  math.mask(*scores, mask);
  op.getResult().replaceAllUsesWith(tileOf(type, *scores));
  return success();
}

/// A 64-row vector's two rows, as a RowState half.
LogicalResult AccumulatorLowering::rowsOf(Operation *op, Value tile,
                                          StringRef name, Value (&rows)[2]) {
  FailureOr<Regs> regs = registersOf(op, tile, name);
  if (failed(regs))
    return failure();
  rows[0] = (*regs)[0];
  rows[1] = (*regs)[1];
  return success();
}

/// A row may have seen only -inf unless the op is `finite`, so the guard
/// is on without it; P is packed into the words of an mma's A.
LogicalResult AccumulatorLowering::lowerOnlineSoftmax(OnlineSoftmaxOp op) {
  FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
  if (failed(scores))
    return failure();
  RowState st;
  if (failed(rowsOf(op, op.getRowMax(), "row_max", st.max)) ||
      failed(rowsOf(op, op.getRowSum(), "row_sum", st.sum)))
    return failure();
  scaleLog2 = timesLog2E(op.getScale());
  math.setExp2OnFma(op.getExp2OnFma().value_or(0));
  math.setScaledMaxima(!op.getRawMax());
  Value rescale[2];
  math.softmax(*scores, st, /*mask=*/nullptr, rescale, Value(),
               /*mayBeMasked=*/!op.getFinite());
  auto probsType = cast<TileType>(op.getProbs().getType());
  op.getProbs().replaceAllUsesWith(
      probsType.getElementType().isF32()
          ? tileOf(probsType, *scores) // packed later (truncate)
          : tileOf(probsType, math.pack(*scores, probsType.getElementType())));
  Type rowType = op.getNewRowMax().getType();
  op.getNewRowMax().replaceAllUsesWith(tileOf(rowType, st.max));
  op.getNewRowSum().replaceAllUsesWith(tileOf(rowType, st.sum));
  op.getRescale().replaceAllUsesWith(tileOf(rowType, rescale));
  return success();
}

/// Raw maxima times scale * log2(e): -inf stays -inf (scale > 0).
LogicalResult AccumulatorLowering::lowerScaleMax(ScaleMaxOp op) {
  FailureOr<Regs> rows = registersOf(op, op.getRowMax(), "row_max");
  if (failed(rows))
    return failure();
  Value factor = timesLog2E(op.getScale());
  for (Value &v : *rows)
    v = math.fmul(v, factor);
  op.getResult().replaceAllUsesWith(tileOf(op.getType(), *rows));
  return success();
}

/// A warpgroup's f32 tile of one value: the thread's registers of it.
LogicalResult AccumulatorLowering::lowerConstant(ConstantOp op) {
  auto type = cast<TileType>(op.getType());
  if (type.getNumRows() != kWarpgroupRows)
    return op.emitOpError("expected a warpgroup's tile of 64 rows, but "
                          "got ")
           << type;
  int64_t n =
      cast<LLVM::LLVMStructType>(*warpgroupRegisters(type)).getBody().size();
  Value value = arith::ConstantOp::create(b, loc, op.getValueAttr());
  op.getResult().replaceAllUsesWith(tileOf(type, SmallVector<Value>(n, value)));
  return success();
}

/// The row sums are the thread's part (a quarter of each row's keys, as
/// the online softmax leaves them): the quad adds them. An empty row (sum
/// 0) takes 1 / l = 0, so its O is zeros, and an lse of -inf. `each`,
/// if given, runs once a row is finished, before the next.
/// `rowsIn`: the memref whose dimension 2 counts the rows (O or lse).
template <typename StoreOpT>
FailureOr<std::array<AccumulatorLowering::FinishedRow, 2>>
AccumulatorLowering::finishRows(StoreOpT op, const AccumulatorPlace &p,
                                Value rowsIn,
                                function_ref<void(const FinishedRow &)> each) {
  RowState st;
  if (failed(rowsOf(op, op.getRowMax(), "row_max", st.max)) ||
      failed(rowsOf(op, op.getRowSum(), "row_sum", st.sum)))
    return failure();
  Value seqQ = memref::DimOp::create(b, loc, rowsIn, idx(2));
  Value rowBase = threadRowBase(p, op.getRow());
  Value zero = math.f32(0.0);
  std::array<FinishedRow, 2> rows;
  for (int r = 0; r < 2; ++r) {
    Value sum = quadSum(st.sum[r]);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
    FinishedRow &f = rows[r];
    f.r = r;
    f.max = st.max[r];
    f.sum = sum;
    f.empty = empty;
    f.inv = arith::SelectOp::create(
        b, loc, empty, zero, arith::DivFOp::create(b, loc, math.f32(1.0), sum));
    std::tie(f.row, f.inside) = threadRow(rowBase, seqQ, r);
    if (each)
      each(f);
  }
  return rows;
}

/// Quad 0 stores the row's lse (where the row is inside dest).
template <typename StoreOpT>
void AccumulatorLowering::storeLse(StoreOpT op, const AccumulatorPlace &p,
                                   const FinishedRow &f) {
  if (!op.getLse())
    return;
  Value lead =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, p.quad, idx(0));
  ifThen(lead, [&] {
    // lse = ln(sum_j exp(scale * s_ij)) = (m + log2 l) * ln 2.
    Value lse = math.fmul(math.fadd(f.max, math.log2(f.sum)),
                          math.f32(0.69314718055994530942));
    lse = arith::SelectOp::create(
        b, loc, f.empty, math.f32(-std::numeric_limits<float>::infinity()),
        lse);
    memref::StoreOp::create(b, loc, lse, op.getLse(),
                            ValueRange{op.getBatch(), op.getHead(), f.row});
  });
}

/// Rows past the sequence are not written.
LogicalResult AccumulatorLowering::lowerStore(StoreOp op) {
  auto type = cast<TileType>(op.getAcc().getType());
  FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
  if (failed(acc))
    return failure();
  AccumulatorPlace p = place();
  Value dest = op.getDest();
  Value col0 = arith::MulIOp::create(b, loc, p.quad, idx(2));
  FailureOr<std::array<FinishedRow, 2>> rows =
      finishRows(op, p, dest, [&](const FinishedRow &f) {
        ifThen(f.inside, [&] {
          storeRowPairs(*acc, type, dest, op.getBatch(), op.getHead(), f.row,
                        f.r, col0, f.inv);
          storeLse(op, p, f);
        });
      });
  return failure(failed(rows));
}

/// The warpgroup's 64 rows of a slot into registers: one ldmatrix.x4 per
/// 16 columns gives the 4 words of A's fragment for that k-step, in the
/// order tiledattn.mma_async reads a register A.
LogicalResult AccumulatorLowering::lowerReadRows(ReadRowsOp op) {
  FailureOr<Value> address = sharedAddressOf(op, op.getSlot(), "slot");
  if (failed(address))
    return failure();
  SmemType slot = op.getSlot().getType();
  MatrixX4Rows m = matrixX4Rows(place(), *address, op.getRow());
  MLIRContext *ctx = b.getContext();
  Type x4 = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(4, b.getI32Type()));
  Regs words;
  for (int64_t kk = 0; kk < slot.getCols() / 16; ++kk) {
    Value pointer = matrixX4Pointer(m, 2 * kk, slot.getRows() * 128);
    Value four = NVVM::LdMatrixOp::create(
        b, loc, x4, pointer, /*num=*/4, NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltType::B16);
    for (int64_t w = 0; w < 4; ++w)
      words.push_back(LLVM::ExtractValueOp::create(b, loc, four, w));
  }
  auto type = cast<TileType>(op.getType());
  op.getResult().replaceAllUsesWith(tileOf(type, words));
  return success();
}

/// O (times each row's 1 / l where row statistics are given) into the
/// stage by storeMatrices, then the lse; tiledattn-lower-rings emitted
/// the copy after it.
LogicalResult AccumulatorLowering::lowerTmaStore(TmaStoreOp op) {
  auto type = cast<TileType>(op.getAcc().getType());
  FailureOr<std::pair<Regs, Value>> operands = accAndStage(op);
  if (failed(operands))
    return failure();
  Regs &acc = operands->first;
  Value address = operands->second;
  AccumulatorPlace p = place();
  // Without row statistics O is stored as it is.
  std::optional<std::array<FinishedRow, 2>> rows;
  if (op.getRowMax()) {
    FailureOr<std::array<FinishedRow, 2>> finished =
        finishRows(op, p, op.getDest());
    if (failed(finished))
      return failure();
    rows = *finished;
  }
  storeMatrices(p, acc, op.getStage(), address, op.getStageRow(),
                type.getNumCols(), [&](size_t j, Value v) {
                  return rows ? math.fmul(v, (*rows)[(j % 4) / 2].inv) : v;
                });
  if (rows)
    for (const FinishedRow &f : *rows)
      ifThen(f.inside, [&] { storeLse(op, p, f); });
  return success();
}

/// The rows' lse stored and their 1 / l returned, as tma_store does them.
LogicalResult AccumulatorLowering::lowerFinishRows(FinishRowsOp op) {
  AccumulatorPlace p = place();
  FailureOr<std::array<FinishedRow, 2>> rows = finishRows(op, p, op.getLse());
  if (failed(rows))
    return failure();
  for (const FinishedRow &f : *rows)
    ifThen(f.inside, [&] { storeLse(op, p, f); });
  op.getInv().replaceAllUsesWith(
      tileOf(op.getInv().getType(), {(*rows)[0].inv, (*rows)[1].inv}));
  return success();
}

/// The body once per register: register 4i + h of a thread holds row
/// rowBase + 8 * (h / 2) and key colBase + 8i + h % 2 (as lowerMask).
LogicalResult AccumulatorLowering::lowerScoreMod(ScoreModOp op) {
  auto type = cast<TileType>(op.getScores().getType());
  FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
  if (failed(scores))
    return failure();
  AccumulatorPlace p = place();
  Value rowBase = add(op.getRow(), add(p.warpRow, p.group));
  Value rows[2] = {rowBase, add(rowBase, idx(8))};
  Value colBase =
      add(op.getCol(), arith::MulIOp::create(b, loc, p.quad, idx(2)));
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  for (auto [i, score] : llvm::enumerate(*scores)) {
    int64_t key = 8 * (i / 4) + i % 2;
    IRMapping map;
    map.map(body.getArgument(0), score);
    map.map(body.getArgument(1), rows[(i % 4) / 2]);
    map.map(body.getArgument(2), key ? add(colBase, idx(key)) : colBase);
    for (Operation &inner : body.without_terminator())
      b.clone(inner, map);
    score = map.lookup(yield.getValues().front());
  }
  op.getResult().replaceAllUsesWith(tileOf(type, *scores));
  return success();
}

LogicalResult AccumulatorLowering::lowerRescale(RescaleOp op) {
  auto type = cast<TileType>(op.getAcc().getType());
  FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
  if (failed(acc))
    return failure();
  FailureOr<Regs> factor = registersOf(op, op.getFactor(), "factor");
  if (failed(factor))
    return failure();
  Value rows[2] = {(*factor)[0], (*factor)[1]};
  math.scaleAcc(*acc, rows);
  op.getResult().replaceAllUsesWith(tileOf(type, *acc));
  return success();
}

LogicalResult AccumulatorLowering::lowerTruncate(TruncateOp op) {
  FailureOr<Regs> regs = registersOf(op, op.getTile(), "tile");
  if (failed(regs))
    return failure();
  auto type = cast<TileType>(op.getResult().getType());
  op.getResult().replaceAllUsesWith(
      tileOf(type, math.pack(*regs, type.getElementType())));
  return success();
}

/// A tile's first columns are its first registers (f32: two per 8
/// columns; f16 and bf16 A words: four per 16), in either layout.
LogicalResult AccumulatorLowering::lowerResize(ResizeOp op) {
  FailureOr<Regs> regs = registersOf(op, op.getTile(), "tile");
  if (failed(regs))
    return failure();
  auto type = cast<TileType>(op.getResult().getType());
  auto words = cast<LLVM::LLVMStructType>(*warpgroupRegisters(type));
  Type word = words.getBody().front();
  regs->resize(words.getBody().size(),
               arith::ConstantOp::create(b, loc, b.getZeroAttr(word)));
  op.getResult().replaceAllUsesWith(tileOf(type, *regs));
  return success();
}

/// split_tail's hand-over through the launch's workspace: slot
/// blockIdx.x * consumers + consumer, word-major (word w of thread t at
/// w * 128 + t, so a warp's stores are contiguous), the flags after every
/// slot of the grid. Thread t of a slot reads what thread t wrote: the
/// same rows and columns.
LogicalResult AccumulatorLowering::lowerMergePieces(MergePiecesOp op) {
  auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
  Value workspace;
  for (BlockArgument arg :
       kernel ? kernel.getArguments() : ArrayRef<BlockArgument>())
    if (kernel.getArgAttr(arg.getArgNumber(), kWorkspaceArgAttrName))
      workspace = arg;
  if (!workspace)
    return op.emitOpError("expected its kernel to take the launch's "
                          "workspace (an argument marked ")
           << kWorkspaceArgAttrName
           << "; convert-tiledattn-to-nvgpu adds it for split_tail)";
  FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
  FailureOr<Regs> max = registersOf(op, op.getRowMax(), "row_max");
  FailureOr<Regs> sum = registersOf(op, op.getRowSum(), "row_sum");
  if (failed(acc) || failed(max) || failed(sum))
    return failure();
  int64_t nAcc = acc->size();
  Regs state = *acc;
  llvm::append_range(state, *max);
  llvm::append_range(state, *sum);
  int64_t words = state.size();
  // 32-bit arithmetic: 64-bit slot indices live across the tile loop
  // are what ptxas spilled (in the first split tail, thirty-third session).
  auto idx = [&](int64_t v) { return math.i32(v); };
  auto i32 = [&](Value index) -> Value {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulIOp::create(b, loc, x, y);
  };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value tid32 = i32(tid);
  Value local = arith::RemUIOp::create(b, loc, tid32, idx(128));
  // Warpgroup 0 is the producer.
  Value consumer = arith::SubIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tid32, idx(128)), idx(1));
  // Every warpgroup but the producer is a consumer. The kernel's known
  // block size makes their count a constant: a slot index then folds into
  // the address instead of living across the tile loop.
  Value consumers;
  if (std::optional<ArrayRef<int32_t>> size = kernel.getKnownBlockSize())
    consumers = idx((*size)[0] / 128 - 1);
  else
    consumers = arith::SubIOp::create(
        b, loc,
        arith::DivUIOp::create(
            b, loc, i32(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x)),
            idx(128)),
        idx(1));
  Value blockX = i32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = i32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  auto at = [&](Value index) -> Value {
    return LLVM::GEPOp::create(
        b, loc, workspace.getType(), b.getF32Type(), workspace,
        ValueRange{arith::ExtUIOp::create(b, loc, b.getI64Type(), index)});
  };
  auto slotOf = [&](Value block) {
    return add(mul(block, consumers), consumer);
  };
  // The thread's first word in a slot; word w is w * 128 floats on (a
  // constant offset, not an address of its own per word).
  auto wordsOf = [&](Value slot) {
    return at(add(mul(slot, idx(words * 128)), local));
  };
  auto word = [&](Value first, int64_t w) -> Value {
    return LLVM::GEPOp::create(b, loc, workspace.getType(), b.getF32Type(),
                               first, ArrayRef<LLVM::GEPArg>{w * 128});
  };
  auto flag = [&](Value slot) {
    return at(add(mul(mul(gridX, consumers), idx(words * 128)), slot));
  };
  Value issuer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, local, idx(0));
  auto release = LLVM::AtomicOrdering::release;
  Value writes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       i32(op.getFirst()), idx(0));
  ifThen(writes, [&] {
    Value slot = slotOf(blockX), first = wordsOf(slot);
    for (int64_t w = 0; w < words; ++w)
      LLVM::StoreOp::create(b, loc, state[w], word(first, w));
    LLVM::FenceOp::create(b, loc, release);
    syncWarpgroup(b, loc, tid);
    ifThen(issuer, [&] {
      LLVM::StoreOp::create(b, loc, math.i32(1), flag(slot), 4, false, false,
                            false, release);
    });
  });
  Value holdersBegin = add(blockX, idx(1));
  Value holders = i32(op.getHolders());
  Value holdersEnd = add(holdersBegin, holders);
  Value merges =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, holders, idx(0));
  math.changeIf(merges, state, [&](Regs &values) {
    auto loop =
        scf::ForOp::create(b, loc, holdersBegin, holdersEnd, idx(1), values);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value slot = slotOf(loop.getInductionVar()), first = wordsOf(slot);
      waitUntilFlagSet(b, loc, flag(slot));
      Regs mine(loop.getRegionIterArgs()), other;
      for (int64_t w = 0; w < words; ++w)
        other.push_back(
            LLVM::LoadOp::create(b, loc, b.getF32Type(), word(first, w)));
      // A slot holds O, then both row halves' maxima, then their sums.
      auto rowsOf = [&](ArrayRef<Value> state) {
        return RowState{{state[nAcc], state[nAcc + 1]},
                        {state[nAcc + 2], state[nAcc + 3]}};
      };
      Regs acc(mine.begin(), mine.begin() + nAcc);
      RowState st = rowsOf(mine);
      math.mergeState(acc, st, ArrayRef<Value>(other).take_front(nAcc),
                      rowsOf(other));
      mine = acc;
      mine.append({st.max[0], st.max[1], st.sum[0], st.sum[1]});
      scf::YieldOp::create(b, loc, mine);
    }
    values.assign(loop.getResults().begin(), loop.getResults().end());
    // Every thread has seen the flags: back to 0 for the next launch.
    syncWarpgroup(b, loc, tid);
    ifThen(issuer, [&] {
      auto zero = scf::ForOp::create(b, loc, holdersBegin, holdersEnd, idx(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(zero.getBody());
      LLVM::StoreOp::create(b, loc, math.i32(0),
                            flag(slotOf(zero.getInductionVar())));
    });
  });
  ArrayRef<Value> merged(state);
  op.getMergedAcc().replaceAllUsesWith(
      tileOf(op.getAcc().getType(), merged.take_front(nAcc)));
  op.getMergedMax().replaceAllUsesWith(
      tileOf(op.getRowMax().getType(), merged.slice(nAcc, 2)));
  op.getMergedSum().replaceAllUsesWith(
      tileOf(op.getRowSum().getType(), merged.slice(nAcc + 2, 2)));
  return success();
}

bool mlir::tiledattn::isAccumulatorOp(Operation *op) {
  // The cases of AccumulatorLowering::lower.
  return isa<MaskOp, ScoreModOp, OnlineSoftmaxOp, ScaleMaxOp, RescaleOp,
             ConstantOp, StoreOp, StoreTileOp, TmaStoreOp, FinishRowsOp,
             ReadRowsOp, ResizeOp, TruncateOp, MergePiecesOp, RowDotOp,
             StoreRowsOp, LoadRowsOp, ExpFromLseOp, SoftmaxGradOp, ReduceAddOp,
             BulkReduceAddOp, StageOp>(op);
}

LogicalResult mlir::tiledattn::lowerAccumulatorOp(Operation *op) {
  if (failed(AccumulatorLowering(op).lower(op)))
    return failure();
  op->erase();
  return success();
}
