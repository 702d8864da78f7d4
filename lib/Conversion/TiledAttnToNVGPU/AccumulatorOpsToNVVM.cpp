//===- AccumulatorOpsToNVVM.cpp - Tile ops on accumulators ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile ops on a warpgroup's wgmma accumulator registers, for
// tiledattn-lower-mma: tiledattn.constant, mask, score_mod, online_softmax (P
// packed into an mma's A words), rescale, store and tma_store (its rows
// into the stage; tiledattn-lower-rings issued the copy), the backward's
// row_dot and store_rows, with
// convert-sdpa-to-hopper's code (AccumulatorMath). Register tiles arrive and
// leave as casts of their structs.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorOps.h"
#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

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

namespace {
class AccumulatorLowering {
public:
  AccumulatorLowering(Operation *op) : b(op) {}

  /// Its cases are isAccumulatorOp's.
  LogicalResult lower(Operation *op) {
    loc = op->getLoc();
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](MaskOp mask) { return lowerMask(mask); })
        .Case([&](ScoreModOp mod) { return lowerScoreMod(mod); })
        .Case([&](ScaleMaxOp scale) { return lowerScaleMax(scale); })
        .Case([&](OnlineSoftmaxOp softmax) {
          return lowerOnlineSoftmax(softmax);
        })
        .Case([&](RescaleOp rescale) { return lowerRescale(rescale); })
        .Case([&](ConstantOp constant) { return lowerConstant(constant); })
        .Case([&](StoreOp store) { return lowerStore(store); })
        .Case([&](StoreTileOp store) { return lowerStoreTile(store); })
        .Case([&](TmaStoreOp store) { return lowerTmaStore(store); })
        .Case([&](FinishRowsOp finish) { return lowerFinishRows(finish); })
        .Case([&](ReadRowsOp read) { return lowerReadRows(read); })
        .Case([&](ResizeOp resize) { return lowerResize(resize); })
        .Case([&](TruncateOp truncate) { return lowerTruncate(truncate); })
        .Case([&](MergePiecesOp merge) { return lowerMergePieces(merge); })
        .Case([&](RowDotOp dot) { return lowerRowDot(dot); })
        .Case([&](StoreRowsOp store) { return lowerStoreRows(store); })
        .Case([&](ExpFromLseOp exp) { return lowerExpFromLse(exp); })
        .Case([&](SoftmaxGradOp grad) { return lowerSoftmaxGrad(grad); })
        .Case([&](ReduceAddOp add) { return lowerReduceAdd(add); })
        .Case([&](BulkReduceAddOp add) { return lowerBulkReduceAdd(add); })
        .Case([&](StageOp stage) { return lowerStage(stage); });
  }

private:
  OpBuilder b;
  Location loc = b.getUnknownLoc();
  /// The online softmax's scale * log2(e), set per op.
  Value scaleLog2;
  /// Row maxima as the op defines them: of scale * log2(e) * s (of s with
  /// online_softmax's raw_max, set per op).
  AccumulatorMath math{b, loc, scaleLog2,
                       SoftmaxOptions{/*conditionalRescale=*/false,
                                      /*exp2OnFma=*/0, /*rowSumMma=*/false,
                                      /*scaledMaxima=*/true,
                                      /*exp2OnFmaMasked=*/true}};

  /// The thread's registers of a lowered tile (an accumulator, a row
  /// vector, or an mma's A words).
  FailureOr<Regs> registersOf(Operation *op, Value tile, StringRef name) {
    auto tileType = cast<TileType>(tile.getType());
    if (tileType.getNumRows() != kWarpgroupRows)
      return op->emitOpError("expected ")
             << name << " to be a warpgroup's tile of 64 rows, but got "
             << tileType;
    ArrayRef<Type> words =
        cast<LLVM::LLVMStructType>(*warpgroupRegisters(tileType)).getBody();
    int64_t n = words.size();
    Value regs = loweredRegisters(tile);
    if (!regs) {
      bool f32 = words.front().isF32();
      return op->emitOpError("expected ")
             << name << " to be a lowered "
             << (f32 ? "accumulator tile" : "tile of mma A words")
             << " (a cast of a struct of " << n << (f32 ? " f32" : " i32")
             << " per thread)";
    }
    Regs values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(LLVM::ExtractValueOp::create(b, loc, regs, i));
    return values;
  }

  /// The accumulator registers and the stage's shared-memory address of an
  /// op that writes its `acc` into a `stage` (stage, tma_store,
  /// bulk_reduce_add).
  template <typename OpT>
  FailureOr<std::pair<Regs, Value>> accAndStage(OpT op) {
    FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
    if (failed(acc))
      return failure();
    FailureOr<Value> address = sharedAddressOf(op, op.getStage(), "stage");
    if (failed(address))
      return failure();
    return std::make_pair(std::move(*acc), *address);
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

  /// A row may have seen only -inf unless the op is `finite`, so the guard
  /// is on without it; P is packed into the words of an mma's A.
  LogicalResult lowerOnlineSoftmax(OnlineSoftmaxOp op) {
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
            : tileOf(probsType,
                     math.pack(*scores, probsType.getElementType())));
    Type rowType = op.getNewRowMax().getType();
    op.getNewRowMax().replaceAllUsesWith(tileOf(rowType, st.max));
    op.getNewRowSum().replaceAllUsesWith(tileOf(rowType, st.sum));
    op.getRescale().replaceAllUsesWith(tileOf(rowType, rescale));
    return success();
  }

  /// scale * log2(e): the factor from scores to exp2's arguments.
  Value timesLog2E(Value scale) {
    return math.fmul(scale, math.f32(1.4426950408889634));
  }

  /// Raw maxima times scale * log2(e): -inf stays -inf (scale > 0).
  LogicalResult lowerScaleMax(ScaleMaxOp op) {
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

  /// What storing O needs of each of the thread's two rows (r = 0, 1:
  /// row group and group + 8 of its warp's 16).
  struct FinishedRow {
    int r;
    /// 1 / l (0 for an empty row), and whether the row is inside `dest`.
    Value inv, inside;
    /// Its index in dest; its max, whole sum, and whether the sum is 0.
    Value row, max, sum, empty;
  };

  /// The row sums are the thread's part (a quarter of each row's keys, as
  /// the online softmax leaves them): the quad adds them. An empty row (sum
  /// 0) takes 1 / l = 0, so its O is zeros, and an lse of -inf. `each`,
  /// if given, runs once a row is finished, before the next.
  /// `rowsIn`: the memref whose dimension 2 counts the rows (O or lse).
  template <typename StoreOpT>
  FailureOr<std::array<FinishedRow, 2>>
  finishRows(StoreOpT op, const AccumulatorPlace &p, Value rowsIn,
             function_ref<void(const FinishedRow &)> each = nullptr) {
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
          b, loc, empty, zero,
          arith::DivFOp::create(b, loc, math.f32(1.0), sum));
      std::tie(f.row, f.inside) = threadRow(rowBase, seqQ, r);
      if (each)
        each(f);
    }
    return rows;
  }

  /// The thread's first row (g of its warp's 16) in a tile from `firstRow`.
  Value threadRowBase(const AccumulatorPlace &p, Value firstRow) {
    return add(firstRow, add(p.warpRow, p.group));
  }

  /// The thread's row half `r` (row g + 8r, from threadRowBase) and whether
  /// it is below `seq` (the rows there are).
  std::pair<Value, Value> threadRow(Value rowBase, Value seq, int r) {
    Value row = add(rowBase, idx(8 * r));
    return {row,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, seq)};
  }

  /// `body(r, row)` for each of the thread's row halves r (row g + 8r, from
  /// threadRowBase) that is below `seq`, under its own scf.if.
  void forEachRowInside(Value rowBase, Value seq,
                        function_ref<void(int, Value)> body) {
    for (int r = 0; r < 2; ++r) {
      // (a pair, not a structured binding: C++17 lambdas cannot capture one)
      std::pair<Value, Value> at = threadRow(rowBase, seq, r);
      ifThen(at.second, [&] { body(r, at.first); });
    }
  }

  /// The sum of `part` over the quad (the four threads that share a row).
  Value quadSum(Value part) {
    for (int64_t x : {1, 2})
      part = math.fadd(part, gpu::ShuffleOp::create(b, loc, part, math.i32(x),
                                                    math.i32(32),
                                                    gpu::ShuffleMode::XOR)
                                 .getShuffleResult());
    return part;
  }

  /// The rows' dot products, two a thread (rows g and g + 8 of its warp's
  /// 16): its own products summed pairwise, then over the quad. An
  /// accumulator's register 4i + h is in row half h / 2; an A word w (two
  /// 16-bit elements) in row half w % 2 (the fragment order).
  LogicalResult lowerRowDot(RowDotOp op) {
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
  static size_t savedValueOf(size_t r, bool perRow) {
    return perRow ? (r % 4) / 2 : 2 * (r / 4) + r % 2;
  }

  /// The entries of `vector` ([B, H, S] f32) at the rows (`perRow`) or
  /// columns, from `first`, that this thread holds in a 64 x `cols`
  /// accumulator tile, each once (savedValueOf says which a register
  /// takes): 2 rows or cols / 4 columns. An entry at or past S gets
  /// `outside`; the load reads index 0 there, so the lowering has no branch.
  Regs savedValues(Value vector, Value batch, Value head, Value first,
                   int64_t cols, bool perRow, Value outside) {
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

  /// P = exp2(scale log2(e) s - lse log2(e)). An lse of -inf (a query that
  /// saw no key) and a query past S give -lse log2(e) = -inf, so P = 0.
  LogicalResult lowerExpFromLse(ExpFromLseOp op) {
    FailureOr<Regs> scores = registersOf(op, op.getScores(), "scores");
    if (failed(scores))
      return failure();
    Value minusInf = math.f32(-std::numeric_limits<float>::infinity());
    Regs lse = savedValues(op.getLse(), op.getBatch(), op.getHead(),
                           op.getCol(), op.getScores().getType().getNumCols(),
                           op.getPerRow(), minusInf);
    Value minusLog2e = math.f32(-1.4426950408889634074);
    for (Value &v : lse) {
      Value empty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, minusInf);
      v = arith::SelectOp::create(b, loc, empty, minusInf,
                                  math.fmul(v, minusLog2e));
    }
    Value factor = timesLog2E(op.getScale());
    for (auto [r, s] : llvm::enumerate(*scores))
      s = math.exp2(math.fma(s, factor, lse[savedValueOf(r, op.getPerRow())]));
    op.getResult().replaceAllUsesWith(tileOf(op.getType(), *scores));
    return success();
  }

  /// dS = P (dP - D), D per query (0 past S, where P is 0).
  LogicalResult lowerSoftmaxGrad(SoftmaxGradOp op) {
    FailureOr<Regs> probs = registersOf(op, op.getProbs(), "probs");
    FailureOr<Regs> grad = registersOf(op, op.getGrad(), "grad");
    if (failed(probs) || failed(grad))
      return failure();
    Regs delta = savedValues(op.getDelta(), op.getBatch(), op.getHead(),
                             op.getCol(), op.getProbs().getType().getNumCols(),
                             op.getPerRow(), math.f32(0.0));
    Regs result;
    for (size_t r = 0; r < probs->size(); ++r) {
      Value ds = math.fmul(
          (*probs)[r],
          math.fsub((*grad)[r], delta[savedValueOf(r, op.getPerRow())]));
      result.push_back(op.getScale() ? math.fmul(ds, op.getScale()) : ds);
    }
    op.getResult().replaceAllUsesWith(tileOf(op.getType(), result));
    return success();
  }

  /// Quad lane 0 stores its two rows where they are inside dest.
  LogicalResult lowerStoreRows(StoreRowsOp op) {
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
  LogicalResult lowerReduceAdd(ReduceAddOp op) {
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
  LogicalResult lowerBulkReduceAdd(BulkReduceAddOp op) {
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
      Value at = add(
          address,
          arith::MulIOp::create(b, loc, add(p.localTid, idx(128 * j)), idx(8)));
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
      auto meta =
          memref::ExtractStridedMetadataOp::create(b, loc, op.getDest());
      Value element = meta.getOffset();
      Value coords[] = {op.getBatch(), op.getHead(), op.getBlock()};
      for (auto [i, c] : llvm::enumerate(coords))
        element = add(element,
                      arith::MulIOp::create(b, loc, c, meta.getStrides()[i]));
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

  /// Quad 0 stores the row's lse (where the row is inside dest).
  template <typename StoreOpT>
  void storeLse(StoreOpT op, const AccumulatorPlace &p, const FinishedRow &f) {
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

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  void ifThen(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  /// Rows past the sequence are not written.
  LogicalResult lowerStore(StoreOp op) {
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

  /// Row half r of the thread's registers of a 64 x N accumulator tile
  /// into dest's `row`, times `inv` if given, two elements a store from
  /// column `col0` (2 quad) on; columns past a static head dim of dest (a
  /// padded tile) are not stored.
  void storeRowPairs(const Regs &acc, TileType type, Value dest, Value batch,
                     Value head, Value row, int r, Value col0, Value inv) {
    auto destType = cast<MemRefType>(dest.getType());
    Type elementType = destType.getElementType();
    auto pairType = VectorType::get({2}, elementType);
    int64_t destCols = destType.getShape()[3]; // (dynamic: a capture)
    int64_t cols = ShapedType::isDynamic(destCols)
                       ? type.getNumCols()
                       : std::min(type.getNumCols(), destCols);
    for (int64_t i = 0; i < cols / 8; ++i) {
      Value halves[2];
      for (int e = 0; e < 2; ++e) {
        Value v = acc[4 * i + 2 * r + e];
        halves[e] = arith::TruncFOp::create(b, loc, elementType,
                                            inv ? math.fmul(v, inv) : v);
      }
      Value pair = vector::FromElementsOp::create(b, loc, pairType, halves);
      Value col = arith::AddIOp::create(b, loc, col0, idx(8 * i));
      vector::StoreOp::create(b, loc, pair, dest,
                              ValueRange{batch, head, row, col});
    }
  }

  /// The rows below S as they are.
  LogicalResult lowerStoreTile(StoreTileOp op) {
    FailureOr<Regs> acc = registersOf(op, op.getAcc(), "acc");
    if (failed(acc))
      return failure();
    AccumulatorPlace p = place();
    Value seq = memref::DimOp::create(b, loc, op.getDest(), idx(2));
    Value col0 = arith::MulIOp::create(b, loc, p.quad, idx(2));
    forEachRowInside(threadRowBase(p, op.getRow()), seq, [&](int r, Value row) {
      storeRowPairs(*acc, op.getAcc().getType(), op.getDest(), op.getBatch(),
                    op.getHead(), row, r, col0, Value());
    });
    return success();
  }

  /// The lane's addressing of an ldmatrix.x4 / stmatrix.x4 on its warp's 16
  /// rows of a 128-byte-swizzled !tiledattn.smem tile (rows from
  /// `firstRow`, a multiple of 8): lanes 8j .. 8j + 7 address the rows of
  /// matrix j, rows (j % 2) * 8 + lane % 8 of the warp's 16, 16-byte chunk
  /// i + j / 2 for the chunk pair (i, i + 1). Matrix j holds register j of
  /// the wgmma fragment (A's words, or the accumulator's packed pairs).
  struct MatrixX4Rows {
    Value matrix, rowInMatrix, rowStart;
  };
  Value divIdx(Value a, int64_t c) {
    return arith::DivUIOp::create(b, loc, a, idx(c));
  }
  Value remIdx(Value a, int64_t c) {
    return arith::RemUIOp::create(b, loc, a, idx(c));
  }
  MatrixX4Rows matrixX4Rows(const AccumulatorPlace &p, Value address,
                            Value firstRow) {
    Value matrix = divIdx(p.lane, 8), rowInMatrix = remIdx(p.lane, 8);
    // (One op per statement: the order of a call's arguments is not fixed.)
    Value warpFirst = add(firstRow, p.warpRow);
    Value halfRows = arith::MulIOp::create(b, loc, remIdx(matrix, 2), idx(8));
    Value row = add(warpFirst, add(halfRows, rowInMatrix));
    Value rowStart = add(address, arith::MulIOp::create(b, loc, row, idx(128)));
    return {matrix, rowInMatrix, rowStart};
  }
  /// The lane's !llvm.ptr<3> for the chunk pair (i, i + 1); 64-column atoms
  /// `atomBytes` apart.
  Value matrixX4Pointer(const MatrixX4Rows &m, int64_t i, int64_t atomBytes) {
    // 16-byte chunk c of a row sits at chunk c ^ (row % 8); the first row
    // is a multiple of 8, so row % 8 is the lane's row in its matrix.
    Value chunk = arith::XOrIOp::create(
        b, loc, add(divIdx(m.matrix, 2), idx(i % 8)), m.rowInMatrix);
    Value offset = add(add(m.rowStart, idx((i / 8) * atomBytes)),
                       arith::MulIOp::create(b, loc, chunk, idx(16)));
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), offset)
            .getResult());
  }

  /// The warpgroup's 64 rows of a slot into registers: one ldmatrix.x4 per
  /// 16 columns gives the 4 words of A's fragment for that k-step, in the
  /// order tiledattn.mma_async reads a register A.
  LogicalResult lowerReadRows(ReadRowsOp op) {
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

  /// A warpgroup's f32 accumulator registers `acc` (`cols` columns) packed
  /// to `stage`'s element type into its rows from `firstRow`, by stmatrix.x4:
  /// two 8-column chunks of the warp's 16 rows each (the accumulator's
  /// register order is stmatrix's fragment order), addressed as
  /// matrixX4Rows says. `each` (if given) maps register j's value first.
  void storeMatrices(const AccumulatorPlace &p, ArrayRef<Value> acc,
                     TypedValue<SmemType> stage, Value address, Value firstRow,
                     int64_t cols,
                     function_ref<Value(size_t, Value)> each = nullptr) {
    Type elementType = stage.getType().getElementType();
    int64_t atomBytes = stage.getType().getRows() * 128;
    MatrixX4Rows m = matrixX4Rows(p, address, firstRow);
    MLIRContext *ctx = b.getContext();
    for (int64_t i = 0; i < cols / 8; i += 2) {
      SmallVector<Value> values;
      for (int64_t j = 4 * i; j < 4 * i + 8; ++j)
        values.push_back(each ? each(j, acc[j]) : acc[j]);
      Value pointer = matrixX4Pointer(m, i, atomBytes);
      NVVM::StMatrixOp::create(
          b, loc, pointer, math.pack(values, elementType),
          NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
          NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
    }
  }

  /// The rows by storeMatrices, then fenced for the async proxy (the
  /// tensor cores read them) and the warpgroup synced (each thread's mma
  /// reads every thread's rows).
  LogicalResult lowerStage(StageOp op) {
    FailureOr<std::pair<Regs, Value>> operands = accAndStage(op);
    if (failed(operands))
      return failure();
    Regs &acc = operands->first;
    Value address = operands->second;
    AccumulatorPlace p = place();
    storeMatrices(p, acc, op.getStage(), address, op.getStageRow(),
                  op.getAcc().getType().getNumCols());
    fenceProxyAsyncShared(b, loc);
    syncWarpgroup(b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    return success();
  }

  /// O (times each row's 1 / l where row statistics are given) into the
  /// stage by storeMatrices, then the lse; tiledattn-lower-rings emitted
  /// the copy after it.
  LogicalResult lowerTmaStore(TmaStoreOp op) {
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
  LogicalResult lowerFinishRows(FinishRowsOp op) {
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
  LogicalResult lowerScoreMod(ScoreModOp op) {
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

  LogicalResult lowerTruncate(TruncateOp op) {
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
  LogicalResult lowerResize(ResizeOp op) {
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
  LogicalResult lowerMergePieces(MergePiecesOp op) {
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
    // are what ptxas spilled (as in convert-sdpa-to-hopper's split tail).
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
    Value merges = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         holders, idx(0));
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
        auto zero =
            scf::ForOp::create(b, loc, holdersBegin, holdersEnd, idx(1));
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
};
} // namespace

bool mlir::tiledattn::isAccumulatorOp(Operation *op) {
  // The cases of AccumulatorLowering::lower.
  return isa<MaskOp, ScoreModOp, OnlineSoftmaxOp, ScaleMaxOp, RescaleOp,
             ConstantOp, StoreOp, StoreTileOp, TmaStoreOp, FinishRowsOp,
             ReadRowsOp, ResizeOp, TruncateOp, MergePiecesOp, RowDotOp,
             StoreRowsOp, ExpFromLseOp, SoftmaxGradOp, ReduceAddOp,
             BulkReduceAddOp, StageOp>(op);
}

LogicalResult mlir::tiledattn::lowerAccumulatorOp(Operation *op) {
  if (failed(AccumulatorLowering(op).lower(op)))
    return failure();
  op->erase();
  return success();
}
