//===- WgmmaHelpers.h - wgmma builders both lowerings use -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One warpgroup mma (wgmma.mma_async m64nNk16) with its operands in shared
// memory or A in registers, descriptors stepped along K, and the retire of
// an accumulator after wgmma.wait_group: what tiledattn-lower-mma (and the
// mma_sync path's experimental wgmma) emit.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_WGMMAHELPERS_H
#define TILEDATTN_CONVERSION_WGMMAHELPERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include <string>

namespace mlir::tiledattn {
/// Inline-asm constraints of `n` f32 registers tied in and out
/// ("=f,...,=f,0,...,n-1"): a wgmma accumulator passing through.
inline std::string tiedF32Constraints(int64_t n) {
  std::string constraints;
  for (int64_t i = 0; i < n; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < n; ++i)
    constraints += std::to_string(i) + (i + 1 < n ? "," : "");
  return constraints;
}

/// Volatile inline PTX returning one value.
inline Value sideEffectAsm(OpBuilder &b, Location loc, Type resultType,
                           ValueRange operands, StringRef text,
                           StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, resultType, operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             ArrayAttr())
      .getResult(0);
}

/// The struct of `n` f32 a wgmma accumulator is (n = N / 2 per thread).
inline LLVM::LLVMStructType f32Struct(MLIRContext *ctx, int64_t n) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n, Float32Type::get(ctx)));
}

/// The descriptor `bytes` further on: the start address field holds
/// address >> 4 in its low 14 bits and shared memory ends below 256 KiB, so
/// adding bytes >> 4 to the whole descriptor never carries out of it. One
/// 64-bit add per k-step instead of rebuilding the fields.
inline Value advanceDescriptor(OpBuilder &b, Location loc, Value desc,
                               int64_t bytes) {
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(
      b, loc, desc, arith::ConstantIntOp::create(b, loc, bytes >> 4, 64));
}

/// One wgmma.m64n<n>k16 with A and B in shared memory (descriptors), A
/// K-major, B K-major (`bKMajor`, an N x K tile) or MN-major (K x N);
/// `accumulate` false starts from zero (scale-d 0). `acc` is the f32 struct
/// of the previous k-step (undef for the first).
inline Value wgmmaSmem(OpBuilder &b, Location loc, Value acc, Value descA,
                       Value descB, int64_t n, Type elementType,
                       bool accumulate, bool bKMajor, bool aKMajor = true) {
  MLIRContext *ctx = b.getContext();
  auto type =
      elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, acc.getType(), acc, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, 64, n, 16),
      NVVM::WGMMATypesAttr::get(ctx, type),
      NVVM::WGMMATypesAttr::get(ctx, type),
      NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, accumulate ? NVVM::WGMMAScaleOut::one
                                                   : NVVM::WGMMAScaleOut::zero),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::MMALayoutAttr::get(ctx, aKMajor ? NVVM::MMALayout::row
                                            : NVVM::MMALayout::col),
      NVVM::MMALayoutAttr::get(ctx, bKMajor ? NVVM::MMALayout::col
                                            : NVVM::MMALayout::row),
      NVVM::MMAIntOverflowAttr());
}

/// One wgmma.m64n<cols>k16 with A from registers (`a`: 4 packed pairs of
/// f16/bf16) and B by descriptor, K-major or MN-major (`bKMajor` false sets
/// tnspB), the accumulator `acc` (acc.size() f32) tied in and out. Inline
/// PTX: nvvm.wgmma.mma_async takes A from shared memory only. scale-d is an
/// immediate inside the asm: a register holding it would be set between
/// wgmmas, which makes ptxas serialize them (C7513).
inline Value wgmmaRegisterA(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                            ArrayRef<Value> a, Value desc, int64_t cols,
                            Type elementType, bool bKMajor, bool accumulate) {
  std::string ty = elementType.isBF16() ? "bf16" : "f16";
  int64_t n = acc.size();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, " << (accumulate ? 1 : 0)
     << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << cols << "k16.f32." << ty
     << "." << ty << " {";
  for (int64_t i = 0; i < n; ++i)
    os << (i ? ", $" : "$") << i;
  os << "}, {$" << 2 * n << ", $" << 2 * n + 1 << ", $" << 2 * n + 2 << ", $"
     << 2 * n + 3 << "}, $" << 2 * n + 4 << ", p, 1, 1, " << (bKMajor ? 0 : 1)
     << ";\n}";
  SmallVector<Value> operands(acc.begin(), acc.end());
  operands.append(a.begin(), a.end());
  operands.push_back(desc);
  return sideEffectAsm(b, loc, f32Struct(b.getContext(), n), operands, text,
                       tiedF32Constraints(n) + ",r,r,r,r,l");
}

/// An accumulator struct once `wgmma.wait_group` has retired it: its values
/// pass through an empty volatile asm after the wait. Without that data
/// dependence LLVM may read the registers before the wait, while the wgmma
/// still writes them.
inline Value retireAccumulator(OpBuilder &b, Location loc, Value accStruct) {
  auto structTy = cast<LLVM::LLVMStructType>(accStruct.getType());
  int64_t n = structTy.getBody().size();
  SmallVector<Value> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, accStruct, i));
  return sideEffectAsm(b, loc, structTy, values, "", tiedF32Constraints(n));
}
} // namespace mlir::tiledattn

#endif // TILEDATTN_CONVERSION_WGMMAHELPERS_H
