//===- AccumulatorOps.h - Tile ops on accumulators --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-lower-mma lowers the tile ops on a warpgroup's accumulators in
// program order with the mmas (AccumulatorOpsToNVVM.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATOROPS_H
#define TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATOROPS_H

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/IR/Operation.h"
#include <optional>

namespace mlir::tiledattn {
/// The value a lowered register tile or slot is a cast of, if it is one.
Value castSource(Value v);
/// The byte address `tile` (a slot or an alloc tile) is a cast of once
/// tiledattn-lower-rings has run; `what` names it in `op`'s error.
FailureOr<Value> sharedAddressOf(Operation *op, Value tile, StringRef what);
/// The registers of a warpgroup tile (one thread's part) as a struct: an
/// f32 64 x N tile N / 2 floats in wgmma's accumulator layout, a 64-row
/// vector its two rows, an f16/bf16 64 x K tile (an mma's A) K / 4 words.
/// None for a tile that is not a warpgroup's.
std::optional<Type> warpgroupRegisters(TileType tile);
/// The struct of registers a lowered warpgroup tile is a cast of (of
/// warpgroupRegisters' type), or null.
Value loweredRegisters(Value tile);
/// Whether lowerAccumulatorOp takes `op`: a tiledattn.constant, mask,
/// score_mod, online_softmax, scale_max, rescale, store, tma_store,
/// finish_rows, read_rows, resize, truncate, merge_pieces, row_dot,
/// store_rows, exp_from_lse, softmax_grad, reduce_add or stage.
bool isAccumulatorOp(Operation *op);
/// Lowers and erases such an op on a warpgroup's tiles; a diagnostic when
/// its tiles are not lowered ones (casts of their registers' structs).
LogicalResult lowerAccumulatorOp(Operation *op);
} // namespace mlir::tiledattn

#endif // TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATOROPS_H
