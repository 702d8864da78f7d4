//===- ApproximateMath.cpp - fastmath<afn> to approximate instructions ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-approximate-math: an f32 math.tanh marked fastmath<afn> becomes
// llvm.intr.tanh with afn, which NVPTX emits as tanh.approx.f32, instead of
// libdevice's __nv_tanhf (see the pass description). Score bodies such as
// Gemma-2's softcap run one per score, so the difference is the kernel's
// speed.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;

namespace {
struct ApproximateTanh : OpRewritePattern<math::TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::TanhOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF32() ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
      return failure();
    auto afn =
        LLVM::FastmathFlagsAttr::get(op.getContext(), LLVM::FastmathFlags::afn);
    rewriter.replaceOpWithNewOp<LLVM::TanhOp>(op, op.getType(), op.getOperand(),
                                              afn);
    return success();
  }
};

class ApproximateMathPass
    : public tiledattn::impl::ApproximateMathPassBase<ApproximateMathPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ApproximateTanh>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
