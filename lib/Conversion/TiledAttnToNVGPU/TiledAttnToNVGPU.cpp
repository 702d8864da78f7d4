//===- TiledAttnToNVGPU.cpp - Tile programs to GPU kernels ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers a tile program (a func.func marked tiledattn.kernel) to a gpu.func.
//
// A tile has no layout in the IR; its layout follows from how it is used.
// The pass first assigns each tile value one fragment layout (an mma lhs, a
// transposed or plain rhs, an accumulator, a row vector), unifying the values
// that an scf.for ties together, then walks the program in order and emits,
// for every tile op, the per-thread code on those fragments. With mma_sync
// (m16n8k16) warp w owns rows 16w .. 16w+15 of the block; inside a warp,
// thread `lane` has group g = lane / 4 and index t = lane % 4, and holds rows
// g and g + 8 and columns 2t, 2t + 1 of each 8-wide column slice (PTX ISA,
// "Matrix Fragments for mma.m16n8k16").
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>
#include <optional>

namespace mlir::tiledattn {
#define GEN_PASS_DEF_CONVERTTILEDATTNTONVGPUPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// Register layout of one tile value.
enum class Layout {
  Lhs,    // m16n8k16 A fragments: [kStep][4] x vector<2xT>
  Rhs,    // B fragments from a K x N tile read column-wise (V)
  RhsT,   // B fragments from an N x K tile read row-wise (K, transposed)
  Acc,    // C fragments: [nSlice][4] x f32
  RowVec, // two f32 per thread: rows g and g + 8
};

StringRef layoutName(Layout l) {
  switch (l) {
  case Layout::Lhs:
    return "mma lhs";
  case Layout::Rhs:
    return "mma rhs";
  case Layout::RhsT:
    return "transposed mma rhs";
  case Layout::Acc:
    return "accumulator";
  case Layout::RowVec:
    return "row vector";
  }
  llvm_unreachable("unknown layout");
}

bool isTile(Value v) { return isa<TileType>(v.getType()); }

//===----------------------------------------------------------------------===//
// Layout assignment
//===----------------------------------------------------------------------===//

/// Union-find over tile values plus the layout each class must have.
class LayoutAssignment {
public:
  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }
  void tie(Value a, Value b) {
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[ra] = rb;
  }
  void require(Value v, Layout l, Operation *user) {
    requirements.push_back({v, l, user});
  }

  /// Resolves every class to one layout; reports conflicts.
  LogicalResult solve() {
    for (auto &[v, l, user] : requirements) {
      Value root = find(v);
      auto [it, inserted] = layouts.try_emplace(root, l, user);
      if (!inserted && it->second.first != l) {
        InFlightDiagnostic diag =
            user->emitOpError("uses a tile as ")
            << layoutName(l) << ", but it is also used as "
            << layoutName(it->second.first)
            << "; convert-tiledattn-to-nvgpu gives every tile one layout";
        diag.attachNote(it->second.second->getLoc()) << "other use here";
        return failure();
      }
    }
    return success();
  }
  std::optional<Layout> lookup(Value v) {
    auto it = layouts.find(find(v));
    if (it == layouts.end())
      return std::nullopt;
    return it->second.first;
  }

private:
  struct Requirement {
    Value value;
    Layout layout;
    Operation *user;
  };
  DenseMap<Value, Value> parent;
  SmallVector<Requirement> requirements;
  DenseMap<Value, std::pair<Layout, Operation *>> layouts;
};

LogicalResult collectLayouts(func::FuncOp func, LayoutAssignment &la) {
  WalkResult r = func.walk([&](Operation *op) -> WalkResult {
    return TypeSwitch<Operation *, WalkResult>(op)
        .Case([&](MmaOp mma) {
          la.require(mma.getLhs(), Layout::Lhs, op);
          la.require(mma.getRhs(),
                     mma.getTransposed() ? Layout::RhsT : Layout::Rhs, op);
          la.require(mma.getAcc(), Layout::Acc, op);
          la.require(mma.getResult(), Layout::Acc, op);
          return WalkResult::advance();
        })
        .Case([&](MaskOp mask) {
          la.require(mask.getScores(), Layout::Acc, op);
          la.require(mask.getResult(), Layout::Acc, op);
          return WalkResult::advance();
        })
        .Case([&](OnlineSoftmaxOp sm) {
          la.require(sm.getScores(), Layout::Acc, op);
          for (Value v : {sm.getRowMax(), sm.getRowSum(), sm.getNewRowMax(),
                          sm.getNewRowSum(), sm.getRescale()})
            la.require(v, Layout::RowVec, op);
          la.require(sm.getProbs(), Layout::Lhs, op);
          return WalkResult::advance();
        })
        .Case([&](RescaleOp rs) {
          la.require(rs.getAcc(), Layout::Acc, op);
          la.require(rs.getResult(), Layout::Acc, op);
          la.require(rs.getFactor(), Layout::RowVec, op);
          return WalkResult::advance();
        })
        .Case([&](StoreOp st) {
          la.require(st.getAcc(), Layout::Acc, op);
          la.require(st.getRowMax(), Layout::RowVec, op);
          la.require(st.getRowSum(), Layout::RowVec, op);
          return WalkResult::advance();
        })
        .Case([&](scf::ForOp loop) {
          for (auto [init, arg, res] :
               llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                         loop.getResults())) {
            if (!isTile(init))
              continue;
            la.tie(init, arg);
            la.tie(arg, res);
          }
          auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
          for (auto [arg, operand] :
               llvm::zip(loop.getRegionIterArgs(), yield.getOperands()))
            if (isTile(arg))
              la.tie(arg, operand);
          return WalkResult::advance();
        })
        .Case<ConstantOp, LoadOp, scf::YieldOp>(
            [&](Operation *) { return WalkResult::advance(); })
        .Default([&](Operation *other) {
          auto touchesTile = [](TypeRange types) {
            return llvm::any_of(types, [](Type t) { return isa<TileType>(t); });
          };
          if (touchesTile(other->getOperandTypes()) ||
              touchesTile(other->getResultTypes())) {
            other->emitOpError("takes or makes a tile, which "
                               "convert-tiledattn-to-nvgpu cannot lower "
                               "outside the tiledattn ops, scf.for and "
                               "scf.yield");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
  });
  if (r.wasInterrupted())
    return failure();
  return la.solve();
}

//===----------------------------------------------------------------------===//
// Kernel emission (mma_sync)
//===----------------------------------------------------------------------===//

/// Emits the gpu.func body of one tile program.
class MmaSyncEmitter {
public:
  MmaSyncEmitter(OpBuilder &b, ScheduleAttr schedule, LayoutAssignment &la)
      : b(b), schedule(schedule), la(la) {}

  LogicalResult emitFunction(func::FuncOp func, gpu::GPUFuncOp kernel) {
    Block &entry = kernel.getBody().front();
    b.setInsertionPointToStart(&entry);
    for (auto [from, to] :
         llvm::zip(func.getArguments(), kernel.getArguments()))
      map.map(from, to);
    Location loc = func.getLoc();
    tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value lane = arith::RemUIOp::create(b, loc, tid, idx(loc, 32));
    Value warp = arith::DivUIOp::create(b, loc, tid, idx(loc, 32));
    group = arith::DivUIOp::create(b, loc, lane, idx(loc, 4));
    Value inGroup = arith::RemUIOp::create(b, loc, lane, idx(loc, 4));
    warpRow = arith::MulIOp::create(b, loc, warp, idx(loc, 16));
    twoT = arith::MulIOp::create(b, loc, inGroup, idx(loc, 2));
    isGroupLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          inGroup, idx(loc, 0));
    if (schedule.getProducer() == Producer::cp_async) {
      auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                  gpu::AddressSpace::Workgroup);
      smemBase = gpu::DynamicSharedMemoryOp::create(
          b, loc,
          MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                          MemRefLayoutAttrInterface(), workgroup));
    }
    if (schedule.getMma() == MmaKind::wgmma)
      setUpWgmma(loc);
    if (failed(emitBlock(func.getBody().front())))
      return failure();
    kernel->setAttr(kDynamicSmemAttrName, b.getI64IntegerAttr(smemBytes));
    return success();
  }

private:
  using Regs = SmallVector<Value>;

  Value idx(Location loc, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value f32Const(Location loc, float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Location loc, Value a, int64_t c) {
    if (c == 0)
      return a;
    return arith::AddIOp::create(b, loc, a, idx(loc, c));
  }
  Value add(Location loc, Value a, Value c) {
    return arith::AddIOp::create(b, loc, a, c);
  }
  /// 2^x and log2(x) by the MUFU approximations (no libdevice).
  Value exp2(Location loc, Value x) {
    return callApproxIntrinsic(b, loc, "llvm.nvvm.ex2.approx.f32", x);
  }
  Value log2(Location loc, Value x) {
    return callApproxIntrinsic(b, loc, "llvm.nvvm.lg2.approx.f", x);
  }

  /// Reduces `v` across the four threads of a row group.
  Value quadReduce(Location loc, Value v, bool isMax) {
    Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
    for (int64_t offset : {1, 2}) {
      Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
      Value other =
          gpu::ShuffleOp::create(b, loc, v, off, width, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      v = isMax ? arith::MaximumFOp::create(b, loc, v, other).getResult()
                : arith::AddFOp::create(b, loc, v, other).getResult();
    }
    return v;
  }

  /// The row of `source` at `row`, clamped to the last row so that loads of
  /// partial tiles stay in bounds (their values are masked later).
  Value clampRow(Location loc, Value row, Value lastRow) {
    return arith::MinUIOp::create(b, loc, row, lastRow);
  }

  /// Two consecutive elements of one row, as a vector<2xT>.
  Value loadPair(Location loc, Value src, ValueRange bh, Value row, Value col) {
    auto memTy = cast<MemRefType>(src.getType());
    auto vecTy = VectorType::get({2}, memTy.getElementType());
    auto load = vector::LoadOp::create(b, loc, vecTy, src,
                                       ValueRange{bh[0], bh[1], row, col});
    load.setAlignmentAttr(b.getI64IntegerAttr(4));
    return load;
  }
  Value loadScalar(Location loc, Value src, ValueRange bh, Value row,
                   Value col) {
    return memref::LoadOp::create(b, loc, src,
                                  ValueRange{bh[0], bh[1], row, col});
  }

  LogicalResult emitLoad(LoadOp op) {
    std::optional<Layout> layout = la.lookup(op.getResult());
    if (!layout) // Unused: nothing to load.
      return success();
    Location loc = op.getLoc();
    Value src = map.lookup(op.getSource());
    Value bh[] = {map.lookup(op.getBatch()), map.lookup(op.getHead())};
    Value row = map.lookup(op.getRow());
    TileType tile = op.getResult().getType();
    int64_t rows = tile.getNumRows(), cols = tile.getNumCols();
    Value seqLen = memref::DimOp::create(b, loc, src, idx(loc, 2));
    Value lastRow = arith::SubIOp::create(b, loc, seqLen, idx(loc, 1));
    Regs regs;
    if (*layout == Layout::Lhs && wgmmaPad)
      return stageLhsForWgmma(op, src, bh, row, seqLen, lastRow);
    switch (*layout) {
    case Layout::Lhs: {
      if (failed(checkBlockRows(op, tile)) ||
          failed(checkMultiple(op, cols, 16, "columns")))
        return failure();
      Value lo = add(loc, add(loc, row, warpRow), group);
      Value rLo = clampRow(loc, lo, lastRow);
      Value rHi = clampRow(loc, add(loc, lo, 8), lastRow);
      for (int64_t k = 0; k < cols; k += 16) {
        Value c = add(loc, twoT, k);
        Value c8 = add(loc, twoT, k + 8);
        regs.append(
            {loadPair(loc, src, bh, rLo, c), loadPair(loc, src, bh, rHi, c),
             loadPair(loc, src, bh, rLo, c8), loadPair(loc, src, bh, rHi, c8)});
      }
      break;
    }
    case Layout::RhsT:
    case Layout::Rhs: {
      // B fragments are read at the mma that uses them, one k-step at a
      // time, so that ptxas can schedule them against the mmas instead of
      // holding the whole K or V tile in registers.
      bool t = *layout == Layout::RhsT;
      if (failed(checkMultiple(op, rows, t ? 8 : 16, "rows")) ||
          failed(checkMultiple(op, cols, t ? 16 : 8, "columns")))
        return failure();
      DeferredRhs d{src, bh[0], bh[1], row, lastRow, t, Value(), Value()};
      if (schedule.getProducer() == Producer::cp_async) {
        auto it = streamed.find(op.getResult());
        if (it == streamed.end())
          return op.emitOpError(
              "is an mma rhs, which producer = cp_async stages through "
              "shared memory; expected it directly in an scf.for body with "
              "the loop's induction variable as its row and the loop step "
              "as its row count");
        d.ring = it->second.ring;
        d.stage = it->second.stage;
      }
      deferred[op.getResult()] = d;
      return success();
    }
    case Layout::Acc:
    case Layout::RowVec:
      return op.emitOpError("loads an f16/bf16 tile that is used as ")
             << layoutName(*layout) << ", which must be f32";
    }
    frags[op.getResult()] = std::move(regs);
    return success();
  }

  /// A K or V tile whose B fragments are loaded where an mma needs them.
  struct DeferredRhs {
    Value src, batch, head, row, lastRow;
    bool transposed;
    // With producer = cp_async: the shared-memory ring and the stage that
    // holds this iteration's tile.
    Value ring, stage;
  };

  /// Column (element index) of `col` in shared-memory row `row` after the
  /// schedule's XOR swizzle of 16-byte chunks: chunk c of row r is stored
  /// at chunk c ^ (r mod (swizzle / 16)), so that the eight rows an
  /// ldmatrix reads at one column land in different banks.
  Value swizzle(Location loc, Value row, Value col) {
    int64_t period = schedule.getSwizzle() / 16;
    if (period <= 1)
      return col;
    Value chunk = arith::DivUIOp::create(b, loc, col, idx(loc, 8));
    Value within = arith::RemUIOp::create(b, loc, col, idx(loc, 8));
    return add(loc, swizzledChunkStart(loc, row, chunk), within);
  }

  /// First column of 16-byte chunk `chunk` of row `row` after the swizzle
  /// (swizzle > 16 bytes): (chunk ^ (row mod (swizzle / 16))) * 8.
  Value swizzledChunkStart(Location loc, Value row, Value chunk) {
    int64_t period = schedule.getSwizzle() / 16;
    Value phase = arith::RemUIOp::create(b, loc, row, idx(loc, period));
    Value swizzled = arith::XOrIOp::create(b, loc, chunk, phase);
    return arith::MulIOp::create(b, loc, swizzled, idx(loc, 8));
  }

  /// B fragments of k-steps k and k + 1 of column slice n, read from the
  /// shared-memory ring with one ldmatrix.x4: lanes 8i .. 8i + 7 address
  /// the rows of 8x8 matrix i. Transposed (K rows are N): matrices at
  /// columns 16k, 16k + 8, 16k + 16, 16k + 24 of rows 8n .. 8n + 7.
  /// Plain (V rows are K): ldmatrix.trans of rows 16k .. 16k + 31 in four
  /// groups of eight, at columns 8n .. 8n + 7.
  std::pair<Regs, Regs> rhsFragmentsFromRing(Location loc, const DeferredRhs &d,
                                             int64_t n, int64_t k) {
    Value lane = arith::RemUIOp::create(b, loc, tid, idx(loc, 32));
    Value matrix = arith::DivUIOp::create(b, loc, lane, idx(loc, 8));
    Value r = arith::RemUIOp::create(b, loc, lane, idx(loc, 8));
    Value row, col;
    if (d.transposed) {
      row = add(loc, r, n * 8);
      col =
          add(loc, arith::MulIOp::create(b, loc, matrix, idx(loc, 8)), k * 16);
    } else {
      row = add(loc,
                add(loc, arith::MulIOp::create(b, loc, matrix, idx(loc, 8)), r),
                k * 16);
      col = idx(loc, n * 8);
    }
    Type elementType = cast<MemRefType>(d.ring.getType()).getElementType();
    auto resultType = VectorType::get({4, 2}, elementType);
    Value frag = nvgpu::LdMatrixOp::create(
        b, loc, resultType, d.ring,
        ValueRange{d.stage, row, swizzle(loc, row, col)},
        /*transpose=*/!d.transposed, /*numTiles=*/4);
    Regs regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(
          vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i}));
    return {Regs{regs[0], regs[1]}, Regs{regs[2], regs[3]}};
  }

  /// The two B-fragment registers of column slice `n` (8 wide) and k-step
  /// `k` (16 deep). Transposed (K, N x K): row n*8 + g, columns 2t, 2t + 1
  /// and 2t + 8, 2t + 9 of the k-step. Plain (V, K x N): column n*8 + g,
  /// rows 2t, 2t + 1 and 2t + 8, 2t + 9 of the k-step, one element each.
  Regs rhsFragment(Location loc, const DeferredRhs &d, int64_t n, int64_t k) {
    Value bh[] = {d.batch, d.head};
    if (d.transposed) {
      Value r =
          clampRow(loc, add(loc, add(loc, d.row, group), n * 8), d.lastRow);
      return {loadPair(loc, d.src, bh, r, add(loc, twoT, k * 16)),
              loadPair(loc, d.src, bh, r, add(loc, twoT, k * 16 + 8))};
    }
    auto memTy = cast<MemRefType>(d.src.getType());
    auto vecTy = VectorType::get({2}, memTy.getElementType());
    Value c = add(loc, group, n * 8);
    Value k0 = add(loc, d.row, twoT);
    Regs regs;
    for (int64_t half : {0, 8}) {
      Value e0 =
          loadScalar(loc, d.src, bh,
                     clampRow(loc, add(loc, k0, k * 16 + half), d.lastRow), c);
      Value e1 = loadScalar(
          loc, d.src, bh,
          clampRow(loc, add(loc, k0, k * 16 + half + 1), d.lastRow), c);
      regs.push_back(
          vector::FromElementsOp::create(b, loc, vecTy, ValueRange{e0, e1}));
    }
    return regs;
  }

  LogicalResult checkBlockRows(Operation *op, TileType tile) {
    if (tile.getNumRows() != schedule.getBlockM())
      return op->emitOpError("expected a tile of block_m = ")
             << schedule.getBlockM()
             << " rows (mma_sync splits them 16 per warp), but got "
             << tile.getNumRows();
    return success();
  }
  LogicalResult checkMultiple(Operation *op, int64_t n, int64_t m,
                              StringRef what) {
    if (n % m != 0)
      return op->emitOpError("expected tile ")
             << what << " to be a multiple of " << m
             << " for mma_sync m16n8k16 fragments, but got " << n;
    return success();
  }

  LogicalResult emitConstant(ConstantOp op) {
    std::optional<Layout> layout = la.lookup(op.getResult());
    if (!layout)
      return success();
    TileType tile = op.getResult().getType();
    if (failed(checkBlockRows(op, tile)))
      return failure();
    Value v = f32Const(op.getLoc(), op.getValue().convertToFloat());
    int64_t n = *layout == Layout::RowVec ? 2 : tile.getNumCols() / 8 * 4;
    if (*layout == Layout::Acc &&
        failed(checkMultiple(op, tile.getNumCols(), 8, "columns")))
      return failure();
    if (*layout != Layout::Acc && *layout != Layout::RowVec)
      return op.emitOpError("makes an f32 tile that is used as ")
             << layoutName(*layout) << ", which must be f16 or bf16";
    frags[op.getResult()] = Regs(n, v);
    return success();
  }

  /// One m16n8k16 mma: d = a * b + c.
  Regs mma(Location loc, ArrayRef<Value> a, ArrayRef<Value> bFrag,
           ArrayRef<Value> c, Type elementType) {
    NVVM::MMATypes ptxType =
        elementType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    // bf16 operands travel as packed i32 registers; f16 as vector<2xf16>.
    auto operand = [&](Value v) -> Value {
      if (!elementType.isBF16())
        return v;
      Value asI32 = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), v);
      return vector::ExtractOp::create(b, loc, asI32, ArrayRef<int64_t>{0});
    };
    Regs aOps, bOps;
    for (Value v : a)
      aOps.push_back(operand(v));
    for (Value v : bFrag)
      bOps.push_back(operand(v));
    Type f32 = b.getF32Type();
    auto resTy =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    auto op = NVVM::MmaOp::create(
        b, loc, resTy, aOps, bOps, c, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    Regs d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(), i));
    return d;
  }

  LogicalResult emitMma(MmaOp op) {
    if (wgmmaPad)
      return emitWgmma(op);
    Location loc = op.getLoc();
    TileType lhs = op.getLhs().getType(), acc = op.getAcc().getType();
    if (failed(checkBlockRows(op, lhs)))
      return failure();
    int64_t kSteps = lhs.getNumCols() / 16, nSlices = acc.getNumCols() / 8;
    auto rhs = deferred.find(op.getRhs());
    if (rhs == deferred.end())
      return op.emitOpError("expected rhs to come from tiledattn.load");
    const Regs &a = frags[op.getLhs()];
    const Regs &c = frags[op.getAcc()];
    Regs d;
    const DeferredRhs &src = rhs->second;
    if (src.ring && kSteps % 2 != 0)
      return op.emitOpError("expected an even number of k-steps (reduction "
                            "dim a multiple of 32) for ldmatrix.x4, but got ")
             << kSteps;
    for (int64_t n = 0; n < nSlices; ++n) {
      Regs cur(c.begin() + 4 * n, c.begin() + 4 * n + 4);
      Regs next; // fragment of k-step k + 1 from the last ldmatrix.x4
      for (int64_t k = 0; k < kSteps; ++k) {
        ArrayRef<Value> aFrag = ArrayRef<Value>(a).slice(4 * k, 4);
        Regs bFrag;
        if (!src.ring) {
          bFrag = rhsFragment(loc, src, n, k);
        } else if (k % 2 == 0) {
          std::tie(bFrag, next) = rhsFragmentsFromRing(loc, src, n, k);
        } else {
          bFrag = next;
        }
        cur = mma(loc, aFrag, bFrag, cur, lhs.getElementType());
      }
      d.append(cur);
    }
    frags[op.getResult()] = std::move(d);
    return success();
  }

  /// Query row of accumulator element `e` (0..3) of this thread, relative
  /// to the block: rows g (e < 2) and g + 8 (e >= 2) of the warp's slab.
  Value threadRow(Location loc, Value blockRow, int64_t e) {
    return add(loc, add(loc, add(loc, blockRow, warpRow), group),
               e >= 2 ? 8 : 0);
  }

  LogicalResult emitMask(MaskOp op) {
    Location loc = op.getLoc();
    TileType t = op.getScores().getType();
    if (failed(checkBlockRows(op, t)))
      return failure();
    Value row = map.lookup(op.getRow()), col = map.lookup(op.getCol());
    Value seqK = map.lookup(op.getSeqlenK());
    Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
    Value rows[2] = {threadRow(loc, row, 0), threadRow(loc, row, 2)};
    Value colBase = add(loc, col, twoT);
    const Regs &s = frags[op.getScores()];
    Regs out;
    for (int64_t n = 0; n < t.getNumCols() / 8; ++n) {
      for (int64_t e = 0; e < 4; ++e) {
        Value c = add(loc, colBase, n * 8 + (e & 1));
        Value masked =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, c, seqK);
        if (op.getCausal()) {
          Value future = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ugt, c, rows[e / 2]);
          masked = arith::OrIOp::create(b, loc, masked, future);
        }
        out.push_back(
            arith::SelectOp::create(b, loc, masked, negInf, s[4 * n + e]));
      }
    }
    frags[op.getResult()] = std::move(out);
    return success();
  }

  /// Packs two f32 into a vector<2xT> mma operand.
  Value packPair(Location loc, Value x, Value y, Type elementType) {
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{x, y});
    return arith::TruncFOp::create(b, loc, VectorType::get({2}, elementType),
                                   v);
  }

  LogicalResult emitOnlineSoftmax(OnlineSoftmaxOp op) {
    Location loc = op.getLoc();
    TileType t = op.getScores().getType();
    if (failed(checkBlockRows(op, t)) ||
        failed(checkMultiple(op, t.getNumCols(), 16, "columns")))
      return failure();
    int64_t nSlices = t.getNumCols() / 8;
    const Regs &s = frags[op.getScores()];
    const Regs &m = frags[op.getRowMax()];
    const Regs &l = frags[op.getRowSum()];
    Value scaleLog2 =
        arith::MulFOp::create(b, loc, map.lookup(op.getScale()),
                              f32Const(loc, static_cast<float>(M_LOG2E)));
    Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
    Value zero = f32Const(loc, 0.0f);
    Regs x, p(s.size());
    for (Value v : s)
      x.push_back(arith::MulFOp::create(b, loc, v, scaleLog2));
    Regs newMax, newSum, alpha;
    for (int64_t half = 0; half < 2; ++half) {
      Value mx = negInf;
      for (int64_t n = 0; n < nSlices; ++n)
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
          mx = arith::MaximumFOp::create(b, loc, mx, x[4 * n + e]);
      mx = quadReduce(loc, mx, /*isMax=*/true);
      Value mNew = arith::MaximumFOp::create(b, loc, m[half], mx);
      // A row that has only seen -inf subtracts 0 instead (no inf - inf).
      Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              mNew, negInf);
      Value mUse = arith::SelectOp::create(b, loc, allMasked, zero, mNew);
      Value a = exp2(loc, arith::SubFOp::create(b, loc, m[half], mUse));
      Value sum = zero;
      for (int64_t n = 0; n < nSlices; ++n)
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e) {
          Value pe =
              exp2(loc, arith::SubFOp::create(b, loc, x[4 * n + e], mUse));
          p[4 * n + e] = pe;
          sum = arith::AddFOp::create(b, loc, sum, pe);
        }
      sum = quadReduce(loc, sum, /*isMax=*/false);
      Value lNew = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, l[half], a), sum);
      newMax.push_back(mNew);
      newSum.push_back(lNew);
      alpha.push_back(a);
    }
    // C fragments of column slices 2k and 2k + 1 are exactly the A fragment
    // of k-step k (FlashAttention-2's register reuse): no data movement.
    Type elementType = op.getProbs().getType().getElementType();
    Regs probs;
    for (int64_t k = 0; k < nSlices / 2; ++k) {
      int64_t lo = 4 * (2 * k), hi = 4 * (2 * k + 1);
      probs.append({packPair(loc, p[lo], p[lo + 1], elementType),
                    packPair(loc, p[lo + 2], p[lo + 3], elementType),
                    packPair(loc, p[hi], p[hi + 1], elementType),
                    packPair(loc, p[hi + 2], p[hi + 3], elementType)});
    }
    frags[op.getProbs()] = std::move(probs);
    frags[op.getNewRowMax()] = std::move(newMax);
    frags[op.getNewRowSum()] = std::move(newSum);
    frags[op.getRescale()] = std::move(alpha);
    return success();
  }

  LogicalResult emitRescale(RescaleOp op) {
    Location loc = op.getLoc();
    const Regs &acc = frags[op.getAcc()];
    const Regs &f = frags[op.getFactor()];
    Regs out;
    for (auto [i, v] : llvm::enumerate(acc))
      out.push_back(arith::MulFOp::create(b, loc, v, f[(i % 4) / 2]));
    frags[op.getResult()] = std::move(out);
    return success();
  }

  LogicalResult emitStore(StoreOp op) {
    Location loc = op.getLoc();
    TileType t = op.getAcc().getType();
    if (failed(checkBlockRows(op, t)))
      return failure();
    Value dest = map.lookup(op.getDest());
    Value lse = op.getLse() ? map.lookup(op.getLse()) : Value();
    Value bIdx = map.lookup(op.getBatch()), hIdx = map.lookup(op.getHead());
    Value row = map.lookup(op.getRow());
    const Regs &acc = frags[op.getAcc()];
    const Regs &m = frags[op.getRowMax()];
    const Regs &l = frags[op.getRowSum()];
    Type elementType = cast<MemRefType>(dest.getType()).getElementType();
    Value seqQ = memref::DimOp::create(b, loc, dest, idx(loc, 2));
    Value zero = f32Const(loc, 0.0f), one = f32Const(loc, 1.0f);
    for (int64_t half = 0; half < 2; ++half) {
      Value r = threadRow(loc, row, 2 * half);
      Value inRange =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, seqQ);
      Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          l[half], zero);
      Value inv = arith::SelectOp::create(
          b, loc, empty, zero, arith::DivFOp::create(b, loc, one, l[half]));
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (int64_t n = 0; n < t.getNumCols() / 8; ++n) {
        Value x = arith::MulFOp::create(b, loc, acc[4 * n + 2 * half], inv);
        Value y = arith::MulFOp::create(b, loc, acc[4 * n + 2 * half + 1], inv);
        Value v = packPair(loc, x, y, elementType);
        auto st = vector::StoreOp::create(
            b, loc, v, dest, ValueRange{bIdx, hIdx, r, add(loc, twoT, n * 8)});
        st.setAlignmentAttr(b.getI64IntegerAttr(4));
      }
      if (lse) {
        auto lead = scf::IfOp::create(b, loc, isGroupLeader, false);
        b.setInsertionPointToStart(lead.thenBlock());
        // lse = ln(sum_j exp(scale * s_ij)) = (m + log2 l) * ln 2.
        Value log2l = log2(loc, l[half]);
        Value v = arith::MulFOp::create(
            b, loc, arith::AddFOp::create(b, loc, m[half], log2l),
            f32Const(loc, static_cast<float>(M_LN2)));
        Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
        v = arith::SelectOp::create(b, loc, empty, negInf, v);
        memref::StoreOp::create(b, loc, v, lse, ValueRange{bIdx, hIdx, r});
      }
    }
    return success();
  }

  /// Rebuilds an scf.for whose tile iteration arguments become the flat
  /// list of their fragments.
  LogicalResult emitFor(scf::ForOp loop) {
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

  /// Finds the mma-rhs loads of `loop` that producer = cp_async stages (in
  /// its body, row = induction variable, rows = step) and carves a ring of
  /// num_stages tiles for each out of dynamic shared memory.
  LogicalResult prepareRings(scf::ForOp loop, SmallVectorImpl<LoadOp> &staged) {
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
               << schedule.getSwizzle() << " bytes spans more than a "
               << cols * 2 << "-byte tile row";
      Location loc = load.getLoc();
      auto ringType = MemRefType::get(
          {schedule.getNumStages(), rows, cols}, tile.getElementType(),
          MemRefLayoutAttrInterface(),
          cast<MemRefType>(smemBase.getType()).getMemorySpace());
      Value shift = idx(loc, offset);
      if (wgmmaPad)
        shift = arith::AddIOp::create(b, loc, wgmmaPad,
                                      idx(loc, offset + kWgmmaFixedBytes));
      Value ring = memref::ViewOp::create(b, loc, ringType, smemBase, shift,
                                          ValueRange{});
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

  /// Every thread copies its share of each staged tile's rows row ..
  /// row + rows - 1 into ring stage `stage` (16 bytes per cp.async; rows
  /// past the sequence end are zero-filled), then commits them as one group.
  void issueCopies(Location loc, ArrayRef<LoadOp> staged, Value row,
                   Value stage) {
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

  LogicalResult emitYield(scf::YieldOp yield) {
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

  LogicalResult emitBlock(Block &block) {
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

  OpBuilder &b;
  ScheduleAttr schedule;
  LayoutAssignment &la;
  IRMapping map;
  DenseMap<Value, Regs> frags;
  DenseMap<Value, DeferredRhs> deferred;
  /// producer = cp_async: the ring and current stage of each staged load.
  struct Streamed {
    Value ring, stage;
  };
  DenseMap<Value, Streamed> streamed;
  DenseSet<Operation *> barrierBeforeYield;
  Value smemBase, lastGroup, tid;
  int64_t smemBytes = 0;

  //===--------------------------------------------------------------------===//
  // mma = wgmma (experimental: lowers and assembles, not yet run on a GPU)
  //===--------------------------------------------------------------------===//
  //
  // One warpgroup owns the 64 x 64 block. Q (staged once) and P (written by
  // every iteration) live in shared memory as K-major operands with the
  // 128-byte swizzle; K comes from the cp.async ring as a K-major B operand
  // and V as an MN-major (transposed) one. The accumulator of
  // wgmma.m64nNk16 gives each thread the m16n8k16 C layout of its warp's 16
  // rows, so the softmax code is shared with mma_sync.

  /// The 128-byte swizzle repeats every 1024 bytes and wgmma derives it from
  /// the address, so every operand tile starts on a 1024-byte boundary.
  static constexpr int64_t kWgmmaAlignment = 1024;
  /// Q and P tiles of 64 x 64 16-bit elements.
  static constexpr int64_t kWgmmaTileBytes = 64 * 64 * 2;
  static constexpr int64_t kWgmmaFixedBytes = 2 * kWgmmaTileBytes;

  Value wgmmaPad, baseAddress;
  DenseMap<Value, std::pair<int64_t, int64_t>> ringByteOffset;
  DenseMap<Value, int64_t> smemLhs; // lhs tile -> byte offset after the pad

  void setUpWgmma(Location loc) {
    baseAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smemBase);
    Value rem =
        arith::RemUIOp::create(b, loc, baseAddress, idx(loc, kWgmmaAlignment));
    wgmmaPad = arith::RemUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, idx(loc, kWgmmaAlignment), rem),
        idx(loc, kWgmmaAlignment));
  }

  /// The 64 x 64 operand tile at `byteOffset` past the pad, as a flat
  /// memref of 16-bit elements (Q at 0, P at kWgmmaTileBytes).
  Value wgmmaTile(Location loc, int64_t byteOffset, Type elementType) {
    auto type = MemRefType::get(
        {kWgmmaTileBytes / 2}, elementType, MemRefLayoutAttrInterface(),
        cast<MemRefType>(smemBase.getType()).getMemorySpace());
    Value shift = wgmmaPad;
    if (byteOffset)
      shift = arith::AddIOp::create(b, loc, wgmmaPad, idx(loc, byteOffset));
    return memref::ViewOp::create(b, loc, type, smemBase, shift, ValueRange{});
  }

  /// Byte offset, within a 64-column operand tile, of 16-byte chunk
  /// `chunk` of row `row`, swizzled like the K/V ring (128 bytes).
  Value swizzledByte(Location loc, Value row, Value chunk) {
    Value start = swizzledChunkStart(loc, row, chunk); // in elements
    return add(loc, arith::MulIOp::create(b, loc, row, idx(loc, 128)),
               arith::MulIOp::create(b, loc, start, idx(loc, 2)));
  }

  LogicalResult checkWgmmaTile(Operation *op, TileType tile) {
    if (tile.getNumRows() != 64 || tile.getNumCols() != 64)
      return op->emitOpError("mma = wgmma is lowered for 64 x 64 tiles "
                             "(block_m = block_n = head dim = 64) so far, "
                             "but got ")
             << tile;
    return success();
  }

  /// Q goes to shared memory once (cp.async, zero-filled past the end),
  /// swizzled as a K-major wgmma operand. The loop's first wait covers it.
  LogicalResult stageLhsForWgmma(LoadOp op, Value src, ArrayRef<Value> bh,
                                 Value row, Value seqLen, Value lastRow) {
    Location loc = op.getLoc();
    TileType tile = op.getResult().getType();
    if (failed(checkWgmmaTile(op, tile)))
      return failure();
    Value q = wgmmaTile(loc, 0, tile.getElementType());
    Value chunk = arith::RemUIOp::create(b, loc, tid, idx(loc, 8));
    Value firstRow = arith::DivUIOp::create(b, loc, tid, idx(loc, 8));
    SmallVector<Value> tokens;
    for (int64_t r0 = 0; r0 < 64; r0 += 16) {
      Value r = add(loc, firstRow, r0);
      Value global = arith::AddIOp::create(b, loc, row, r);
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global, seqLen);
      Value srcElements =
          arith::SelectOp::create(b, loc, inside, idx(loc, 8), idx(loc, 0));
      Value dst = arith::DivUIOp::create(b, loc, swizzledByte(loc, r, chunk),
                                         idx(loc, 2));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), q,
          ValueRange{dst}, src,
          ValueRange{bh[0], bh[1], clampRow(loc, global, lastRow),
                     arith::MulIOp::create(b, loc, chunk, idx(loc, 8))},
          b.getIndexAttr(8), srcElements, b.getUnitAttr()));
    }
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
    smemLhs[op.getResult()] = 0;
    return success();
  }

  /// A wgmma shared-memory descriptor for the tile at `byteOffset` (after
  /// the pad).
  Value descriptor(Location loc, Value byteOffset, int64_t leading,
                   int64_t stride) {
    Value addr = arith::AddIOp::create(
        b, loc, baseAddress,
        arith::AddIOp::create(b, loc, wgmmaPad, byteOffset));
    return buildWgmmaDescriptor(b, loc, addr, leading, stride);
  }

  LogicalResult emitWgmma(MmaOp op) {
    Location loc = op.getLoc();
    TileType lhs = op.getLhs().getType(), acc = op.getAcc().getType();
    if (failed(checkWgmmaTile(op, lhs)) || failed(checkWgmmaTile(op, acc)))
      return failure();
    auto rhs = deferred.find(op.getRhs());
    if (rhs == deferred.end() || !rhs->second.ring)
      return op.emitOpError("expected rhs to be a K/V tile staged by "
                            "producer = cp_async");
    Type elementType = lhs.getElementType();
    // A: Q, staged once, or P, written from registers now.
    int64_t aOffset;
    auto q = smemLhs.find(op.getLhs());
    if (q != smemLhs.end()) {
      aOffset = q->second;
    } else {
      aOffset = kWgmmaTileBytes;
      storeProbs(loc, frags[op.getLhs()], elementType);
    }
    const DeferredRhs &d = rhs->second;
    auto [ringOffset, stageBytes] = ringByteOffset[d.ring];
    Value bBase = arith::AddIOp::create(
        b, loc, idx(loc, kWgmmaFixedBytes + ringOffset),
        arith::MulIOp::create(b, loc, d.stage, idx(loc, stageBytes)));
    // K rows are K-major (head dim contiguous); V rows are MN-major.
    bool bTransposed = !d.transposed;
    const Regs &c = frags[op.getAcc()];
    SmallVector<Type> f32s(c.size(), b.getF32Type());
    auto structTy = LLVM::LLVMStructType::getLiteral(b.getContext(), f32s);
    Value accStruct = LLVM::UndefOp::create(b, loc, structTy);
    for (auto [i, v] : llvm::enumerate(c))
      accStruct = LLVM::InsertValueOp::create(b, loc, accStruct, v, i);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    auto type =
        elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    for (int64_t k = 0; k < lhs.getNumCols() / 16; ++k) {
      // K-major: the next 16 elements of each 128-byte row (32 bytes on);
      // MN-major: the next 16 rows (2048 bytes on).
      Value descA = descriptor(loc, idx(loc, aOffset + 32 * k), /*leading=*/16,
                               /*stride=*/1024);
      Value descB =
          descriptor(loc, add(loc, bBase, bTransposed ? 2048 * k : 32 * k),
                     /*leading=*/bTransposed ? 1024 : 16, /*stride=*/1024);
      accStruct = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structTy, accStruct, descA, descB,
          NVVM::MMAShapeAttr::get(b.getContext(), 64, acc.getNumCols(), 16),
          NVVM::WGMMATypesAttr::get(b.getContext(), type),
          NVVM::WGMMATypesAttr::get(b.getContext(), type),
          NVVM::WGMMATypesAttr::get(b.getContext(), NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(b.getContext(),
                                       NVVM::WGMMAScaleOut::one),
          NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
          NVVM::WGMMAScaleInAttr::get(b.getContext(), NVVM::WGMMAScaleIn::one),
          NVVM::MMALayoutAttr::get(b.getContext(), NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(b.getContext(), bTransposed
                                                       ? NVVM::MMALayout::row
                                                       : NVVM::MMALayout::col),
          NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    Regs out;
    for (int64_t i = 0, e = c.size(); i < e; ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, accStruct, i));
    frags[op.getResult()] = std::move(out);
    return success();
  }

  /// Writes P (A fragments: per k-step rows g, g + 8 and column pairs 2t,
  /// 2t + 8) into its swizzled K-major shared-memory tile, then makes the
  /// stores visible to the async proxy that wgmma reads through.
  void storeProbs(Location loc, const Regs &p, Type elementType) {
    Value pTile = wgmmaTile(loc, kWgmmaTileBytes, elementType);
    Value rows[2] = {add(loc, warpRow, group),
                     add(loc, add(loc, warpRow, group), 8)};
    for (int64_t k = 0; k < static_cast<int64_t>(p.size()) / 4; ++k) {
      for (int64_t j = 0; j < 4; ++j) {
        Value r = rows[j % 2];
        Value chunk = idx(loc, 2 * k + j / 2);
        Value byte = add(loc, swizzledByte(loc, r, chunk),
                         arith::MulIOp::create(b, loc, twoT, idx(loc, 2)));
        Value element = arith::DivUIOp::create(b, loc, byte, idx(loc, 2));
        auto st = vector::StoreOp::create(b, loc, p[4 * k + j], pTile,
                                          ValueRange{element});
        st.setAlignmentAttr(b.getI64IntegerAttr(4));
      }
    }
    fenceProxyAsyncShared(b, loc);
    gpu::BarrierOp::create(b, loc);
  }
  Value group, warpRow, twoT, isGroupLeader;
};

LogicalResult convertKernel(func::FuncOp func, ModuleOp module,
                            bool experimentalWgmma) {
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  if (!schedule)
    return func.emitOpError("is marked ") << kKernelAttrName << " but has no "
                                          << kScheduleAttrName << " attribute";
  if (schedule.getMma() == MmaKind::wgmma && experimentalWgmma &&
      schedule.getProducer() == Producer::cp_async) {
    if (schedule.getWarps() != 4 || schedule.getBlockM() != 64 ||
        schedule.getSwizzle() != 128)
      return func.emitOpError("mma = wgmma is lowered for one warpgroup "
                              "(warps = 4, block_m = 64) with swizzle = 128 "
                              "so far, but the schedule is ")
             << schedule;
  } else if (schedule.getMma() == MmaKind::wgmma && !experimentalWgmma &&
             schedule.getProducer() == Producer::cp_async) {
    return func.emitOpError(
        "mma = wgmma with producer = cp_async is lowered only with the "
        "experimental-wgmma option: it compiles and assembles but has not "
        "yet been checked on a GPU");
  } else if (schedule.getProducer() == Producer::tma) {
    return func.emitOpError(
        "schedule asks for producer = tma, which convert-sdpa-to-hopper "
        "lowers straight from tiledattn.sdpa (run it before "
        "tiledattn-tile-sdpa); convert-tiledattn-to-nvgpu lowers tile "
        "programs of mma = mma_sync with producer = direct or cp_async");
  } else if (schedule.getMma() != MmaKind::mma_sync)
    return func.emitOpError("schedule asks for mma = ")
           << stringifyMmaKind(schedule.getMma())
           << ", producer = " << stringifyProducer(schedule.getProducer())
           << "; convert-tiledattn-to-nvgpu lowers only mma = mma_sync with "
              "producer = direct or cp_async so far";
  if (func.getFunctionType().getNumResults() != 0)
    return func.emitOpError("a kernel function must return nothing");
  // The emitter reads the entry block and maps only its ops: a declaration
  // crashed it, and further blocks were dropped (leaving branches to blocks
  // of the erased function).
  if (func.isExternal())
    return func.emitOpError("is marked ")
           << kKernelAttrName << " but has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("expected a kernel body of one block, but got ")
           << func.getBody().getBlocks().size();
  // Tiles live in registers of one thread block: a tile argument has no
  // fragments to start from (its uses crashed the emitter).
  for (BlockArgument arg : func.getArguments())
    if (isTile(arg))
      return func.emitOpError("expected kernel arguments that are not tiles, "
                              "but argument #")
             << arg.getArgNumber() << " is " << arg.getType();

  LayoutAssignment la;
  if (failed(collectLayouts(func, la)))
    return failure();

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, func.getLoc(), func.getName());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       func.getFunctionType());
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(schedule.getNumThreads()), 1, 1}));
  kernel->setAttr(kScheduleAttrName, schedule);

  MmaSyncEmitter emitter(b, schedule, la);
  if (failed(emitter.emitFunction(func, kernel))) {
    gpuModule.erase();
    return failure();
  }
  func.erase();
  return success();
}

class ConvertTiledAttnToNVGPUPass
    : public tiledattn::impl::ConvertTiledAttnToNVGPUPassBase<
          ConvertTiledAttnToNVGPUPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kKernelAttrName))
        kernels.push_back(func);
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    for (func::FuncOp func : kernels)
      if (failed(convertKernel(func, module, experimentalWgmma)))
        return signalPassFailure();
  }
};
} // namespace
