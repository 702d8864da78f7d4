//===- TiledAttnDialect.h - TiledAttn dialect -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dialect.h"

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsDialect.h.inc"

namespace mlir::tiledattn {
/// Registers of one multiprocessor, shared by the threads of its blocks.
constexpr int64_t kRegistersPerSm = 65536;
/// Registers per thread a block of `threads` starts with when `blocksPerSm`
/// blocks share a multiprocessor: the .maxnreg of a kernel whose warpgroups
/// move registers with setmaxnreg (a multiple of 8, at most 248). ptxas
/// ignores setmaxnreg where it cannot tell the count at entry ("C7508 ...
/// unable to determine register count at entry"), and setmaxnreg only
/// moves registers within the block's share.
constexpr int64_t entryRegisters(int64_t threads, int64_t blocksPerSm = 1) {
  int64_t each = kRegistersPerSm / (threads * blocksPerSm) / 8 * 8;
  return each < 248 ? each : 248;
}
} // namespace mlir::tiledattn

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_H
