//===- RegionParsing.h - Regions parsed without escaping uses ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The custom<EnclosedRegion> directive of every tiledattn op with a region.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_DIALECT_TILEDATTN_IR_REGIONPARSING_H
#define TILEDATTN_LIB_DIALECT_TILEDATTN_IR_REGIONPARSING_H

#include "mlir/IR/OpImplementation.h"

namespace mlir::tiledattn {
/// Parses `region` as `$region` would, then cuts every use of a value it
/// defines from an operation outside it, and fails if there was one. MLIR's
/// parser resolves a forward reference made before the region by a name
/// the region defines; such IR never verifies, and if the op's parse then
/// fails, the region is freed while the outside use still points into it
/// (a crash on malformed input, the class of llvm/llvm-project#128011).
ParseResult parseEnclosedRegion(OpAsmParser &parser, Region &region);
void printEnclosedRegion(OpAsmPrinter &printer, Operation *op, Region &region);

/// The same for a region that ends in an implicit tiledattn.yield
/// (tiledattn.turn): added when absent, left out when it yields nothing.
ParseResult parseYieldingRegion(OpAsmParser &parser, Region &region);
void printYieldingRegion(OpAsmPrinter &printer, Operation *op, Region &region);
} // namespace mlir::tiledattn

#endif // TILEDATTN_LIB_DIALECT_TILEDATTN_IR_REGIONPARSING_H
