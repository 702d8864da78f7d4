//===- AccumulatorOpsToNVVM.cpp - Tile ops on accumulators ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile ops on a warpgroup's wgmma accumulator registers, for
// tiledattn-lower-mma: tiledattn.constant, mask, score_mod, online_softmax (P
// packed into an mma's A words), rescale and store, with
// convert-sdpa-to-hopper's code (AccumulatorMath). Register tiles arrive and
// leave as casts of their structs.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorOps.h"
#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "tiledattn/Conversion/WgmmaHelpers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tiledattn;

Value mlir::tiledattn::castSource(Value v) {
  auto cast = v.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1)
    return {};
  return cast.getOperand(0);
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

namespace {
class AccumulatorLowering {
public:
  AccumulatorLowering(Operation *op) : b(op) {}

  LogicalResult lower(Operation *op) {
    loc = op->getLoc();
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](MaskOp mask) { return lowerMask(mask); })
        .Case([&](ScoreModOp mod) { return lowerScoreMod(mod); })
        .Case([&](OnlineSoftmaxOp softmax) {
          return lowerOnlineSoftmax(softmax);
        })
        .Case([&](RescaleOp rescale) { return lowerRescale(rescale); })
        .Case([&](ConstantOp constant) { return lowerConstant(constant); })
        .Case([&](StoreOp store) { return lowerStore(store); });
  }

private:
  OpBuilder b;
  Location loc = b.getUnknownLoc();
  /// The online softmax's scale * log2(e), set per op.
  Value scaleLog2;
  /// Row maxima as the op defines them: of scale * log2(e) * s.
  AccumulatorMath math{b, loc, scaleLog2,
                       SoftmaxOptions{/*conditionalRescale=*/false,
                                      /*exp2OnFma=*/0, /*rowSumMma=*/false,
                                      /*scaledMaxima=*/true}};

  /// The thread's registers of a lowered f32 tile (an accumulator or a
  /// row vector).
  FailureOr<Regs> registersOf(Operation *op, Value tile, StringRef name) {
    auto tileType = cast<TileType>(tile.getType());
    if (tileType.getNumRows() != kWarpgroupRows)
      return op->emitOpError("expected ")
             << name << " to be a warpgroup's tile of 64 rows, but got "
             << tileType;
    int64_t n = cast<LLVM::LLVMStructType>(*warpgroupRegisters(tileType))
                    .getBody()
                    .size();
    Value regs = loweredRegisters(tile);
    if (!regs)
      return op->emitOpError("expected ")
             << name << " to be a lowered accumulator tile (a cast of a "
             << "struct of " << n << " f32 per thread)";
    Regs values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(LLVM::ExtractValueOp::create(b, loc, regs, i));
    return values;
  }

  /// `values` back into a struct, cast to `type`.
  Value tileOf(Type type, ArrayRef<Value> values) {
    Value s = LLVM::UndefOp::create(
        b, loc,
        LLVM::LLVMStructType::getLiteral(
            b.getContext(), llvm::to_vector(ValueRange(values).getTypes())));
    for (auto [i, v] : llvm::enumerate(values))
      s = LLVM::InsertValueOp::create(b, loc, s, v, i);
    return UnrealizedConversionCastOp::create(b, loc, type, s).getResult(0);
  }

  /// The thread's place in the accumulator layout.
  AccumulatorPlace place() {
    return math.place(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  }

  LogicalResult lowerMask(MaskOp op) {
    auto type = cast<TileType>(op.getScores().getType());
    FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
    if (failed(scores))
      return failure();
    AccumulatorPlace p = place();
    auto add = [&](Value a, Value c) -> Value {
      return arith::AddIOp::create(b, loc, a, c);
    };
    Value rowBase = add(op.getRow(), add(p.warpRow, p.group));
    auto firstKey = [&] {
      return add(op.getCol(), arith::MulIOp::create(
                                  b, loc, p.quad,
                                  arith::ConstantIndexOp::create(b, loc, 2)));
    };
    BlockMask mask{firstKey, rowBase, op.getSeqlenK(), op.getCausal()};
    math.mask(*scores, mask);
    op.getResult().replaceAllUsesWith(tileOf(type, *scores));
    return success();
  }

  /// A 64-row vector's two rows, as a RowState half.
  LogicalResult rowsOf(Operation *op, Value tile, StringRef name,
                       Value (&rows)[2]) {
    FailureOr<Regs> regs = registersOf(op, tile, name);
    if (failed(regs))
      return failure();
    rows[0] = (*regs)[0];
    rows[1] = (*regs)[1];
    return success();
  }

  /// The op's every row may have seen only -inf (it says so), so the guard
  /// is always on; P is packed into the words of an mma's A.
  LogicalResult lowerOnlineSoftmax(OnlineSoftmaxOp op) {
    auto type = cast<TileType>(op.getScores().getType());
    FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
    if (failed(scores))
      return failure();
    RowState st;
    if (failed(rowsOf(op, op.getRowMax(), "row_max", st.max)) ||
        failed(rowsOf(op, op.getRowSum(), "row_sum", st.sum)))
      return failure();
    scaleLog2 = math.fmul(op.getScale(), math.f32(1.4426950408889634));
    Value rescale[2];
    math.softmax(*scores, st, /*mask=*/nullptr, rescale, Value(),
                 /*mayBeMasked=*/true);
    auto probsType = cast<TileType>(op.getProbs().getType());
    Regs words = math.pack(*scores, probsType.getElementType());
    op.getProbs().replaceAllUsesWith(tileOf(probsType, words));
    Type rowType = op.getNewRowMax().getType();
    op.getNewRowMax().replaceAllUsesWith(tileOf(rowType, st.max));
    op.getNewRowSum().replaceAllUsesWith(tileOf(rowType, st.sum));
    op.getRescale().replaceAllUsesWith(tileOf(rowType, rescale));
    return success();
  }

  /// A warpgroup's f32 tile of one value: the thread's registers of it.
  LogicalResult lowerConstant(ConstantOp op) {
    auto type = cast<TileType>(op.getType());
    if (type.getNumRows() != kWarpgroupRows)
      return op.emitOpError("expected a warpgroup's tile of 64 rows, but "
                            "got ")
             << type;
    int64_t n =
        cast<LLVM::LLVMStructType>(*warpgroupRegisters(type)).getBody().size();
    Value value = arith::ConstantOp::create(b, loc, op.getValueAttr());
    op.getResult().replaceAllUsesWith(
        tileOf(type, SmallVector<Value>(n, value)));
    return success();
  }

  /// The row sums are the thread's part (a quarter of each row's keys, as
  /// the online softmax leaves them): the quad adds them. Rows past the
  /// sequence are not written; an empty row (sum 0) stores zeros and an lse
  /// of -inf; lanes with quad 0 store the lse.
  LogicalResult lowerStore(StoreOp op) {
    auto type = cast<TileType>(op.getAcc().getType());
    FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
    if (failed(acc))
      return failure();
    RowState st;
    if (failed(rowsOf(op, op.getRowMax(), "row_max", st.max)) ||
        failed(rowsOf(op, op.getRowSum(), "row_sum", st.sum)))
      return failure();
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto ifThen = [&](Value cond, function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body();
    };
    AccumulatorPlace p = place();
    Value dest = op.getDest();
    Type elementType = cast<MemRefType>(dest.getType()).getElementType();
    Value seqQ = memref::DimOp::create(b, loc, dest, idx(2));
    Value rowBase = arith::AddIOp::create(
        b, loc, op.getRow(), arith::AddIOp::create(b, loc, p.warpRow, p.group));
    Value col0 = arith::MulIOp::create(b, loc, p.quad, idx(2));
    Value zero = math.f32(0.0),
          negInf = math.f32(-std::numeric_limits<float>::infinity());
    auto pairType = VectorType::get({2}, elementType);
    for (int r = 0; r < 2; ++r) {
      Value sum = st.sum[r];
      for (int64_t x : {1, 2})
        sum = math.fadd(sum, gpu::ShuffleOp::create(b, loc, sum, math.i32(x),
                                                    math.i32(32),
                                                    gpu::ShuffleMode::XOR)
                                 .getShuffleResult());
      Value empty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
      Value inv = arith::SelectOp::create(
          b, loc, empty, zero,
          arith::DivFOp::create(b, loc, math.f32(1.0), sum));
      Value row = arith::AddIOp::create(b, loc, rowBase, idx(8 * r));
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, seqQ);
      ifThen(inside, [&] {
        for (int64_t i = 0; i < type.getNumCols() / 8; ++i) {
          Value lo = arith::TruncFOp::create(
              b, loc, elementType, math.fmul((*acc)[4 * i + 2 * r], inv));
          Value hi = arith::TruncFOp::create(
              b, loc, elementType, math.fmul((*acc)[4 * i + 2 * r + 1], inv));
          Value pair = vector::FromElementsOp::create(b, loc, pairType,
                                                      ValueRange{lo, hi});
          Value col = arith::AddIOp::create(b, loc, col0, idx(8 * i));
          vector::StoreOp::create(
              b, loc, pair, dest,
              ValueRange{op.getBatch(), op.getHead(), row, col});
        }
        if (!op.getLse())
          return;
        Value lead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           p.quad, idx(0));
        ifThen(lead, [&] {
          // lse = ln(sum_j exp(scale * s_ij)) = (m + log2 l) * ln 2.
          Value lse = math.fmul(math.fadd(st.max[r], math.log2(sum)),
                                math.f32(0.69314718055994530942));
          lse = arith::SelectOp::create(b, loc, empty, negInf, lse);
          memref::StoreOp::create(b, loc, lse, op.getLse(),
                                  ValueRange{op.getBatch(), op.getHead(), row});
        });
      });
    }
    return success();
  }

  /// The body once per register: register 4i + h of a thread holds row
  /// rowBase + 8 * (h / 2) and key colBase + 8i + h % 2 (as lowerMask).
  LogicalResult lowerScoreMod(ScoreModOp op) {
    auto type = cast<TileType>(op.getScores().getType());
    FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
    if (failed(scores))
      return failure();
    AccumulatorPlace p = place();
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto add = [&](Value a, Value c) -> Value {
      return arith::AddIOp::create(b, loc, a, c);
    };
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

  LogicalResult lowerRescale(RescaleOp op) {
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
};
} // namespace

LogicalResult mlir::tiledattn::lowerAccumulatorOp(Operation *op) {
  if (failed(AccumulatorLowering(op).lower(op)))
    return failure();
  op->erase();
  return success();
}
