//===- TileSdpaProducer.cpp - The tile loop, the producer -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile loop and the producer of the warp-specialized tile program
// (TileSdpaWarpSpecialized.cpp says what the program does). Each role
// walks the tiles in a tiledattn.for_each_tile, which sets the tile's
// coordinates and K/V blocks (from the block_map's row, or the split_tail
// piece's) and carries the K/V ring position. In the producer's, one thread
// puts Q, then K and V block by block, into their rings by TMA: with
// q_by_atom Q in parts, one per atom (with k0_by_atom each with the first
// K block's atom); with dynamic_tiles each Q tagged with its tile's rank
// and an end mark after the last; with skip_masked_blocks the slots of the
// blocks a consumer skips released for it.
//
//===----------------------------------------------------------------------===//

#include "WarpSpecializedWriter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::warpspecialized;

/// `ring.put ring[position] { tma_load source[batch, head, row] }`, of
/// the slot's parts [first, end) if given, and with `with` another ring's
/// slot in the same put (on this one's part barriers).
void WarpSpecializedWriter::put(
    Copy copy, std::optional<std::pair<int64_t, int64_t>> parts,
    std::optional<Copy> with, Value tag) {
  IntegerAttr first, end;
  if (parts) {
    first = b.getI64IntegerAttr(parts->first);
    end = b.getI64IntegerAttr(parts->second);
  }
  auto put = RingPutOp::create(
      b, loc, copy.ring, copy.position, with ? with->ring : Value(),
      with ? with->position : Value(), tag, first, end);
  OpBuilder::InsertionGuard guard(b);
  Block &body = put.getBody().emplaceBlock();
  b.setInsertionPointToStart(&body);
  for (Copy c :
       with ? SmallVector<Copy>{copy, *with} : SmallVector<Copy>{copy}) {
    Value slot = body.addArgument(c.ring.getType().getSlotType(), loc);
    TmaLoadOp::create(b, loc, c.source, at.batch, c.head, c.rows, slot);
  }
}

/// A tiledattn.for_each_tile whose body `tileBody` writes, with the
/// tile's `at`, `tilesDone`, `kvFirst`, `blocks` and `unmaskedBlocks` set
/// (and with dynamic_tiles the producer's `tileRank`, or a consumer's
/// `heldQ`, the Q slot the loop took); it carries the K/V ring position
/// from tile to tile, and `carried` (starting from their values here),
/// which `tileBody` receives and returns for the next tile. Returns the
/// last tile's `carried`. Each role has one, so that producer and
/// consumers walk the same tiles (one, or with persistent every
/// grid-th, or with dynamic_tiles the next one free).
SmallVector<Value> WarpSpecializedWriter::forEachTile(
    bool producer,
    function_ref<SmallVector<Value>(ValueRange carried)> tileBody,
    ValueRange carried) {
  auto [qBlocks, heads, batches] = tileGrid();
  Type index = b.getIndexType();
  SmallVector<Value> inits{idx(0)};
  inits.append(carried.begin(), carried.end());
  bool takesQ = dynamicTiles() && !producer;
  Value tileBlocks; // split_tail: a whole tile's K/V blocks
  if (splitTail())
    tileBlocks = arith::CeilDivUIOp::create(
        b, loc, memref::DimOp::create(b, loc, op.getK(), idx(2)),
        idx(blockN()));
  auto loop = ForEachTileOp::create(
      b, loc, ValueRange(inits).getTypes(), qBlocks, heads, batches,
      takesQ ? qRing.getResult() : Value(), tileBlocks, inits,
      /*longest_first=*/op.getCausal(),
      /*across_heads=*/schedule.getTileOrder() == TileOrder::across_heads,
      /*dynamic=*/dynamicTiles());
  Block &body = loop.getBody().emplaceBlock();
  for (unsigned i = 0; i < ForEachTileOp::kNumTileArguments; ++i)
    body.addArgument(index, loc);
  if (takesQ) {
    heldQ.slot = body.addArgument(qRing.getType().getSlotType(), loc);
    heldQ.token = body.addArgument(TokenType::get(b.getContext()), loc);
  } else if (dynamicTiles()) {
    tileRank = body.addArgument(b.getI32Type(), loc);
  } else if (splitTail()) {
    for (unsigned i = 0; i < ForEachTileOp::kNumPieceArguments; ++i)
      body.addArgument(index, loc);
  }
  for (Value init : inits)
    body.addArgument(init.getType(), loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&body);
  at = emitTileCoordinates(b, op, body.getArgument(0), body.getArgument(1),
                           body.getArgument(2));
  tilesDone = body.getArgument(3);
  ValueRange state = loop.getCarriedArguments();
  kvFirst = state.front();
  KeyRange keys = emitKeyRange(b, op, at);
  blocks = arith::CeilDivUIOp::create(b, loc, keys.end, idx(blockN()));
  unmaskedBlocks =
      arith::DivUIOp::create(b, loc, keys.unmaskedEnd, idx(blockN()));
  if (blockMap()) { // the tile's blocks and full blocks from its row
    mapRow = emitBlockMapRow(b, op, at);
    blocks = mapEntry(idx(1));
    unmaskedBlocks = schedule.getSplitKvLoop() ? mapEntry(idx(0)) : idx(0);
  }
  if (splitTail()) { // the piece's blocks [first, first + count)
    unsigned i = ForEachTileOp::kNumTileArguments;
    piece.first = body.getArgument(i);
    blocks = body.getArgument(i + 1);
    piece.holders = body.getArgument(i + 2);
    unmaskedBlocks = arith::MinUIOp::create(
        b, loc, blocks,
        arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, unmaskedBlocks, piece.first),
            piece.first));
  }
  SmallVector<Value> rest = tileBody(state.drop_front());
  SmallVector<Value> next{arith::AddIOp::create(b, loc, kvFirst, blocks)};
  llvm::append_range(next, rest);
  YieldOp::create(b, loc, next);
  return SmallVector<Value>(loop.getResults().drop_front());
}

/// One thread issues every copy: Q, then K and V block by block, each
/// into the next slot of its ring once the consumers have freed it. With
/// q_by_atom Q's first atom goes first, the rest after the first K block,
/// so that the first Q K^T can start on 16 + 8 KiB (at D = 256). With
/// one_thread_producer or dynamic_tiles the thread runs the whole tile
/// loop, so ptxas keeps its positions on the uniform datapath (without,
/// the producer warpgroup walks the tiles and the thread each tile's
/// copies); with dynamic_tiles the loop takes the tiles (their ranks go
/// with Q) and ends with the end mark.
void WarpSpecializedWriter::writeProducer() {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  if (!dynamicTiles() && !schedule.getOneThreadProducer()) {
    forEachTile(/*producer=*/true, [&](ValueRange) -> SmallVector<Value> {
      ifThen(first, [&] { writeTileCopies(); });
      return {};
    });
    return;
  }
  ifThen(first, [&] {
    if (!dynamicTiles()) { // one_thread_producer
      forEachTile(/*producer=*/true, [&](ValueRange) -> SmallVector<Value> {
        writeTileCopies();
        return {};
      });
      return;
    }
    Value puts = forEachTile(
        /*producer=*/true,
        [&](ValueRange count) -> SmallVector<Value> {
          writeTileCopies();
          return {arith::AddIOp::create(b, loc, count[0], idx(1))};
        },
        idx(0))[0];
    // The end mark: a rank past the last tile, with no copy.
    auto [qBlocks, heads, batches] = tileGrid();
    Value tiles = arith::MulIOp::create(
        b, loc, qBlocks, arith::MulIOp::create(b, loc, heads, batches));
    auto end = RingPutOp::create(
        b, loc, qRing, puts, Value(), Value(),
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), tiles),
        IntegerAttr(), IntegerAttr());
    end.getBody().emplaceBlock().addArgument(qRing.getType().getSlotType(),
                                             loc);
  });
}

/// The producer's copies of the tile: Q (tagged with its rank under
/// dynamic_tiles), then each K/V block.
void WarpSpecializedWriter::writeTileCopies() {
  bool qByAtom = schedule.getQByAtom(), k0ByAtom = schedule.getK0ByAtom();
  Copy q{qRing, tilesDone, op.getQ(), at.head, {at.row}};
  auto kAt = [&](Value j) -> Copy {
    // kv_rows: where the block is in k and v (a KV cache's pages), which
    // only the loads see.
    SmallVector<Value> rows =
        emitKvRows(b, op, at.batch, at.headKV, firstKey(j));
    return {kRing, kv(j), op.getK(), at.headKV, rows};
  };
  if (k0ByAtom) // Q's atoms, each with the first K block's
    put(q, std::pair<int64_t, int64_t>(0, qParts()), kAt(idx(0)));
  else if (qByAtom) // Q's first atom; the rest after the first K block
    put(q, std::pair<int64_t, int64_t>(0, 1));
  else
    put(q, std::nullopt, std::nullopt, tileRank);
  // skip_masked_blocks: the blocks each consumer but the last (which
  // reads them all) reaches, once per tile.
  SmallVector<Value> reached;
  if (skipsMaskedBlocks())
    for (int64_t c = 0; c + 1 < schedule.getConsumerWarpgroups(); ++c)
      reached.push_back(blocksReachedBy(arith::AddIOp::create(
          b, loc, at.row, idx((c + 1) * kWarpgroupRows))));
  auto loop = scf::ForOp::create(b, loc, idx(0), blocks, idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Copy k = kAt(j); // K and V of a block share their slots
  using Pred = arith::CmpIPredicate;
  if (k0ByAtom) // block 0's K came with Q
    ifThen(cmp(Pred::ne, j, idx(0)), [&] { put(k); });
  else
    put(k);
  if (qByAtom && !k0ByAtom)
    ifThen(cmp(Pred::eq, j, idx(0)),
           [&] { put(q, std::pair<int64_t, int64_t>(1, qParts())); });
  put({vRing, k.position, op.getV(), at.headKV, k.rows});
  // The releases of the consumers whose rows end before this block.
  for (Value bound : reached)
    ifThen(cmp(Pred::uge, j, bound), [&] {
      for (RingOp ring : {kRing, vRing})
        RingSkipOp::create(b, loc, ring, k.position, kWarpsPerWarpgroup);
    });
}
