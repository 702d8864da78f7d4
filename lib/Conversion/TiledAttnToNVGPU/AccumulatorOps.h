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

#include "mlir/IR/Operation.h"

namespace mlir::tiledattn {
/// Lowers and erases a tiledattn.constant, mask, online_softmax, rescale or
/// store on a warpgroup's tiles; a diagnostic when its tiles are not
/// lowered ones (casts of their registers' structs).
LogicalResult lowerAccumulatorOp(Operation *op);
} // namespace mlir::tiledattn

#endif // TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_ACCUMULATOROPS_H
