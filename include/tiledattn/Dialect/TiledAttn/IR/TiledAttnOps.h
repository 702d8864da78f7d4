//===- TiledAttnOps.h - TiledAttn dialect ops -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_H
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnDialect.h"

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h.inc"

namespace mlir::tiledattn {
/// Checks a score body (of tiledattn.score_mod or tiledattn.sdpa's
/// score_mod, mask_mod or kv_rows) on behalf of `op`: its arguments are
/// `arguments` (whose `meaning` the diagnostic gives), it yields one
/// `yielded` (default f32: `yieldedMeaning`, the new score), and nothing in
/// it touches a tile or writes memory.
LogicalResult verifyScoreBody(Operation *op, Block &body, TypeRange arguments,
                              StringRef meaning, Type yielded = {},
                              StringRef yieldedMeaning = "the new score");

/// Checks the operands of tiledattn.store and tiledattn.tma_store on behalf
/// of `op`: an f32 accumulator, its rows' maxima and sums, and a
/// destination of f16 or bf16 with the accumulator's head dim and a unit
/// innermost stride.
LogicalResult verifyOutputTile(Operation *op, TileType acc, TileType rowMax,
                               TileType rowSum, MemRefType dest);

/// Rows of one warpgroup's wgmma (m64nNk16): the rows of its tiles.
constexpr int64_t kWarpgroupRows = 64;
/// Shared memory a block may use on sm_90 (227 KiB).
constexpr int64_t kMaxSharedMemoryBytes = 227 * 1024;
/// Shared memory of one sm_90 multiprocessor, shared by its blocks.
constexpr int64_t kSharedMemoryPerSmBytes = 228 * 1024;
/// The 128-byte swizzle repeats every 1024 bytes; TMA and wgmma derive it
/// from the address, so swizzled tiles start on a 1024-byte boundary.
constexpr int64_t kSwizzleAlignmentBytes = 1024;
/// With dynamic_tiles: the tile index the producer hands the consumers, one
/// 32-bit slot per Q buffer (two at most), after the other shared tiles.
constexpr int64_t kTileSlotBytes = 16;
/// Optional attributes of a schedule's function: the key/value lengths its
/// kernel is meant for (inclusive). The bundle's manifest carries them and
/// the package picks, among the bundles for the same inputs, one whose
/// range holds seqlen_k (docs/Schedules.md).
constexpr llvm::StringLiteral kMinSeqlenKAttrName = "tiledattn.min_seqlen_k";
constexpr llvm::StringLiteral kMaxSeqlenKAttrName = "tiledattn.max_seqlen_k";
/// Head dims that have a lowering today.
bool isSupportedHeadDim(int64_t headDim);
/// The columns of the tiles that hold a head dim of `headDim` in the
/// producer = tma program: whole 64-column atoms (TMA reads the columns past
/// the tensor's last as zeros and its stores drop them, so a head dim of 80
/// runs on tiles of 128 columns).
inline int64_t tileColumns(int64_t headDim) { return (headDim + 63) / 64 * 64; }
/// The tiledattn.ring.get a ring token comes from, directly or through
/// tiledattn.turn results; null if it comes from anything else.
RingGetOp getOfToken(Value token);
/// `value` followed out of tiledattn.turn bodies while its one use is the
/// turn's yield: the turn result it leaves as, or `value` itself.
Value followOutOfTurns(Value value);
/// Verifies that `token`, taken by `taker` (a tiledattn.ring.get or a
/// tiledattn.for_each_tile with ranks_from), is released once on every
/// path: by one tiledattn.ring.release in its block (or out of turns), or
/// in both branches of an scf.if there.
LogicalResult verifyReleasedOnce(Operation *taker, Value token);
} // namespace mlir::tiledattn

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_H
