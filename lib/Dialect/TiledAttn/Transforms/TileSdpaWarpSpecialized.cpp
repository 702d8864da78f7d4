//===- TileSdpaWarpSpecialized.cpp - The producer = tma program -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-tile-sdpa for producer = tma schedules: FlashAttention-3's
// warp-specialized forward as a tile program. The producer warpgroup fills
// three rings by TMA (Q once, then K and V block by block); each consumer
// warpgroup takes 64 query rows and runs the online softmax loop over the
// K/V blocks with asynchronous warpgroup mmas, S = Q K^T from shared memory
// and O += P V with P from registers, releasing each slot once its mma has
// read it. With pingpong the consumers issue their mmas in turns, each slot
// taken inside the turn just before its mma. The softmax of a block no mask
// or score_mod touched is `finite` (no -inf guard). The
// sdpa's score_mod, if any, becomes a tiledattn.score_mod on the scaled
// scores after S's wait (before the mask); the softmax then takes scale 1.
// Its mask_mod runs after it, in the same tiledattn.score_mod. With a
// block_map the tile's loops take their blocks from its row of the map,
// the mask_mod and mask running on the partial ones only.
//
// With overlap_softmax each consumer issues S of block j with P.V of block
// j - 1 and runs block j's softmax while the P.V runs. With persistent the
// roles walk every grid-th tile (tiledattn.for_each_tile), with q_buffers = 2
// the next tile's Q arrives under this one. With tma_store each consumer
// stages O in shared memory and stores it by TMA (tiledattn.tma_store): in
// its rows of the Q slot, released once the copy has read them, or, where
// the schedule gives O a tile of its own (ScheduleAttr::stagesOInItsOwnTile),
// in a tiledattn.alloc, waited for before the next tile writes it again.
// With defer_store a tile's O is carried to the next tile and stored between
// the issue and the wait of that tile's first S. With overlap_epilogue the
// rows' 1 / l and lse (tiledattn.finish_rows) are computed under the last
// P.V, and O, normalized after it, is stored as it is; tile_order,
// uniform_consumer and uniform_ring become attributes of the tile loops,
// the roles, and the ring gets and Q's mmas (`uniform_a`).
// With q_in_registers each consumer reads its rows of Q into registers once
// per tile (tiledattn.read_rows) and every S takes A from there. With
// q_by_atom Q's ring fills in parts, one per atom (the first before the
// first K block, the rest after it), and the tile's first S takes Q
// `partial`, waiting for each atom before its k-steps (`after_parts`); with
// k0_by_atom the first K block comes in the same put as Q (`with`), each of
// its atoms on Q's atom's barrier, and the first S takes it `partial` too.
// With skip_masked_blocks (causal) each consumer's loops end at the last
// block its own rows reach (a bound said warp-uniform, tiledattn.uniform),
// it takes an empty turn for each later block of the tile, and the producer
// releases those blocks' slots for it (tiledattn.ring.skip).
// With narrow_diagonal (causal, overlap_softmax) a masked block whose keys
// from 64 on are right of all the consumer's rows takes a narrow form in
// a warp-uniform scf.if: S over its first 64 keys (`mma_async ...
// b_rows(64)`), P in f32, packed after the P.V's wait (`tiledattn.truncate`)
// and widened with zeros to the block's (`tiledattn.resize`), and for the
// last block a P.V over those 64 keys.
// With dynamic_tiles the tile loops are `dynamic`: the producer's thread
// takes each next tile from the launch's counter and tags Q's put with its
// rank, ending with an end mark (a tagged put with no copy); the consumers'
// loops take Q's slot and read the rank from its tag (`ranks_from`).
// The schedule's other refinements are not written yet: the pass refuses a
// schedule that sets one (ScheduleAttr::getHopperRefinements), naming it.
//
//===----------------------------------------------------------------------===//

#include "TileSdpa.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tiledattn;

LogicalResult mlir::tiledattn::checkWarpSpecializedSchedule(SdpaOp op) {
  ScheduleAttr schedule = op.getSchedule();
  SmallVector<StringRef> refinements = schedule.getHopperRefinements();
  if (refinements.empty())
    return success();
  InFlightDiagnostic diag =
      op.emitOpError("has a producer = tma schedule that sets ")
      << llvm::join(refinements, ", ")
      << ", which tiledattn-tile-sdpa does not write into the tile program "
         "yet; leave them out (they change the kernel's speed, not its "
         "results)";
  if (isLoweredByHopperEmitter(op))
    diag << " or lower the sdpa with convert-sdpa-to-hopper (the default "
            "pipeline)";
  return diag;
}

namespace {
constexpr int64_t kWarpsPerWarpgroup = 4;

/// Builds the program of one sdpa op; see the file comment.
class WarpSpecializedWriter {
public:
  explicit WarpSpecializedWriter(SdpaOp op)
      : op(op), b(op), loc(op.getLoc()), schedule(op.getSchedule()),
        elementType(op.getQ().getType().getElementType()),
        headDim(tileColumns(op.getHeadDim())),
        headDimV(tileColumns(op.getHeadDimV())) {}

  void write() {
    int64_t consumers = schedule.getConsumerWarpgroups();
    // Every consumer warp releases each slot it read.
    int64_t releases = kWarpsPerWarpgroup * consumers;
    // With q_buffers = 2 the producer loads a tile's Q while the consumers
    // still work on the tile before (persistent); with q_by_atom Q's slot
    // fills atom by atom.
    qRing = RingOp::create(
        b, loc, ringType(schedule.getQBuffers(), schedule.getBlockM(), headDim),
        releases,
        schedule.getQByAtom() ? b.getI64IntegerAttr(qParts()) : IntegerAttr());
    kRing = RingOp::create(b, loc,
                           ringType(schedule.getNumStages(), blockN(), headDim),
                           releases, IntegerAttr());
    vRing = RingOp::create(
        b, loc, ringType(schedule.getNumStages(), blockN(), headDimV), releases,
        IntegerAttr());
    if (schedule.stagesOInItsOwnTile(headDim, headDimV))
      oStage =
          AllocOp::create(b, loc,
                          SmemType::get(b.getContext(), schedule.getBlockM(),
                                        headDimV, elementType));
    auto roles = WarpSpecializeOp::create(
        b, loc, consumers, schedule.getProducerRegs(),
        schedule.getConsumerRegs(),
        /*uniform_index=*/schedule.getUniformConsumer());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getProducer().emplaceBlock());
    writeProducer();
    Block &consumer = roles.getConsumer().emplaceBlock();
    Value c = consumer.addArgument(b.getIndexType(), loc);
    b.setInsertionPointToStart(&consumer);
    writeConsumer(c);
    op.erase();
  }

private:
  SdpaOp op;
  OpBuilder b;
  Location loc;
  ScheduleAttr schedule;
  Type elementType;
  /// Of Q and K, and of V and O: their tiles' columns (tileColumns).
  int64_t headDim, headDimV;
  RingOp qRing, kRing, vRing;
  /// tma_store with a tile of O's own: where O is staged (else in Q's slot).
  Value oStage;
  /// The tile being written (forEachTile): where it is, the tiles the block
  /// ran before it, and the ring position of its first K/V block.
  BlockCoordinates at;
  Value tilesDone, kvFirst;
  /// dynamic_tiles: the producer's tile rank; the Q slot a consumer's loop
  /// took.
  Value tileRank;
  struct {
    Value slot, token;
  } heldQ;
  /// K/V blocks [0, blocks) take part; [0, unmaskedBlocks) need no mask.
  /// With split_tail they are the piece's, numbered from its first block.
  Value blocks, unmaskedBlocks;
  /// split_tail: the piece's first K/V block in its tile, and the blocks
  /// after this one that run the rest of the tile (for merge_pieces).
  struct {
    Value first, holders;
  } piece;
  /// block_map: the tile's row of the map (batch, head, query block), and
  /// the first keys of its blocks read at the top of their iterations.
  BlockMapRow mapRow;
  DenseMap<Value, Value> mappedFirstKeys;
  /// The blocks [0, consumerBlocks) the consumer being written reads: all,
  /// or with skip_masked_blocks those its rows reach.
  Value consumerBlocks;

  /// skip_masked_blocks: causal consumers stop at the last block their own
  /// rows reach.
  bool skipsMaskedBlocks() {
    return op.getCausal() && schedule.getSkipMaskedBlocks();
  }
  /// The tile's blocks that rows before `rowsEnd` reach (causal).
  Value blocksReachedBy(Value rowsEnd) {
    Value keysEnd = arith::MinUIOp::create(b, loc, at.seqK, rowsEnd);
    return arith::MinUIOp::create(
        b, loc, blocks,
        arith::CeilDivUIOp::create(b, loc, keysEnd, idx(blockN())));
  }

  int64_t blockN() const { return schedule.getBlockN(); }
  /// q_by_atom: the parts Q's slot fills in, one per 64-column atom.
  int64_t qParts() const { return headDim / 64; }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cmp(arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  }
  /// `scf.if cond { then() }`, the insertion point back after it.
  void ifThen(Value cond, function_ref<void()> then) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    then();
  }
  RingType ringType(int64_t depth, int64_t rows, int64_t cols) {
    return RingType::get(
        b.getContext(), depth,
        SmemType::get(b.getContext(), rows, cols, elementType));
  }
  TileType tile(ArrayRef<int64_t> shape, Type t) {
    return TileType::get(b.getContext(), shape, t);
  }

  /// What a put copies into a slot: `source[batch, head, row]`.
  struct Copy {
    RingOp ring;
    Value position, source, head;
    /// The first row of each of the slot's pieces (one, but for kv_span).
    SmallVector<Value> rows;
  };

  /// `ring.put ring[position] { tma_load source[batch, head, row] }`, of
  /// the slot's parts [first, end) if given, and with `with` another ring's
  /// slot in the same put (on this one's part barriers).
  void put(Copy copy,
           std::optional<std::pair<int64_t, int64_t>> parts = std::nullopt,
           std::optional<Copy> with = std::nullopt, Value tag = Value()) {
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

  /// In consumer code (the only reader of the rings); uniform_ring: the
  /// position is known warp-uniform. `partial`: taken without waiting, its
  /// parts waited for by the mma that names the token in `after_parts`.
  RingGetOp get(RingOp ring, Value position, bool partial = false) {
    return RingGetOp::create(b, loc, ring.getType().getSlotType(),
                             TokenType::get(b.getContext()), ring, position,
                             /*uniform=*/schedule.getUniformRing(), partial);
  }

  /// The K/V ring position of the tile's block `j`.
  Value kv(Value j) { return arith::AddIOp::create(b, loc, kvFirst, j); }
  /// The first key of block `j` (with split_tail, of the piece's; with a
  /// block_map, of the map's entry j).
  Value firstKey(Value j) {
    if (blockMap()) {
      if (Value key = mappedFirstKeys.lookup(j))
        return key;
      Value block = mapEntry(arith::AddIOp::create(b, loc, j, idx(2)));
      return arith::MulIOp::create(b, loc, block, idx(blockN()));
    }
    if (piece.first)
      j = arith::AddIOp::create(b, loc, piece.first, j);
    return arith::MulIOp::create(b, loc, j, idx(blockN()));
  }
  /// The sdpa's block_map, if any (verifyBlockMap: no causal, no split_tail).
  Value blockMap() { return op.getBlockMap(); }
  /// Entry `i` of the tile's row of the block_map.
  Value mapEntry(Value i) { return emitBlockMapEntry(b, op, mapRow, i); }

  /// split_tail: the tile loops run the last round's tiles in pieces.
  bool splitTail() { return schedule.getSplitTail(); }

  /// The tile grid: query blocks, heads and batches.
  std::array<Value, 3> tileGrid() {
    return {arith::CeilDivUIOp::create(
                b, loc, memref::DimOp::create(b, loc, op.getQ(), idx(2)),
                idx(schedule.getBlockM())),
            memref::DimOp::create(b, loc, op.getQ(), idx(1)),
            memref::DimOp::create(b, loc, op.getQ(), idx(0))};
  }

  /// dynamic_tiles: the tile loops take their tiles one at a time, the
  /// producer's from the launch's counter, the consumers' from the ranks
  /// the producer tags Q's puts with.
  bool dynamicTiles() { return schedule.getDynamicTiles(); }

  /// A tiledattn.for_each_tile whose body `tileBody` writes, with the
  /// tile's `at`, `tilesDone`, `kvFirst`, `blocks` and `unmaskedBlocks` set
  /// (and with dynamic_tiles the producer's `tileRank`, or a consumer's
  /// `heldQ`, the Q slot the loop took); it carries the K/V ring position
  /// from tile to tile, and `carried` (starting from their values here),
  /// which `tileBody` receives and returns for the next tile. Returns the
  /// last tile's `carried`. Each role has one, so that producer and
  /// consumers walk the same tiles (one, or with persistent every
  /// grid-th, or with dynamic_tiles the next one free).
  SmallVector<Value>
  forEachTile(bool producer,
              function_ref<SmallVector<Value>(ValueRange carried)> tileBody,
              ValueRange carried = {}) {
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
              b, loc,
              arith::MaxUIOp::create(b, loc, unmaskedBlocks, piece.first),
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
  /// dynamic_tiles the thread's loop takes the tiles (their ranks go with
  /// Q) and ends with the end mark.
  void writeProducer() {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
    if (!dynamicTiles()) {
      forEachTile(/*producer=*/true, [&](ValueRange) -> SmallVector<Value> {
        ifThen(first, [&] { writeTileCopies(); });
        return {};
      });
      return;
    }
    ifThen(first, [&] {
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
  void writeTileCopies() {
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

  /// Runs `issue` (ring gets and the mmas on their slots) on its own or,
  /// with pingpong, inside one turn; returns what it returns (futures and
  /// the slots' tokens). The gets go inside the turn so that each slot's
  /// wait comes after the turn starts and just before its mma: waits
  /// before the turn delay the turn itself (docs/perf-notes.md, eleventh
  /// session, wait_before_turn: 1.5-4% slower).
  SmallVector<Value> issueInTurn(function_ref<SmallVector<Value>()> issue) {
    if (!schedule.getPingpong())
      return issue();
    auto turn = TurnOp::create(b, loc, TypeRange{});
    OpBuilder::InsertionGuard guard(b);
    Block &body = turn.getBody().emplaceBlock();
    b.setInsertionPointToStart(&body);
    SmallVector<Value> results = issue();
    YieldOp::create(b, loc, results);
    // The turn's results are what the body yields: rebuild it with their
    // types.
    b.setInsertionPoint(turn);
    auto typed = TurnOp::create(b, loc, ValueRange(results).getTypes());
    typed.getBody().takeBody(turn.getBody());
    turn.erase();
    return SmallVector<Value>(typed.getResults());
  }

  /// With uniform_ring a shared-memory A's address is made uniform too
  /// (`uniform_a`), as the ring positions are. `afterParts`: partial
  /// gets' tokens whose parts the mma waits for.
  /// `bRows`: only B's first rows take part (`b_rows`), if not 0.
  Value mmaAsync(Value a, Value aRow, Value bSlot, Value acc, bool transposeB,
                 TileType result, ValueRange afterParts = {},
                 int64_t bRows = 0) {
    bool uniformA = aRow && schedule.getUniformRing();
    return MmaAsyncOp::create(
               b, loc, FutureType::get(b.getContext(), result), a, aRow, bSlot,
               acc, afterParts, transposeB, uniformA,
               bRows ? b.getI64IntegerAttr(bRows) : IntegerAttr())
        .getResult();
  }

  /// An mma whose B is a ring slot: its future and the slot's token.
  struct Issued {
    Value future, token;
  };

  /// Takes the slot at `position` of `ring` and issues `mma_async` on it,
  /// both in one turn with pingpong. `afterParts`: as mmaAsync's; with
  /// `partialB` the slot is taken `partial` and waited for there too.
  Issued issue(Value a, Value aRow, RingOp ring, Value position, Value acc,
               bool transposeB, TileType result, ValueRange afterParts = {},
               bool partialB = false, int64_t bRows = 0) {
    SmallVector<Value> issued = issueInTurn([&]() -> SmallVector<Value> {
      RingGetOp slot = get(ring, position, partialB);
      SmallVector<Value> after(afterParts);
      if (partialB)
        after.push_back(slot.getToken());
      return {mmaAsync(a, aRow, slot.getSlot(), acc, transposeB, result, after,
                       bRows),
              slot.getToken()};
    });
    return {issued[0], issued[1]};
  }

  /// issue, then its wait; then the slot goes back to the producer.
  Value mma(Value a, Value aRow, RingOp ring, Value position, Value acc,
            bool transposeB, TileType result) {
    Issued issued = issue(a, aRow, ring, position, acc, transposeB, result);
    Value out = WaitOp::create(b, loc, result, issued.future);
    RingReleaseOp::create(b, loc, ring, issued.token);
    return out;
  }

  /// The sdpa's score_mod (`score`) and mask_mod (`mask`) on the scores
  /// of the tile at (row, col), unscaled after unless scoresScaled.
  Value applyMods(Value scores, Value row, Value col, bool score, bool mask,
                  bool scaled, Value unscale) {
    return emitScoreMods(b, op, at, scores, row, col, score, mask, scaled,
                         scoresScaled() ? Value() : unscale);
  }
  bool hasScoreMod() { return !op.getScoreMod().empty(); }
  bool hasMaskMod() { return !op.getMaskMod().empty(); }
  /// Whether the mods reach the softmax scaled on every block (it then
  /// takes scale 1): a score_mod runs on all, a mask_mod without a
  /// block_map too.
  bool scoresScaled() { return hasScoreMod() || (hasMaskMod() && !blockMap()); }

  /// What a consumer's blocks share: its rows, its Q slot, tile types.
  struct Consumer {
    TileType accType, scoreType;
    /// Its first row in the Q slot, and in the sequence.
    Value slotRow, row;
    Value qSlot, qToken;
    /// Each S's A: the consumer's rows of the Q slot (qARow), or with
    /// q_in_registers those rows read into registers once per tile (no
    /// qARow).
    Value qA, qARow;
    /// The online softmax's scale: 1 when the mods scale the scores
    /// (scoresScaled); else the mask_mod's body scales back, by `unscale`.
    Value softmaxScale, unscale;
  };

  /// The scores of K/V block `j` once waited for, with the mods and (if
  /// `mask`) the mask applied. With a block_map the mask_mod runs on the
  /// map's partial blocks only (`mask`), which leaves the full ones as they
  /// were.
  Value modAndMask(const Consumer &c, Value scores, Value j, bool mask) {
    bool maskMod = hasMaskMod() && (mask || !blockMap());
    if (!hasScoreMod() && !maskMod && !mask)
      return scores;
    Value col = firstKey(j);
    if (hasScoreMod() || maskMod)
      scores = applyMods(scores, c.row, col, hasScoreMod(), maskMod,
                         /*scaled=*/false, c.unscale);
    if (mask)
      scores = MaskOp::create(b, loc, scores.getType(), scores, c.row, col,
                              at.seqK, op.getCausal());
    return scores;
  }

  /// `unmasked`: no mask touched the scores, and with no score_mod they
  /// are finite (`finite`: no -inf guard). With raw_maxima the maxima are
  /// of the raw scores (`raw_max`), as the emitter keeps them.
  /// `probsType`: P's element type, the mma's (default) or f32 (packed
  /// later, tiledattn.truncate).
  OnlineSoftmaxOp softmax(const Consumer &c, Value scores, Value rowMax,
                          Value rowSum, bool unmasked,
                          Type probsType = Type()) {
    auto softmax = OnlineSoftmaxOp::create(
        b, loc, scores, rowMax, rowSum, c.softmaxScale,
        probsType ? probsType : elementType,
        unmasked && !hasScoreMod() && (!hasMaskMod() || blockMap()),
        schedule.getRawMaxima());
    if (int64_t n = op.getSchedule().getExp2OnFma())
      softmax.setExp2OnFma(n);
    return softmax;
  }

  /// The loops over K/V blocks: those that need no mask first, then the
  /// rest (the diagonal, the ragged end), as in the mma_sync program. The
  /// first loop starts at block `first`, after any written before them.
  /// `body(j, state, mask)` returns the next iteration's state.
  SmallVector<Value> emitBlockLoops(
      int64_t first, ValueRange inits,
      function_ref<SmallVector<Value>(Value, ValueRange, bool)> body) {
    auto emitLoop = [&](Value begin, Value end, ValueRange state, bool mask) {
      auto loop = scf::ForOp::create(b, loc, begin, end, idx(1), state);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      // A masked block's first key from the map: read before the block's
      // mmas are issued, so that the load is under them.
      if (blockMap() && mask)
        mappedFirstKeys[loop.getInductionVar()] =
            firstKey(loop.getInductionVar());
      scf::YieldOp::create(
          b, loc, body(loop.getInductionVar(), loop.getRegionIterArgs(), mask));
      return SmallVector<Value>(loop.getResults());
    };
    SmallVector<Value> state(inits);
    Value begin = idx(first), maskedBegin = begin;
    if (schedule.getSplitKvLoop()) {
      maskedBegin = first == 0
                        ? unmaskedBlocks
                        : arith::MaxUIOp::create(b, loc, unmaskedBlocks, begin)
                              .getResult();
      state = emitLoop(begin, maskedBegin, state, /*mask=*/false);
    }
    return emitLoop(maskedBegin, consumerBlocks, state, /*mask=*/true);
  }

  /// The consumer warpgroup `c`: rows 64c .. 64c + 63 of the block's tile.
  void writeConsumer(Value consumer) {
    Type f32 = b.getF32Type();
    Consumer c;
    c.accType = tile({kWarpgroupRows, headDimV}, f32);
    c.scoreType = tile({kWarpgroupRows, blockN()}, f32);
    TileType rowType = tile({kWarpgroupRows}, f32);
    auto fill = [&](TileType t, double v) -> Value {
      return ConstantOp::create(b, loc, t, b.getF32FloatAttr(v));
    };
    Value acc0 = fill(c.accType, 0.0);
    Value rowMax0 = fill(rowType, -std::numeric_limits<double>::infinity());
    Value rowSum0 = fill(rowType, 0.0);
    // With mods the scores reach the softmax scaled already, unless only a
    // block_map's partial blocks take one (then it scales them back).
    if (!scoresScaled() && hasMaskMod())
      c.unscale = arith::DivFOp::create(
          b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0)),
          op.getScale());
    c.softmaxScale =
        !scoresScaled()
            ? op.getScale()
            : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0))
                  .getResult();
    c.slotRow = arith::MulIOp::create(b, loc, consumer, idx(kWarpgroupRows));
    // defer_store: no O is held before the first tile.
    SmallVector<Value> noneHeld;
    if (schedule.getDeferStore())
      noneHeld = HeldO{acc0,
                       rowMax0,
                       rowSum0,
                       idx(0),
                       idx(0),
                       idx(0),
                       arith::ConstantIntOp::create(b, loc, 0, 1)}
                     .values();
    SmallVector<Value> last = forEachTile(
        /*producer=*/false,
        [&](ValueRange carried) -> SmallVector<Value> {
          if (schedule.getDeferStore())
            held = HeldO::from(carried);
          c.row = arith::AddIOp::create(b, loc, at.row, c.slotRow);
          consumerBlocks = blocks;
          if (skipsMaskedBlocks()) // the same in the warpgroup: said so
            consumerBlocks =
                UniformOp::create(b, loc, b.getIndexType(),
                                  blocksReachedBy(arith::AddIOp::create(
                                      b, loc, c.row, idx(kWarpgroupRows))));
          if (dynamicTiles()) { // the loop took Q's slot, for its rank
            c.qSlot = heldQ.slot;
            c.qToken = heldQ.token;
          } else { // q_by_atom: the first S waits for Q's atoms one by one
            auto q = get(qRing, tilesDone, /*partial=*/schedule.getQByAtom());
            c.qSlot = q.getSlot();
            c.qToken = q.getToken();
          }
          c.qA = c.qSlot;
          c.qARow = c.slotRow;
          if (schedule.getQInRegisters()) {
            c.qA = ReadRowsOp::create(
                b, loc, tile({kWarpgroupRows, headDim}, elementType), c.qSlot,
                c.slotRow);
            c.qARow = Value();
          }
          SmallVector<Value> out =
              schedule.getOverlapSoftmax()
                  ? writeOverlappedBlocks(c, {acc0, rowMax0, rowSum0})
                  : writeBlocks(c, {acc0, rowMax0, rowSum0});
          if (out[1] &&
              schedule.getRawMaxima()) // in the units of the ops after
            out[1] = ScaleMaxOp::create(b, loc, out[1].getType(), out[1],
                                        c.softmaxScale);
          if (skipsMaskedBlocks())
            skipTurns();
          if (splitTail()) { // a piece's O to the one that stores its tile
            auto merged = MergePiecesOp::create(
                b, loc, out[0].getType(), out[1].getType(), out[2].getType(),
                out[0], out[1], out[2], piece.first, piece.holders);
            out.assign(merged->result_begin(), merged->result_end());
          }
          if (!schedule.getDeferStore()) {
            writeEpilogue(c, out);
            return {};
          }
          // Held until the next tile has issued its first S.
          RingReleaseOp::create(b, loc, qRing, c.qToken);
          Value valid = storesTile();
          return HeldO{out[0], out[1], out[2], c.row, at.head, at.batch, valid}
              .values();
        },
        noneHeld);
    if (schedule.getDeferStore()) { // The last tile's.
      held = HeldO::from(last);
      storeHeld(c);
    }
    if (oStage) // The block's shared memory outlives the last copy's reads.
      TmaStoreWaitOp::create(b, loc);
  }

  /// skip_masked_blocks with pingpong: the tile's blocks this consumer
  /// does not read get its empty turns (one per block, two without
  /// overlap_softmax), since the other consumers wait for them.
  void skipTurns() {
    if (!schedule.getPingpong())
      return;
    auto loop = scf::ForOp::create(b, loc, consumerBlocks, blocks, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    for (int t = 0; t < (schedule.getOverlapSoftmax() ? 1 : 2); ++t)
      issueInTurn([] { return SmallVector<Value>(); });
  }

  /// defer_store: the O a tile hands the next, carried by the tile loop in
  /// this order (values() / from()).
  struct HeldO {
    Value acc, rowMax, rowSum;
    /// Where it goes: the consumer's first row, the head and the batch.
    Value row, head, batch;
    /// Whether there is one (i1; not before the first tile).
    Value valid;
    SmallVector<Value> values() const {
      return {acc, rowMax, rowSum, row, head, batch, valid};
    }
    static HeldO from(ValueRange v) {
      return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    }
  };
  HeldO held;

  /// Stores the held O, if there is one, through the O tile (once the copy
  /// before has read it).
  void storeHeld(const Consumer &c) {
    ifThen(held.valid, [&] {
      TmaStoreWaitOp::create(b, loc);
      TmaStoreOp::create(b, loc, held.acc, held.rowMax, held.rowSum, op.getO(),
                         held.batch, held.head, held.row, oStage, c.slotRow,
                         op.getLse());
    });
  }

  /// O and lse of the consumer's rows, and Q's slot back to the producer.
  /// `out`: O and the rows' max and sum, or (overlap_epilogue) O normalized
  /// and no statistics (the lse is stored).
  void writeEpilogue(const Consumer &c, ValueRange out) {
    auto tmaStore = [&](Value stage) {
      TmaStoreOp::create(b, loc, out[0], out[1], out[2], op.getO(), at.batch,
                         at.head, c.row, stage, c.slotRow,
                         out[1] ? op.getLse() : Value());
    };
    // split_tail: only the piece that starts its tile stores.
    auto storeIfWhole = [&](function_ref<void()> store) {
      if (splitTail())
        ifThen(storesTile(), store);
      else
        store();
    };
    if (!schedule.getTmaStore()) {
      RingReleaseOp::create(b, loc, qRing, c.qToken);
      storeIfWhole([&] {
        StoreOp::create(b, loc, out[0], out[1], out[2], op.getO(), at.batch,
                        at.head, c.row, op.getLse());
      });
    } else if (oStage) {
      RingReleaseOp::create(b, loc, qRing, c.qToken);
      storeIfWhole([&] {
        TmaStoreWaitOp::create(b, loc); // the tile before's copy read it
        tmaStore(oStage);
      });
    } else {
      storeIfWhole([&] {
        tmaStore(c.qSlot);
        TmaStoreWaitOp::create(b, loc);
      });
      RingReleaseOp::create(b, loc, qRing, c.qToken);
    }
  }

  /// Whether the tile's O is stored here: always, or with split_tail by the
  /// piece with the tile's first block (which merged the others).
  Value storesTile() {
    if (!splitTail())
      return arith::ConstantIntOp::create(b, loc, 1, 1);
    return cmp(arith::CmpIPredicate::eq, piece.first, idx(0));
  }

  /// Block by block in order: S = Q K_j^T, its softmax, O += P V_j, each
  /// mma waited for before the next step. Returns O, row max and row sum.
  SmallVector<Value> writeBlocks(const Consumer &c, ValueRange inits) {
    return emitBlockLoops(
        0, inits,
        [&](Value j, ValueRange state, bool mask) -> SmallVector<Value> {
          Value scores = mma(c.qA, c.qARow, kRing, kv(j), Value(),
                             /*transposeB=*/true, c.scoreType);
          scores = modAndMask(c, scores, j, mask);
          auto sm = softmax(c, scores, state[1], state[2], !mask);
          Value rescaled =
              RescaleOp::create(b, loc, c.accType, state[0], sm.getRescale());
          Value next = mma(sm.getProbs(), Value(), vRing, kv(j), rescaled,
                           /*transposeB=*/false, c.accType);
          return {next, sm.getNewRowMax(), sm.getNewRowSum()};
        });
  }

  /// overlap_softmax, FlashAttention-3's intra-warpgroup overlap: block 0's
  /// S and softmax alone, then per block j, S_j = Q K_j^T and O += P_{j-1}
  /// V_{j-1} issued together, S_j waited for and its softmax run while the
  /// P.V still runs; then the last block's P.V. Returns O, row max, sum.
  SmallVector<Value> writeOverlappedBlocks(const Consumer &c,
                                           ValueRange inits) {
    // q_by_atom: Q's atoms waited for one by one; k0_by_atom: the first K
    // block came with them (its own barrier completes at their issue).
    SmallVector<Value> qParts;
    if (schedule.getQByAtom())
      qParts.push_back(c.qToken);
    Issued firstS = issue(c.qA, c.qARow, kRing, kvFirst, Value(),
                          /*transposeB=*/true, c.scoreType, qParts,
                          /*partialB=*/schedule.getK0ByAtom());
    // defer_store: the tile before's O goes out under this tile's first S.
    if (schedule.getDeferStore())
      storeHeld(c);
    Value scores = WaitOp::create(b, loc, c.scoreType, firstS.future);
    RingReleaseOp::create(b, loc, kRing, firstS.token);
    // Block 0 is masked only when it is the diagonal or the ragged end.
    bool maskAlways = !schedule.getSplitKvLoop();
    if (maskAlways) {
      scores = modAndMask(c, scores, idx(0), /*mask=*/true);
    } else {
      scores = modAndMask(c, scores, idx(0), /*mask=*/false);
      Value masked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           unmaskedBlocks, idx(0));
      auto ifMasked = scf::IfOp::create(b, loc, c.scoreType, masked,
                                        /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifMasked.getThenRegion().front());
      // With a block_map the mask_mod, which the line above left out, runs
      // here with the mask.
      Value col = firstKey(idx(0));
      Value partial = scores;
      if (blockMap() && hasMaskMod())
        partial = applyMods(scores, c.row, col, /*score=*/false, /*mask=*/true,
                            /*scaled=*/hasScoreMod(), c.unscale);
      scf::YieldOp::create(b, loc,
                           MaskOp::create(b, loc, c.scoreType, partial, c.row,
                                          col, at.seqK, op.getCausal())
                               .getResult());
      b.setInsertionPointToStart(&ifMasked.getElseRegion().front());
      scf::YieldOp::create(b, loc, scores);
      scores = ifMasked.getResult(0);
    }
    // Block 0 may have been masked (the scf.if above): guarded.
    auto first = softmax(c, scores, inits[1], inits[2], /*unmasked=*/false);
    SmallVector<Value> state{inits[0], first.getNewRowMax(),
                             first.getNewRowSum(), first.getProbs()};
    state = emitBlockLoops(
        1, state,
        [&](Value j, ValueRange state, bool mask) -> SmallVector<Value> {
          if (!mask || !narrowDiagonal())
            return overlappedBlock(c, j, state, mask, /*narrow=*/false);
          return ifNarrow(c, j, ValueRange(state).getTypes(), [&](bool narrow) {
            return overlappedBlock(c, j, state, mask, narrow);
          });
        });
    Value last = arith::SubIOp::create(b, loc, consumerBlocks, idx(1));
    if (!narrowDiagonal())
      return lastPV(c, last, state, /*narrow=*/false);
    // (Placeholders for the types: overlap_epilogue yields no statistics.)
    SmallVector<Type> types{c.accType};
    if (!schedule.getOverlapEpilogue())
      types.append({state[1].getType(), state[2].getType()});
    SmallVector<Value> out = ifNarrow(c, last, types, [&](bool narrow) {
      SmallVector<Value> out = lastPV(c, last, state, narrow);
      return SmallVector<Value>(llvm::make_filter_range(
          out, [](Value v) { return static_cast<bool>(v); }));
    });
    out.resize(3);
    return out;
  }

  /// narrow_diagonal (causal, with overlap_softmax): a block whose keys
  /// from 64 on are right of every row of the consumer takes the narrow
  /// form, S over its first 64 keys and P.V over those only.
  bool narrowDiagonal() {
    return op.getCausal() && schedule.getNarrowDiagonal() &&
           schedule.getOverlapSoftmax() && blockN() > kWarpgroupRows;
  }

  /// `scf.if` on whether block `j` is narrow for consumer `c` (the same in
  /// the warpgroup: said so), each branch what `branch(narrow)` writes,
  /// yielded as `types`.
  SmallVector<Value>
  ifNarrow(const Consumer &c, Value j, TypeRange types,
           function_ref<SmallVector<Value>(bool narrow)> branch) {
    Value narrow =
        UniformOp::create(b, loc, b.getI1Type(),
                          cmp(arith::CmpIPredicate::uge, firstKey(j), c.row));
    auto ifOp = scf::IfOp::create(b, loc, types, narrow,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    for (bool n : {true, false}) {
      b.setInsertionPointToStart(n ? &ifOp.getThenRegion().front()
                                   : &ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, branch(n));
    }
    return SmallVector<Value>(ifOp.getResults());
  }

  /// Block j of the overlapped loops: S_j = Q K_j^T issued with O +=
  /// P_{j-1} V_{j-1}, S_j waited for and its softmax run while the P.V
  /// runs. `state`: O, row max, row sum, P_{j-1}. `narrow`: S_j over the
  /// block's first 64 keys, its P widened with zeros to the block's.
  SmallVector<Value> overlappedBlock(const Consumer &c, Value j,
                                     ValueRange state, bool mask, bool narrow) {
    Value kPosition = kv(j);
    Value vPosition = kv(arith::SubIOp::create(b, loc, j, idx(1)));
    TileType scoreType =
        narrow ? tile({kWarpgroupRows, kWarpgroupRows}, b.getF32Type())
               : c.scoreType;
    // V_{j-1}'s slot is waited for after S_j's issue.
    SmallVector<Value> issued = issueInTurn([&]() -> SmallVector<Value> {
      RingGetOp k = get(kRing, kPosition);
      Value s = mmaAsync(c.qA, c.qARow, k.getSlot(), Value(),
                         /*transposeB=*/true, scoreType, {},
                         narrow ? kWarpgroupRows : 0);
      RingGetOp v = get(vRing, vPosition);
      Value pv = mmaAsync(state[3], Value(), v.getSlot(), state[0],
                          /*transposeB=*/false, c.accType);
      return {s, pv, k.getToken(), v.getToken()};
    });
    Value scores = WaitOp::create(b, loc, scoreType, issued[0]);
    RingReleaseOp::create(b, loc, kRing, issued[2]);
    scores = modAndMask(c, scores, j, mask);
    // A narrow block's P is packed after the P.V's wait: packed under the
    // P.V, which reads the registers of P_{j-1}, it made ptxas serialize
    // every wgmma of the kernel (C7513).
    auto sm = softmax(c, scores, state[1], state[2], !mask,
                      narrow ? b.getF32Type() : elementType);
    Value acc = WaitOp::create(b, loc, c.accType, issued[1]);
    RingReleaseOp::create(b, loc, vRing, issued[3]);
    acc = RescaleOp::create(b, loc, c.accType, acc, sm.getRescale());
    Value probs = sm.getProbs();
    if (narrow)
      probs = ResizeOp::create(
          b, loc, state[3].getType(),
          TruncateOp::create(
              b, loc, tile({kWarpgroupRows, kWarpgroupRows}, elementType),
              probs));
    return {acc, sm.getNewRowMax(), sm.getNewRowSum(), probs};
  }

  /// The last block's P.V (`last`, of the consumer's blocks) after the
  /// overlapped loops; `narrow`: over its first 64 keys. Returns O and the
  /// rows' max and sum, or (overlap_epilogue) O normalized, the rows' 1 / l
  /// and lse computed under the P.V, and no statistics.
  SmallVector<Value> lastPV(const Consumer &c, Value last, ValueRange state,
                            bool narrow) {
    Value probs = state[3];
    if (narrow)
      probs = ResizeOp::create(
          b, loc, tile({kWarpgroupRows, kWarpgroupRows}, elementType), probs);
    int64_t rows = narrow ? kWarpgroupRows : 0;
    Value position = kv(last);
    if (schedule.getOverlapEpilogue()) {
      // The rows' 1 / l and lse under the last P.V; O normalized after it.
      Issued pv = issue(probs, Value(), vRing, position, state[0],
                        /*transposeB=*/false, c.accType, {}, false, rows);
      Value rowMax = state[1];
      if (schedule.getRawMaxima())
        rowMax = ScaleMaxOp::create(b, loc, rowMax.getType(), rowMax,
                                    c.softmaxScale);
      Value inv =
          FinishRowsOp::create(b, loc, state[1].getType(), rowMax, state[2],
                               op.getLse(), at.batch, at.head, c.row);
      Value acc = WaitOp::create(b, loc, c.accType, pv.future);
      RingReleaseOp::create(b, loc, vRing, pv.token);
      return {RescaleOp::create(b, loc, c.accType, acc, inv), Value(), Value()};
    }
    Issued pv = issue(probs, Value(), vRing, position, state[0],
                      /*transposeB=*/false, c.accType, {}, false, rows);
    Value acc = WaitOp::create(b, loc, c.accType, pv.future);
    RingReleaseOp::create(b, loc, vRing, pv.token);
    return {acc, state[1], state[2]};
  }
};
} // namespace

void mlir::tiledattn::writeWarpSpecializedProgram(SdpaOp op) {
  WarpSpecializedWriter(op).write();
}
