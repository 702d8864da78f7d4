//===- NVVMHelpers.h - Small NVVM builders both lowerings use ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Pieces of GPU code that convert-tiledattn-to-nvgpu (mma_sync and its
// experimental wgmma path) and convert-sdpa-to-hopper emit alike.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_NVVMHELPERS_H
#define TILEDATTN_CONVERSION_NVVMHELPERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::tiledattn {
/// An f32 MUFU approximation (llvm.nvvm.ex2.approx*, lg2.approx*) called
/// directly: math.exp2 / math.log2 would lower to libdevice, which links only
/// where a CUDA toolkit is found at compile time, and cost the same op.
inline Value callApproxIntrinsic(OpBuilder &b, Location loc,
                                 StringRef intrinsic, Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(intrinsic), x)
      .getResult(0);
}

/// A wgmma shared-memory matrix descriptor with the 128-byte swizzle for the
/// operand at shared-memory `address` (an index): start address >> 4,
/// leading and stride byte offsets >> 4 (PTX ISA, "Matrix Descriptor
/// Format").
inline Value buildWgmmaDescriptor(OpBuilder &b, Location loc, Value address,
                                  int64_t leading, int64_t stride) {
  Value a64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, a64, c64(0x3FFFF)), c64(4));
  int64_t fields =
      ((leading >> 4) << 16) | ((stride >> 4) << 32) | (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, c64(fields));
}

/// Orders this thread's generic-proxy accesses to shared memory (stores,
/// mbarrier init, cp.async) before later async-proxy ones (wgmma, TMA).
inline void fenceProxyAsyncShared(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}
} // namespace mlir::tiledattn

#endif // TILEDATTN_CONVERSION_NVVMHELPERS_H
