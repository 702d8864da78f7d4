//===- InitAllTiledAttn.h - Register everything tiledattn uses --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The dialects and passes every tiledattn tool registers: ours plus only the
// upstream ones our IR contains or our pipeline runs.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_INITALLTILEDATTN_H
#define TILEDATTN_INITALLTILEDATTN_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tiledattn {
void registerAllTiledAttnDialects(DialectRegistry &registry);
void registerAllTiledAttnPasses();
} // namespace mlir::tiledattn

#endif // TILEDATTN_INITALLTILEDATTN_H
