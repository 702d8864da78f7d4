//===- Passes.h - TiledAttn conversion passes -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_PASSES_H
#define TILEDATTN_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::tiledattn {
#define GEN_PASS_DECL
#include "tiledattn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

#endif // TILEDATTN_CONVERSION_PASSES_H
