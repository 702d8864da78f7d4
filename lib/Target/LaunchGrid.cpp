//===- LaunchGrid.cpp - A tile program's grid from its tile loops -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tile program says which tiles it walks in its tiledattn.for_each_tile
// bounds: the forward's query blocks of q, the backward's key blocks of k
// and the heads of k (GQA: one block per K/V head walks its query heads).
// The bundle's launch must give out exactly those tiles, so the manifest's
// grid rules are those bounds, written in the runtime's grid grammar
// (docs/Runtime.md) over the launch's sizes.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Target/Bundle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// The launch's size that dimension `dim` of the kernel's argument `arg`
/// holds: q and o are [batch, heads_q, seqlen_q, head_dim(_v)], k and v
/// [batch, heads_kv, seqlen_k, head_dim(_v)].
std::optional<std::string> sizeName(unsigned arg, int64_t dim) {
  static constexpr const char *names[4][4] = {
      {"batch", "heads_q", "seqlen_q", "head_dim"},
      {"batch", "heads_kv", "seqlen_k", "head_dim"},
      {"batch", "heads_kv", "seqlen_k", "head_dim_v"},
      {"batch", "heads_q", "seqlen_q", "head_dim_v"}};
  if (arg >= 4 || dim < 0 || dim >= 4)
    return std::nullopt;
  return std::string(names[arg][dim]);
}

/// `value` as a grid rule, or a diagnostic on `loop` naming what the
/// runtime cannot compute.
FailureOr<std::string> rule(Value value, int64_t blockM, Operation *loop,
                            unsigned bound) {
  static constexpr const char *names[] = {"query blocks", "heads", "batches"};
  auto fail = [&](StringRef what) {
    return loop->emitOpError("expected bound #")
           << bound << " (" << names[bound]
           << ") to be built from memref.dim of q, k, v or o, constants, "
              "arith.ceildivui, arith.muli, arith.addi and arith.minui (the "
              "bounds are the launch's grid, which the runtime computes from "
              "the tensors' sizes), but it uses "
           << what;
  };
  if (isa<BlockArgument>(value))
    return fail("a block argument");
  Operation *def = value.getDefiningOp();
  auto binary = [&](StringRef format) -> FailureOr<std::string> {
    FailureOr<std::string> lhs = rule(def->getOperand(0), blockM, loop, bound);
    if (failed(lhs))
      return failure();
    FailureOr<std::string> rhs = rule(def->getOperand(1), blockM, loop, bound);
    if (failed(rhs))
      return failure();
    return llvm::formatv(format.data(), *lhs, *rhs).str();
  };
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(def)
      .Case([&](arith::ConstantIndexOp c) -> FailureOr<std::string> {
        if (c.value() == blockM)
          return std::string("block_m");
        return std::to_string(c.value());
      })
      .Case([&](memref::DimOp dim) -> FailureOr<std::string> {
        auto arg = dyn_cast<BlockArgument>(dim.getSource());
        std::optional<int64_t> index = dim.getConstantIndex();
        std::optional<std::string> name;
        if (arg && isa<func::FuncOp>(arg.getOwner()->getParentOp()) && index)
          name = sizeName(arg.getArgNumber(), *index);
        if (!name)
          return fail("a memref.dim of another tensor, or of a dimension "
                      "not constant");
        return *name;
      })
      .Case([&](arith::CeilDivUIOp) { return binary("ceil_div({0}, {1})"); })
      .Case([&](arith::MinUIOp) { return binary("min({0}, {1})"); })
      .Case([&](arith::MulIOp) { return binary("({0}) * ({1})"); })
      .Case([&](arith::AddIOp) { return binary("({0} + {1})"); })
      .Default([&](Operation *op) {
        return fail(("'" + op->getName().getStringRef() + "'").str());
      });
}
} // namespace

LogicalResult
mlir::tiledattn::tileGridRules(func::FuncOp func, int64_t blockM,
                               std::array<std::string, 3> &tiles) {
  std::optional<std::array<std::string, 3>> first;
  WalkResult walk = func.walk([&](ForEachTileOp loop) {
    std::array<std::string, 3> rules;
    Value bounds[] = {loop.getQBlocks(), loop.getHeads(), loop.getBatches()};
    for (auto [i, bound] : llvm::enumerate(bounds)) {
      FailureOr<std::string> r = rule(bound, blockM, loop, i);
      if (failed(r))
        return WalkResult::interrupt();
      rules[i] = *r;
    }
    if (!first) {
      first = rules;
      return WalkResult::advance();
    }
    if (rules == *first)
      return WalkResult::advance();
    loop.emitOpError("walks other tiles than the program's first "
                     "tiledattn.for_each_tile, but one launch gives out one "
                     "grid's tiles: expected bounds (")
        << llvm::join(*first, ", ") << ") but got (" << llvm::join(rules, ", ")
        << ")";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (first)
    tiles = *first;
  return success();
}
