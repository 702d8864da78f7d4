//===- Passes.h - TiledAttn dialect passes ----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_H
#define TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

namespace mlir::tiledattn {
/// Function attributes that mark a tile program and carry its schedule.
constexpr llvm::StringLiteral kKernelAttrName = "tiledattn.kernel";
constexpr llvm::StringLiteral kScheduleAttrName = "tiledattn.schedule";
/// On a tile program whose scores are masked causally (top-left): what the
/// kernel's manifest says it computes (the program itself does the masking).
constexpr llvm::StringLiteral kCausalAttrName = "tiledattn.causal";
/// Set by convert-tiledattn-to-nvgpu on each gpu.func: the dynamic shared
/// memory it must be launched with.
constexpr llvm::StringLiteral kDynamicSmemAttrName =
    "tiledattn.dynamic_smem_bytes";
/// Set by tiledattn-lower-rings on each gpu.func: the TMA tensor maps the
/// runtime builds and passes, by value, after the other parameters (an
/// array of {operand, box_rows, box_cols, swizzle} dictionaries).
constexpr llvm::StringLiteral kTensorMapsAttrName = "tiledattn.tensor_maps";
/// Set by convert-tiledattn-to-nvgpu on
/// split_tail kernels: the bytes of workspace per block the runtime passes
/// after scale.
constexpr llvm::StringLiteral kWorkspaceBytesAttrName =
    "tiledattn.workspace_bytes_per_block";
/// The unit argument attribute convert-tiledattn-to-nvgpu marks that
/// workspace's kernel argument with (tiledattn.merge_pieces writes it).
constexpr llvm::StringLiteral kWorkspaceArgAttrName = "tiledattn.workspace";
/// The words a consumer thread leaves in a split_tail workspace slot: its
/// part of a 64 x `headDimV` accumulator, then its two rows' maxima and
/// sums. A slot holds them word-major for the warpgroup's 128 threads.
constexpr int64_t splitTailSlotWords(int64_t headDimV) {
  return headDimV / 2 + 4;
}
/// A split_tail workspace per block: a slot per consumer warpgroup and a
/// 32-bit flag for each, after all the grid's slots.
constexpr int64_t splitTailWorkspaceBytes(int64_t consumers, int64_t headDimV) {
  return consumers * (128 * splitTailSlotWords(headDimV) + 1) * 4;
}

/// Checks that `func`, which holds a tiledattn.sdpa, can become its kernel:
/// one sdpa, no results, nothing else with side effects
/// (tiledattn-tile-sdpa requires it).
LogicalResult verifyKernelFunction(func::FuncOp func);

#define GEN_PASS_DECL
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h.inc"
} // namespace mlir::tiledattn

#endif // TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_H
