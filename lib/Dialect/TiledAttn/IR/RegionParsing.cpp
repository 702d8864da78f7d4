//===- RegionParsing.cpp - Regions parsed without escaping uses -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "RegionParsing.h"

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

ParseResult mlir::tiledattn::parseEnclosedRegion(OpAsmParser &parser,
                                                 Region &region) {
  SMLoc loc = parser.getCurrentLocation();
  ParseResult parsed = parser.parseRegion(region);
  // The region's operations, nested ones too. (Walking up from a user
  // instead would cross regions that no operation holds yet: those of ops
  // still being parsed.)
  llvm::SmallPtrSet<Operation *, 32> inside;
  region.walk([&](Operation *op) { inside.insert(op); });
  Value escaped; // the first value used outside, for the diagnostic
  auto cutOutsideUses = [&](Value value) {
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      if (inside.contains(use.getOwner()))
        continue;
      if (!escaped)
        escaped = value;
      use.drop();
    }
  };
  region.walk([&](Block *block) {
    for (BlockArgument argument : block->getArguments())
      cutOutsideUses(argument);
    for (Operation &op : *block)
      for (Value result : op.getResults())
        cutOutsideUses(result);
  });
  if (failed(parsed))
    return failure();
  if (escaped)
    return parser.emitError(loc)
           << "a value this region defines is used before the region, "
              "outside it (an SSA name defined in a region is visible only "
              "inside it)";
  return success();
}

void mlir::tiledattn::printEnclosedRegion(OpAsmPrinter &printer, Operation *,
                                          Region &region) {
  printer.printRegion(region);
}

ParseResult mlir::tiledattn::parseYieldingRegion(OpAsmParser &parser,
                                                 Region &region) {
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parseEnclosedRegion(parser, region)))
    return failure();
  TurnOp::ensureTerminator(region, parser.getBuilder(),
                           parser.getEncodedSourceLoc(loc));
  return success();
}

void mlir::tiledattn::printYieldingRegion(OpAsmPrinter &printer, Operation *,
                                          Region &region) {
  // The yield is left out when it hands out nothing.
  Operation *yield = region.empty() ? nullptr : region.front().getTerminator();
  bool terminator = yield && (!yield->getAttrDictionary().empty() ||
                              yield->getNumOperands() != 0);
  printer.printRegion(region, /*printEntryBlockArgs=*/true,
                      /*printBlockTerminators=*/terminator);
}
