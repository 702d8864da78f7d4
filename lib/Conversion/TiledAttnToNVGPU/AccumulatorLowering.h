//===- AccumulatorLowering.h - Tile ops on accumulators ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The class that lowers the tile ops on a warpgroup's wgmma accumulator
// registers for tiledattn-lower-mma (lowerAccumulatorOp, AccumulatorOps.h),
// with the helpers its ops share: a tile's registers and the thread's place
// and rows in the accumulator layout, row pairs stored to global memory, and
// stmatrix / ldmatrix on a swizzled shared-memory tile. The ops themselves
// are defined in AccumulatorOpsToNVVM.cpp (the forward's) and
// BackwardOpsToNVVM.cpp (the backward's).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATORLOWERING_H
#define TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATORLOWERING_H

#include "AccumulatorOps.h"
#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include <array>

namespace mlir::tiledattn::accumulators {
/// Lowers one tile op on accumulators (lowerAccumulatorOp makes one per op).
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
        .Case([&](LoadRowsOp load) { return lowerLoadRows(load); })
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
  AccumulatorMath math{b, loc, scaleLog2, SoftmaxOptions{}};

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

  /// scale * log2(e): the factor from scores to exp2's arguments.
  Value timesLog2E(Value scale) {
    return math.fmul(scale, math.f32(1.4426950408889634));
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

  /// The sum of `part` over the quad (the four threads that share a row).
  Value quadSum(Value part) {
    for (int64_t x : {1, 2})
      part = math.fadd(part, gpu::ShuffleOp::create(b, loc, part, math.i32(x),
                                                    math.i32(32),
                                                    gpu::ShuffleMode::XOR)
                                 .getShuffleResult());
    return part;
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  void ifThen(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
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
  /// `atomBytes` apart. With `firstChunk` (an index value, even: a column
  /// offset of a multiple of 16, over 8) the pair is (i, i + 1) from there.
  Value matrixX4Pointer(const MatrixX4Rows &m, int64_t i, int64_t atomBytes,
                        Value firstChunk = Value()) {
    // 16-byte chunk c of a row sits at chunk c ^ (row % 8); the first row
    // is a multiple of 8, so row % 8 is the lane's row in its matrix. The
    // pair starts on an even chunk, so both chunks are in one atom.
    Value inAtom = idx(i % 8), atomOffset = idx((i / 8) * atomBytes);
    if (firstChunk) {
      Value pair = add(firstChunk, idx(i));
      inAtom = remIdx(pair, 8);
      atomOffset =
          arith::MulIOp::create(b, loc, divIdx(pair, 8), idx(atomBytes));
    }
    Value chunk = arith::XOrIOp::create(
        b, loc, add(divIdx(m.matrix, 2), inAtom), m.rowInMatrix);
    Value offset = add(add(m.rowStart, atomOffset),
                       arith::MulIOp::create(b, loc, chunk, idx(16)));
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), offset)
            .getResult());
  }

  /// A warpgroup's f32 accumulator registers `acc` (`cols` columns) packed
  /// to `stage`'s element type into its rows from `firstRow`, by stmatrix.x4:
  /// two 8-column chunks of the warp's 16 rows each (the accumulator's
  /// register order is stmatrix's fragment order), addressed as
  /// matrixX4Rows says. `each` (if given) maps register j's value first.
  /// A packed tile's words (i32, registers 2k and 2k + 1 of the f32 one)
  /// go to stmatrix as they are. `firstCol` (if given; a multiple of 16):
  /// the stage's column the first register's goes to.
  void storeMatrices(const AccumulatorPlace &p, ArrayRef<Value> acc,
                     TypedValue<SmemType> stage, Value address, Value firstRow,
                     int64_t cols,
                     function_ref<Value(size_t, Value)> each = nullptr,
                     Value firstCol = Value()) {
    Type elementType = stage.getType().getElementType();
    int64_t atomBytes = stage.getType().getRows() * 128;
    MatrixX4Rows m = matrixX4Rows(p, address, firstRow);
    MLIRContext *ctx = b.getContext();
    bool packed = !acc.empty() && acc.front().getType().isInteger(32);
    Value firstChunk = firstCol ? divIdx(firstCol, 8) : Value();
    for (int64_t i = 0; i < cols / 8; i += 2) {
      SmallVector<Value> values;
      if (!packed)
        for (int64_t j = 4 * i; j < 4 * i + 8; ++j)
          values.push_back(each ? each(j, acc[j]) : acc[j]);
      Value pointer = matrixX4Pointer(m, i, atomBytes, firstChunk);
      NVVM::StMatrixOp::create(
          b, loc, pointer,
          packed ? Regs(acc.begin() + 2 * i, acc.begin() + 2 * i + 4)
                 : math.pack(values, elementType),
          NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
          NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
    }
  }

  // The forward's ops and the helpers only they use
  // (AccumulatorOpsToNVVM.cpp).

  LogicalResult lowerMask(MaskOp op);
  LogicalResult rowsOf(Operation *op, Value tile, StringRef name,
                       Value (&rows)[2]);
  LogicalResult lowerOnlineSoftmax(OnlineSoftmaxOp op);
  LogicalResult lowerScaleMax(ScaleMaxOp op);
  LogicalResult lowerConstant(ConstantOp op);

  /// What storing O needs of each of the thread's two rows (r = 0, 1:
  /// row group and group + 8 of its warp's 16).
  struct FinishedRow {
    int r;
    /// 1 / l (0 for an empty row), and whether the row is inside `dest`.
    Value inv, inside;
    /// Its index in dest; its max, whole sum, and whether the sum is 0.
    Value row, max, sum, empty;
  };

  template <typename StoreOpT>
  FailureOr<std::array<FinishedRow, 2>>
  finishRows(StoreOpT op, const AccumulatorPlace &p, Value rowsIn,
             function_ref<void(const FinishedRow &)> each = nullptr);
  template <typename StoreOpT>
  void storeLse(StoreOpT op, const AccumulatorPlace &p, const FinishedRow &f);
  LogicalResult lowerStore(StoreOp op);
  LogicalResult lowerReadRows(ReadRowsOp op);
  LogicalResult lowerTmaStore(TmaStoreOp op);
  LogicalResult lowerFinishRows(FinishRowsOp op);
  LogicalResult lowerScoreMod(ScoreModOp op);
  LogicalResult lowerRescale(RescaleOp op);
  LogicalResult lowerTruncate(TruncateOp op);
  LogicalResult lowerResize(ResizeOp op);
  LogicalResult lowerMergePieces(MergePiecesOp op);

  // The backward's ops and the helpers only they use (BackwardOpsToNVVM.cpp).

  void forEachRowInside(Value rowBase, Value seq,
                        function_ref<void(int, Value)> body);
  LogicalResult lowerRowDot(RowDotOp op);
  static size_t savedValueOf(size_t r, bool perRow);
  Regs savedValues(Value vector, Value batch, Value head, Value first,
                   int64_t cols, bool perRow, Value outside);
  FailureOr<Regs> savedRows(Operation *op, Value saved, Value batch, Value head,
                            Value first, Value tile, bool perRow,
                            Value outside);
  LogicalResult lowerLoadRows(LoadRowsOp op);
  LogicalResult lowerExpFromLse(ExpFromLseOp op);
  LogicalResult lowerSoftmaxGrad(SoftmaxGradOp op);
  LogicalResult lowerStoreRows(StoreRowsOp op);
  LogicalResult lowerReduceAdd(ReduceAddOp op);
  LogicalResult lowerBulkReduceAdd(BulkReduceAddOp op);
  LogicalResult lowerStoreTile(StoreTileOp op);
  LogicalResult lowerStage(StageOp op);
};
} // namespace mlir::tiledattn::accumulators

#endif // TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATORLOWERING_H
