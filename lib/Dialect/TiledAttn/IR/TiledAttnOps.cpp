//===- TiledAttnOps.cpp - TiledAttn dialect ops -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The dialect, its tile type, and the verifiers of tiledattn.sdpa and of
// the tile ops that have no file of their own (ScheduleAttr.cpp, MmaOps.cpp,
// RingOps.cpp, RoleOps.cpp and ScoreOps.cpp hold the rest). Verifiers reject
// what cannot run before any PTX is made; each diagnostic says which operand
// or field is wrong, what was expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "RegionParsing.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tiledattn;

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnEnums.cpp.inc"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.cpp.inc"

void TiledAttnDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.cpp.inc"
      >();
}

Operation *TiledAttnDialect::materializeConstant(OpBuilder &builder,
                                                 Attribute value, Type type,
                                                 Location loc) {
  auto integer = dyn_cast<IntegerAttr>(value);
  if (!integer || !type.isIndex())
    return nullptr;
  return arith::ConstantOp::create(builder, loc, integer);
}

void TiledAttnDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsTypes.cpp.inc"
      >();
}

void TiledAttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnAttrs.cpp.inc"
      >();
}

LogicalResult
TiledAttnDialect::verifyOperationAttribute(Operation *op,
                                           NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  // Schedules written before convert-sdpa-to-hopper was removed (the
  // thirty-ninth session) may still ask for it: say so rather than ignore it.
  if (name == "tiledattn.hopper_emitter")
    return op->emitError("tiledattn.hopper_emitter: the lowering it picked, "
                         "convert-sdpa-to-hopper, is gone; every schedule "
                         "lowers through its tile program now, so remove "
                         "the attribute");
  if (name != kMinSeqlenKAttrName && name != kMaxSeqlenKAttrName)
    return success(); // the attributes the passes set check themselves
  if (!isa<FunctionOpInterface>(op))
    return op->emitError("expected ")
           << name << " on the function that holds tiledattn.sdpa, but it is "
           << "on " << op->getName();
  auto value = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!value || value.getType().isInteger(1) || value.getInt() < 1)
    return op->emitError("expected ")
           << name << " to be a positive integer (a key/value length), but "
           << "got " << attribute.getValue();
  if (name == kMaxSeqlenKAttrName)
    return success();
  auto max = op->getAttrOfType<IntegerAttr>(kMaxSeqlenKAttrName);
  if (max && max.getInt() < value.getInt())
    return op->emitError("expected ")
           << kMinSeqlenKAttrName << " <= " << kMaxSeqlenKAttrName
           << ", but got " << value.getInt() << " and " << max.getInt();
  return success();
}

bool mlir::tiledattn::isSupportedHeadDim(int64_t headDim) {
  return headDim == 64 || headDim == 128;
}

static bool isHalfType(Type t) { return t.isF16() || t.isBF16(); }

static std::string shapeToString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

/// A memref dimension as written in the type: "?" when dynamic.
static std::string dimToString(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

/// Whether `type` is laid out with a unit innermost stride, which the
/// lowering's paired vector loads and stores need.
static bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return TileType::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), shape, elementType);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty() || shape.size() > 2)
    return emitError() << "expected a tile of rank 1 or 2, but got rank "
                       << shape.size();
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "expected positive tile dimensions, but got "
                         << shapeToString(shape);
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "expected tile element type f16, bf16 or f32, but "
                          "got "
                       << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

LogicalResult SdpaOp::verify() {
  auto qType = getQ().getType();
  Type elementType = qType.getElementType();
  if (!isHalfType(elementType))
    return emitOpError("expected q element type f16 or bf16, but got ")
           << elementType;
  struct Named {
    StringRef name;
    MemRefType type;
  };
  Named heads[] = {{"q", getQ().getType()},
                   {"k", getK().getType()},
                   {"v", getV().getType()},
                   {"o", getO().getType()}};
  int64_t headDim = getHeadDim(), headDimV = getHeadDimV();
  if (ShapedType::isDynamic(headDim))
    return emitOpError("expected a static head dim (dimension 3 of q)");
  if (ShapedType::isDynamic(headDimV))
    return emitOpError("expected a static value head dim (dimension 3 of v)");
  for (const Named &h : heads) {
    if (h.type.getElementType() != elementType)
      return emitOpError("expected ")
             << h.name << " element type " << elementType
             << " (the element type of q), but got " << h.type.getElementType();
    // q and k share the head dim; v and o the value head dim.
    bool value = h.name == "v" || h.name == "o";
    if (h.type.getShape()[3] != (value ? headDimV : headDim))
      return emitOpError("expected ")
             << h.name << " head dim (dimension 3) "
             << (value ? headDimV : headDim)
             << (value ? " (the head dim of v)" : " (the head dim of q)")
             << ", but got " << dimToString(h.type.getShape()[3]);
    if (!hasUnitInnerStride(h.type))
      return emitOpError("expected ")
             << h.name << " to have a unit innermost stride, but got "
             << h.type;
  }
  ScheduleAttr schedule = getSchedule();
  if (schedule.isWarpSpecialized()) {
    for (auto [name, dim] : {std::pair<StringRef, int64_t>{"head dim", headDim},
                             {"value head dim", headDimV}})
      if (dim <= 0 || dim % 16 != 0 || dim > 256)
        return emitOpError("expected ")
               << name
               << " a positive multiple of 16 up to 256 (producer = tma runs "
               << "it on tiles of whole 64-column boxes, wgmma takes N <= "
               << "256), but got " << dim;
    // The tiles' columns from here on.
    headDim = tileColumns(headDim);
    headDimV = tileColumns(headDimV);
  } else if (!isSupportedHeadDim(headDim)) {
    return emitOpError("expected head dim 64 or 128 (192 and 256 need "
                       "producer = tma), but got ")
           << headDim;
  } else if (headDimV != headDim) {
    return emitOpError("expected the value head dim to equal the head dim ")
           << headDim << " (a value head dim of its own needs producer = "
           << "tma), but got " << headDimV;
  }

  // Static sizes that disagree would make the kernel read or write out of
  // bounds (or divide by zero heads in the GQA head mapping), so reject them
  // here; dynamic sizes are the caller's to get right.
  auto sameDim = [&](StringRef what, StringRef a, int64_t da, StringRef b,
                     int64_t db) -> LogicalResult {
    if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db) || da == db)
      return success();
    return emitOpError("expected ")
           << b << " " << what << " " << da << " (the " << what << " of " << a
           << "), but got " << db;
  };
  ArrayRef<int64_t> q = qType.getShape(), k = getK().getType().getShape(),
                    v = getV().getType().getShape(),
                    o = getO().getType().getShape(),
                    lse = getLse().getType().getShape();
  if (failed(sameDim("batch (dimension 0)", "q", q[0], "k", k[0])) ||
      failed(sameDim("batch (dimension 0)", "q", q[0], "v", v[0])) ||
      failed(sameDim("batch (dimension 0)", "q", q[0], "o", o[0])) ||
      failed(sameDim("batch (dimension 0)", "q", q[0], "lse", lse[0])) ||
      failed(sameDim("heads (dimension 1)", "k", k[1], "v", v[1])) ||
      failed(sameDim("heads (dimension 1)", "q", q[1], "o", o[1])) ||
      failed(sameDim("heads (dimension 1)", "q", q[1], "lse", lse[1])) ||
      failed(sameDim("sequence length (dimension 2)", "k", k[2], "v", v[2])) ||
      failed(sameDim("sequence length (dimension 2)", "q", q[2], "o", o[2])) ||
      failed(
          sameDim("sequence length (dimension 2)", "q", q[2], "lse", lse[2])))
    return failure();
  if (!ShapedType::isDynamic(q[1]) && !ShapedType::isDynamic(k[1]) &&
      (k[1] == 0 || q[1] % k[1] != 0))
    return emitOpError("expected the query heads (dimension 1 of q) to be a "
                       "multiple of the key/value heads (dimension 1 of k), "
                       "but got ")
           << q[1] << " and " << k[1];

  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t smem = schedule.getSharedMemoryBytes(headDim, elementBytes, headDimV);
  if (smem > kMaxSharedMemoryBytes)
    return emitOpError("schedule needs ")
           << smem << " bytes of shared memory (block_m, block_n, "
           << "num_stages, q_buffers, dynamic_tiles with head dim " << headDim
           << "), but sm_90 gives "
           << "a block at most " << kMaxSharedMemoryBytes;
  if (schedule.getNarrowDiagonal() && !getCausal())
    return emitOpError("schedule field narrow_diagonal: narrows the causal "
                       "diagonal, so expected false without causal, but got "
                       "true");
  if (schedule.getSkipMaskedBlocks() && !getCausal())
    return emitOpError("schedule field skip_masked_blocks: skips blocks the "
                       "causal mask hides, so expected false without causal, "
                       "but got true");
  // A cluster's two query tiles would end on different K/V blocks.
  if (schedule.getKvMulticast() && getCausal())
    return emitOpError("schedule field kv_multicast: the two blocks of a "
                       "cluster read the same K/V blocks, all of them only "
                       "without a mask, so expected false with causal, but "
                       "got true");
  // Causal tiles differ in length; the tail's shares assume equal ones.
  if (schedule.getSplitTail() && getCausal())
    return emitOpError("schedule field split_tail: shares out the last "
                       "round's tiles by their keys, all of equal length "
                       "only without a mask, so expected false with causal, "
                       "but got true");
  // Blocks sharing a multiprocessor share its 228 KiB; each also costs 1 KiB
  // the system reserves.
  if (schedule.getCtasPerSm() > 1 &&
      schedule.getCtasPerSm() * (smem + 1024) > kSharedMemoryPerSmBytes)
    return emitOpError("schedule needs ")
           << smem << " bytes of shared memory per block, and ctas_per_sm = "
           << schedule.getCtasPerSm() << " blocks of it (plus 1024 each) "
           << "exceed the " << kSharedMemoryPerSmBytes
           << " bytes of a multiprocessor";
  // ptxas allocates every instruction within the kernel's .maxnreg, which
  // setmaxnreg does not raise: a wgmma's m64nN accumulator (N / 2 registers)
  // and its operands must fit the entry count. ptxas 13.0 asked for 158 for
  // the m64n256 P.V of head dim 256 under .maxnreg 128.
  if (int64_t entry = schedule.getEntryRegs()) {
    int64_t widest = std::max(schedule.getBlockN(), headDimV);
    if (widest / 2 + 30 > entry)
      return emitOpError("schedule field ctas_per_sm: ")
             << schedule.getCtasPerSm() << " blocks per multiprocessor build "
             << "the kernel with .maxnreg " << entry << ", but its widest "
             << "wgmma (m64n" << widest << ", block_n " << schedule.getBlockN()
             << " and head dim " << headDim << ") needs about "
             << widest / 2 + 30 << "; expected ctas_per_sm = 1 here";
  }
  if (schedule.isWarpSpecialized()) {
    // Live f32 registers per consumer thread: the S and O accumulators
    // (m64nN: N / 2 each) and P as packed 16-bit pairs (block_n / 4), plus
    // about 30 for addresses, row statistics and loop state. Calibrated on
    // ptxas 13.0 with 160 registers: D=64 with block_n 128 (158) compiles
    // without spills, D=128 with block_n 96 (166) spills.
    // q_in_registers adds Q's A fragments: head dim / 4 packed pairs.
    bool qInRegisters = schedule.getQInRegisters();
    if (qInRegisters && headDim > 128)
      return emitOpError("schedule field q_in_registers: Q's fragments take "
                         "head dim / 4 registers per consumer thread, which "
                         "only fit next to O and S up to head dim 128, so "
                         "expected false at head dim ")
             << headDim << ", but got true";
    int64_t blockN = schedule.getBlockN();
    int64_t live = blockN / 2 + headDimV / 2 + blockN / 4 + 30 +
                   (qInRegisters ? headDim / 4 : 0);
    if (live > schedule.getConsumerRegs())
      return emitOpError("schedule needs about ")
             << live << " registers per consumer thread (block_n = " << blockN
             << ", head dim " << headDim
             << (qInRegisters ? ", q_in_registers" : "")
             << "), but consumer_regs is " << schedule.getConsumerRegs()
             << "; lower block_n or raise consumer_regs";
  }
  if (schedule.getMma() == MmaKind::mma_sync && headDim % 16 != 0)
    return emitOpError("mma_sync steps over the head dim by 16, but got ")
           << headDim;
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult ConstantOp::verify() {
  if (!getResult().getType().getElementType().isF32())
    return emitOpError("expected an f32 result tile, but got ")
           << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  MemRefType srcType = getSource().getType();
  TileType tile = getResult().getType();
  if (tile.getRank() != 2)
    return emitOpError("expected a rank-2 result tile, but got ") << tile;
  if (srcType.getElementType() != tile.getElementType())
    return emitOpError("expected result element type ")
           << srcType.getElementType() << " (the source's), but got "
           << tile.getElementType();
  // A dynamic head dim used to print as INT64_MIN here; say "?" instead.
  if (srcType.getShape()[3] != tile.getNumCols())
    return emitOpError("expected the tile's column count to equal the "
                       "source head dim ")
           << dimToString(srcType.getShape()[3]) << ", but got "
           << tile.getNumCols();
  // Without this, convert-tiledattn-to-nvgpu emitted vector.load on a
  // strided row and the module failed verification after the pass.
  if (!hasUnitInnerStride(srcType))
    return emitOpError("expected source to have a unit innermost stride, "
                       "but got ")
           << srcType;
  return success();
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

LogicalResult MmaOp::verify() {
  TileType lhs = getLhs().getType(), rhs = getRhs().getType(),
           acc = getAcc().getType();
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || acc.getRank() != 2)
    return emitOpError("expected rank-2 lhs, rhs and acc tiles");
  if (!isHalfType(lhs.getElementType()))
    return emitOpError("expected lhs element type f16 or bf16, but got ")
           << lhs.getElementType();
  if (rhs.getElementType() != lhs.getElementType())
    return emitOpError("expected rhs element type ")
           << lhs.getElementType() << " (the lhs's), but got "
           << rhs.getElementType();
  if (!acc.getElementType().isF32())
    return emitOpError("expected acc element type f32, but got ")
           << acc.getElementType();
  int64_t m = lhs.getShape()[0], k = lhs.getShape()[1];
  int64_t rhsK = getTransposed() ? rhs.getShape()[1] : rhs.getShape()[0];
  int64_t n = getTransposed() ? rhs.getShape()[0] : rhs.getShape()[1];
  if (rhsK != k)
    return emitOpError("expected rhs reduction dim ")
           << k << " (lhs is " << m << "x" << k << ")"
           << (getTransposed() ? " as dim 1 of the transposed rhs"
                               : " as dim 0 of rhs")
           << ", but got " << rhsK;
  if (acc.getShape()[0] != m || acc.getShape()[1] != n)
    return emitOpError("expected acc tile shape MxN = ")
           << m << "x" << n << ", but got " << shapeToString(acc.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// MaskOp
//===----------------------------------------------------------------------===//

LogicalResult MaskOp::verify() {
  TileType t = getScores().getType();
  if (t.getRank() != 2 || !t.getElementType().isF32())
    return emitOpError("expected a rank-2 f32 score tile, but got ") << t;
  return success();
}

/// Without a bound or causal, the mask's place in a program that has none.
OpFoldResult MaskOp::fold(FoldAdaptor) {
  return !getSeqlenK() && !getCausal() ? getScores() : OpFoldResult();
}

//===----------------------------------------------------------------------===//
// OnlineSoftmaxOp
//===----------------------------------------------------------------------===//

void OnlineSoftmaxOp::build(OpBuilder &b, OperationState &state, Value scores,
                            Value rowMax, Value rowSum, Value scale,
                            Type probsElementType, bool finite, bool rawMax) {
  auto s = cast<TileType>(scores.getType());
  auto probs = TileType::get(b.getContext(), s.getShape(), probsElementType);
  build(b, state, probs, rowMax.getType(), rowSum.getType(), rowMax.getType(),
        scores, rowMax, rowSum, scale, finite, /*exp2_on_fma=*/nullptr, rawMax);
}

/// Checks that `t` is an M-row f32 vector tile; `what` names it.
static LogicalResult verifyRowTile(Operation *op, TileType t, int64_t rows,
                                   StringRef what) {
  if (t.getRank() != 1 || t.getNumRows() != rows || !t.getElementType().isF32())
    return op->emitOpError("expected ") << what << " to be !tiledattn.tile<"
                                        << rows << "xf32>, but got " << t;
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  TileType s = getScores().getType();
  if (s.getRank() != 2 || !s.getElementType().isF32())
    return emitOpError("expected a rank-2 f32 score tile, but got ") << s;
  int64_t m = s.getNumRows();
  if (failed(verifyRowTile(*this, getRowMax().getType(), m, "row_max")) ||
      failed(verifyRowTile(*this, getRowSum().getType(), m, "row_sum")) ||
      failed(
          verifyRowTile(*this, getNewRowMax().getType(), m, "new_row_max")) ||
      failed(
          verifyRowTile(*this, getNewRowSum().getType(), m, "new_row_sum")) ||
      failed(verifyRowTile(*this, getRescale().getType(), m, "rescale")))
    return failure();
  TileType p = getProbs().getType();
  if (p.getShape() != s.getShape() ||
      !(isHalfType(p.getElementType()) || p.getElementType().isF32()))
    return emitOpError("expected probs to be !tiledattn.tile<")
           << shapeToString(s.getShape()) << "xf16>, bf16 or f32, but got "
           << p;
  int64_t perThread = m * s.getNumCols() / (kWarpgroupRows * 2);
  if (std::optional<uint64_t> n = getExp2OnFma(); n && (!*n || *n > perThread))
    return emitOpError("expected exp2_on_fma in [1, ")
           << perThread << "] (a thread's scores per block) but got " << *n;
  return success();
}

/// `name` (an operand of `op`) is a row's value each: a rank-1 f32 tile.
static LogicalResult verifyRowsTile(Operation *op, StringRef name, TileType t) {
  if (t.getRank() != 1 || !t.getElementType().isF32())
    return op->emitOpError("expected ")
           << name << " to be a rank-1 f32 tile (a row's value each), but got "
           << t;
  return success();
}

LogicalResult ScaleMaxOp::verify() {
  return verifyRowsTile(*this, "row_max", getRowMax().getType());
}

LogicalResult RowDotOp::verify() {
  TileType t = getLhs().getType(), r = getResult().getType();
  if (t.getRank() != 2 ||
      !(t.getElementType().isF32() || isHalfType(t.getElementType())))
    return emitOpError("expected two M x N tiles of f32, f16 or bf16, but "
                       "got ")
           << t;
  if (r.getRank() != 1 || r.getNumRows() != t.getNumRows() ||
      !r.getElementType().isF32())
    return emitOpError("expected the result to be a rank-1 f32 tile of the "
                       "operands' ")
           << t.getNumRows() << " rows, but got " << r;
  return success();
}

LogicalResult StoreRowsOp::verify() {
  return verifyRowsTile(*this, "rows", getRows().getType());
}

/// A warpgroup's f32 accumulators: the backward's transposed score tiles
/// (exp_from_lse, softmax_grad), whose columns read a [B, H, S] vector, and
/// reduce_add's partial sums.
static LogicalResult verifyAccumulatorTile(Operation *op, StringRef name,
                                           TileType t) {
  if (t.getRank() != 2 || t.getNumRows() != kWarpgroupRows ||
      !t.getElementType().isF32() || t.getNumCols() % 8)
    return op->emitOpError("expected ")
           << name
           << " to be a warpgroup's f32 accumulator tile (64 x N, N a "
              "multiple of 8), but got "
           << t;
  return success();
}

LogicalResult LoadRowsOp::verify() {
  return verifyRowTile(*this, getRows().getType(), kWarpgroupRows, "rows");
}

/// The saved per-query vector of exp_from_lse and softmax_grad (`name`):
/// a [B, H, S] memref with the batch, head and first row or column, or, per
/// row, the rows that tiledattn.load_rows read, without them.
static LogicalResult verifySavedRows(Operation *op, StringRef name, Value saved,
                                     bool indexed, bool perRow,
                                     TileType scores) {
  auto rows = dyn_cast<TileType>(saved.getType());
  if (!rows) {
    if (!indexed)
      return op->emitOpError("expected [batch, head, col] after the memref ")
             << name;
    return success();
  }
  if (indexed)
    return op->emitOpError("expected no indices after ")
           << name << ", a tile of rows (tiledattn.load_rows reads them)";
  if (!perRow)
    return op->emitOpError("expected per_row with ")
           << name << " as a tile of rows (a tile holds a query per row)";
  return verifyRowTile(op, rows, scores.getNumRows(), name);
}

LogicalResult ExpFromLseOp::verify() {
  if (failed(verifyAccumulatorTile(*this, "scores", getScores().getType())))
    return failure();
  return verifySavedRows(*this, "lse", getLse(), bool(getBatch()), getPerRow(),
                         getScores().getType());
}

LogicalResult SoftmaxGradOp::verify() {
  if (failed(verifyAccumulatorTile(*this, "probs", getProbs().getType())))
    return failure();
  return verifySavedRows(*this, "delta", getDelta(), bool(getBatch()),
                         getPerRow(), getProbs().getType());
}

LogicalResult StoreTileOp::verify() {
  TileType acc = getAcc().getType();
  if (failed(verifyAccumulatorTile(*this, "acc", acc)))
    return failure();
  MemRefType dest = getDest().getType();
  if (!isHalfType(dest.getElementType()))
    return emitOpError("expected dest element type f16 or bf16, but got ")
           << dest.getElementType();
  // (A captured dest is dynamic: its columns are then the tile's, as
  // reduce_add's.)
  int64_t d = dest.getDimSize(3);
  APInt col;
  bool constantCol = getCol() && matchPattern(getCol(), m_ConstantInt(&col));
  if (constantCol && col.getZExtValue() % 8)
    return emitOpError("expected col to be a multiple of 8, but got ")
           << col.getZExtValue();
  int64_t first = constantCol ? col.getZExtValue() : 0;
  if (!ShapedType::isDynamic(d) &&
      (getCol() ? d < first + acc.getNumCols() : d != acc.getNumCols()))
    return emitOpError("expected dest's dimension 3 to ")
           << (getCol() ? "hold col plus " : "be ") << "the tile's "
           << acc.getNumCols() << " columns, but got " << d;
  if (!hasUnitInnerStride(dest))
    return emitOpError("expected dest to have a unit innermost stride, but "
                       "got ")
           << dest;
  return success();
}

LogicalResult ReduceAddOp::verify() {
  TileType t = getAcc().getType();
  if (failed(verifyAccumulatorTile(*this, "acc", t)))
    return failure();
  int64_t d = getDest().getType().getDimSize(3);
  if (!ShapedType::isDynamic(d) && d != t.getNumCols())
    return emitOpError("expected dest's dimension 3 to be the tile's ")
           << t.getNumCols() << " columns, but got " << d;
  return success();
}

LogicalResult BulkReduceAddOp::verify() {
  TileType t = getAcc().getType();
  if (failed(verifyAccumulatorTile(*this, "acc", t)))
    return failure();
  int64_t values = kWarpgroupRows * t.getNumCols();
  MemRefType dest = getDest().getType();
  int64_t d = dest.getDimSize(3);
  if (!ShapedType::isDynamic(d) && d != values)
    return emitOpError("expected dest's dimension 3 to be the tile's ")
           << values << " values (64 x " << t.getNumCols()
           << ", a fragment-ordered block), but got " << d;
  if (!dest.getLayout().isIdentity())
    return emitOpError("expected a contiguous dest (identity layout: the "
                       "bulk reduction adds one run of bytes), but got ")
           << dest;
  int64_t bytes = 4 * values;
  if (getStage().getType().getBytes() < bytes)
    return emitOpError("expected a stage of at least ")
           << bytes << " bytes (the tile's f32 values), but got "
           << getStage().getType() << " (" << getStage().getType().getBytes()
           << " bytes)";
  return success();
}

LogicalResult TruncateOp::verify() {
  auto from = cast<TileType>(getTile().getType());
  auto to = cast<TileType>(getResult().getType());
  if (from.getRank() != 2 || from.getNumRows() != kWarpgroupRows ||
      !from.getElementType().isF32() || to.getShape() != from.getShape() ||
      !isHalfType(to.getElementType()))
    return emitOpError("expected a 64-row f32 tile to f16 or bf16 of its "
                       "shape, but got ")
           << from << " to " << to;
  if (from.getNumCols() % 16)
    return emitOpError("expected columns that are a multiple of 16 (a "
                       "k-step of the mma's A), but got ")
           << from.getNumCols();
  return success();
}

//===----------------------------------------------------------------------===//
// RescaleOp
//===----------------------------------------------------------------------===//

LogicalResult ResizeOp::verify() {
  auto from = cast<TileType>(getTile().getType());
  auto to = cast<TileType>(getResult().getType());
  if (from.getRank() != 2 || to.getRank() != 2 ||
      from.getNumRows() != kWarpgroupRows ||
      to.getNumRows() != kWarpgroupRows ||
      from.getElementType() != to.getElementType())
    return emitOpError("expected two 64-row tiles of one element type (a "
                       "warpgroup's registers), but got ")
           << from << " and " << to;
  if (from.getNumCols() % 16 || to.getNumCols() % 16)
    return emitOpError("expected columns that are multiples of 16, but got ")
           << from.getNumCols() << " and " << to.getNumCols();
  return success();
}

LogicalResult RescaleOp::verify() {
  TileType acc = getAcc().getType();
  if (acc.getRank() != 2 || !acc.getElementType().isF32())
    return emitOpError("expected a rank-2 f32 acc tile, but got ") << acc;
  return verifyRowTile(*this, getFactor().getType(), acc.getNumRows(),
                       "factor");
}

//===----------------------------------------------------------------------===//
// StoreOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::tiledattn::verifyOutputTile(Operation *op, TileType acc,
                                                TileType rowMax,
                                                TileType rowSum,
                                                MemRefType dest) {
  if (acc.getRank() != 2 || !acc.getElementType().isF32())
    return op->emitOpError("expected a rank-2 f32 acc tile, but got ") << acc;
  int64_t m = acc.getNumRows();
  if (failed(verifyRowTile(op, rowMax, m, "row_max")) ||
      failed(verifyRowTile(op, rowSum, m, "row_sum")))
    return failure();
  if (!isHalfType(dest.getElementType()))
    return op->emitOpError("expected dest element type f16 or bf16, but got ")
           << dest.getElementType();
  // The acc tile may hold the head dim in whole 64-column atoms (the
  // columns past dest's last are not stored).
  int64_t destCols = dest.getShape()[3];
  if (destCols != acc.getNumCols() &&
      (ShapedType::isDynamic(destCols) || destCols % 8 != 0 ||
       tileColumns(destCols) != acc.getNumCols()))
    return op->emitOpError("expected dest head dim ")
           << acc.getNumCols() << " (the acc tile's column count), or one it "
           << "fills in 64-column atoms, but got " << dimToString(destCols);
  // The lowerings store element pairs with vector.store, or whole rows by
  // TMA.
  if (!hasUnitInnerStride(dest))
    return op->emitOpError("expected dest to have a unit innermost stride, "
                           "but got ")
           << dest;
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyOutputTile(*this, getAcc().getType(), getRowMax().getType(),
                          getRowSum().getType(), getDest().getType());
}
