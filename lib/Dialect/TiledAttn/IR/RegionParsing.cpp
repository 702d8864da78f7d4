//===- RegionParsing.cpp - Regions parsed without escaping uses -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "RegionParsing.h"

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

using namespace mlir;

ParseResult mlir::tiledattn::parseEnclosedRegion(OpAsmParser &parser,
                                                 Region &region) {
  SMLoc loc = parser.getCurrentLocation();
  ParseResult parsed = parser.parseRegion(region);
  // The name of the first value used outside, for the diagnostic.
  Value escaped;
  auto cutOutsideUses = [&](Value value) {
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      Region *user = use.getOwner()->getParentRegion();
      if (user && region.isAncestor(user))
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
