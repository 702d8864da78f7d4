//===- TileSdpa.h - The tile programs of tiledattn.sdpa ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Internal to tiledattn-tile-sdpa: what both tile programs (the mma_sync
// one and the warp-specialized one) compute alike, and the writer of the
// warp-specialized one.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_TILESDPA_H
#define TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_TILESDPA_H

#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

namespace mlir::tiledattn {
/// Where one thread block of an sdpa works: its tile of query rows and the
/// keys those rows see.
struct BlockCoordinates {
  /// From the grid (x: query block, y: query head, z: batch), and the K/V
  /// head that the query head reads (grouped-query attention).
  Value batch, head, headKV;
  /// The block's first query row, and the number of keys.
  Value row, seqK;
};

/// Emits at `b`'s insertion point the values of BlockCoordinates for `op`.
/// Causal blocks are launched last row first, so that the long ones start
/// first and the short ones fill in the tail.
BlockCoordinates emitBlockCoordinates(OpBuilder &b, SdpaOp op);

/// The BlockCoordinates of the tile (qBlock, head, batch) of `op`.
BlockCoordinates emitTileCoordinates(OpBuilder &b, SdpaOp op, Value qBlock,
                                     Value head, Value batch);

/// The keys a block's rows see, in key positions.
struct KeyRange {
  /// Keys [0, end) take part: all of them, or up to the block's diagonal
  /// when causal (top-left).
  Value end;
  /// Keys [0, unmaskedEnd) need no mask: whole blocks of block_n keys inside
  /// the sequence and, when causal, at or before the block's first row.
  /// Without split_kv_loop, 0 (every block is masked).
  Value unmaskedEnd;
};

/// Emits at `b`'s insertion point the KeyRange of the block at `at`.
KeyRange emitKeyRange(OpBuilder &b, SdpaOp op, const BlockCoordinates &at);

/// The indices of a tile's row of the sdpa's block_map: batch and head (0
/// along a dimension of size 1) and query block.
using BlockMapRow = SmallVector<Value, 3>;

/// Emits at `b`'s insertion point the BlockMapRow of the tile at `at`.
BlockMapRow emitBlockMapRow(OpBuilder &b, SdpaOp op,
                            const BlockCoordinates &at);

/// Emits the load of entry `i` of `row` of the block_map, as an index:
/// 0 the full blocks, 1 the blocks listed, 2 + j the j-th block.
Value emitBlockMapEntry(OpBuilder &b, SdpaOp op, const BlockMapRow &row,
                        Value i);

/// Emits a tiledattn.score_mod on `scores`, the tile at (row, col) of the
/// block at `at`, whose body runs a copy of the sdpa's score_mod (if
/// `score`) and then of its mask_mod (if `mask`) with the block's batch and
/// head, on the score times the sdpa's scale unless `scaled` (a mod before
/// scaled it), and multiplies the result by `unscale` if given (1 / scale:
/// the softmax takes the scale).
Value emitScoreMods(OpBuilder &b, SdpaOp op, const BlockCoordinates &at,
                    Value scores, Value row, Value col, bool score, bool mask,
                    bool scaled, Value unscale);

/// The rows of k and v that hold the block whose first key is `key` (of
/// batch `batch`, K/V head `headKV`): one per run of kv_span keys (one for
/// the whole block without kv_span), each from a copy of the sdpa's
/// kv_rows body; {`key`} where the sdpa has no kv_rows.
SmallVector<Value> emitKvRows(OpBuilder &b, SdpaOp op, Value batch,
                              Value headKV, Value key);

/// Writes the warp-specialized tile program of `op` (producer = tma) in
/// place of it: a producer warpgroup filling rings of Q, K and V slots by
/// TMA, consumer warpgroups of 64 query rows each running the online
/// softmax loop with asynchronous mmas, in turns when pingpong.
void writeWarpSpecializedProgram(SdpaOp op);
} // namespace mlir::tiledattn

#endif // TILEDATTN_LIB_DIALECT_TILEDATTN_TRANSFORMS_TILESDPA_H
