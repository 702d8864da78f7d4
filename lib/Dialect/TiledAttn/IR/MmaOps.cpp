//===- MmaOps.cpp - Asynchronous warpgroup mmas -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// !tiledattn.future and the verifiers of tiledattn.mma_async and
// tiledattn.wait.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tiledattn;

/// Largest N of one wgmma.
static constexpr int64_t kMaxWgmmaCols = 256;
/// Rows of one period of the 128-byte swizzle (1024 bytes): where a
/// shared-memory A may start.
static constexpr int64_t kSwizzleRows = 8;

//===----------------------------------------------------------------------===//
// FutureType
//===----------------------------------------------------------------------===//

/// The syntax of the tile it holds: `<MxNxT>`.
Type FutureType::parse(AsmParser &parser) {
  auto tile = llvm::dyn_cast_if_present<TileType>(TileType::parse(parser));
  if (!tile)
    return {};
  return FutureType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), tile);
}

void FutureType::print(AsmPrinter &printer) const {
  getTileType().print(printer);
}

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 TileType tileType) {
  if (tileType.getRank() != 2 || !tileType.getElementType().isF32())
    return emitError() << "expected an mma result: a rank-2 tile of f32, but "
                          "got "
                       << tileType;
  return success();
}

//===----------------------------------------------------------------------===//
// MmaAsyncOp
//===----------------------------------------------------------------------===//

int64_t MmaAsyncOp::getK() {
  if (getTransposeA()) { // B's K
    SmemType b = getB().getType();
    return getTransposeB() ? b.getCols() : getBRows().value_or(b.getRows());
  }
  if (auto smem = dyn_cast<SmemType>(getA().getType()))
    return smem.getCols();
  return cast<TileType>(getA().getType()).getNumCols();
}

/// Out of turns, the future's one use is a wait in the block it is made in
/// (or in the turn's, after the turn), or a later mma of that block that
/// continues it (acc_in_flight).
static LogicalResult verifyWaitedOnce(MmaAsyncOp op) {
  Value future = followOutOfTurns(op.getResult());
  if (!future.hasOneUse())
    return op.emitOpError("expected the result to be waited for once, by a "
                          "tiledattn.wait (an mma nobody waits for leaves "
                          "its registers undefined), but it has ")
           << std::distance(future.use_begin(), future.use_end()) << " uses";
  Operation *user = *future.user_begin();
  auto next = dyn_cast<MmaAsyncOp>(user);
  if (next && next.getAccInFlight() != future)
    return op.emitOpError("expected the result to go to a later mma as its "
                          "acc_in_flight, not as another operand");
  if (!isa<WaitOp>(user) && !next)
    return op.emitOpError("expected the result to go to a tiledattn.wait, "
                          "a later tiledattn.mma_async's acc_in_flight or "
                          "out of a tiledattn.turn, but it goes to ")
           << user->getName();
  if (next && user->getBlock() != op->getBlock())
    return op.emitOpError("expected the mma that continues this one "
                          "(acc_in_flight) in the block it is made in");
  if (user->getBlock() != future.getParentBlock())
    return op.emitOpError("expected the result to be waited for in the "
                          "block it is made in (a wait under a branch or "
                          "in a loop may not run once per mma)");
  return success();
}

/// A constant first row of `count` (64: a warpgroup's) in a shared-memory
/// tile must be a multiple of the swizzle's period and leave the rows
/// inside the tile.
static LogicalResult verifyFirstRow(Operation *op, Value row, SmemType tile,
                                    StringRef name, StringRef tileName,
                                    int64_t count = kWarpgroupRows) {
  APInt value;
  if (!row || !matchPattern(row, m_ConstantInt(&value)))
    return success();
  int64_t r = value.getSExtValue();
  if (r < 0 || r % kSwizzleRows || r + count > tile.getRows())
    return op->emitOpError("expected `")
           << name << "` to be a multiple of " << kSwizzleRows
           << " (the swizzle's period) with rows " << name << " .. " << name
           << " + " << count - 1 << " inside " << tileName << " "
           << tile.getRows() << ", but got " << r;
  return success();
}

LogicalResult ReadRowsOp::verify() {
  SmemType slot = getSlot().getType();
  if (slot.getRows() < kWarpgroupRows)
    return emitOpError("expected a shared-memory tile of at least ")
           << kWarpgroupRows << " rows, but got " << slot;
  auto expected = TileType::get(getContext(), {kWarpgroupRows, slot.getCols()},
                                slot.getElementType());
  if (getResult().getType() != expected)
    return emitOpError("expected the result to be the warpgroup's 64 rows "
                       "of the tile, ")
           << expected << ", but got " << getResult().getType();
  if (slot.getCols() % 16)
    return emitOpError("expected the tile's columns to be a multiple of 16 "
                       "(one ldmatrix.x4 each), but got ")
           << slot.getCols();
  return verifyFirstRow(*this, getRow(), slot, "row", "the tile's");
}

LogicalResult MmaAsyncOp::verify() {
  if (Value previous = getAccInFlight()) {
    if (getAcc())
      return emitOpError("expected one accumulator, `acc` (a waited tile) "
                         "or `acc_in_flight` (an mma still in flight), but "
                         "got both");
    if (!previous.getDefiningOp<MmaAsyncOp>())
      return emitOpError("expected acc_in_flight to be the result of a "
                         "tiledattn.mma_async (whose wgmmas this one "
                         "continues)");
  }
  Type aElement;
  int64_t k = getK();
  if (auto smem = dyn_cast<SmemType>(getA().getType())) {
    aElement = smem.getElementType();
    if (!getARow())
      return emitOpError("expected `a_row`, the first of the 64 rows of the "
                         "shared-memory A to multiply");
    if (getTransposeA()) { // (a tile has 64-column atoms: M = 64 fits)
      APInt row;
      if (matchPattern(getARow(), m_ConstantInt(&row)) &&
          (row.getSExtValue() % kSwizzleRows ||
           row.getSExtValue() + k > smem.getRows()))
        return emitOpError("expected `a_row` to be a multiple of ")
               << kSwizzleRows << " with rows a_row .. a_row + " << k - 1
               << " (K = B's " << k << ") inside A's " << smem.getRows()
               << " with transpose_a, but got " << row.getSExtValue();
      if (!getAfterParts().empty())
        return emitOpError("expected no after_parts with transpose_a (A's "
                           "parts would split M, not K)");
    } else {
      if (smem.getRows() < kWarpgroupRows)
        return emitOpError("expected a shared-memory A of at least ")
               << kWarpgroupRows << " rows, but got " << smem;
      if (failed(verifyFirstRow(*this, getARow(), smem, "a_row", "A's")))
        return failure();
    }
  } else {
    if (getTransposeA())
      return emitOpError("expected a shared-memory A with transpose_a (a "
                         "register A is read as it is)");
    auto tile = cast<TileType>(getA().getType());
    aElement = tile.getElementType();
    if (getARow())
      return emitOpError("expected no `a_row` with A in registers (a tile "
                         "is the 64 rows it multiplies)");
    if (getUniformA())
      return emitOpError("expected no `uniform_a` with A in registers "
                         "(it makes a shared-memory A's address uniform)");
    if (tile.getRank() != 2 || tile.getNumRows() != kWarpgroupRows ||
        aElement.isF32())
      return emitOpError("expected a register A of 64 x K f16 or bf16 (one "
                         "warpgroup's rows), but got ")
             << tile;
  }
  SmemType b = getB().getType();
  if (b.getElementType() != aElement)
    return emitOpError("expected A and B of one element type, but got ")
           << aElement << " and " << b.getElementType();
  if (k % 16)
    return emitOpError("expected K, A's columns, to be a multiple of 16 "
                       "(wgmma's k16), but got ")
           << k;
  // b_rows: only B's first rows take part.
  int64_t bRows = b.getRows();
  if (std::optional<int64_t> rows = getBRows()) {
    if (*rows <= 0 || *rows % 8 || *rows >= b.getRows())
      return emitOpError("expected b_rows to be a multiple of 8 below B's ")
             << b.getRows() << " rows (without it the mma reads them all), "
             << "but got " << *rows;
    bRows = *rows;
  }
  // [b_row]: those rows from a later one on.
  if (failed(verifyFirstRow(*this, getBRow(), b, "b_row", "B's", bRows)))
    return failure();
  int64_t bK = getTransposeB() ? b.getCols() : bRows;
  int64_t n = getTransposeB() ? bRows : b.getCols();
  // b_col: a window of B's columns, from an atom on.
  if (std::optional<int64_t> col = getBCol()) {
    int64_t width = getN();
    if (getTransposeB())
      return emitOpError("expected no b_col with transpose_b (B's columns "
                         "are then K; b_rows takes fewer of its rows)");
    if (*col < 0 || *col % 64 || width % 8 || *col + width > b.getCols())
      return emitOpError("expected b_col to be a multiple of 64 (a 64-"
                         "column atom) with columns b_col .. b_col + N - 1 "
                         "(N = ")
             << width << ", the result's) inside B's " << b.getCols()
             << ", but got " << *col;
    n = width;
  }
  if (bK != k)
    return emitOpError("expected B to be ")
           << (getTransposeB() ? "N x K" : "K x N") << " with K = " << k
           << " (A's columns), but got " << b;
  if (n % 8 || n > kMaxWgmmaCols)
    return emitOpError("expected N, the result's columns, to be a multiple "
                       "of 8 up to ")
           << kMaxWgmmaCols << " (one wgmma), but got " << n;
  TileType result = getFutureType().getTileType();
  if (result.getNumRows() != kWarpgroupRows || result.getNumCols() != n)
    return emitOpError("expected a result of 64 x ")
           << n << " (A's rows by B's "
           << (getTransposeB() ? "rows" : "columns") << "), but got "
           << getFutureType();
  // (Once tiledattn-lower-rings has run, the tokens are its casts.)
  for (Value token : getAfterParts()) {
    RingGetOp get = getOfToken(token);
    if (!get)
      continue;
    if (!get.getPartial())
      return emitOpError("expected after_parts to name the tokens of partial "
                         "tiledattn.ring.gets (a get that waited left no "
                         "parts to wait for)");
    Value slot = get.getSlot();
    if (slot != getA() && !(slot == getB() && getTransposeB()))
      return emitOpError("expected each after_parts token to be for A's "
                         "slot or, with transpose_b, B's (whose columns "
                         "are K, which the parts split), but one is for "
                         "another slot");
  }
  return verifyWaitedOnce(*this);
}
