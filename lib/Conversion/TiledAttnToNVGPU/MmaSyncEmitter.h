//===- MmaSyncEmitter.h - Tile programs to GPU kernels ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The layout assignment and the emitter of convert-tiledattn-to-nvgpu
// (TiledAttnToNVGPU.cpp says how a tile program becomes a kernel). The
// emitter's methods live by part: MmaSyncOps.cpp (one tile op each),
// MmaSyncLoops.cpp (loops, cp.async rings, blocks), MmaSyncWgmma.cpp (the
// experimental wgmma path) and TiledAttnToNVGPU.cpp (the function).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_MMASYNCEMITTER_H
#define TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_MMASYNCEMITTER_H

#include "tiledattn/Conversion/NVVMHelpers.h"
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

namespace mlir::tiledattn::mmasync {
/// Register layout of one tile value.
enum class Layout {
  Lhs,    // m16n8k16 A fragments: [kStep][4] x vector<2xT>
  Rhs,    // B fragments from a K x N tile read column-wise (V)
  RhsT,   // B fragments from an N x K tile read row-wise (K, transposed)
  Acc,    // C fragments: [nSlice][4] x f32
  RowVec, // two f32 per thread: rows g and g + 8
};

inline StringRef layoutName(Layout l) {
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

inline bool isTile(Value v) { return isa<TileType>(v.getType()); }

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

//===----------------------------------------------------------------------===//
// Kernel emission (mma_sync)
//===----------------------------------------------------------------------===//

class MmaSyncEmitter {
public:
  MmaSyncEmitter(OpBuilder &b, ScheduleAttr schedule, LayoutAssignment &la)
      : b(b), schedule(schedule), la(la) {}

  LogicalResult emitFunction(func::FuncOp func, gpu::GPUFuncOp kernel);

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

  LogicalResult emitLoad(LoadOp op);

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
                                             int64_t n, int64_t k);

  /// The two B-fragment registers of column slice `n` (8 wide) and k-step
  /// `k` (16 deep). Transposed (K, N x K): row n*8 + g, columns 2t, 2t + 1
  /// and 2t + 8, 2t + 9 of the k-step. Plain (V, K x N): column n*8 + g,
  /// rows 2t, 2t + 1 and 2t + 8, 2t + 9 of the k-step, one element each.
  Regs rhsFragment(Location loc, const DeferredRhs &d, int64_t n, int64_t k);

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

  LogicalResult emitConstant(ConstantOp op);

  /// One m16n8k16 mma: d = a * b + c.
  Regs mma(Location loc, ArrayRef<Value> a, ArrayRef<Value> bFrag,
           ArrayRef<Value> c, Type elementType);

  LogicalResult emitMma(MmaOp op);

  /// Query row of accumulator element `e` (0..3) of this thread, relative
  /// to the block: rows g (e < 2) and g + 8 (e >= 2) of the warp's slab.
  Value threadRow(Location loc, Value blockRow, int64_t e) {
    return add(loc, add(loc, add(loc, blockRow, warpRow), group),
               e >= 2 ? 8 : 0);
  }

  LogicalResult emitMask(MaskOp op);

  /// Packs two f32 into a vector<2xT> mma operand.
  Value packPair(Location loc, Value x, Value y, Type elementType) {
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{x, y});
    return arith::TruncFOp::create(b, loc, VectorType::get({2}, elementType),
                                   v);
  }

  LogicalResult emitOnlineSoftmax(OnlineSoftmaxOp op);

  LogicalResult emitRescale(RescaleOp op);

  LogicalResult emitStore(StoreOp op);

  /// Rebuilds an scf.for whose tile iteration arguments become the flat
  /// list of their fragments.
  LogicalResult emitFor(scf::ForOp loop);

  /// Finds the mma-rhs loads of `loop` that producer = cp_async stages (in
  /// its body, row = induction variable, rows = step) and carves a ring of
  /// num_stages tiles for each out of dynamic shared memory.
  LogicalResult prepareRings(scf::ForOp loop, SmallVectorImpl<LoadOp> &staged);

  /// Every thread copies its share of each staged tile's rows row ..
  /// row + rows - 1 into ring stage `stage` (16 bytes per cp.async; rows
  /// past the sequence end are zero-filled), then commits them as one group.
  void issueCopies(Location loc, ArrayRef<LoadOp> staged, Value row,
                   Value stage);

  LogicalResult emitYield(scf::YieldOp yield);

  LogicalResult emitBlock(Block &block);

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

  void setUpWgmma(Location loc);

  /// The 64 x 64 operand tile at `byteOffset` past the pad, as a flat
  /// memref of 16-bit elements (Q at 0, P at kWgmmaTileBytes).
  Value wgmmaTile(Location loc, int64_t byteOffset, Type elementType);

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
                                 Value row, Value seqLen, Value lastRow);

  /// A wgmma shared-memory descriptor for the tile at `byteOffset` (after
  /// the pad).
  Value descriptor(Location loc, Value byteOffset, int64_t leading,
                   int64_t stride) {
    Value addr = arith::AddIOp::create(
        b, loc, baseAddress,
        arith::AddIOp::create(b, loc, wgmmaPad, byteOffset));
    return buildWgmmaDescriptor(b, loc, addr, leading, stride);
  }

  LogicalResult emitWgmma(MmaOp op);

  /// Writes P (A fragments: per k-step rows g, g + 8 and column pairs 2t,
  /// 2t + 8) into its swizzled K-major shared-memory tile, then makes the
  /// stores visible to the async proxy that wgmma reads through.
  void storeProbs(Location loc, const Regs &p, Type elementType);
  Value group, warpRow, twoT, isGroupLeader;
};
} // namespace mlir::tiledattn::mmasync

#endif // TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_MMASYNCEMITTER_H
