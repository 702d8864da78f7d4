//===- RoleOps.cpp - Warp roles ----------------------------------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verifiers of tiledattn.warp_specialize, tiledattn.turn and
// tiledattn.for_each_tile; tiledattn.first_query_block's folder and
// expansion.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::tiledattn;

LogicalResult WarpSpecializeOp::verify() {
  for (auto [name, regs] :
       {std::pair<StringRef, int64_t>{"producer_regs", getProducerRegs()},
        {"consumer_regs", getConsumerRegs()}})
    if (regs < 24 || regs > 256 || regs % 8)
      return emitOpError("expected ")
             << name
             << " to be a multiple of 8 in [24, 256] (a setmaxnreg "
                "budget), but got "
             << regs;
  // setmaxnreg moves registers within the block's share: its threads times
  // the count each starts with (the kernel's .maxnreg).
  int64_t total =
      128 * (getProducerRegs() + getConsumers() * getConsumerRegs());
  int64_t share = getNumThreads() * getEntryRegs();
  if (total > share)
    return emitOpError("expected 128 * (producer_regs + consumers * "
                       "consumer_regs) <= ")
           << share << " registers (" << getNumThreads() << " threads at "
           << getEntryRegs() << " each, the kernel's .maxnreg), but got "
           << total;
  if (!getProducer().empty() && getProducer().front().getNumArguments())
    return emitOpError("expected the producer region to take no argument, "
                       "but it takes ")
           << getProducer().front().getNumArguments();
  unsigned consumerArgs =
      getConsumer().empty() ? 0 : getConsumer().front().getNumArguments();
  if (consumerArgs != 1 ||
      !getConsumer().front().getArgument(0).getType().isIndex())
    return emitOpError("expected the consumer region to take one index "
                       "argument (the consumer warpgroup), but it takes ")
           << consumerArgs << " argument(s)";
  if (auto kernel = getOperation()->getParentOfType<gpu::GPUFuncOp>())
    if (std::optional<ArrayRef<int32_t>> size = kernel.getKnownBlockSize())
      if ((*size)[0] != getNumThreads())
        return emitOpError("expected the kernel's block of ")
               << getNumThreads() << " threads (128 per warpgroup, "
               << getConsumers() << " consumers and the producer), but its "
               << "known_block_size is " << (*size)[0];
  return success();
}

/// The tiledattn.warp_specialize whose consumer region holds `op`, or null.
static WarpSpecializeOp consumerRolesOf(Operation *op) {
  auto roles = op->getParentOfType<WarpSpecializeOp>();
  if (roles && roles.getConsumer().isAncestor(op->getParentRegion()))
    return roles;
  return {};
}

LogicalResult TurnOp::verify() {
  WarpSpecializeOp roles = consumerRolesOf(*this);
  if (!roles)
    return emitOpError("expected to be in the consumer region of a "
                       "tiledattn.warp_specialize (turns rotate among its "
                       "consumer warpgroups)");
  if (roles.getConsumers() < 2)
    return emitOpError("expected 2 or more consumer warpgroups to take turns, "
                       "but the tiledattn.warp_specialize has ")
           << roles.getConsumers();
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("expected the body to yield the turn's result types, "
                       "but it yields ")
           << yield.getValues().size() << " value(s) for " << getNumResults()
           << " result(s)";
  return success();
}

LogicalResult ConsumersSyncOp::verify() {
  if (!consumerRolesOf(*this))
    return emitOpError("expected to be in the consumer region of a "
                       "tiledattn.warp_specialize (its consumer warpgroups "
                       "meet there)");
  return success();
}

LogicalResult ForEachTileOp::verify() {
  Block &body = getBody().front();
  unsigned leading = getNumLeadingArguments();
  unsigned expected = leading + getInits().size();
  if (getRanksFrom() && !getDynamic())
    return emitOpError("expected `dynamic` with ranks_from (the ranks a "
                       "dynamic loop's producer tags its puts with)");
  if (getSplitTail() && getDynamic())
    return emitOpError("expected split_tail (pieces of the static persistent "
                       "order's last round) or dynamic, not both");
  if (body.getNumArguments() != expected)
    return emitOpError("expected the body to take the tile's q block, head, "
                       "batch and done (index)")
           << (getSplitTail()   ? ", the piece's first block, blocks and "
                                  "holders (index),"
               : !getDynamic()  ? ""
               : getRanksFrom() ? ", the slot and its token,"
                                : ", the rank (i32),")
           << " and then the " << getInits().size() << " iter_args, "
           << expected << " arguments, but it takes " << body.getNumArguments();
  unsigned indices =
      kNumTileArguments + (getSplitTail() ? kNumPieceArguments : 0);
  for (unsigned i = 0; i < indices; ++i)
    if (!body.getArgument(i).getType().isIndex())
      return emitOpError("expected body argument #")
             << i << " to be an index (q block, head, batch, done"
             << (getSplitTail() ? ", first, blocks, holders" : "")
             << "), but got " << body.getArgument(i).getType();
  if (getDynamic() && !getRanksFrom() &&
      !body.getArgument(kNumTileArguments).getType().isInteger(32))
    return emitOpError("expected body argument #")
           << kNumTileArguments << " to be the tile's rank (i32), but got "
           << body.getArgument(kNumTileArguments).getType();
  if (Value ring = getRanksFrom()) {
    Type slot = cast<RingType>(ring.getType()).getSlotType();
    BlockArgument held = body.getArgument(kNumTileArguments);
    BlockArgument token = getTakenToken();
    if (held.getType() != slot || !isa<TokenType>(token.getType()))
      return emitOpError("expected body arguments #")
             << kNumTileArguments << " and #" << kNumTileArguments + 1
             << " to be ranks_from's slot (" << slot
             << ") and its !tiledattn.token, but got " << held.getType()
             << " and " << token.getType();
    if (failed(verifyReleasedOnce(*this, token)))
      return failure();
  }
  if (TypeRange(getCarriedArguments()) != getInits().getTypes())
    return emitOpError("expected the body's arguments after ")
           << (getSplitTail()   ? "holders"
               : !getDynamic()  ? "done"
               : getRanksFrom() ? "the token"
                                : "the rank")
           << " to have the iter_args' types";
  if (getResultTypes() != getInits().getTypes())
    return emitOpError("expected the results to have the iter_args' types, "
                       "but got ")
           << getNumResults() << " result(s) for " << getInits().size()
           << " iter_args";
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield || yield.getValues().getTypes() != getResultTypes())
    return emitOpError("expected the body to end in a tiledattn.yield of the "
                       "iter_args' types (the next tile's values)");
  return success();
}

/// The block sizes of first_query_block and key_block_end.
static LogicalResult verifyBlockRows(Operation *op, int64_t queryRows,
                                     int64_t keyRows) {
  for (auto [name, rows] :
       {std::pair<StringRef, int64_t>{"rows", queryRows}, {"keys", keyRows}})
    if (rows <= 0)
      return op->emitOpError("expected ")
             << name << " (the rows of a block) to be positive, but got "
             << rows;
  return success();
}

LogicalResult FirstQueryBlockOp::verify() {
  return verifyBlockRows(*this, getQueryRows(), getKeyRows());
}

OpFoldResult FirstQueryBlockOp::fold(FoldAdaptor adaptor) {
  Builder b(getContext());
  if (!getCausal())
    return b.getIndexAttr(0);
  auto tile = dyn_cast_if_present<IntegerAttr>(adaptor.getKeyTile());
  auto blocks = dyn_cast_if_present<IntegerAttr>(adaptor.getQueryBlocks());
  if (!tile || !blocks)
    return {};
  uint64_t first = tile.getValue().getZExtValue() * getKeyRows() /
                   static_cast<uint64_t>(getQueryRows());
  return b.getIndexAttr(
      std::min<uint64_t>(first, blocks.getValue().getZExtValue()));
}

Value FirstQueryBlockOp::expand(OpBuilder &b) {
  Location loc = getLoc();
  if (!getCausal())
    return arith::ConstantIndexOp::create(b, loc, 0);
  Value firstKey = arith::MulIOp::create(
      b, loc, getKeyTile(),
      arith::ConstantIndexOp::create(b, loc, getKeyRows()));
  Value block = arith::DivUIOp::create(
      b, loc, firstKey, arith::ConstantIndexOp::create(b, loc, getQueryRows()));
  return arith::MinUIOp::create(b, loc, block, getQueryBlocks());
}

LogicalResult KeyBlockEndOp::verify() {
  return verifyBlockRows(*this, getQueryRows(), getKeyRows());
}

OpFoldResult KeyBlockEndOp::fold(FoldAdaptor adaptor) {
  if (!getCausal())
    return getKeyBlocks();
  auto tile = dyn_cast_if_present<IntegerAttr>(adaptor.getQueryTile());
  auto blocks = dyn_cast_if_present<IntegerAttr>(adaptor.getKeyBlocks());
  if (!tile || !blocks)
    return {};
  uint64_t lastQuery = (tile.getValue().getZExtValue() + 1) * getQueryRows();
  uint64_t end = llvm::divideCeil(lastQuery, getKeyRows());
  return Builder(getContext())
      .getIndexAttr(std::min<uint64_t>(end, blocks.getValue().getZExtValue()));
}

Value KeyBlockEndOp::expand(OpBuilder &b) {
  Location loc = getLoc();
  if (!getCausal())
    return getKeyBlocks();
  Value next = arith::AddIOp::create(b, loc, getQueryTile(),
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value queries = arith::MulIOp::create(
      b, loc, next, arith::ConstantIndexOp::create(b, loc, getQueryRows()));
  Value end = arith::CeilDivUIOp::create(
      b, loc, queries, arith::ConstantIndexOp::create(b, loc, getKeyRows()));
  return arith::MinUIOp::create(b, loc, end, getKeyBlocks());
}
