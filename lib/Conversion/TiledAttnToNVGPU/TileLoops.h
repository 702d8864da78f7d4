//===- TileLoops.h - tiledattn.for_each_tile to GPU code --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_TILELOOPS_H
#define TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_TILELOOPS_H

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::tiledattn {
/// Lowers the tiledattn.for_each_tile ops of `kernel` as its `schedule`
/// launches it: the block's one tile (from the grid), or with persistent an
/// scf.for over every gridDim.x-th tile. (A persistent schedule's program
/// without one is refused before, by convert-tiledattn-to-nvgpu.)
LogicalResult lowerTileLoops(gpu::GPUFuncOp kernel, ScheduleAttr schedule);
} // namespace mlir::tiledattn

#endif // TILEDATTN_LIB_CONVERSION_TILEDATTNTONVGPU_TILELOOPS_H
