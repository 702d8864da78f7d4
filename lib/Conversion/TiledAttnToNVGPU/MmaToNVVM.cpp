//===- MmaToNVVM.cpp - Asynchronous mmas to wgmma ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-lower-mma: tiledattn.mma_async becomes a wgmma group (fence,
// one wgmma.m64nNk16 per 16 of K, commit) and tiledattn.wait a
// wgmma.wait_group with the count of the block's mmas issued since, then
// the accumulator's retire; in program order with them, the tile ops on
// the accumulators (AccumulatorOpsToNVVM.cpp). The wgmmas, descriptor steps and
// retire are WgmmaHelpers.h's.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorOps.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Conversion/WgmmaHelpers.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_LOWERMMAPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// Bytes of one row of a 64-column swizzle atom.
constexpr int64_t kAtomRowBytes = 128;
/// Stride byte offset of the 128-byte swizzle: 8 rows of an atom.
constexpr int64_t kSwizzleStrideBytes = 1024;

/// The mmas of the wait's block issued after the one it waits for: the N
/// of its wgmma.wait_group. Fails when an op between the two holds an mma
/// in a region (its count is not known before it runs).
FailureOr<int64_t> mmasInFlight(WaitOp wait, MmaAsyncOp mma) {
  int64_t count = 0;
  for (Operation *op = mma->getNextNode(); op != wait; op = op->getNextNode()) {
    if (isa<MmaAsyncOp>(op)) {
      ++count;
      continue;
    }
    bool nested = false;
    op->walk([&](MmaAsyncOp) { nested = true; });
    if (nested) {
      InFlightDiagnostic diag =
          wait.emitOpError("cannot count the mmas in flight: ")
          << op->getName() << " between the mma and this wait issues mmas "
          << "in a region";
      diag.attachNote(op->getLoc()) << "here";
      return failure();
    }
  }
  return count;
}

/// Loops (scf.for, scf.if, ...) that carry warpgroup tiles carry their
/// registers instead, with casts where the body and the code around use
/// tiles: upstream's structural type conversion of SCF.
LogicalResult convertCarriedTiles(gpu::GPUFuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  TypeConverter converter;
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](TileType tile) -> std::optional<Type> {
    return warpgroupRegisters(tile);
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                 Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  };
  converter.addSourceMaterialization(cast);
  converter.addTargetMaterialization(cast);
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(ctx);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  return applyPartialConversion(kernel, target, std::move(patterns));
}

class MmaLowering {
public:
  MmaLowering(gpu::GPUFuncOp kernel) : kernel(kernel), b(kernel) {}

  LogicalResult run() {
    if (failed(convertCarriedTiles(kernel)))
      return failure();
    SmallVector<Operation *> ops;
    WalkResult walk = kernel.walk([&](Operation *op) {
      if (isa<TurnOp, WarpSpecializeOp>(op)) {
        op->emitOpError("expected tiledattn-lower-roles to have run before "
                        "tiledattn-lower-mma (futures pass through turns)");
        return WalkResult::interrupt();
      }
      if (isa<MmaAsyncOp, WaitOp>(op) || isAccumulatorOp(op))
        ops.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // Count before lowering: the count looks at the mma ops between.
    DenseMap<Operation *, int64_t> pending;
    for (Operation *op : ops) {
      auto wait = dyn_cast<WaitOp>(op);
      if (!wait)
        continue;
      auto mma = wait.getFuture().getDefiningOp<MmaAsyncOp>();
      if (!mma || mma->getBlock() != wait->getBlock())
        return wait.emitOpError("expected to wait in the block of the "
                                "tiledattn.mma_async it waits for");
      FailureOr<int64_t> n = mmasInFlight(wait, mma);
      if (failed(n))
        return failure();
      pending[wait] = *n;
    }
    SmallVector<Operation *> lowered;
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      loc = op->getLoc();
      if (auto mma = dyn_cast<MmaAsyncOp>(op)) {
        if (failed(lowerMma(mma)))
          return failure();
      } else if (auto wait = dyn_cast<WaitOp>(op)) {
        lowerWait(wait, pending.lookup(op));
      } else {
        // Its tiles come from the mmas and waits lowered before it.
        if (failed(lowerAccumulatorOp(op)))
          return failure();
        continue;
      }
      lowered.push_back(op);
    }
    for (Operation *op : llvm::reverse(lowered))
      op->erase();
    return success();
  }

private:
  gpu::GPUFuncOp kernel;
  OpBuilder b;
  Location loc = kernel.getLoc();
  /// The accumulator struct of each lowered mma, by its future.
  DenseMap<Value, Value> issued;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// The struct of registers a lowered tile is a cast of.
  FailureOr<Value> registersOf(MmaAsyncOp mma, Value tile, StringRef name) {
    if (Value regs = loweredRegisters(tile))
      return regs;
    auto registers = cast<LLVM::LLVMStructType>(
        *warpgroupRegisters(cast<TileType>(tile.getType())));
    return mma.emitOpError("expected ")
           << name << " to be a lowered register tile (a cast of a struct "
           << "of " << registers.getBody().size() << " "
           << registers.getBody().front() << " per thread)";
  }

  LogicalResult lowerMma(MmaAsyncOp mma) {
    SmemType bType = mma.getB().getType();
    Type element = bType.getElementType();
    int64_t k = mma.getK(), n = mma.getN(), kSteps = k / 16;
    // after_parts: each partial slot's part p waited for just before the
    // first k-step in its columns.
    SmallVector<PartWaits> partWaits;
    for (Value token : mma.getAfterParts()) {
      std::optional<PartWaits> waits = PartWaits::from(token);
      if (!waits)
        return mma.emitOpError("expected after_parts to be lowered partial "
                               "gets (run tiledattn-lower-rings before "
                               "tiledattn-lower-mma)");
      partWaits.push_back(*waits);
    }
    auto waitForParts = [&](int64_t kk) {
      for (const PartWaits &waits : partWaits) {
        int64_t partCols = k / waits.parts;
        if ((16 * kk) % partCols == 0)
          waits.wait(b, loc, 16 * kk / partCols);
      }
    };
    bool bKMajor = mma.getTransposeB();
    FailureOr<Value> bAddress = sharedAddressOf(mma, mma.getB(), "B operand");
    if (failed(bAddress))
      return failure();
    // K-major B (N x K): 16 bytes between core matrices along K; MN-major
    // (K x N): one atom of K rows between the 64-column atoms along N,
    // from b_col's atom on.
    Value bStart = *bAddress;
    if (Value row = mma.getBRow()) // rows within each atom
      bStart = arith::AddIOp::create(
          b, loc, bStart,
          arith::MulIOp::create(b, loc, row, idx(kAtomRowBytes)));
    if (int64_t col = mma.getBCol().value_or(0))
      bStart = arith::AddIOp::create(
          b, loc, bStart, idx(col / 64 * bType.getRows() * kAtomRowBytes));
    Value descB = buildWgmmaDescriptor(
        b, loc, bStart, bKMajor ? 16 : bType.getRows() * kAtomRowBytes,
        kSwizzleStrideBytes);
    auto bStep = [&](int64_t kk) -> int64_t {
      if (!bKMajor) // 16 more rows
        return kk * 16 * kAtomRowBytes;
      return (kk / 4) * bType.getRows() * kAtomRowBytes + 32 * (kk % 4);
    };
    Value acc;
    if (Value in = mma.getAcc()) {
      FailureOr<Value> regs = registersOf(mma, in, "acc");
      if (failed(regs))
        return failure();
      acc = *regs;
    }
    // acc_in_flight: the earlier mma's registers as its last wgmma left
    // them, not retired; its group and this one's complete in order.
    if (Value previous = mma.getAccInFlight())
      acc = issued.lookup(previous);
    bool accumulate = mma.getAcc() || mma.getAccInFlight();
    if (mma.isASmem()) {
      auto aType = cast<SmemType>(mma.getA().getType());
      FailureOr<Value> aAddress = sharedAddressOf(mma, mma.getA(), "A operand");
      if (failed(aAddress))
        return failure();
      Value rowOffset =
          arith::MulIOp::create(b, loc, mma.getARow(), idx(kAtomRowBytes));
      Value rows = arith::AddIOp::create(b, loc, *aAddress, rowOffset);
      if (mma.getUniformA()) // recomputed per issue, on the uniform datapath
        rows = warpUniformIndex(b, loc, rows);
      // K-major A (64 x K): as K-major B. transpose_a (K x 64 stored, M-
      // major): as an MN-major B, 16 more rows a k-step.
      bool aKMajor = !mma.getTransposeA();
      Value descA = buildWgmmaDescriptor(
          b, loc, rows, aKMajor ? 16 : aType.getRows() * kAtomRowBytes,
          kSwizzleStrideBytes);
      if (!acc)
        acc = LLVM::UndefOp::create(b, loc, f32Struct(b.getContext(), n / 2));
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        waitForParts(kk);
        int64_t aStep =
            aKMajor ? (kk / 4) * aType.getRows() * kAtomRowBytes + 32 * (kk % 4)
                    : kk * 16 * kAtomRowBytes;
        acc = wgmmaSmem(b, loc, acc, advanceDescriptor(b, loc, descA, aStep),
                        advanceDescriptor(b, loc, descB, bStep(kk)), n, element,
                        /*accumulate=*/kk > 0 || accumulate, bKMajor, aKMajor);
      }
    } else {
      FailureOr<Value> a = registersOf(mma, mma.getA(), "A");
      if (failed(a))
        return failure();
      SmallVector<Value> accRegs;
      for (int64_t i = 0; i < n / 2; ++i)
        accRegs.push_back(
            acc ? LLVM::ExtractValueOp::create(b, loc, acc, i).getResult()
                : LLVM::PoisonOp::create(b, loc, b.getF32Type()).getResult());
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        waitForParts(kk);
        SmallVector<Value> words;
        for (int64_t w = 0; w < 4; ++w)
          words.push_back(LLVM::ExtractValueOp::create(b, loc, *a, 4 * kk + w));
        if (kk > 0)
          for (int64_t i = 0; i < n / 2; ++i)
            accRegs[i] = LLVM::ExtractValueOp::create(b, loc, acc, i);
        acc = wgmmaRegisterA(b, loc, accRegs, words,
                             advanceDescriptor(b, loc, descB, bStep(kk)), n,
                             element, bKMajor,
                             /*accumulate=*/kk > 0 || accumulate);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    issued[mma.getResult()] = acc;
    return success();
  }

  void lowerWait(WaitOp wait, int64_t pending) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
    Value retired = retireAccumulator(b, loc, issued.lookup(wait.getFuture()));
    wait.getResult().replaceAllUsesWith(
        UnrealizedConversionCastOp::create(b, loc, wait.getType(), retired)
            .getResult(0));
  }
};

class LowerMmaPass : public tiledattn::impl::LowerMmaPassBase<LowerMmaPass> {
public:
  void runOnOperation() override {
    if (failed(lowerEachKernel<MmaAsyncOp>(
            getOperation(), "tiledattn-lower-mma lowers kernels",
            [](gpu::GPUFuncOp k) { return MmaLowering(k).run(); })))
      signalPassFailure();
  }
};
} // namespace
