//===- RingOps.cpp - Rings of shared-memory slots ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The types of the producer/consumer hand-off (!tiledattn.smem,
// !tiledattn.ring) and the verifiers of the ring ops.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tiledattn;

/// Largest box dimension a TMA copy takes.
static constexpr int64_t kMaxTmaBoxRows = 256;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// `RxCxT`, as the shape and element type of a 2-D shared-memory tile.
static ParseResult parseSmemShape(AsmParser &parser, int64_t &rows,
                                  int64_t &cols, Type &elementType) {
  SmallVector<int64_t> shape;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return failure();
  if (shape.size() != 2)
    return parser.emitError(at, "expected a shared-memory tile of rank 2 "
                                "(rows x columns), but got rank ")
           << shape.size();
  rows = shape[0];
  cols = shape[1];
  return success();
}

Type SmemType::parse(AsmParser &parser) {
  int64_t rows = 0, cols = 0;
  Type elementType;
  if (parser.parseLess() || parseSmemShape(parser, rows, cols, elementType) ||
      parser.parseGreater())
    return {};
  return SmemType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), rows, cols, elementType);
}

void SmemType::print(AsmPrinter &printer) const {
  printer << "<" << getRows() << "x" << getCols() << "x" << getElementType()
          << ">";
}

LogicalResult SmemType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rows, int64_t cols, Type elementType) {
  if (!elementType.isF16() && !elementType.isBF16())
    return emitError() << "expected a shared-memory tile of f16 or bf16, but "
                          "got "
                       << elementType;
  if (rows < 1 || rows > kMaxTmaBoxRows)
    return emitError() << "expected 1 to " << kMaxTmaBoxRows
                       << " rows (a TMA box), but got " << rows;
  if (cols < 64 || cols % 64)
    return emitError() << "expected a positive multiple of 64 columns (128-"
                          "byte swizzle atoms), but got "
                       << cols;
  return success();
}

Type RingType::parse(AsmParser &parser) {
  int64_t depth = 0, rows = 0, cols = 0;
  Type elementType;
  if (parser.parseLess() || parser.parseInteger(depth) || parser.parseComma() ||
      parseSmemShape(parser, rows, cols, elementType) || parser.parseGreater())
    return {};
  auto emitError = [&] { return parser.emitError(parser.getNameLoc()); };
  SmemType slot = SmemType::getChecked(emitError, parser.getContext(), rows,
                                       cols, elementType);
  if (!slot)
    return {};
  return RingType::getChecked(emitError, parser.getContext(), depth, slot);
}

void RingType::print(AsmPrinter &printer) const {
  SmemType slot = getSlotType();
  printer << "<" << getDepth() << ", " << slot.getRows() << "x"
          << slot.getCols() << "x" << slot.getElementType() << ">";
}

LogicalResult RingType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t depth, SmemType slotType) {
  if (depth < 1)
    return emitError() << "expected a ring of at least 1 slot, but got "
                       << depth;
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// Shared memory is laid out (and barriers set up) once, before any role
/// runs: its ops sit in the entry block of the kernel function.
static LogicalResult verifyInEntryBlock(Operation *op, StringRef why) {
  Block *block = op->getBlock();
  if (!block || !block->isEntryBlock() ||
      !isa<FunctionOpInterface>(block->getParentOp()))
    return op->emitOpError("expected to be in the entry block of a function ")
           << why << ", but it is in "
           << (block ? block->getParentOp()->getName().getStringRef()
                     : StringRef("no block"));
  return success();
}

LogicalResult RingOp::verify() {
  if (failed(verifyInEntryBlock(*this, "(its barriers are set up once, "
                                       "before any role runs)")))
    return failure();
  SmemType slot = cast<RingType>(getType()).getSlotType();
  int64_t atoms = slot.getAtoms();
  if (atoms % getNumParts())
    return emitOpError("expected parts to divide the slot's ")
           << atoms << " 64-column atoms (each part whole atoms), but got "
           << getNumParts();
  // The lowering pairs each block with the other (rank xor 1), and each
  // half of the rows starts where the swizzle pattern does.
  if (std::optional<uint64_t> cluster = getCluster()) {
    if (*cluster != 2)
      return emitOpError("expected cluster(2) (a slot shared by a pair of "
                         "blocks), but got cluster(")
             << *cluster << ")";
    if (slot.getRows() % 16)
      return emitOpError("expected a cluster ring's slot rows to halve into "
                         "multiples of 8 (the swizzle's period), but got ")
             << slot.getRows() << " rows";
    if (getParts())
      return emitOpError("expected no parts on a cluster ring (its halves "
                         "arrive on one full barrier), but got parts(")
             << getNumParts() << ")";
  }
  return success();
}

/// The blocks that share each slot of `ring`: its tiledattn.ring's
/// `cluster`.
static int64_t clusterBlocksOf(Value ring) {
  auto op = ring.getDefiningOp<RingOp>();
  return op ? op.getClusterBlocks() : 1;
}

/// The parts of each slot of `ring`: its tiledattn.ring's `parts`.
static int64_t partsOf(Value ring) {
  auto op = ring.getDefiningOp<RingOp>();
  return op ? op.getNumParts() : 1;
}

std::pair<int64_t, int64_t> RingPutOp::getPartRange() {
  if (!getFirstPart())
    return {0, partsOf(getRing())};
  return {int64_t(*getFirstPart()), int64_t(getEndPart().value_or(0))};
}

LogicalResult AllocOp::verify() {
  return verifyInEntryBlock(*this, "(shared memory is laid out once, for "
                                   "the whole kernel)");
}

/// A constant stage_row (tma_store's, stage's) is a multiple of the
/// swizzle's period and leaves the acc tile's rows inside the stage.
static LogicalResult verifyStageRow(Operation *op, Value stageRow, TileType acc,
                                    SmemType stage) {
  APInt row;
  if (matchPattern(stageRow, m_ConstantInt(&row)) &&
      (row.getZExtValue() % 8 ||
       row.getZExtValue() + acc.getNumRows() > uint64_t(stage.getRows())))
    return op->emitOpError("expected stage_row to be a multiple of 8 (the "
                           "swizzle's period) with the acc tile's ")
           << acc.getNumRows() << " rows inside the stage's " << stage.getRows()
           << ", but got " << row.getZExtValue();
  return success();
}

LogicalResult TmaStoreOp::verify() {
  TileType acc = getAcc().getType();
  if (!getRowMax() != !getRowSum())
    return emitOpError("expected both row_max and row_sum (O normalized "
                       "here) or neither (O stored as it is)");
  if (!getRowMax() && getLse())
    return emitOpError("expected row_max and row_sum with lse (the lse is "
                       "computed from them)");
  // A packed acc (O normalized and truncated, say by tiledattn.truncate) is
  // stored as it is.
  Type element = getDest().getType().getElementType();
  if (!acc.getElementType().isF32()) {
    if (acc.getElementType() != element)
      return emitOpError("expected an f32 acc tile or one packed to dest's "
                         "element type ")
             << element << ", but got " << acc;
    if (getRowMax())
      return emitOpError("expected no row_max and row_sum with a packed acc "
                         "tile (O normalized already), but got them");
    acc = TileType::get(getContext(), acc.getShape(),
                        Float32Type::get(getContext()));
  }
  // Without statistics the rows are checked against themselves.
  auto rows = TileType::get(getContext(), {acc.getNumRows()},
                            Float32Type::get(getContext()));
  TileType rowMax = getRowMax() ? getRowMax().getType() : rows;
  TileType rowSum = getRowSum() ? getRowSum().getType() : rows;
  if (failed(verifyOutputTile(*this, acc, rowMax, rowSum, getDest().getType())))
    return failure();
  if (acc.getNumRows() != kWarpgroupRows)
    return emitOpError("expected a warpgroup's acc tile of ")
           << kWarpgroupRows << " rows (one TMA box a 64-column atom), but got "
           << acc;
  SmemType stage = getStage().getType();
  if (stage.getElementType() != element)
    return emitOpError("expected the stage's element type to be dest's, ")
           << element << ", but got " << stage.getElementType();
  if (stage.getCols() < acc.getNumCols())
    return emitOpError("expected a stage of at least the acc tile's ")
           << acc.getNumCols() << " columns, but got " << stage;
  if (stage.getRows() < acc.getNumRows())
    return emitOpError("expected a stage of at least the acc tile's ")
           << acc.getNumRows() << " rows, but got " << stage;
  return verifyStageRow(*this, getStageRow(), acc, stage);
}

LogicalResult StageOp::verify() {
  TileType acc = getAcc().getType();
  if (acc.getRank() != 2 || acc.getNumRows() != kWarpgroupRows ||
      !acc.getElementType().isF32() || acc.getNumCols() % 16)
    return emitOpError("expected a warpgroup's f32 accumulator tile (64 x N, "
                       "N a multiple of 16), but got ")
           << acc;
  SmemType stage = getStage().getType();
  if (stage.getCols() < acc.getNumCols() || stage.getRows() < acc.getNumRows())
    return emitOpError("expected a stage of at least the acc tile's ")
           << acc.getNumRows() << " x " << acc.getNumCols() << ", but got "
           << stage;
  if (failed(verifyStageRow(*this, getStageRow(), acc, stage)))
    return failure();
  APInt col;
  if (getStageCol() && matchPattern(getStageCol(), m_ConstantInt(&col)) &&
      (col.getZExtValue() % 16 ||
       col.getZExtValue() + acc.getNumCols() > uint64_t(stage.getCols())))
    return emitOpError("expected stage_col to be a multiple of 16 with the "
                       "acc tile's ")
           << acc.getNumCols() << " columns inside the stage's "
           << stage.getCols() << ", but got " << col.getZExtValue();
  return success();
}

LogicalResult ColumnsOp::verify() {
  SmemType tile = getTile().getType(), view = getView().getType();
  if (view.getRows() != tile.getRows() ||
      view.getElementType() != tile.getElementType() || view.getCols() % 64 ||
      view.getCols() > tile.getCols())
    return emitOpError("expected a view of the tile's rows and element type, "
                       "a multiple of 64 columns up to its ")
           << tile.getCols() << ", but got " << view << " of " << tile;
  APInt col;
  if (matchPattern(getCol(), m_ConstantInt(&col)) &&
      (col.getZExtValue() % 64 ||
       col.getZExtValue() + view.getCols() > uint64_t(tile.getCols())))
    return emitOpError("expected col to be a multiple of 64 (a 64-column "
                       "atom) with the view's ")
           << view.getCols() << " columns inside the tile's " << tile.getCols()
           << ", but got " << col.getZExtValue();
  return success();
}

LogicalResult RingPutOp::verify() {
  Block &body = getBody().front();
  SmallVector<Type> slots{getRingType().getSlotType()};
  if (getWithRing())
    slots.push_back(cast<RingType>(getWithRing().getType()).getSlotType());
  if (body.getArgumentTypes() != ArrayRef<Type>(slots)) {
    InFlightDiagnostic diag = emitOpError("expected the body to take ")
                              << (slots.size() == 1 ? "one argument, the "
                                                      "slot, of type "
                                                    : "two arguments, the "
                                                      "slots, of types ")
                              << slots << ", but it takes "
                              << body.getNumArguments() << " argument(s)";
    if (body.getNumArguments())
      diag << " of types " << body.getArgumentTypes();
    return diag;
  }
  if (!getWithRing() != !getWithPosition())
    return emitOpError("expected `with` to name a ring and a position");
  if (getWithRing()) {
    auto withSlot = cast<SmemType>(slots[1]);
    if (getWithRing() == getRing())
      return emitOpError("expected `with` to name another ring");
    if (withSlot.getCols() != cast<SmemType>(slots[0]).getCols())
      return emitOpError("expected the `with` slot to have this slot's ")
             << cast<SmemType>(slots[0]).getCols()
             << " columns (the parts split both alike), but got " << withSlot;
    if (partsOf(getWithRing()) != 1)
      return emitOpError("expected the `with` ring to have no parts of its "
                         "own (its columns arrive on this ring's), but it "
                         "has ")
             << partsOf(getWithRing());
  }
  auto [first, end] = getPartRange();
  int64_t parts = partsOf(getRing());
  if (first < 0 || first >= end || end > parts)
    return emitOpError("expected parts(first to end) with 0 <= first < end "
                       "<= ")
           << parts << " (the ring's parts), but got parts(" << first << " to "
           << end << ")";
  // Both blocks of a cluster ring's pair copy half of each slot: plain
  // puts only.
  if (clusterBlocksOf(getRing()) > 1 && (getWithRing() || getTag()))
    return emitOpError("expected a put on a cluster ring to fill its slot "
                       "alone (no `with`, no `tag`): both blocks of the "
                       "cluster fill it in halves");
  if (getWithRing() && clusterBlocksOf(getWithRing()) > 1)
    return emitOpError("expected the `with` ring not to be a cluster ring: "
                       "both blocks of the cluster fill its slots in halves");
  // One load into each slot (a load into anything else is the load's error),
  // or with a tag none at all.
  bool copies = false;
  for (Operation &op : body)
    if (auto load = dyn_cast<TmaLoadOp>(op)) {
      copies = true;
      if (!llvm::is_contained(body.getArguments(), load.getDest()))
        return success();
    }
  if (!copies && getTag()) {
    if (getWithRing())
      return emitOpError("expected a put that copies nothing to fill no "
                         "`with` slot");
    return success();
  }
  for (BlockArgument slot : body.getArguments()) {
    int64_t loads = llvm::count_if(
        slot.getUsers(), [](Operation *op) { return isa<TmaLoadOp>(op); });
    if (loads != 1)
      return emitOpError("expected the body to fill each slot with one "
                         "tiledattn.tma_load, but slot #")
             << slot.getArgNumber() << " has " << loads;
  }
  return success();
}

LogicalResult TmaLoadOp::verify() {
  auto put = dyn_cast<RingPutOp>(getOperation()->getParentOp());
  if (!put)
    return emitOpError("expected to be in the body of a tiledattn.ring.put "
                       "(its copy completes on the slot's full barrier), but "
                       "it is in ")
           << getOperation()->getParentOp()->getName();
  if (getDest() != put.getSlot() && getDest() != put.getWithSlot())
    return emitOpError("expected to copy into a slot of its "
                       "tiledattn.ring.put, but `dest` is another value");
  auto source = cast<MemRefType>(getSource().getType());
  SmemType slot = getDest().getType();
  if (source.getElementType() != slot.getElementType())
    return emitOpError("expected the source's element type to be the slot's, ")
           << slot.getElementType() << ", but got " << source.getElementType();
  // The slot holds the head dim in whole 64-column atoms; TMA reads the
  // columns past the tensor's last as zeros.
  int64_t headDim = source.getShape()[3];
  if (ShapedType::isDynamic(headDim) || tileColumns(headDim) != slot.getCols())
    return emitOpError("expected the source's head dim (its last dimension) "
                       "to fill the slot's ")
           << slot.getCols() << " columns (in 64-column atoms), but got "
           << (ShapedType::isDynamic(headDim) ? std::string("?")
                                              : std::to_string(headDim));
  // Pieces of whole swizzle periods: a piece's rows start where the
  // 128-byte swizzle pattern does, so TMA and wgmma agree on it.
  int64_t pieces = getRows().size();
  if (clusterBlocksOf(put.getRing()) > 1 && getDest() == put.getSlot() &&
      pieces != 1)
    return emitOpError("expected 1 row into a cluster ring's slot (each "
                       "block copies one half of it), but got ")
           << pieces << " rows";
  if (pieces == 0 || slot.getRows() % pieces || (slot.getRows() / pieces) % 8)
    return emitOpError("expected 1 row or a number of rows that cuts the "
                       "slot's ")
           << slot.getRows()
           << " rows into equal pieces of a multiple of 8 rows, but got "
           << pieces << " rows";
  int64_t innerStride;
  SmallVector<int64_t> strides;
  if (succeeded(source.getStridesAndOffset(strides, innerStride)) &&
      strides.back() != 1)
    return emitOpError("expected a unit innermost stride (TMA copies whole "
                       "rows), but got ")
           << (ShapedType::isDynamic(strides.back())
                   ? std::string("?")
                   : std::to_string(strides.back()));
  return success();
}

RingGetOp mlir::tiledattn::getOfToken(Value token) {
  while (auto turn = token.getDefiningOp<TurnOp>()) {
    auto yield = cast<YieldOp>(turn.getBody().front().getTerminator());
    token = yield.getValues()[cast<OpResult>(token).getResultNumber()];
  }
  return token.getDefiningOp<RingGetOp>();
}

/// A token's uses but those that name it in an mma's `after_parts` (which
/// wait for its parts) or read its tag: they leave the slot held.
static SmallVector<OpOperand *> holdingUses(Value value) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : value.getUses())
    if (!isa<MmaAsyncOp, RingTagOp>(use.getOwner()))
      uses.push_back(&use);
  return uses;
}

Value mlir::tiledattn::followOutOfTurns(Value value) {
  for (SmallVector<OpOperand *> uses = holdingUses(value); uses.size() == 1;
       uses = holdingUses(value)) {
    OpOperand &use = *uses.front();
    if (!isa<YieldOp>(use.getOwner()))
      break;
    value = use.getOwner()->getParentOp()->getResult(use.getOperandNumber());
  }
  return value;
}

/// Whether `uses`, the holding uses of a token in `block` and the blocks
/// nested in it, release it once on every path through `block`: one
/// tiledattn.ring.release in `block`, or an scf.if in `block` whose two
/// branches each do (a dynamic tile loop's slot: the tile's body or the
/// end mark releases it).
static LogicalResult
checkReleasedOnce(Operation *taker, ArrayRef<OpOperand *> uses, Block &block) {
  auto notOnce = [&] {
    return taker->emitOpError(
               "expected the token to be released once, by a "
               "tiledattn.ring.release (every path that takes a slot gives it "
               "back), but it has ")
           << uses.size() << " uses";
  };
  if (uses.empty())
    return notOnce();
  Operation *user = block.findAncestorOpInBlock(*uses.front()->getOwner());
  if (!user || llvm::any_of(uses, [&](OpOperand *use) {
        return block.findAncestorOpInBlock(*use->getOwner()) != user;
      }))
    return notOnce();
  auto branch = dyn_cast<scf::IfOp>(user);
  if (branch && !branch.getElseRegion().empty()) {
    for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()}) {
      SmallVector<OpOperand *> inside;
      for (OpOperand *use : uses)
        if (region->isAncestor(use->getOwner()->getParentRegion()))
          inside.push_back(use);
      if (failed(checkReleasedOnce(taker, inside, region->front())))
        return failure();
    }
    return success();
  }
  if (uses.size() != 1)
    return notOnce();
  if (user != uses.front()->getOwner())
    return taker->emitOpError(
        "expected the token to be released in the block it is taken in (a "
        "release under a branch or in a loop may not run once per get)");
  if (!isa<RingReleaseOp>(user))
    return taker->emitOpError("expected the token to go to a "
                              "tiledattn.ring.release or out of a "
                              "tiledattn.turn, but it goes to ")
           << user->getName();
  return success();
}

LogicalResult mlir::tiledattn::verifyReleasedOnce(Operation *taker,
                                                  Value token) {
  // Out of turns, the token's uses but after_parts and tags.
  token = followOutOfTurns(token);
  return checkReleasedOnce(taker, holdingUses(token), *token.getParentBlock());
}

LogicalResult RingGetOp::verify() {
  if (getPartial() && llvm::none_of(getToken().getUsers(), [](Operation *op) {
        return isa<MmaAsyncOp>(op);
      }))
    return emitOpError("expected a partial get's token to be named in the "
                       "after_parts of a tiledattn.mma_async (nothing else "
                       "waits for the slot's parts)");
  return verifyReleasedOnce(*this, getToken());
}

/// The ring `token` holds a slot of: its get's, or that of the
/// tiledattn.for_each_tile ... ranks_from whose body takes it; null if
/// neither.
static Value ringOfToken(Value token) {
  if (RingGetOp get = getOfToken(token))
    return get.getRing();
  auto arg = dyn_cast<BlockArgument>(token);
  auto loop =
      arg ? dyn_cast<ForEachTileOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (loop && arg == loop.getTakenToken())
    return loop.getRanksFrom();
  return {};
}

/// Whether `token` (an operand of `op` on `ring`) holds a slot of `ring`;
/// its get, if it comes from one, else null.
static FailureOr<RingGetOp> getOnRing(Operation *op, Value ring, Value token) {
  Value held = ringOfToken(token);
  if (!held)
    return op->emitOpError(
        "expected `token` to come from a tiledattn.ring.get, directly or "
        "through tiledattn.turn results, or from a tiledattn.for_each_tile "
        "with ranks_from");
  if (held != ring)
    return op->emitOpError("expected `token` to come from a tiledattn.ring.get "
                           "on the same ring, but it comes from one on "
                           "another");
  return getOfToken(token);
}

LogicalResult RingReleaseOp::verify() {
  return getOnRing(*this, getRing(), getToken());
}

LogicalResult RingTagOp::verify() {
  FailureOr<RingGetOp> get = getOnRing(*this, getRing(), getToken());
  if (failed(get))
    return failure();
  if (*get && get->getPartial())
    return emitOpError("expected a get that waited for the slot (the tag "
                       "is written before the slot is full), but the get is "
                       "partial");
  return success();
}

LogicalResult RingSkipOp::verify() {
  auto ring = getRing().getDefiningOp<RingOp>();
  if (ring && getReaders() >= ring.getReleases())
    return emitOpError("expected fewer readers than the ring's ")
           << ring.getReleases()
           << " releases (some warp reads each use), but got " << getReaders();
  return success();
}

LogicalResult FinishRowsOp::verify() {
  TileType rows = getRowMax().getType();
  if (rows.getRank() != 1 || rows.getNumRows() != kWarpgroupRows ||
      !rows.getElementType().isF32())
    return emitOpError("expected a warpgroup's row tiles, !tiledattn.tile<")
           << kWarpgroupRows << "xf32>, but got " << rows;
  return success();
}

LogicalResult MergePiecesOp::verify() {
  TileType acc = getAcc().getType(), rows = getRowMax().getType();
  if (acc.getRank() != 2 || acc.getNumRows() != kWarpgroupRows ||
      !acc.getElementType().isF32())
    return emitOpError("expected a warpgroup's accumulator, "
                       "!tiledattn.tile<")
           << kWarpgroupRows << "xNxf32>, but got " << acc;
  if (rows.getRank() != 1 || rows.getNumRows() != kWarpgroupRows ||
      !rows.getElementType().isF32())
    return emitOpError("expected a warpgroup's row tiles, !tiledattn.tile<")
           << kWarpgroupRows << "xf32>, but got " << rows;
  // (Once convert-tiledattn-to-nvgpu has lowered the loop, in none: it
  // checks that each was in one.)
  auto loop = (*this)->getParentOfType<ForEachTileOp>();
  if (loop && !loop.getSplitTail())
    return emitOpError("expected its tiledattn.for_each_tile to have "
                       "split_tail (the loop that cuts tiles into pieces), "
                       "but it has none");
  return success();
}
