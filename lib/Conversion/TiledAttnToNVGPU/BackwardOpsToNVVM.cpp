//===- BackwardOpsToNVVM.cpp - The backward's accumulator ops ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The backward's tile ops on a warpgroup's wgmma accumulator registers, for
// tiledattn-lower-mma: tiledattn.row_dot, exp_from_lse and softmax_grad (P
// and dS from the forward's lse and the rows' D), store_rows, reduce_add and
// bulk_reduce_add (atomic adds into global memory), store_tile, and stage
// (a tile into shared memory as an mma's operand). Members of
// AccumulatorLowering (AccumulatorLowering.h), as the forward's ops in
// AccumulatorOpsToNVVM.cpp are.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::accumulators;

/// `body(r, row)` for each of the thread's row halves r (row g + 8r, from
/// threadRowBase) that is below `seq`, under its own scf.if.
void AccumulatorLowering::forEachRowInside(
    Value rowBase, Value seq, function_ref<void(int, Value)> body) {
  for (int r = 0; r < 2; ++r) {
    // (a pair, not a structured binding: C++17 lambdas cannot capture one)
    std::pair<Value, Value> at = threadRow(rowBase, seq, r);
    ifThen(at.second, [&] { body(r, at.first); });
  }
}

/// The rows' dot products, two a thread (rows g and g + 8 of its warp's
/// 16): its own products summed pairwise, then over the quad. An
/// accumulator's register 4i + h is in row half h / 2; an A word w (two
/// 16-bit elements) in row half w % 2 (the fragment order).
LogicalResult AccumulatorLowering::lowerRowDot(RowDotOp op) {
  FailureOr<Regs> lhs = registersOf(op, op.getLhs(), "lhs");
  FailureOr<Regs> rhs = registersOf(op, op.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  Type element = op.getLhs().getType().getElementType();
  Regs products[2];
  for (size_t i = 0; i < lhs->size(); ++i) {
    if (element.isF32()) {
      products[(i % 4) / 2].push_back(math.fmul((*lhs)[i], (*rhs)[i]));
      continue;
    }
    std::array<Value, 2> a = math.unpack((*lhs)[i], element);
    std::array<Value, 2> c = math.unpack((*rhs)[i], element);
    for (int e = 0; e < 2; ++e)
      products[i % 2].push_back(math.fmul(a[e], c[e]));
  }
  Value rows[2];
  for (int r = 0; r < 2; ++r)
    rows[r] = quadSum(math.treeReduce(
        products[r], [&](Value x, Value y) { return math.fadd(x, y); }));
  op.getResult().replaceAllUsesWith(tileOf(op.getType(), rows));
  return success();
}

/// Which of savedValues' entries register r of an accumulator tile takes:
/// r is in row g + 8 ((r % 4) / 2) and column 8 (r / 4) + 2 quad + r % 2.
size_t AccumulatorLowering::savedValueOf(size_t r, bool perRow) {
  return perRow ? (r % 4) / 2 : 2 * (r / 4) + r % 2;
}

/// The entries of `vector` ([B, H, S] f32) at the rows (`perRow`) or
/// columns, from `first`, that this thread holds in a 64 x `cols`
/// accumulator tile, each once (savedValueOf says which a register
/// takes): 2 rows or cols / 4 columns. An entry at or past S gets
/// `outside`; the load reads index 0 there, so the lowering has no branch.
Regs AccumulatorLowering::savedValues(Value vector, Value batch, Value head,
                                      Value first, int64_t cols, bool perRow,
                                      Value outside) {
  AccumulatorPlace p = place();
  Value seq = memref::DimOp::create(b, loc, vector, idx(2));
  Regs values;
  auto read = [&](Value at) {
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, seq);
    Value safe = arith::SelectOp::create(b, loc, inside, at, idx(0));
    Value v =
        memref::LoadOp::create(b, loc, vector, ValueRange{batch, head, safe});
    values.push_back(arith::SelectOp::create(b, loc, inside, v, outside));
  };
  if (perRow) {
    Value base = threadRowBase(p, first);
    read(base);
    read(add(base, idx(8)));
    return values;
  }
  Value base = add(first, arith::MulIOp::create(b, loc, p.quad, idx(2)));
  for (int64_t k = 0; k < cols / 8; ++k)
    for (int64_t e = 0; e < 2; ++e)
      read(add(base, idx(8 * k + e)));
  return values;
}

/// The saved values an accumulator tile `tile` takes from `saved`: read
/// from the memref at (batch, head, first), or the rows that
/// tiledattn.load_rows read (per row: two registers).
FailureOr<Regs> AccumulatorLowering::savedRows(Operation *op, Value saved,
                                               Value batch, Value head,
                                               Value first, Value tile,
                                               bool perRow, Value outside) {
  if (isa<TileType>(saved.getType()))
    return registersOf(op, saved, "rows");
  return savedValues(saved, batch, head, first,
                     cast<TileType>(tile.getType()).getNumCols(), perRow,
                     outside);
}

/// The rows at or past S read `outside`.
LogicalResult AccumulatorLowering::lowerLoadRows(LoadRowsOp op) {
  Regs rows = savedValues(op.getSource(), op.getBatch(), op.getHead(),
                          op.getRow(), /*cols=*/0, /*perRow=*/true,
                          math.f32(op.getOutside().convertToFloat()));
  op.getRows().replaceAllUsesWith(tileOf(op.getType(), rows));
  return success();
}

/// P = exp2(scale log2(e) s - lse log2(e)). An lse of -inf (a query that
/// saw no key) and a query past S give -lse log2(e) = -inf, so P = 0.
LogicalResult AccumulatorLowering::lowerExpFromLse(ExpFromLseOp op) {
  FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
  if (failed(scores))
    return failure();
  Value minusInf = math.f32(-std::numeric_limits<float>::infinity());
  FailureOr<Regs> lse =
      savedRows(op, op.getLse(), op.getBatch(), op.getHead(), op.getCol(),
                op.getScores(), op.getPerRow(), minusInf);
  if (failed(lse))
    return failure();
  Value minusLog2e = math.f32(-1.4426950408889634074);
  for (Value &v : *lse) {
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, minusInf);
    v = arith::SelectOp::create(b, loc, empty, minusInf,
                                math.fmul(v, minusLog2e));
  }
  Value factor = timesLog2E(op.getScale());
  for (auto [r, s] : llvm::enumerate(*scores))
    s = math.exp2(math.fma(s, factor, (*lse)[savedValueOf(r, op.getPerRow())]));
  op.getResult().replaceAllUsesWith(tileOf(op.getType(), *scores));
  return success();
}

/// dS = P (dP - D), D per query (0 past S, where P is 0).
LogicalResult AccumulatorLowering::lowerSoftmaxGrad(SoftmaxGradOp op) {
  FailureOr<Regs> probs = registersOf(op, op.getProbs(), "probs");
  FailureOr<Regs> grad = registersOf(op, op.getGrad(), "grad");
  if (failed(probs) || failed(grad))
    return failure();
  FailureOr<Regs> delta =
      savedRows(op, op.getDelta(), op.getBatch(), op.getHead(), op.getCol(),
                op.getProbs(), op.getPerRow(), math.f32(0.0));
  if (failed(delta))
    return failure();
  Regs result;
  for (size_t r = 0; r < probs->size(); ++r) {
    Value ds = math.fmul(
        (*probs)[r],
        math.fsub((*grad)[r], (*delta)[savedValueOf(r, op.getPerRow())]));
    result.push_back(op.getScale() ? math.fmul(ds, op.getScale()) : ds);
  }
  op.getResult().replaceAllUsesWith(tileOf(op.getType(), result));
  return success();
}

/// Quad lane 0 stores its two rows where they are inside dest.
LogicalResult AccumulatorLowering::lowerStoreRows(StoreRowsOp op) {
  FailureOr<Regs> rows = registersOf(op, op.getRows(), "rows");
  if (failed(rows))
    return failure();
  AccumulatorPlace p = place();
  Value seq = memref::DimOp::create(b, loc, op.getDest(), idx(2));
  Value rowBase = threadRowBase(p, op.getRow());
  Value lead =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, p.quad, idx(0));
  ifThen(lead, [&] {
    forEachRowInside(rowBase, seq, [&](int r, Value row) {
      memref::StoreOp::create(b, loc, (*rows)[r], op.getDest(),
                              ValueRange{op.getBatch(), op.getHead(), row});
    });
  });
  return success();
}

/// Each register added atomically where its row is inside dest: register
/// 4i + h is in row g + 8 (h / 2) of the thread's warp and column 8i + 2
/// quad + h % 2.
LogicalResult AccumulatorLowering::lowerReduceAdd(ReduceAddOp op) {
  FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
  if (failed(acc))
    return failure();
  AccumulatorPlace p = place();
  Value seq = memref::DimOp::create(b, loc, op.getDest(), idx(2));
  Value rowBase = threadRowBase(p, op.getRow());
  Value col = arith::MulIOp::create(b, loc, p.quad, idx(2));
  forEachRowInside(rowBase, seq, [&](int r, Value row) {
    for (size_t i = 0; i < acc->size(); ++i) {
      if ((i % 4) / 2 != static_cast<size_t>(r))
        continue;
      Value c = add(col, idx(8 * (i / 4) + i % 2));
      memref::AtomicRMWOp::create(
          b, loc, arith::AtomicRMWKind::addf, (*acc)[i], op.getDest(),
          ValueRange{op.getBatch(), op.getHead(), row, c});
    }
  });
  return success();
}

/// The registers into the stage in their own order (pair j of thread t
/// at byte 8 (128 j + t)), then one thread's bulk reduction of the block
/// into dest; first that thread's previous bulk copies must have read
/// the stage.
LogicalResult AccumulatorLowering::lowerBulkReduceAdd(BulkReduceAddOp op) {
  FailureOr<std::pair<Regs, Value>> operands = accAndStage(op);
  if (failed(operands))
    return failure();
  Regs &acc = operands->first;
  Value address = operands->second;
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  AccumulatorPlace p = place();
  Value lead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     p.localTid, idx(0));
  ifThen(lead, [&] {
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         b.getUnitAttr());
  });
  syncWarpgroup(b, loc, tid);
  auto shared = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto pair = VectorType::get({2}, b.getF32Type());
  for (size_t j = 0; 2 * j < acc.size(); ++j) {
    Value at = add(address, arith::MulIOp::create(
                                b, loc, add(p.localTid, idx(128 * j)), idx(8)));
    Value pointer = LLVM::IntToPtrOp::create(
        b, loc, shared,
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), at).getResult());
    Value values = vector::FromElementsOp::create(
        b, loc, pair, ValueRange{acc[2 * j], acc[2 * j + 1]});
    LLVM::StoreOp::create(b, loc, values, pointer, /*alignment=*/8);
  }
  fenceProxyAsyncShared(b, loc); // the stores before the TMA unit reads
  syncWarpgroup(b, loc, tid);
  int64_t bytes = 4 * int64_t(acc.size()) * 128;
  ifThen(lead, [&] {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, op.getDest());
    Value element = meta.getOffset();
    Value coords[] = {op.getBatch(), op.getHead(), op.getBlock()};
    for (auto [i, c] : llvm::enumerate(coords))
      element =
          add(element, arith::MulIOp::create(b, loc, c, meta.getStrides()[i]));
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, op.getDest());
    Value global = add(base, arith::MulIOp::create(b, loc, element, idx(4)));
    Value asmOperands[] = {
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), global),
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), address),
        arith::ConstantIntOp::create(b, loc, bytes, 32)};
    LLVM::InlineAsmOp::create(
        b, loc, TypeRange(), asmOperands,
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 "
        "[$0], [$1], $2;",
        "l,r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  });
  return success();
}

/// The rows below S as they are.
LogicalResult AccumulatorLowering::lowerStoreTile(StoreTileOp op) {
  FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
  if (failed(acc))
    return failure();
  AccumulatorPlace p = place();
  Value seq = memref::DimOp::create(b, loc, op.getDest(), idx(2));
  Value col0 = arith::MulIOp::create(b, loc, p.quad, idx(2));
  if (Value col = op.getCol())
    col0 = add(col0, col);
  forEachRowInside(threadRowBase(p, op.getRow()), seq, [&](int r, Value row) {
    storeRowPairs(*acc, op.getAcc().getType(), op.getDest(), op.getBatch(),
                  op.getHead(), row, r, col0, Value());
  });
  return success();
}

/// The rows by storeMatrices, then fenced for the async proxy (the
/// tensor cores read them) and the warpgroup synced (each thread's mma
/// reads every thread's rows).
LogicalResult AccumulatorLowering::lowerStage(StageOp op) {
  FailureOr<std::pair<Regs, Value>> operands = accAndStage(op);
  if (failed(operands))
    return failure();
  Regs &acc = operands->first;
  Value address = operands->second;
  AccumulatorPlace p = place();
  storeMatrices(p, acc, op.getStage(), address, op.getStageRow(),
                op.getAcc().getType().getNumCols(), nullptr, op.getStageCol());
  fenceProxyAsyncShared(b, loc);
  syncWarpgroup(b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  return success();
}
