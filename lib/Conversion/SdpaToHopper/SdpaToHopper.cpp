//===- SdpaToHopper.cpp - Warp-specialized Hopper attention -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers a tiledattn.sdpa whose schedule says producer = tma straight to a
// warp-specialized gpu.func (FlashAttention-3's arrangement):
//
//   warpgroup 0 (producer): setmaxnreg.dec, then one thread issues TMA loads
//     of Q once and of K and V into a ring of num_stages buffers, each stage
//     guarded by a "full" mbarrier (TMA transaction count) and an "empty"
//     one (consumers arrive when the stage's wgmmas have read it);
//   warpgroups 1..C (consumers): setmaxnreg.inc, 64 query rows each;
//     S = Q.K^T by wgmma with both operands in shared memory, the online
//     softmax in registers (exp2 with the scale folded in), then O += P.V by
//     wgmma with P straight from registers (the accumulator layout of S is
//     the A-fragment layout, so no shared-memory round trip).
//
// All shared tiles use TMA's 128-byte swizzle in 64-column atoms
// ([atom][rows][64] elements), which is what wgmma's 128B-swizzled
// descriptors read: K-major for Q and K, MN-major (transposed B) for V.
// The tensor maps arrive as grid-constant kernel parameters built by the
// runtime (see tiledattn.tensor_maps on the kernel).
//
// Schedule options: pingpong (the consumers take turns issuing wgmmas, on
// named barriers), overlap_softmax (S of block j and P.V of block j-1 issued
// together, block j's softmax under them), ctas_per_sm (.maxnreg and
// .minnctapersm for two resident blocks), persistent (one block per
// multiprocessor loops over the tiles; a "Q empty" mbarrier lets the
// producer load the next tile's Q once the consumers' last Q.K^T of this
// one has read it, and the K/V ring runs on across tiles), q_buffers (with
// 2, tiles alternate between two Q buffers, so the next tile's Q loads
// while this one runs), dynamic_tiles (the producer takes each next tile
// from a global counter and hands its index to the consumers in a shared
// slot next to the tile's Q, published by the Q-full barrier),
// conditional_rescale (O's rescale after a block only when a warp vote says
// some row got a new maximum), overlap_epilogue (the rows' totals and lse
// under the tile's last P.V), stage_o_in_q (with two Q buffers, O staged
// for its TMA store in its tile's own Q buffer, returned to the producer
// after the next tile's first block).
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Conversion/WgmmaHelpers.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"
#include <limits>

namespace mlir::tiledattn {
#define GEN_PASS_DEF_CONVERTSDPATOHOPPERPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
class HopperKernelEmitter {
public:
  HopperKernelEmitter(OpBuilder &b, SdpaOp op, gpu::GPUFuncOp kernel,
                      bool registerBudgets)
      : b(b), op(op), kernel(kernel), registerBudgets(registerBudgets),
        schedule(op.getSchedule()),
        elementType(op.getQ().getType().getElementType()),
        headDim(op.getQ().getType().getShape()[3]),
        blockM(schedule.getBlockM()), blockN(schedule.getBlockN()),
        stages(schedule.getNumStages()),
        consumers(schedule.getConsumerWarpgroups()),
        qBuffers(schedule.getQBuffers()), atoms(headDim / 64),
        causal(op.getCausal()) {}

  /// Bytes of dynamic shared memory the kernel needs (pad included).
  int64_t dynamicSmemBytes() const {
    return schedule.getSharedMemoryBytes(headDim, /*elementBytes=*/2);
  }

  void emit();

private:
  OpBuilder &b;
  SdpaOp op;
  gpu::GPUFuncOp kernel;
  /// setmaxnreg for the roles' budgets (off for compute-sanitizer builds).
  bool registerBudgets;
  ScheduleAttr schedule;
  Type elementType;
  int64_t headDim, blockM, blockN, stages, consumers, qBuffers, atoms;
  bool causal;
  Location loc = op.getLoc();

  // Kernel values set up by emit().
  Value q, k, v, o, lse, scale, qMap, kMap, vMap, oMap, tileCounter;
  // The tensor maps as the kernel parameters' pointers (for NVVM ops).
  Value qMapPointer, kMapPointer, vMapPointer;
  Value smem, smemAddress, pad, barriers;
  Value tid, seqQ, seqK, headsQ, headsKV, batches;
  /// kv_multicast: this block's rank in its cluster of two (index).
  Value clusterRank;
  // The current tile, set by forEachTile: its coordinates, K/V block count,
  // the ring position of its first K/V block, the Q buffer it uses and the
  // phase of that buffer's barriers.
  Value qBlock, head, headKV, batch, qRow0, numBlocks;
  Value ringBase, qBuffer, tileParity;
  // Persistent: the tiles this block ran before the current one (i32).
  Value tilesDone;
  // dynamic_tiles: the current tile's rank (i32) and the tile count.
  Value tileRank, numTiles;
  // split_tail (see forEachTileSplit): the workspace (!llvm.ptr<1>), and
  // the current piece of a tile: its first K/V block (index), whether it
  // starts at the tile's first key (so stores its rows), whether it leaves
  // its partial O to that piece instead and whether it merges the others'
  // (i1), and how the merger finds them (i32: the tail's blocks, a full
  // tile's, the piece's tile in the tail).
  Value workspace, kvBlock0, startsTile, writesPartial, mergesPartials;
  Value tailBlocks, fullBlocks, tailTile;
  /// The K/V block of the piece's block `it`.
  Value keyBlock(Value it) { return kvBlock0 ? add(it, kvBlock0) : it; }

  int64_t qBytes() const { return blockM * headDim * 2; }
  int64_t kvBytes() const { return blockN * headDim * 2; }
  /// Shared memory: the pad to 1 KiB, the Q buffers, the K ring, the V ring
  /// and (persistent with tma_store) the O staging tile.
  Value qOffset(Value buffer) { return mul(buffer, qBytes()); }
  /// Where consumer `consumer`'s 64 rows start in a [atom][block_m][64]
  /// tile at byte `tile` (Q, or O staged for its TMA store).
  Value consumerRows(Value consumer, Value tile) {
    return add(mul(consumer, 64 * 128), tile);
  }
  int64_t ringOffset() const { return qBuffers * qBytes(); }
  /// Where O is staged for a TMA store: in Q's tile, which this consumer's
  /// rows no longer need, or (persistent with two Q buffers) in a tile after
  /// the ring, since the next tile's Q may be arriving in the other. A
  /// persistent block with one Q buffer stages O in it and hands the buffer
  /// back only once the stores have read it (head dim 256 has no room for a
  /// tile more). stage_o_in_q: two Q buffers, O in its own tile's.
  bool oInQBuffer() const {
    return !schedule.getPersistent() || qBuffers == 1 ||
           schedule.getStageOInQ();
  }
  /// A persistent block with one Q buffer that stages O in it returns the
  /// buffer to the producer right after the O stores, not after the last
  /// Q.K^T.
  bool qReleasedAfterStore() const {
    return schedule.getPersistent() && schedule.getTmaStore() && qBuffers == 1;
  }
  /// stage_o_in_q: a tile's Q buffer goes back after the next tile's first
  /// block (releasePreviousQ), by when its O stores have long read it.
  bool qReleasedNextTile() const { return schedule.getStageOInQ(); }
  int64_t ringEnd() const { return ringOffset() + 2 * stages * kvBytes(); }
  /// row_sum_mma: the tile of ones, after the ring and the O staging tile
  /// (the one oOffset() points past the ring when it is not in Q's).
  int64_t onesOffset() const {
    bool oStaged = schedule.getTmaStore() && !oInQBuffer();
    return ringEnd() + (oStaged ? qBytes() : 0);
  }
  /// O's registers per consumer thread; with row_sum_mma the accumulator
  /// the consumer carries has 4 more, the rows' sums (two per row half).
  int64_t oRegs() const { return headDim / 2; }
  int64_t accRegs() const {
    return oRegs() + (schedule.getRowSumMma() ? 4 : 0);
  }
  Value oOffset() { return oInQBuffer() ? qOffset(qBuffer) : idx(ringEnd()); }
  /// dynamic_tiles: the shared slot holding the rank of the tile whose Q is
  /// in `buffer`; the slots are the last bytes of the block's shared memory.
  Value tileSlot(Value buffer) {
    int64_t slots =
        dynamicSmemBytes() - kSwizzleAlignmentBytes - kTileSlotBytes;
    return sharedPointer(add(mul(buffer, 4), idx(slots)));
  }

  // Barrier indices: Q full per Q buffer (q_per_consumer: per consumer),
  // then per stage K full, V full, K empty, V empty, then (persistent only)
  // Q empty per Q buffer.
  int64_t qFulls() const {
    if (schedule.getQByAtom())
      return atoms;
    return schedule.getQPerConsumer() ? consumers : qBuffers;
  }
  Value qFull(Value buffer) { return buffer; }
  /// The Q-full barrier consumer `c` waits on.
  Value qFullOf(Value c) {
    return schedule.getQPerConsumer() ? c : qFull(qBuffer);
  }
  Value kFull(Value s) { return add(s, qFulls()); }
  Value vFull(Value s) { return add(s, qFulls() + stages); }
  Value kEmpty(Value s) { return add(s, qFulls() + 2 * stages); }
  Value vEmpty(Value s) { return add(s, qFulls() + 3 * stages); }
  Value qEmpty(Value buffer) { return add(buffer, qFulls() + 4 * stages); }
  int64_t numBarriers() const {
    return qFulls() + 4 * stages + (schedule.getPersistent() ? qBuffers : 0);
  }
  /// Barriers that complete when every consumer warp has arrived.
  bool isEmptyBarrier(int64_t i) const { return i >= qFulls() + 2 * stages; }
  /// K/V empty barriers: under kv_multicast both blocks' consumers arrive.
  bool isKVEmptyBarrier(int64_t i) const {
    return isEmptyBarrier(i) && i < qFulls() + 4 * stages;
  }

  //===------------------------------------------------------------------===//
  // Small builders
  //===------------------------------------------------------------------===//
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }
  Value add(Value a, int64_t c) {
    if (c == 0)
      return a;
    if (std::optional<int64_t> constant = getConstantIntValue(a))
      return idx(*constant + c);
    return arith::AddIOp::create(b, loc, a, idx(c));
  }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  Value toI32(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  }
  /// `value` (i32 or index) that is the same in every lane of the warp,
  /// through redux.sync: then ptxas knows it is warp-uniform and keeps what
  /// depends on it on the uniform datapath (else it may spill, or branch
  /// with reconvergence barriers).
  Value warpUniform(Value value) {
    bool isIndex = value.getType().isIndex();
    Value word = isIndex ? toI32(value) : value;
    Value same = NVVM::ReduxOp::create(b, loc, b.getI32Type(), word,
                                       NVVM::ReduxKind::UMIN, i32(-1));
    return isIndex ? toIndex(same) : same;
  }
  Value toIndex(Value i32) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), i32);
  }
  Value mul(Value a, int64_t c) {
    return arith::MulIOp::create(b, loc, a, idx(c));
  }
  Value div(Value a, int64_t c) {
    return arith::DivUIOp::create(b, loc, a, idx(c));
  }
  Value rem(Value a, int64_t c) {
    return arith::RemUIOp::create(b, loc, a, idx(c));
  }
  Value cmp(arith::CmpIPredicate p, Value a, Value c) {
    return arith::CmpIOp::create(b, loc, p, a, c);
  }
  // maxnum (max.f32), not maximumf (max.NaN.f32): scores hold no NaN, and
  // the NaN-propagating form costs extra instructions per score.
  Value fmax(Value a, Value c) {
    return arith::MaxNumFOp::create(b, loc, a, c);
  }
  Value fmul(Value a, Value c) { return arith::MulFOp::create(b, loc, a, c); }
  Value fadd(Value a, Value c) { return arith::AddFOp::create(b, loc, a, c); }
  Value fsub(Value a, Value c) { return arith::SubFOp::create(b, loc, a, c); }
  // llvm.intr.fma, not math.fma: the latter becomes a libdevice call
  // (__nv_fmaf), and bundles must build without libdevice.
  Value fma(Value a, Value c, Value d) {
    return LLVM::FMAOp::create(b, loc, a, c, d);
  }
  /// 2^x and log2(x) by the MUFU approximations; exp2_on_fma's 2^x on the
  /// FMA pipe (AccumulatorMath).
  Value exp2(Value x) { return math.exp2(x); }
  Value exp2OnFmaPipe(Value x) { return math.exp2OnFmaPipe(x); }
  Value log2(Value x) { return math.log2(x); }

  /// Runs `body` when `cond` holds, else `otherwise` (if given).
  void ifThen(Value cond, function_ref<void()> body,
              function_ref<void()> otherwise = nullptr) {
    auto ifOp = scf::IfOp::create(b, loc, cond,
                                  /*withElseRegion=*/bool(otherwise));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
    if (!otherwise)
      return;
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    otherwise();
  }
  /// AccumulatorMath::chooseIf, changeIf: an scf.if yielding the values.
  void chooseIf(Value cond, Regs &values, function_ref<void(Regs &)> then,
                function_ref<void(Regs &)> otherwise) {
    math.chooseIf(cond, values, then, otherwise);
  }
  void changeIf(Value cond, Regs &values, function_ref<void(Regs &)> change) {
    math.changeIf(cond, values, change);
  }

  //===------------------------------------------------------------------===//
  // Shared memory: the K and V rings and the TMA boxes into them.
  //===------------------------------------------------------------------===//
  Value kStageOffset(Value s) { return add(mul(s, kvBytes()), ringOffset()); }
  Value vStageOffset(Value s) {
    return add(mul(s, kvBytes()), ringOffset() + stages * kvBytes());
  }
  /// The [1, 1, rows, 64] box of one 64-column atom at `byteOffset` past the
  /// pad, as the destination of a TMA load.
  Value atomView(Value byteOffset, int64_t rows) {
    auto type = MemRefType::get(
        {1, 1, rows, 64}, elementType, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup));
    return memref::ViewOp::create(b, loc, type, smem, add(pad, byteOffset),
                                  ValueRange{});
  }
  nvgpu::TensorMapDescriptorType mapType(int64_t rows) {
    return tmaDescriptorType(b, elementType, rows);
  }

  /// A wgmma descriptor (128-byte swizzle) for the operand at `byteOffset`
  /// past the pad.
  Value descriptor(Value byteOffset, int64_t leading, int64_t stride) {
    return buildWgmmaDescriptor(b, loc, add(smemAddress, add(pad, byteOffset)),
                                leading, stride);
  }
  /// The descriptor `bytes` further on (advanceDescriptor).
  Value advance(Value desc, int64_t bytes) {
    return advanceDescriptor(b, loc, desc, bytes);
  }

  //===------------------------------------------------------------------===//
  // mbarriers
  //===------------------------------------------------------------------===//
  /// The parity a producer waits for on an "empty" barrier (emptyParity).
  Value flip(Value parity) { return emptyParity(b, loc, parity); }
  void waitParity(Value barrier, Value parity) {
    tiledattn::waitParity(b, loc, barriers, barrier, parity);
  }
  /// One arrival on `barrier` by the calling thread.
  void arrive(Value barrier) { arriveOn(b, loc, barriers, barrier); }
  /// A consumer's "done with this stage": one arrive per warp (lane 0),
  /// after the warp's wgmma.wait_group has retired the reads.
  void release(Value barrier) {
    ifThen(cmp(arith::CmpIPredicate::eq, lane, idx(0)),
           [&] { arrive(barrier); });
  }
  /// release for a K/V stage; under kv_multicast on both blocks' barriers,
  /// since the peer's producer writes into this block's stages too.
  void releaseStage(Value barrier) {
    ifThen(cmp(arith::CmpIPredicate::eq, lane, idx(0)), [&] {
      arrive(barrier);
      if (schedule.getKvMulticast())
        arriveOnPeer(barrier);
    });
  }
  /// kv_multicast: every thread of both blocks of the cluster meets here.
  /// Relaxed: what must be seen across the cluster is the barriers' init,
  /// which fence.mbarrier_init publishes (a release arrive fences the whole
  /// GPU, MEMBAR.ALL.GPU).
  void syncCluster() {
    if (!schedule.getKvMulticast())
      return;
    NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  }
  /// One arrival on the other cluster block's copy of `barrier`.
  void arriveOnPeer(Value barrier) {
    auto ctx = b.getContext();
    Value address =
        nvgpu::MBarrierGetOp::create(b, loc, b.getI32Type(), barriers, barrier);
    Value local = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 3), address);
    Value peer = arith::XOrIOp::create(b, loc, toI32(clusterRank), i32(1));
    Value remote = NVVM::MapaOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7), local, peer);
    // CTA scope, as for a local arrive: the stage's reads are done (the
    // wgmma wait retired them). Cluster scope made ptxas fence the whole
    // GPU (MEMBAR.ALL.GPU) per arrive: 20-30% slower.
    NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                   NVVM::MemScopeKind::CTA);
  }
  /// Stage and phase parity of K/V block `it` of the current tile.
  std::pair<Value, Value> stageOf(Value it) {
    // A persistent block's ring runs on from the tiles before.
    if (schedule.getPersistent())
      it = add(ringBase, it);
    // uniform_ring, in consumer code only (consumerIndex is set there): the
    // producer is one thread, and redux.sync needs the whole warp.
    if (schedule.getUniformRing() && consumerIndex)
      it = warpUniform(it);
    return ringSlotAndParity(b, loc, it, stages);
  }

  //===------------------------------------------------------------------===//
  // Ping-pong: the consumer warpgroups take turns issuing their wgmmas in a
  // fixed rotation (0, 1, .., C-1, 0, ..), so one's softmax runs while the
  // others' mmas hold the tensor cores. Consumer c may issue once named
  // barrier kTurnBarrier + c completes: it syncs there (128 threads) and
  // consumer c - 1 arrives (128 more) when its own turn ends. Every consumer
  // takes the same number of turns per tile, so the rotation also holds
  // across the tiles of a persistent block. Barrier 0 is gpu.barrier's.
  //===------------------------------------------------------------------===//
  /// The consumer warpgroup's index, in consumer code; null in the
  /// producer's (emitProducer clears it), which stageOf relies on.
  Value consumerIndex;
  void turnBegin() {
    if (schedule.getPingpong())
      beginTurn(b, loc, consumerIndex);
  }
  void turnEnd() {
    if (schedule.getPingpong())
      endTurn(b, loc, consumerIndex, consumers);
  }

  //===------------------------------------------------------------------===//
  // Tiles: a block runs one (query block, head, batch) tile, or with
  // `persistent` loops over tiles blockIdx.x, blockIdx.x + gridDim.x, ...
  //===------------------------------------------------------------------===//
  void setTile(Value qBlockIndex, Value headIndex, Value batchIndex);
  void setTileOfRank(Value rank, Value qBlocks);
  void setTileOfBlock();
  /// Runs `body` once per tile of this block, the tile set up; `producer`
  /// says which role's loop it is (they differ with dynamic_tiles).
  /// `carried` goes from one tile's body to the next (the loop's iter_args):
  /// in, its values before the first tile; out, after the last.
  void forEachTile(function_ref<void(Regs &)> body, bool producer,
                   Regs &carried);
  /// The body of a static tile loop (loop state: ring position, tiles
  /// done, then `carried`) once the tile is set: its ring position and Q
  /// buffer, `body`, and the yield that moves the ring on by its blocks.
  void runTile(scf::ForOp loop, function_ref<void(Regs &)> body);
  void forEachTileSplit(function_ref<void(Regs &)> body, bool producer,
                        Value qBlocks, Regs &carried);
  void forEachTileDynamic(function_ref<void(Regs &)> body, bool producer,
                          Value qBlocks, Regs &carried);
  /// GQA: query head `head` (index) reads key/value head
  /// head / (heads_q / heads_kv).
  Value kvHeadOf(Value head) {
    return arith::DivUIOp::create(
        b, loc, head, arith::DivUIOp::create(b, loc, headsQ, headsKV));
  }
  /// The Q buffer and barrier phase of the `done`-th tile (i32) of a block.
  void setTileBuffer(Value done);
  /// q_by_atom: Q's atoms [first, last), each on its own full barrier.
  void loadQAtoms(int64_t first, int64_t last);

  /// setmaxnreg to `registers` for this role, unless registerBudgets is off.
  void setRegisterBudget(int64_t registers, NVVM::SetMaxRegisterAction action);
  void emitProducer();
  void prefetchNextQ();
  /// skip_masked_blocks: the empty-barrier arrivals (one per warp) of the
  /// consumers that do not read block `it`, in stage `s`. Made by the
  /// producer right after it issued the block's loads: it had waited for
  /// the stage's previous use to complete, so they count for this one, and
  /// the skipping consumer needs no wait (a consumer-side wait for the
  /// loads spilled at D=256).
  void releaseForSkippers(Value it, Value s) {
    for (int64_t c = 0; c + 1 < consumers; ++c)
      ifThen(cmp(arith::CmpIPredicate::uge, it, blocksOf(idx(c))), [&] {
        for (int64_t warp = 0; warp < 4; ++warp)
          for (Value barrier : {kEmpty(s), vEmpty(s)})
            arrive(barrier);
      });
  }
  void emitConsumer(Value consumer);
  /// `held`: with defer_store, the previous tile's O (see HeldO), stored
  /// under this tile's first Q.K^T and replaced by this tile's.
  void consumeTile(Value consumer, Regs &held);
  /// skip_masked_blocks: the K/V blocks consumer `c` reads, those its rows
  /// reach (the last consumer reaches all of the tile's).
  Value blocksOf(Value c) {
    Value rowsEnd = add(qRow0, mul(add(c, 1), 64));
    Value keysEnd = arith::MinUIOp::create(b, loc, seqK, rowsEnd);
    return arith::MinUIOp::create(b, loc, numBlocks,
                                  div(add(keysEnd, blockN - 1), blockN));
  }
  /// skip_masked_blocks: the tile's blocks from `from` on, which this
  /// consumer does not read, get `turns` empty ping-pong turns each, right
  /// away, since the other consumers wait for them. (The producer releases
  /// their stages for it.)
  void skipTurns(Value from, int64_t turns) {
    if (!schedule.getPingpong())
      return;
    auto loop = scf::ForOp::create(b, loc, from, numBlocks, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    for (int64_t t = 0; t < turns; ++t) {
      turnBegin();
      turnEnd();
    }
  }
  /// `rows` rows of 64-column atom `a` of an operand into `byteOffset` of
  /// shared memory, completing on `barrier` (no expect_tx).
  void loadAtom(Value map, int64_t rows, Value byteOffset, int64_t a, Value row,
                Value headIndex, Value barrier, Value multicastMask = Value()) {
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, atomView(byteOffset, rows), barriers, map,
        ValueRange{idx(64 * a), row, headIndex, batch}, barrier, multicastMask,
        Value());
  }
  /// K/V block `row` into the stage at `byteOffset`, completing on
  /// `barrier`. kv_multicast: this block loads its half of the rows into
  /// both blocks of the cluster (each one's barrier counts both halves).
  void loadKVBlock(Value map, Value byteOffset, Value row, Value barrier) {
    if (!schedule.getKvMulticast())
      return loadTile(map, blockN, byteOffset, row, headKV, barrier, kvBytes());
    Value first = mul(clusterRank, kvBoxRows());
    Value firstRow = add(row, first);
    Value firstByte = add(byteOffset, mul(first, 128));
    Value bothBlocks = arith::ConstantIntOp::create(b, loc, 0b11, 16);
    loadTile(map, kvBoxRows(), firstByte, firstRow, headKV, barrier, kvBytes(),
             blockN, bothBlocks);
  }
  /// `rows` rows of every 64-column atom of an operand, each atom's
  /// `atomRows` rows apart in shared memory (0: `rows`), multicast to the
  /// cluster's blocks in `multicastMask` when given.
  void loadTile(Value map, int64_t rows, Value byteOffset, Value row,
                Value headIndex, Value barrier, int64_t bytes,
                int64_t atomRows = 0, Value multicastMask = Value());

  //===------------------------------------------------------------------===//
  // Consumer pieces
  //===------------------------------------------------------------------===//
  /// S = Q.K^T of the first `n` keys of the block in stage `s` (n = 0: all
  /// block_n). `byAtom` (q_by_atom, the tile's first block): wait for each
  /// Q atom's barrier (barrier = atom) before its k-steps.
  Value issueQK(Value consumer, Value s, int64_t n = 0, bool byAtom = false);
  /// q_in_registers: this consumer's 64 rows of Q as wgmma A fragments
  /// (4 packed pairs per k-step), read from the tile's Q buffer.
  Regs loadQFragments(Value consumer);
  /// issueQK's register-A form, A from qFragments.
  Value issueQKFromRegisters(Value s, int64_t n);
  /// One wgmma.m64n<cols>k16 with A from registers (`a`: 4 packed pairs)
  /// and B from `desc` (MN-major if `transB`), on the accumulator `acc`
  /// (tied in and out; ignored unless `accumulate`). Returns the struct.
  Value wgmmaFromRegisters(ArrayRef<Value> acc, ArrayRef<Value> a, Value desc,
                           int64_t cols, bool transB, bool accumulate);
  /// A k-step chain of register-A wgmmas (Q.K^T's, P.V's): the
  /// accumulator's registers and the last step's result struct.
  struct WgmmaChain {
    Regs acc;
    Value last;
  };
  /// wgmmaFromRegisters as the chain's next k-step, on the registers of
  /// the step before (taken from its struct only now: the last step's are
  /// read after the wait). Returns the struct.
  Value chainStep(WgmmaChain &chain, ArrayRef<Value> a, Value desc,
                  int64_t cols, bool transB, bool accumulate);
  /// Inline PTX that must stay where it is (has side effects).
  Value sideEffectAsm(Type resultType, ValueRange operands, StringRef text,
                      StringRef constraints) {
    return tiledattn::sideEffectAsm(b, loc, resultType, operands, text,
                                    constraints);
  }
  /// q_in_registers: the tile's Q fragments (loadQFragments), set at the
  /// tile's start; empty otherwise, and issueQK reads Q from shared memory.
  Regs qFragments;
  /// The accumulator structs of a P.V: O, and with row_sum_mma the sums.
  struct PVStructs {
    Value o, sums;
  };
  PVStructs issuePV(ArrayRef<Value> acc, ArrayRef<Value> probs, Value s);
  Regs retire(Value accStruct);
  /// The accumulator (accRegs() values) once the P.V's wait retired it.
  Regs retire(PVStructs structs);
  /// With `mask`, scores outside the sequence or the causal triangle become
  /// -inf; `maskIf` (i1, optional) applies the mask only when it holds.
  void softmax(Regs &scores, RowState &st, Value it, Value rowBase, bool mask,
               Value (&rescale)[2], Value maskIf = Value());
  Regs pack(ArrayRef<Value> probs) { return math.pack(probs, elementType); }
  static Regs rowValues(ArrayRef<Value> scores, int r) {
    return AccumulatorMath::rowValues(scores, r);
  }
  Value treeReduce(Regs values, function_ref<Value(Value, Value)> combine) {
    return math.treeReduce(std::move(values), combine);
  }
  void scaleAcc(Regs &acc, Value (&rescale)[2]) { math.scaleAcc(acc, rescale); }
  void scaleAccIfChanged(Regs &acc, Value (&rescale)[2]) {
    math.scaleAccIfChanged(acc, rescale);
  }
  /// S of block `it`; `underQK` runs between the issue and the wait;
  /// `byAtom` as for issueQK.
  Regs scoresOf(Value it, Value consumer,
                function_ref<void()> underQK = nullptr, bool byAtom = false);
  /// O += P.V of block `it`; `underPV` runs between the issue and the wait.
  void accumulatePV(Value it, Regs &acc, ArrayRef<Value> probs,
                    function_ref<void()> underPV = nullptr);
  void emitBlock(Value it, Value consumer, Value rowBase, Regs &acc,
                 RowState &st, bool mask);
  /// `n`: as for issueQK; a narrow block's P is padded with zeros to
  /// block_n.
  void emitOverlappedBlock(Value it, Value consumer, Value rowBase, Regs &acc,
                           Regs &probs, RowState &st, bool mask, int64_t n = 0);
  /// narrow_diagonal: whether block `it`'s keys from 64 on are right of
  /// every row of this consumer (causal), so only its first 64 count.
  Value isNarrow(Value it, Value consumer) {
    Value narrow = cmp(arith::CmpIPredicate::uge, mul(it, blockN),
                       add(qRow0, mul(consumer, 64)));
    // The same in every lane; through vote.sync ptxas knows it and branches
    // without a reconvergence barrier.
    return NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), i32(-1), narrow,
                                    NVVM::VoteSyncKind::any);
  }
  Value scaledMaximum(Value newMax) { return math.scaledMaximum(newMax); }
  Value factorFrom(Value oldMax, Value scaledMax) {
    return math.factorFrom(oldMax, scaledMax);
  }
  /// 1 / (row sum) and the log-sum-exp of row half `r`.
  std::pair<Value, Value> rowTotals(RowState &st, int r);
  /// 1 / (row sum) of both row halves, after storing their lse.
  void finishRows(RowState &st, Value rowBase, Value (&inv)[2]);
  void emitStore(Value consumer, Value rowBase, Regs &acc, Value (&inv)[2]);
  /// O of the tile at query row `row0` of (`headIndex`, `batchIndex`),
  /// staged at byte `staging` of shared memory.
  void storeByTma(Value consumer, Value (&inv)[2], ArrayRef<Value> acc,
                  Value row0, Value headIndex, Value batchIndex, Value staging);
  /// defer_store: a tile's O kept in registers across the tile loop's back
  /// edge, as loop values: acc, 1 / sum of both row halves, the tile's
  /// first row, head and batch, whether there is one (not before the
  /// first tile) and, with stage_o_in_q, the tile's Q buffer.
  struct HeldO {
    Regs acc;
    Value inv[2], row0, head, batch, valid, buffer;
  };
  int64_t heldScalars() const { return schedule.getStageOInQ() ? 7 : 6; }
  Regs heldValues(const HeldO &h) {
    Regs values = h.acc;
    values.append({h.inv[0], h.inv[1], h.row0, h.head, h.batch, h.valid});
    if (schedule.getStageOInQ())
      values.push_back(h.buffer);
    return values;
  }
  HeldO heldOf(ArrayRef<Value> values) {
    HeldO h;
    h.acc.assign(values.begin(), values.end() - heldScalars());
    ArrayRef<Value> rest = values.take_back(heldScalars());
    h.inv[0] = rest[0];
    h.inv[1] = rest[1];
    h.row0 = rest[2];
    h.head = rest[3];
    h.batch = rest[4];
    h.valid = rest[5];
    if (schedule.getStageOInQ())
      h.buffer = rest[6];
    return h;
  }
  /// Stores a held O, if there is one.
  void storeHeld(Value consumer, ArrayRef<Value> held) {
    HeldO h = heldOf(held);
    ifThen(h.valid, [&] {
      Value staging = h.buffer ? qOffset(h.buffer) : oOffset();
      storeByTma(consumer, h.inv, h.acc, h.row0, h.head, h.batch, staging);
    });
  }
  /// stage_o_in_q, after the tile's first block: the previous tile's Q
  /// buffer (O staged there) goes back to the producer once the stores
  /// issued from it have read it.
  void releasePreviousQ(Value consumer) {
    Value previous = idx(0);
    if (qBuffers > 1)
      previous = arith::SubIOp::create(b, loc, idx(qBuffers - 1), qBuffer);
    ifThen(cmp(arith::CmpIPredicate::ne, tilesDone, i32(0)), [&] {
      ifThen(cmp(arith::CmpIPredicate::eq, localTid, idx(0)),
             [&] { waitStoresRead(); });
      syncConsumer(consumer);
      release(qEmpty(previous));
    });
  }
  /// An !llvm.ptr<3> to `byteOffset` past the pad.
  Value sharedPointer(Value byteOffset) {
    Value address = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(), add(smemAddress, add(pad, byteOffset)));
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
  }
  /// The lane's part of an ldmatrix.x4 / stmatrix.x4 on its warp's 16 rows
  /// of a 128-byte-swizzled [atom][rows][64] tile: lanes 8j..8j+7 address
  /// the rows of matrix j, rows (j % 2) * 8 + lane % 8 of the warp's 16,
  /// 16-byte chunk i + j / 2 (i even). Matrix j holds register j of the
  /// wgmma fragment (A's, or the accumulator's packed pairs).
  struct MatrixX4Lane {
    Value matrix, rowInMatrix, row;
  };
  MatrixX4Lane matrixX4Lane() {
    Value matrix = div(lane, 8), rowInMatrix = rem(lane, 8);
    Value row = add(warpRow, add(mul(rem(matrix, 2), 8), rowInMatrix));
    return {matrix, rowInMatrix, row};
  }
  /// Byte offset of the lane's address for 8-column chunks i and i + 1,
  /// from `rowStart` (its row's first byte in atom 0).
  Value matrixX4Offset(const MatrixX4Lane &l, Value rowStart, int64_t i) {
    // 16-byte chunk c of a row sits at chunk c ^ (row % 8) (128B swizzle).
    // (matrix / 2 is emitted per call and folded by CSE.)
    Value chunk = arith::XOrIOp::create(b, loc, add(div(l.matrix, 2), i % 8),
                                        l.rowInMatrix);
    return add(add(rowStart, (i / 8) * blockM * 128), mul(chunk, 16));
  }
  /// split_tail's workspace, from the kernel parameter: per block and
  /// consumer a slot of partialWords() f32 per thread (O, then max and sum
  /// of both row halves), word-major so a warp's stores are contiguous;
  /// after all slots, one i32 flag per slot.
  int64_t partialWords() const { return headDim / 2 + 4; }

public:
  /// Rows of Q's TMA box: the tile, or (q_per_consumer) a consumer's 64.
  int64_t qBoxRows() const { return schedule.getQPerConsumer() ? 64 : blockM; }
  /// Rows of a K/V load: kv_multicast splits each block between the two
  /// blocks of the cluster.
  int64_t kvBoxRows() const {
    return schedule.getKvMulticast() ? blockN / 2 : blockN;
  }
  int64_t workspaceBytesPerBlock() const {
    return consumers * (128 * partialWords() + 1) * 4;
  }

private:
  Value workspaceWord(Value index) {
    Value offset = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
    return LLVM::GEPOp::create(b, loc, workspace.getType(), b.getF32Type(),
                               workspace, ValueRange{offset});
  }
  Value partialWord(Value slot, int64_t word) {
    return workspaceWord(
        add(mul(add(mul(slot, partialWords()), idx(word)), 128), localTid));
  }
  Value flagOf(Value slot, Value gridX) {
    Value slots = mul(toIndex(gridX), consumers);
    return workspaceWord(add(mul(slots, partialWords() * 128), slot));
  }
  /// Spins until the flag at `flag` is set (acquire: what its writer
  /// stored before raising it is visible after).
  void waitFlag(Value flag) {
    auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
    Value seen =
        LLVM::LoadOp::create(b, loc, b.getI32Type(), flag, 4, false, false,
                             false, false, LLVM::AtomicOrdering::acquire);
    scf::ConditionOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, seen, i32(0)), ValueRange{});
    b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
    scf::YieldOp::create(b, loc, ValueRange{});
  }
  void shareTail(Value consumer, Regs &acc, RowState &st);
  /// Folds `other` (O, max and sum of both row halves, as in a slot) into
  /// `mine`, the first `nAcc` values O.
  void mergePartial(Regs &mine, ArrayRef<Value> other, int64_t nAcc);
  /// The consumer's own named barrier (128 threads), after the turn ones.
  void syncConsumer(Value consumer) {
    Value id = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(), add(consumer, kTurnBarrier + consumers));
    NVVM::BarrierOp::create(b, loc, Type(), id, i32(128),
                            NVVM::BarrierReductionAttr(), Value());
  }
  /// Lets the thread that issued TMA stores wait until they have read
  /// their shared-memory source.
  void waitStoresRead() {
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         b.getUnitAttr());
  }

  // The consumer thread's index in its warpgroup, lane and fragment
  // coordinates.
  Value localTid, lane, group, quad, warpRow;
  Value scaleLog2;
  /// The softmax on the accumulator registers (reads scaleLog2 once set).
  AccumulatorMath math{b, loc, scaleLog2,
                       SoftmaxOptions{schedule.getConditionalRescale(),
                                      schedule.getExp2OnFma(),
                                      schedule.getRowSumMma()}};
};

void HopperKernelEmitter::loadTile(Value map, int64_t rows, Value byteOffset,
                                   Value row, Value headIndex, Value barrier,
                                   int64_t bytes, int64_t atomRows,
                                   Value multicastMask) {
  nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barriers, idx(bytes), barrier,
                                          Value());
  int64_t atomBytes = (atomRows ? atomRows : rows) * 128;
  for (int64_t a = 0; a < atoms; ++a)
    loadAtom(map, rows, add(byteOffset, a * atomBytes), a, row, headIndex,
             barrier, multicastMask);
}

/// q_by_atom: Q's atoms [first, last), each on its own full barrier.
void HopperKernelEmitter::loadQAtoms(int64_t first, int64_t last) {
  bool withK = schedule.getK0ByAtom();
  for (int64_t a = first; a < last; ++a) {
    int64_t bytes = (blockM + (withK ? blockN : 0)) * 128;
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barriers, idx(bytes),
                                            idx(a), Value());
    loadAtom(qMap, blockM, add(qOffset(qBuffer), a * blockM * 128), a, qRow0,
             head, idx(a));
    if (withK) // k0_by_atom: the first K block's atom a (stage 0).
      loadAtom(kMap, blockN, add(kStageOffset(idx(0)), a * blockN * 128), a,
               idx(0), headKV, idx(a));
  }
}

void HopperKernelEmitter::setRegisterBudget(int64_t registers,
                                            NVVM::SetMaxRegisterAction action) {
  if (registerBudgets)
    tiledattn::setRegisterBudget(b, loc, registers, action);
}

void HopperKernelEmitter::emitProducer() {
  consumerIndex = Value();
  setRegisterBudget(schedule.getProducerRegs(),
                    NVVM::SetMaxRegisterAction::decrease);
  ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
    Regs none;
    forEachTile(
        [&](Regs &) {
          if (schedule.getPersistent()) // The buffer's last Q.K^T are done.
            waitParity(qEmpty(qBuffer), flip(tileParity));
          // Published with Q: the arrive below releases it, the consumers' wait
          // on Q full acquires it.
          if (schedule.getDynamicTiles())
            LLVM::StoreOp::create(b, loc, tileRank, tileSlot(qBuffer));
          if (schedule.getQPerConsumer()) // Consumer 0 starts on its half.
            for (int64_t c = 0; c < consumers; ++c)
              loadTile(qMap, 64, add(qOffset(qBuffer), idx(c * 64 * 128)),
                       add(qRow0, idx(c * 64)), head, idx(c),
                       qBytes() / consumers, blockM);
          else if (schedule.getK0ByAtom()) // With K's first block.
            loadQAtoms(0, atoms);
          else if (schedule.getQByAtom()) // The rest after K's first block.
            loadQAtoms(0, 1);
          else
            loadTile(qMap, blockM, qOffset(qBuffer), qRow0, head,
                     qFull(qBuffer), qBytes());
          auto loop = scf::ForOp::create(b, loc, idx(0), numBlocks, idx(1));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          Value it = loop.getInductionVar();
          auto [s, parity] = stageOf(it);
          Value row = mul(keyBlock(it), blockN);
          waitParity(kEmpty(s), flip(parity));
          if (schedule.getK0ByAtom()) {
            // Block 0's K came with Q; its stage's barrier only completes
            // the phase (the consumers wait for it after their first
            // Q.K^T), so later blocks' parities hold.
            ifThen(
                cmp(arith::CmpIPredicate::eq, it, idx(0)),
                [&] { arrive(kFull(s)); },
                [&] {
                  loadTile(kMap, blockN, kStageOffset(s), row, headKV, kFull(s),
                           kvBytes());
                });
          } else {
            loadKVBlock(kMap, kStageOffset(s), row, kFull(s));
          }
          if (schedule.getQByAtom() && !schedule.getK0ByAtom())
            ifThen(cmp(arith::CmpIPredicate::eq, it, idx(0)),
                   [&] { loadQAtoms(1, atoms); });
          waitParity(vEmpty(s), flip(parity));
          loadKVBlock(vMap, vStageOffset(s), row, vFull(s));
          if (causal && schedule.getSkipMaskedBlocks())
            releaseForSkippers(it, s);
        },
        /*producer=*/true, none);
    if (schedule.getPrefetchNextQ())
      prefetchNextQ();
  });
}

/// prefetch_next_q: blocks are dispatched in order of their linear index,
/// so the one that starts when a block ends is about this block's index +
/// the number of multiprocessors (one block each). Its Q tile goes into L2
/// now, after this block's loads were issued; a wrong guess only warms L2
/// for another block. prefetch_next_kv: its first num_stages K and V
/// blocks too (the loads its producer issues before any wait).
void HopperKernelEmitter::prefetchNextQ() {
  using gpu::Dimension;
  Value gridX = gpu::GridDimOp::create(b, loc, Dimension::x);
  Value gridY = gpu::GridDimOp::create(b, loc, Dimension::y);
  Value gridZ = gpu::GridDimOp::create(b, loc, Dimension::z);
  Value linear =
      add(gpu::BlockIdOp::create(b, loc, Dimension::x),
          arith::MulIOp::create(
              b, loc, gridX,
              add(gpu::BlockIdOp::create(b, loc, Dimension::y),
                  arith::MulIOp::create(
                      b, loc, gridY,
                      gpu::BlockIdOp::create(b, loc, Dimension::z)))));
  Value next =
      add(linear, toIndex(NVVM::SmDimOp::create(b, loc, b.getI32Type())));
  Value blocks = arith::MulIOp::create(
      b, loc, gridX, arith::MulIOp::create(b, loc, gridY, gridZ));
  ifThen(cmp(arith::CmpIPredicate::ult, next, blocks), [&] {
    Value x = arith::RemUIOp::create(b, loc, next, gridX);
    Value yz = arith::DivUIOp::create(b, loc, next, gridX);
    Value y = arith::RemUIOp::create(b, loc, yz, gridY);
    Value z = arith::DivUIOp::create(b, loc, yz, gridY);
    if (causal) // As setTileOfBlock: the longest rows first.
      x = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, gridX, idx(1)), x);
    Value headIndex = toI32(y), batchIndex = toI32(z);
    auto prefetch = [&](Value map, int64_t rows, int64_t count, Value first,
                        Value headOf) {
      for (int64_t r = 0; r < count; r += rows) {
        Value row = toI32(r ? add(first, idx(r)) : first);
        for (int64_t a = 0; a < atoms; ++a)
          NVVM::CpAsyncBulkTensorPrefetchOp::create(
              b, loc, map, ValueRange{i32(64 * a), row, headOf, batchIndex},
              ValueRange{}, NVVM::TMALoadMode::TILE, Value());
      }
    };
    prefetch(qMapPointer, qBoxRows(), blockM, mul(x, blockM), headIndex);
    if (schedule.getPrefetchNextKv()) {
      // Boxes past the keys' end are clipped by the tensor map.
      for (Value map : {kMapPointer, vMapPointer})
        prefetch(map, kvBoxRows(), stages * blockN, idx(0), toI32(kvHeadOf(y)));
    }
  });
}

void HopperKernelEmitter::setTile(Value qBlockIndex, Value headIndex,
                                  Value batchIndex) {
  qBlock = qBlockIndex;
  head = headIndex;
  batch = batchIndex;
  headKV = kvHeadOf(head);
  qRow0 = mul(qBlock, blockM);
  Value kvEnd = seqK;
  if (causal)
    kvEnd = arith::MinUIOp::create(b, loc, seqK, add(qRow0, blockM));
  numBlocks = div(add(kvEnd, blockN - 1), blockN);
}

/// Tile `rank` (i32) of the persistent order, with `qBlocks` query blocks
/// per head (i32). tile_order = by_head: query blocks fastest, so the blocks
/// running at the same time share few heads' K and V in L2; across_heads:
/// heads and batches fastest. Causal query blocks run from the last (the
/// longest) down. The arithmetic is 32-bit: 64-bit divisions cost the
/// producer registers it has given away.
void HopperKernelEmitter::setTileOfRank(Value rank, Value qBlocks) {
  Value heads = toI32(headsQ);
  Value qIndex, headBatch;
  if (schedule.getTileOrder() == TileOrder::by_head) {
    qIndex = arith::RemUIOp::create(b, loc, rank, qBlocks);
    headBatch = arith::DivUIOp::create(b, loc, rank, qBlocks);
  } else {
    Value headsTimesBatch =
        arith::MulIOp::create(b, loc, heads, toI32(batches));
    qIndex = arith::DivUIOp::create(b, loc, rank, headsTimesBatch);
    headBatch = arith::RemUIOp::create(b, loc, rank, headsTimesBatch);
  }
  if (causal)
    qIndex = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, qBlocks, i32(1)), qIndex);
  Value headIndex = arith::RemUIOp::create(b, loc, headBatch, heads);
  Value batchIndex = arith::DivUIOp::create(b, loc, headBatch, heads);
  setTile(toIndex(qIndex), toIndex(headIndex), toIndex(batchIndex));
}

void HopperKernelEmitter::setTileOfBlock() {
  Value blockX = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (causal) // Longest rows first, so short blocks fill the tail.
    blockX = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x), idx(1)),
        blockX);
  Value blockY = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value blockZ = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  setTile(blockX, blockY, blockZ);
  ringBase = idx(0);
  qBuffer = idx(0);
  tileParity = arith::ConstantIntOp::create(b, loc, 0, 1);
}

void HopperKernelEmitter::setTileBuffer(Value done) {
  Value uses = done; // of the tile's Q buffer, before this tile
  qBuffer = idx(0);
  if (qBuffers > 1) {
    qBuffer = toIndex(arith::RemUIOp::create(b, loc, done, i32(qBuffers)));
    uses = arith::DivUIOp::create(b, loc, done, i32(qBuffers));
  }
  tileParity = arith::TruncIOp::create(b, loc, b.getI1Type(), uses);
  tilesDone = done;
}

void HopperKernelEmitter::forEachTile(function_ref<void(Regs &)> body,
                                      bool producer, Regs &carried) {
  if (!schedule.getPersistent()) { // The one tile was set up by emit().
    body(carried);
    return;
  }
  Value qBlocks = toI32(div(add(seqQ, blockM - 1), blockM));
  numTiles = arith::MulIOp::create(
      b, loc, qBlocks, toI32(arith::MulIOp::create(b, loc, headsQ, batches)));
  if (schedule.getDynamicTiles())
    return forEachTileDynamic(body, producer, qBlocks, carried);
  if (schedule.getSplitTail())
    return forEachTileSplit(body, producer, qBlocks, carried);
  Value blockX = toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  // Loop state: the ring position of the tile's first K/V block and the
  // number of tiles done (modulo q_buffers: the tile's Q buffer; the next
  // bit: the phase of that buffer's barriers), then `carried`.
  Regs inits = {i32(0), i32(0)};
  inits.append(carried.begin(), carried.end());
  auto loop = scf::ForOp::create(b, loc, blockX, numTiles, gridX, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value t = loop.getInductionVar();
  Value rank = t;
  if (causal && schedule.getTileOrder() == TileOrder::across_heads) {
    // Block b takes the tiles of rank b, b + G, b + 2G, ... (G = gridDim.x)
    // with every other full round reversed, so no block always gets the
    // longest tile of a round.
    Value round = arith::DivUIOp::create(b, loc, t, gridX);
    Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), round);
    Value roundStart = arith::MulIOp::create(b, loc, round, gridX);
    Value roundEnd = arith::AddIOp::create(b, loc, roundStart, gridX);
    Value full = cmp(arith::CmpIPredicate::ule, roundEnd, numTiles);
    // roundStart + (roundEnd - 1 - t): the same round backwards.
    Value mirrored = arith::AddIOp::create(
        b, loc, roundStart,
        arith::SubIOp::create(
            b, loc, arith::SubIOp::create(b, loc, roundEnd, i32(1)), t));
    rank = arith::SelectOp::create(
        b, loc, arith::AndIOp::create(b, loc, odd, full), mirrored, t);
  }
  setTileOfRank(rank, qBlocks);
  runTile(loop, body);
  carried.assign(loop.getResults().begin() + 2, loop.getResults().end());
}

void HopperKernelEmitter::runTile(scf::ForOp loop,
                                  function_ref<void(Regs &)> body) {
  Value ring = loop.getRegionIterArgs()[0];
  Value done = loop.getRegionIterArgs()[1];
  ringBase = toIndex(ring);
  setTileBuffer(done);
  Regs values(loop.getRegionIterArgs().drop_front(2));
  body(values);
  Regs yields = {arith::AddIOp::create(b, loc, ring, toI32(numBlocks)),
                 arith::AddIOp::create(b, loc, done, i32(1))};
  yields.append(values.begin(), values.end());
  scf::YieldOp::create(b, loc, yields);
}

/// split_tail. With G = gridDim.x blocks and T tiles of NB K/V blocks each
/// (no mask: all equal), the first T - T mod G tiles run as usual, block j
/// taking j, j + G, ...; the last T mod G (the tail) would leave a part of
/// the grid running one more tile alone. Their (tile, K/V block) steps,
/// I = (T mod G) * NB of them, are shared out instead: block j takes steps
/// [j * I / G, (j + 1) * I / G), one or two pieces of tiles (a share is
/// under a tile, as T mod G < G). A piece that does not start at its
/// tile's first block writes its partial O to the workspace; the piece
/// that does merges those (mergePartials). A block's writing piece is its
/// first in the tail and merging ones come after, so no block waits for
/// one that waits. The arithmetic is 32-bit, as for the tile ranks.
/// The full rounds and the pieces are two loops, each with its own copy of
/// the tile body: in one loop the pieces' dynamic first block and count
/// and their conditional stores cost every tile about 2% (ninth session).
void HopperKernelEmitter::forEachTileSplit(function_ref<void(Regs &)> body,
                                           bool producer, Value qBlocks,
                                           Regs &carried) {
  auto i32Op = [&](auto op, Value x, Value y) {
    return decltype(op)::create(b, loc, x, y);
  };
  auto addI = [&](Value x, Value y) { return i32Op(arith::AddIOp(), x, y); };
  auto subI = [&](Value x, Value y) { return i32Op(arith::SubIOp(), x, y); };
  auto mulI = [&](Value x, Value y) { return i32Op(arith::MulIOp(), x, y); };
  auto divI = [&](Value x, Value y) { return i32Op(arith::DivUIOp(), x, y); };
  Value blockX = toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  fullBlocks = toI32(div(add(seqK, blockN - 1), blockN));
  // A tail of fewer steps than blocks runs as a round of its own: shares
  // of at least one step each keep every block between a tile's merging
  // piece and its last a writer of it.
  Value tail = arith::RemUIOp::create(b, loc, numTiles, gridX);
  tail = arith::SelectOp::create(
      b, loc, cmp(arith::CmpIPredicate::uge, mulI(tail, fullBlocks), gridX),
      tail, i32(0));
  Value fullRounds = subI(numTiles, tail); // tiles before the tail
  tailBlocks = mulI(tail, fullBlocks);
  Value shareBegin = divI(mulI(blockX, tailBlocks), gridX);
  Value shareEnd = divI(mulI(addI(blockX, i32(1)), tailBlocks), gridX);
  Value firstTail = divI(shareBegin, fullBlocks);
  Value lastTail = divI(addI(shareEnd, subI(fullBlocks, i32(1))), fullBlocks);
  lastTail = arith::SelectOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, shareBegin, shareEnd), lastTail,
      firstTail);

  // This block's tiles of the full rounds: j, j + G, ... below fullRounds.
  Regs inits = {i32(0), i32(0)};
  inits.append(carried.begin(), carried.end());
  auto rounds = scf::ForOp::create(b, loc, blockX, fullRounds, gridX, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rounds.getBody());
    setTileOfRank(rounds.getInductionVar(), qBlocks);
    runTile(rounds, body);
  }

  // Its pieces of the tail: tile u of it, the piece's steps [from, to).
  auto pieces = scf::ForOp::create(b, loc, firstTail, lastTail, i32(1),
                                   rounds.getResults());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pieces.getBody());
    Value u = pieces.getInductionVar();
    Value tileStart = mulI(u, fullBlocks);
    Value from = arith::MaxUIOp::create(b, loc, shareBegin, tileStart);
    Value to =
        arith::MinUIOp::create(b, loc, shareEnd, addI(tileStart, fullBlocks));
    Value first = subI(from, tileStart);
    Value count = subI(to, from);
    setTileOfRank(addI(fullRounds, u), qBlocks);
    numBlocks = toIndex(count);
    kvBlock0 = toIndex(first);
    tailTile = u;
    startsTile = cmp(arith::CmpIPredicate::eq, first, i32(0));
    writesPartial = cmp(arith::CmpIPredicate::ne, first, i32(0));
    mergesPartials = arith::AndIOp::create(
        b, loc, startsTile, cmp(arith::CmpIPredicate::ult, count, fullBlocks));
    runTile(pieces, body);
    // Defined in this loop only.
    kvBlock0 = startsTile = writesPartial = mergesPartials = tailTile = {};
  }
  carried.assign(pieces.getResults().begin() + 2, pieces.getResults().end());
}

/// dynamic_tiles. The producer starts at tile blockIdx.x and, at the start
/// of each tile, asks the counter for the one after it (gridDim.x + the
/// counter's old value: the first gridDim.x tiles need no atomic), so the
/// atomic's latency hides under the tile's loads; the last add of the launch
/// puts the counter back to 0. It writes each rank into
/// the Q buffer's slot before the Q load's arrive; when the ranks run out
/// it writes numTiles there and arrives without a load, which ends the
/// consumers' loops, which read the slot after waiting for Q.
void HopperKernelEmitter::forEachTileDynamic(function_ref<void(Regs &)> body,
                                             bool producer, Value qBlocks,
                                             Regs &carried) {
  Type i32Type = b.getI32Type();
  // Loop state: (producer only) the tile's rank, then as in forEachTile the
  // ring position, the number of tiles done and `carried`. The condition
  // passes on the rank, ring position, tiles done and `carried`.
  SmallVector<Value> inits = {i32(0), i32(0)};
  if (producer)
    inits.insert(inits.begin(),
                 toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x)));
  inits.append(carried.begin(), carried.end());
  SmallVector<Type> types = llvm::to_vector(ValueRange(inits).getTypes());
  SmallVector<Type> passed = {i32Type, i32Type, i32Type};
  passed.append(llvm::to_vector(ValueRange(carried).getTypes()));
  auto loop = scf::WhileOp::create(b, loc, passed, inits);
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                SmallVector<Location>(types.size(), loc));
  Block *after = b.createBlock(&loop.getAfter(), {}, passed,
                               SmallVector<Location>(passed.size(), loc));
  b.setInsertionPointToStart(before);
  int64_t firstCarried = producer ? 3 : 2;
  Value rank, ring, done;
  if (producer) {
    rank = before->getArgument(0);
    ring = before->getArgument(1);
    done = before->getArgument(2);
  } else {
    ring = before->getArgument(0);
    done = before->getArgument(1);
    setTileBuffer(done);
    waitParity(qFull(qBuffer), tileParity);
    rank = LLVM::LoadOp::create(b, loc, i32Type, tileSlot(qBuffer));
    rank = warpUniform(rank); // keeps the tile arithmetic uniform
  }
  Regs conditionArgs = {rank, ring, done};
  conditionArgs.append(before->getArguments().begin() + firstCarried,
                       before->getArguments().end());
  scf::ConditionOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, rank, numTiles), conditionArgs);

  b.setInsertionPointToStart(after);
  rank = after->getArgument(0);
  ring = after->getArgument(1);
  done = after->getArgument(2);
  Value next, counter, old;
  if (producer) {
    auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
    counter = LLVM::AddrSpaceCastOp::create(b, loc, global, tileCounter);
    old = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add, counter,
                                    i32(1), LLVM::AtomicOrdering::monotonic);
    next = arith::AddIOp::create(
        b, loc, old, toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x)));
  }
  tileRank = rank;
  setTileOfRank(rank, qBlocks);
  ringBase = toIndex(ring);
  setTileBuffer(done);
  Regs values(after->getArguments().drop_front(3));
  body(values);
  if (producer) {
    // Every tile run makes one add, so the adds return 0 .. numTiles - 1
    // and the one that got numTiles - 1 was the launch's last: it zeroes
    // the counter for the next launch on the stream (no memset per call).
    // Checked after the tile's loads, not right after the add. (ptxas
    // still reads the add's result early, in the warp-aggregated form it
    // gives the atomic, before the Q-empty wait.)
    Value last = arith::SubIOp::create(b, loc, numTiles, i32(1));
    ifThen(cmp(arith::CmpIPredicate::eq, old, last),
           [&] { LLVM::StoreOp::create(b, loc, i32(0), counter); });
  }
  SmallVector<Value> yields = {
      arith::AddIOp::create(b, loc, ring, toI32(numBlocks)),
      arith::AddIOp::create(b, loc, done, i32(1))};
  if (producer)
    yields.insert(yields.begin(), next);
  yields.append(values.begin(), values.end());
  scf::YieldOp::create(b, loc, yields);
  carried.assign(loop.getResults().begin() + 3, loop.getResults().end());

  if (!producer)
    return;
  // No tile left: hand the consumers the end mark in the next Q buffer.
  b.setInsertionPointAfter(loop);
  setTileBuffer(loop.getResult(2));
  waitParity(qEmpty(qBuffer), flip(tileParity));
  LLVM::StoreOp::create(b, loc, numTiles, tileSlot(qBuffer));
  arrive(qFull(qBuffer));
}

/// Issues S = Q.K^T for this consumer's 64 rows and commits the group:
/// head_dim / 16 wgmma.m64nNk16 with N = `n` (block_n unless narrow: the
/// first n keys of the block), Q and K both K-major in shared memory.
/// Returns the accumulator struct, valid after a wait.
Value HopperKernelEmitter::issueQK(Value consumer, Value s, int64_t n,
                                   bool byAtom) {
  if (!n)
    n = blockN;
  if (!qFragments.empty()) // q_in_registers
    return issueQKFromRegisters(s, n);
  Value acc = LLVM::UndefOp::create(b, loc, f32Struct(b.getContext(), n / 2));
  Value kBase = kStageOffset(s);
  Value kDesc = descriptor(kBase, /*leading=*/16, /*stride=*/1024);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value qBase = consumerRows(consumer, qOffset(qBuffer));
  if (schedule.getUniformRing()) // Keeps Q's descriptors uniform too.
    qBase = warpUniform(qBase);
  Value qDesc = descriptor(qBase, /*leading=*/16, /*stride=*/1024);
  for (int64_t kk = 0; kk < headDim / 16; ++kk) {
    int64_t atom = kk / 4, within = 32 * (kk % 4);
    if (byAtom && within == 0)
      waitParity(idx(atom), tileParity);
    Value descA = advance(qDesc, atom * blockM * 128 + within);
    Value descB = advance(kDesc, atom * blockN * 128 + within);
    acc = wgmmaSmem(b, loc, acc, descA, descB, n, elementType,
                    /*accumulate=*/kk > 0, /*bKMajor=*/true);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

/// issueQK with A from qFragments: the first k-step with scale-d = 0.
Value HopperKernelEmitter::issueQKFromRegisters(Value s, int64_t n) {
  Value kDesc = descriptor(kStageOffset(s), /*leading=*/16, /*stride=*/1024);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  WgmmaChain chain{Regs(n / 2, LLVM::PoisonOp::create(b, loc, b.getF32Type())),
                   Value()};
  for (int64_t kk = 0; kk < headDim / 16; ++kk) {
    int64_t atom = kk / 4, within = 32 * (kk % 4);
    chainStep(chain, ArrayRef<Value>(qFragments).slice(4 * kk, 4),
              advance(kDesc, atom * blockN * 128 + within), n,
              /*transB=*/false, /*accumulate=*/kk > 0);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return chain.last;
}

/// One ldmatrix.x4 per k-step (its two 8-column chunks), as storeByTma
/// writes O with stmatrix.x4.
Regs HopperKernelEmitter::loadQFragments(Value consumer) {
  MatrixX4Lane l = matrixX4Lane();
  Value rowStart =
      add(consumerRows(consumer, qOffset(qBuffer)), mul(l.row, 128));
  auto ctx = b.getContext();
  Type words = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(4, b.getI32Type()));
  Regs fragments;
  for (int64_t kk = 0; kk < headDim / 16; ++kk) {
    Value offset = matrixX4Offset(l, rowStart, 2 * kk);
    Value x4 = NVVM::LdMatrixOp::create(
        b, loc, words, sharedPointer(offset), /*num=*/4, NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltType::B16);
    for (int64_t w = 0; w < 4; ++w)
      fragments.push_back(LLVM::ExtractValueOp::create(b, loc, x4, w));
  }
  return fragments;
}

Value HopperKernelEmitter::wgmmaFromRegisters(ArrayRef<Value> acc,
                                              ArrayRef<Value> a, Value desc,
                                              int64_t cols, bool transB,
                                              bool accumulate) {
  return wgmmaRegisterA(b, loc, acc, a, desc, cols, elementType,
                        /*bKMajor=*/!transB, accumulate);
}

Value HopperKernelEmitter::chainStep(WgmmaChain &chain, ArrayRef<Value> a,
                                     Value desc, int64_t cols, bool transB,
                                     bool accumulate) {
  if (chain.last)
    for (int64_t i = 0, e = chain.acc.size(); i < e; ++i)
      chain.acc[i] = LLVM::ExtractValueOp::create(b, loc, chain.last, i);
  chain.last = wgmmaFromRegisters(chain.acc, a, desc, cols, transB, accumulate);
  return chain.last;
}

/// Issues O += P.V and commits the group: one wgmma.m64nNk16 (N = head dim)
/// per four packed pairs of P (block_n / 16 of them; fewer for a narrow P,
/// which reads only the first V rows), P from registers, V MN-major in
/// shared memory. nvvm.wgmma.mma_async takes A from shared memory only,
/// hence inline PTX. With row_sum_mma, `acc` ends with the 4 sums and a
/// second chain adds P's row sums to them. Returns the last k-step's
/// structs.
HopperKernelEmitter::PVStructs
HopperKernelEmitter::issuePV(ArrayRef<Value> accIn, ArrayRef<Value> probs,
                             Value s) {
  int64_t kSteps = probs.size() / 4; // block_n / 16, or 4 when narrow
  WgmmaChain o{Regs(accIn.begin(), accIn.begin() + oRegs()), Value()};
  Value vDesc = descriptor(vStageOffset(s), /*leading=*/blockN * 128,
                           /*stride=*/1024);
  // row_sum_mma: the same P against a 16 x 8 B of ones (K-major, the same
  // bytes every k-step, inside the ones tile whatever the swizzle reaches)
  // adds P's row sums to 4 more registers, two copies per row half.
  WgmmaChain sums{Regs(accIn.begin() + oRegs(), accIn.end()), Value()};
  Value onesDesc;
  if (!sums.acc.empty()) {
    onesDesc = descriptor(idx(onesOffset()), /*leading=*/16, /*stride=*/1024);
  }
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    ArrayRef<Value> p = probs.slice(4 * kk, 4);
    // V rows kk*16 .. kk*16+15 start 16 * 128 bytes further into every
    // atom; the atoms (64 head-dim columns each) are block_n * 128 apart.
    chainStep(o, p, advance(vDesc, kk * 2048), headDim, /*transB=*/true,
              /*accumulate=*/true);
    if (!sums.acc.empty())
      chainStep(sums, p, onesDesc, 8, /*transB=*/false, /*accumulate=*/true);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return {o.last, sums.last};
}

/// The registers of an accumulator struct once `wgmma.wait_group` has
/// retired it. The values pass through an empty volatile asm after the
/// wait: without that data dependence LLVM may read the registers before
/// the wait, while the wgmma still writes them.
Regs HopperKernelEmitter::retire(Value accStruct) {
  int64_t n = cast<LLVM::LLVMStructType>(accStruct.getType()).getBody().size();
  Value fenced = retireAccumulator(b, loc, accStruct);
  Regs out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, fenced, i));
  return out;
}

Regs HopperKernelEmitter::retire(PVStructs structs) {
  Regs acc = retire(structs.o);
  if (structs.sums) {
    Regs sums = retire(structs.sums);
    acc.append(sums.begin(), sums.end());
  }
  return acc;
}

/// Mask and online softmax of one block of scores (AccumulatorMath): the
/// mask of block `it` for rows from `rowBase`.
void HopperKernelEmitter::softmax(Regs &scores, RowState &st, Value it,
                                  Value rowBase, bool mask, Value (&rescale)[2],
                                  Value maskIf) {
  auto firstKey = [&] { return add(mul(keyBlock(it), blockN), mul(quad, 2)); };
  BlockMask blockMask{firstKey, rowBase, seqK, causal};
  math.softmax(scores, st, mask ? &blockMask : nullptr, rescale, maskIf);
}

/// S of block `it` on its own: a turn to issue, the wait, K released.
Regs HopperKernelEmitter::scoresOf(Value it, Value consumer,
                                   function_ref<void()> underQK, bool byAtom) {
  auto [s, parity] = stageOf(it);
  // k0_by_atom: the first block's K atoms are waited for with Q's.
  bool kByAtom = byAtom && schedule.getK0ByAtom();
  turnBegin();
  if (!kByAtom)
    waitParity(kFull(s), parity);
  Value sStruct = issueQK(consumer, s, /*n=*/0, byAtom);
  turnEnd();
  if (underQK)
    underQK();
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  Regs scores = retire(sStruct);
  // k0_by_atom: the producer completes this stage's K-full phase with a
  // bare arrive (the bytes came on Q's atom barriers). Every phase of a
  // barrier must be waited for before the barrier is armed again, so the
  // consumers wait for this one too, off the critical path: the producer
  // arrived right after issuing the atoms' loads.
  if (kByAtom)
    waitParity(kFull(s), parity);
  releaseStage(kEmpty(s));
  return scores;
}

/// O += P.V of block `it` on its own: a turn to issue, the wait, V
/// released.
void HopperKernelEmitter::accumulatePV(Value it, Regs &acc,
                                       ArrayRef<Value> probs,
                                       function_ref<void()> underPV) {
  auto [s, parity] = stageOf(it);
  turnBegin();
  waitParity(vFull(s), parity);
  PVStructs oStructs = issuePV(acc, probs, s);
  turnEnd();
  if (underPV)
    underPV();
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  acc = retire(oStructs);
  releaseStage(vEmpty(s));
}

/// One K/V block, in order: S, softmax, O = O * rescale + P.V.
void HopperKernelEmitter::emitBlock(Value it, Value consumer, Value rowBase,
                                    Regs &acc, RowState &st, bool mask) {
  Regs scores = scoresOf(it, consumer);
  Value rescale[2];
  softmax(scores, st, it, rowBase, mask, rescale);
  Regs probs = pack(scores);
  scaleAccIfChanged(acc, rescale);
  accumulatePV(it, acc, probs);
}

/// One K/V block with the softmax overlapped (overlap_softmax): issue S for
/// block `it`, issue O += P.V for block it - 1 (P from the previous
/// iteration), and run block it's softmax while the tensor cores work on
/// both. O is rescaled once the P.V group has retired.
void HopperKernelEmitter::emitOverlappedBlock(Value it, Value consumer,
                                              Value rowBase, Regs &acc,
                                              Regs &probs, RowState &st,
                                              bool mask, int64_t n) {
  auto [s, parity] = stageOf(it);
  auto [prev, prevParity] = stageOf(arith::SubIOp::create(b, loc, it, idx(1)));
  turnBegin();
  waitParity(kFull(s), parity);
  Value sStruct = issueQK(consumer, s, n);
  waitParity(vFull(prev), prevParity);
  PVStructs oStructs = issuePV(acc, probs, prev);
  turnEnd();
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1); // S is done, P.V may run
  Regs scores = retire(sStruct);
  releaseStage(kEmpty(s));
  Value rescale[2];
  softmax(scores, st, it, rowBase, mask, rescale);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  acc = retire(oStructs);
  releaseStage(vEmpty(prev));
  scaleAccIfChanged(acc, rescale);
  // Only now: the P.V in flight read the previous P's registers, and
  // writing new A-operand registers under it makes ptxas serialize (C7513).
  probs = pack(scores);
  probs.resize(blockN / 4, i32(0));
}

std::pair<Value, Value> HopperKernelEmitter::rowTotals(RowState &st, int r) {
  Value sum = st.sum[r];
  // Per thread a quarter of the row's keys, but row_sum_mma's are whole.
  if (!schedule.getRowSumMma())
    for (int64_t x : {1, 2})
      sum = fadd(sum, gpu::ShuffleOp::create(b, loc, sum, i32(x), i32(32),
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult());
  Value inv = arith::DivFOp::create(b, loc, f32(1.0), sum);
  Value ln2 = f32(0.69314718055994530942);
  return {inv, fmul(fadd(fmul(st.max[r], scaleLog2), log2(sum)), ln2)};
}

/// O through shared memory: each stmatrix.x4 writes two 8-column chunks of
/// the warp's 16 rows (the accumulator's register order is stmatrix's
/// fragment order) into the 128-byte-swizzled [atom][rows][64] layout TMA
/// reads; then one thread stores each 64 x 64 box. TMA drops the rows past
/// seqlen_q.
void HopperKernelEmitter::storeByTma(Value consumer, Value (&inv)[2],
                                     ArrayRef<Value> acc, Value row0,
                                     Value headIndex, Value batchIndex,
                                     Value staging) {
  Value issuer = cmp(arith::CmpIPredicate::eq, localTid, idx(0));
  Value region = consumerRows(consumer, staging);
  if (!oInQBuffer()) {
    // The previous tile's stores must have read the staging tile.
    ifThen(issuer, [&] { waitStoresRead(); });
    syncConsumer(consumer);
  }
  MatrixX4Lane l = matrixX4Lane();
  Value rowStart = add(region, mul(l.row, 128));
  auto ctx = b.getContext();
  Value firstRow = add(row0, mul(consumer, 64));
  // Atoms [first, last) written: fenced, then stored by one thread.
  auto storeAtoms = [&](int64_t first, int64_t last) {
    fenceProxyAsyncShared(b, loc); // stmatrix before the TMA store reads
    syncConsumer(consumer);
    ifThen(issuer, [&] {
      for (int64_t a = first; a < last; ++a)
        nvgpu::TmaAsyncStoreOp::create(
            b, loc, atomView(add(region, a * blockM * 128), 64), oMap,
            ValueRange{idx(64 * a), firstRow, headIndex, batchIndex}, Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
  };
  bool byAtom = schedule.getStoreByAtom();
  for (int64_t i = 0; i < headDim / 8; i += 2) {
    // store_by_atom: the atom before this one is complete.
    if (byAtom && i > 0 && i % 8 == 0)
      storeAtoms(i / 8 - 1, i / 8);
    Value offset = matrixX4Offset(l, rowStart, i);
    // hold_packed: `acc` is O already scaled and packed (i32 pairs).
    Regs words;
    if (acc.front().getType().isInteger(32)) {
      words.assign(acc.begin() + 2 * i, acc.begin() + 2 * i + 4);
    } else {
      SmallVector<Value> values;
      for (int64_t j = 4 * i; j < 4 * i + 8; ++j)
        values.push_back(fmul(acc[j], inv[(j % 4) / 2]));
      words = pack(values);
    }
    NVVM::StMatrixOp::create(
        b, loc, sharedPointer(offset), words,
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
  }
  storeAtoms(byAtom ? atoms - 1 : 0, atoms);
  if (qReleasedAfterStore()) {
    // O was staged in Q's buffer: it goes back to the producer once the
    // stores have read it.
    ifThen(issuer, [&] { waitStoresRead(); });
    syncConsumer(consumer);
    release(qEmpty(qBuffer));
  }
}

void HopperKernelEmitter::finishRows(RowState &st, Value rowBase,
                                     Value (&inv)[2]) {
  for (int r = 0; r < 2; ++r) {
    auto [rowInv, lseValue] = rowTotals(st, r);
    inv[r] = rowInv;
    Value row = add(rowBase, r * 8);
    Value stores =
        arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::ult, row, seqQ),
                              cmp(arith::CmpIPredicate::eq, quad, idx(0)));
    if (startsTile) // split_tail: the piece with the first keys stores.
      stores = arith::AndIOp::create(b, loc, stores, startsTile);
    ifThen(stores, [&] {
      memref::StoreOp::create(b, loc, lseValue, lse,
                              ValueRange{batch, head, row});
    });
  }
}

void HopperKernelEmitter::emitStore(Value consumer, Value rowBase, Regs &acc,
                                    Value (&inv)[2]) {
  if (schedule.getTmaStore())
    return storeByTma(consumer, inv, acc, qRow0, head, batch, oOffset());
  auto pairType = VectorType::get({2}, elementType);
  for (int r = 0; r < 2; ++r) {
    Value row = add(rowBase, r * 8);
    Value inside = cmp(arith::CmpIPredicate::ult, row, seqQ);
    SmallVector<Value> pairs;
    for (int64_t i = 0; i < headDim / 8; ++i) {
      Value lo = arith::TruncFOp::create(b, loc, elementType,
                                         fmul(acc[4 * i + 2 * r], inv[r]));
      Value hi = arith::TruncFOp::create(b, loc, elementType,
                                         fmul(acc[4 * i + 2 * r + 1], inv[r]));
      pairs.push_back(
          vector::FromElementsOp::create(b, loc, pairType, ValueRange{lo, hi}));
    }
    ifThen(inside, [&] {
      Value col0 = mul(quad, 2);
      for (int64_t i = 0; i < headDim / 8; ++i)
        vector::StoreOp::create(b, loc, pairs[i], o,
                                ValueRange{batch, head, row, add(col0, 8 * i)});
    });
  }
}

void HopperKernelEmitter::emitConsumer(Value consumer) {
  setRegisterBudget(schedule.getConsumerRegs(),
                    NVVM::SetMaxRegisterAction::increase);
  localTid = rem(tid, 128);
  Value local = localTid;
  lane = rem(local, 32);
  group = div(lane, 4);
  quad = rem(lane, 4);
  warpRow = mul(div(local, 32), 16);
  scaleLog2 = fmul(scale, f32(1.4426950408889634));
  // uniform_consumer: Q's descriptors, the turn barriers and the tile's
  // rows then stay on the uniform datapath.
  if (schedule.getUniformConsumer())
    consumer = warpUniform(consumer);
  consumerIndex = consumer;
  if (schedule.getPingpong()) // Consumer 0 takes the first turn.
    ifThen(cmp(arith::CmpIPredicate::eq, consumer, idx(consumers - 1)), [&] {
      NVVM::BarrierArriveOp::create(b, loc, i32(kTurnBarrier), i32(256));
    });
  // defer_store: no O is held before the first tile.
  Regs held;
  if (schedule.getDeferStore()) {
    HeldO none;
    if (schedule.getHoldPacked()) // O as 16-bit pairs, already scaled
      none.acc.assign(headDim / 4, i32(0));
    else
      none.acc.assign(headDim / 2, f32(0.0));
    none.inv[0] = none.inv[1] = f32(0.0);
    none.row0 = none.head = none.batch = idx(0);
    none.valid = arith::ConstantIntOp::create(b, loc, 0, 1);
    none.buffer = idx(0);
    held = heldValues(none);
  }
  forEachTile([&](Regs &values) { consumeTile(consumer, values); },
              /*producer=*/false, held);
  if (schedule.getDeferStore()) // The last tile's.
    storeHeld(consumer, held);
  if (schedule.getTmaStore()) // The block's shared memory outlives the reads.
    ifThen(cmp(arith::CmpIPredicate::eq, localTid, idx(0)),
           [&] { waitStoresRead(); });
}

/// One tile: this consumer's 64 query rows against the tile's K/V blocks,
/// then O and lse.
void HopperKernelEmitter::consumeTile(Value consumer, Regs &held) {
  Value rowBase = add(add(qRow0, mul(consumer, 64)), add(warpRow, group));
  RowState st;
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  for (int r = 0; r < 2; ++r) {
    st.max[r] = negInf;
    st.sum[r] = f32(0.0);
  }
  Regs acc(accRegs(), f32(0.0));
  // Dynamic: waited for with the tile's rank; by atom: in the first Q.K^T.
  if (!schedule.getDynamicTiles() && !schedule.getQByAtom())
    waitParity(qFullOf(consumer), tileParity);
  // The fragments are this tile's values: no use outside its code.
  llvm::scope_exit dropFragments([&] { qFragments.clear(); });
  if (schedule.getQInRegisters())
    qFragments = loadQFragments(consumer);

  // skip_masked_blocks: this consumer's K/V blocks end where its own rows
  // do; it takes empty turns for the tile's later blocks (skipTurns), and
  // the producer releases their stages (releaseForSkippers).
  Value blocks = numBlocks;
  bool skip = causal && schedule.getSkipMaskedBlocks();
  if (skip) {
    blocks = blocksOf(consumer);
    // It depends on the consumer, which ptxas cannot tell is warp-uniform;
    // as a loop bound it would move the loops' stage and descriptor
    // arithmetic off the uniform datapath (the D=256 kernels spilled).
    blocks = warpUniform(blocks);
  }
  // Blocks that need no mask (inside the sequence and, when causal, left of
  // the block's first row) run in a loop without one; the rest are masked.
  Value unmaskedEnd = idx(0);
  if (schedule.getSplitKvLoop()) {
    Value full = div(seqK, blockN);
    if (kvBlock0) // Counted from the piece's first block.
      full = arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, full, kvBlock0), kvBlock0);
    if (causal)
      full = arith::MinUIOp::create(b, loc, full, div(add(qRow0, 1), blockN));
    unmaskedEnd = arith::MinUIOp::create(b, loc, full, blocks);
  }
  bool overlap = schedule.getOverlapSoftmax();
  Regs probs;
  Value first = idx(0);
  if (overlap) {
    // Block 0 alone, so that every loop iteration has a P from the block
    // before; masked only when it is the diagonal or the ragged end (most
    // tiles of short causal rows would otherwise mask two blocks).
    bool defer = schedule.getDeferStore();
    Regs scores = scoresOf(
        first, consumer,
        defer ? function_ref<void()>([&] { storeHeld(consumer, held); })
              : nullptr,
        /*byAtom=*/schedule.getQByAtom());
    Value rescale[2];
    Value maskFirst;
    if (schedule.getSplitKvLoop())
      maskFirst = cmp(arith::CmpIPredicate::eq, unmaskedEnd, idx(0));
    softmax(scores, st, first, rowBase, /*mask=*/true, rescale, maskFirst);
    probs = pack(scores);
    if (qReleasedNextTile())
      releasePreviousQ(consumer);
    first = idx(1);
    unmaskedEnd = arith::MaxUIOp::create(b, loc, unmaskedEnd, first);
  }
  // narrow_diagonal: masked blocks whose keys from 64 on are right of all
  // this consumer's rows take the narrow form (N = 64, 4 P.V k-steps).
  bool narrow = causal && schedule.getNarrowDiagonal();
  // Loop state: O, then (with overlap) the packed P, then max and sum of
  // the two rows.
  int64_t nAcc = acc.size(), nProbs = probs.size();
  auto joined = [&](ArrayRef<Value> a, ArrayRef<Value> p, RowState &rs) {
    Regs values(a.begin(), a.end());
    values.append(p.begin(), p.end());
    for (int r = 0; r < 2; ++r)
      values.append({rs.max[r], rs.sum[r]});
    return values;
  };
  auto unpack = [&](ValueRange values, Regs &a, Regs &p, RowState &rs) {
    a.assign(values.begin(), values.begin() + nAcc);
    p.assign(values.begin() + nAcc, values.begin() + nAcc + nProbs);
    for (int r = 0; r < 2; ++r) {
      rs.max[r] = values[nAcc + nProbs + 2 * r];
      rs.sum[r] = values[nAcc + nProbs + 2 * r + 1];
    }
  };
  auto emitLoop = [&](Value begin, Value end, bool mask) {
    auto loop =
        scf::ForOp::create(b, loc, begin, end, idx(1), joined(acc, probs, st));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value it = loop.getInductionVar();
      Regs state(loop.getRegionIterArgs());
      auto block = [&](int64_t n) {
        return [&, n](Regs &values) {
          Regs a, p;
          RowState rs;
          unpack(values, a, p, rs);
          if (overlap)
            emitOverlappedBlock(it, consumer, rowBase, a, p, rs, mask, n);
          else
            emitBlock(it, consumer, rowBase, a, rs, mask);
          values = joined(a, p, rs);
        };
      };
      if (narrow && mask)
        chooseIf(isNarrow(it, consumer), state, block(64), block(0));
      else
        block(0)(state);
      scf::YieldOp::create(b, loc, state);
    }
    unpack(loop.getResults(), acc, probs, st);
  };
  emitLoop(first, unmaskedEnd, /*mask=*/false);
  emitLoop(unmaskedEnd, blocks, /*mask=*/true);
  // Every Q.K^T of the tile has been waited for: the producer may load a
  // later tile's Q into this buffer (unless O is to be staged there).
  if (schedule.getPersistent() && !qReleasedAfterStore() &&
      !qReleasedNextTile())
    release(qEmpty(qBuffer));
  // The rows' totals and lse need only the softmax statistics: with
  // overlap_epilogue they run under the last block's P.V, not after it.
  Value inv[2];
  auto totals = [&] { finishRows(st, rowBase, inv); };
  bool totalsUnderPV = overlap && schedule.getOverlapEpilogue();
  if (overlap) { // The last block's P.V.
    Value last = arith::SubIOp::create(b, loc, blocks, idx(1));
    auto lastPV = [&](int64_t words) {
      return [&, words](Regs &values) {
        values.resize(nAcc);
        accumulatePV(last, values, ArrayRef<Value>(probs).take_front(words),
                     totalsUnderPV ? function_ref<void()>(totals) : nullptr);
        if (totalsUnderPV) // Computed in the branch: handed out by it.
          values.append({inv[0], inv[1]});
      };
    };
    Regs values = acc;
    if (narrow) {
      if (totalsUnderPV) // Placeholders: each branch yields its own.
        values.append({f32(0.0), f32(0.0)});
      chooseIf(isNarrow(last, consumer), values, lastPV(64 / 4),
               lastPV(nProbs));
    } else {
      lastPV(nProbs)(values);
    }
    acc.assign(values.begin(), values.begin() + nAcc);
    if (totalsUnderPV) {
      inv[0] = values[nAcc];
      inv[1] = values[nAcc + 1];
    }
  }
  if (schedule.getRowSumMma()) { // The sums leave the accumulator.
    for (int r = 0; r < 2; ++r)
      st.sum[r] = acc[oRegs() + 2 * r];
    acc.resize(oRegs());
  }
  if (skip)
    skipTurns(blocks, overlap ? 1 : 2);
  if (writesPartial) // split_tail, in the tail's loop
    shareTail(consumer, acc, st);
  if (!totalsUnderPV)
    totals();
  if (!schedule.getDeferStore()) {
    if (!startsTile) {
      emitStore(consumer, rowBase, acc, inv);
      return;
    }
    // split_tail: only the piece with the tile's first keys stores; a
    // writer's Q buffer, when O would have been staged there, goes back
    // without a store.
    ifThen(startsTile, [&] { emitStore(consumer, rowBase, acc, inv); });
    if (qReleasedAfterStore())
      ifThen(writesPartial, [&] { release(qEmpty(qBuffer)); });
    return;
  }
  HeldO tileO;
  tileO.acc = acc;
  if (schedule.getHoldPacked()) { // Scaled and packed now, stored as is.
    scaleAcc(tileO.acc, inv);
    tileO.acc = pack(tileO.acc);
  }
  tileO.inv[0] = inv[0];
  tileO.inv[1] = inv[1];
  tileO.row0 = qRow0;
  tileO.head = head;
  tileO.batch = batch;
  tileO.buffer = qBuffer;
  // split_tail: a writing piece's O is in the workspace, for another block.
  tileO.valid =
      startsTile ? startsTile : arith::ConstantIntOp::create(b, loc, 1, 1);
  held = heldValues(tileO);
}

/// split_tail, after a piece's last P.V. A writing piece leaves this
/// thread's O and row statistics in its block's workspace slot, then
/// raises the slot's flag (release); the merging piece waits for the flags
/// of the blocks that hold the rest of its tile (acquire) and folds their
/// values into its own as the online softmax folds a block. Thread t of a
/// slot reads what thread t wrote: the same rows and columns, no shuffle.
void HopperKernelEmitter::shareTail(Value consumer, Regs &acc, RowState &st) {
  int64_t nAcc = acc.size();
  Regs state = acc;
  for (int r = 0; r < 2; ++r)
    state.append({st.max[r], st.sum[r]});
  Value blockX = toI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value gridX = toI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  // Slots in 32 bits: the 64-bit consumer index, live across the tile
  // loop, is what ptxas spilled at 240 registers.
  Value consumer32 = toI32(consumer);
  auto slotOf = [&](Value block) {
    return toIndex(arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, i32(consumers)),
        consumer32));
  };
  Value issuer = cmp(arith::CmpIPredicate::eq, localTid, idx(0));
  auto release = LLVM::AtomicOrdering::release;
  ifThen(writesPartial, [&] {
    Value slot = slotOf(blockX);
    for (int64_t w = 0, e = state.size(); w < e; ++w)
      LLVM::StoreOp::create(b, loc, state[w], partialWord(slot, w));
    LLVM::FenceOp::create(b, loc, release);
    syncConsumer(consumer);
    ifThen(issuer, [&] {
      LLVM::StoreOp::create(b, loc, i32(1), flagOf(slot, gridX), 4, false,
                            false, false, release);
    });
  });
  // The blocks after this one, up to the one with the tile's last step:
  // block j's share starts at step j * I / G, so the last block to start at
  // or before step x is ((x + 1) * G - 1) / I. 32-bit, as j * I is.
  auto writersEnd = [&] {
    Value lastStep = arith::MulIOp::create(
        b, loc, arith::AddIOp::create(b, loc, tailTile, i32(1)), fullBlocks);
    Value lastBlock = toIndex(arith::DivUIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, arith::MulIOp::create(b, loc, lastStep, gridX), i32(1)),
        tailBlocks));
    return add(lastBlock, 1);
  };
  auto writers = [&](Value end, function_ref<void(Value, Regs &)> each,
                     Regs &values) {
    auto loop = scf::ForOp::create(b, loc, add(toIndex(blockX), 1), end, idx(1),
                                   values);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Regs inner(loop.getRegionIterArgs());
    each(slotOf(toI32(loop.getInductionVar())), inner);
    if (!values.empty()) // Else the builder gave the loop its yield.
      scf::YieldOp::create(b, loc, inner);
    values.assign(loop.getResults().begin(), loop.getResults().end());
  };
  changeIf(mergesPartials, state, [&](Regs &values) {
    // Once, for both loops below.
    Value end = writersEnd();
    writers(
        end,
        [&](Value slot, Regs &mine) {
          waitFlag(flagOf(slot, gridX));
          Regs other;
          for (int64_t w = 0, e = mine.size(); w < e; ++w)
            other.push_back(LLVM::LoadOp::create(b, loc, b.getF32Type(),
                                                 partialWord(slot, w)));
          mergePartial(mine, other, nAcc);
        },
        values);
    // Every thread has seen the flags: put them back to 0 for the next
    // launch on the workspace.
    syncConsumer(consumer);
    ifThen(issuer, [&] {
      Regs none;
      writers(
          end,
          [&](Value slot, Regs &) {
            LLVM::StoreOp::create(b, loc, i32(0), flagOf(slot, gridX));
          },
          none);
    });
  });
  acc.assign(state.begin(), state.begin() + nAcc);
  for (int r = 0; r < 2; ++r) {
    st.max[r] = state[nAcc + 2 * r];
    st.sum[r] = state[nAcc + 2 * r + 1];
  }
}

void HopperKernelEmitter::mergePartial(Regs &mine, ArrayRef<Value> other,
                                       int64_t nAcc) {
  Value factor[2][2]; // [mine, other][row half]
  for (int r = 0; r < 2; ++r) {
    Value &max = mine[nAcc + 2 * r], &sum = mine[nAcc + 2 * r + 1];
    Value otherMax = other[nAcc + 2 * r], otherSum = other[nAcc + 2 * r + 1];
    Value newMax = fmax(max, otherMax);
    Value scaledMax = scaledMaximum(newMax);
    factor[0][r] = factorFrom(max, scaledMax);
    factor[1][r] = factorFrom(otherMax, scaledMax);
    sum = fma(otherSum, factor[1][r], fmul(sum, factor[0][r]));
    max = newMax;
  }
  for (int64_t i = 0; i < nAcc; ++i) {
    int r = (i % 4) / 2;
    mine[i] = fma(other[i], factor[1][r], fmul(mine[i], factor[0][r]));
  }
}

void HopperKernelEmitter::emit() {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  q = entry.getArgument(0);
  k = entry.getArgument(1);
  v = entry.getArgument(2);
  o = entry.getArgument(3);
  lse = entry.getArgument(4);
  scale = entry.getArgument(5);
  unsigned firstMap = 6;
  if (schedule.getDynamicTiles())
    tileCounter = entry.getArgument(firstMap++);
  if (schedule.getSplitTail())
    workspace = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
        entry.getArgument(firstMap++));
  qMapPointer = entry.getArgument(firstMap);
  qMap = UnrealizedConversionCastOp::create(b, loc, mapType(qBoxRows()),
                                            qMapPointer)
             .getResult(0);
  kMapPointer = entry.getArgument(firstMap + 1);
  vMapPointer = entry.getArgument(firstMap + 2);
  kMap = UnrealizedConversionCastOp::create(b, loc, mapType(kvBoxRows()),
                                            kMapPointer)
             .getResult(0);
  vMap = UnrealizedConversionCastOp::create(b, loc, mapType(kvBoxRows()),
                                            vMapPointer)
             .getResult(0);
  if (schedule.getTmaStore())
    oMap = UnrealizedConversionCastOp::create(b, loc, mapType(64),
                                              entry.getArgument(firstMap + 3))
               .getResult(0);

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  batches = memref::DimOp::create(b, loc, q, 0);
  headsQ = memref::DimOp::create(b, loc, q, 1);
  headsKV = memref::DimOp::create(b, loc, k, 1);
  seqQ = memref::DimOp::create(b, loc, q, 2);
  seqK = memref::DimOp::create(b, loc, k, 2);
  if (schedule.getKvMulticast())
    clusterRank =
        toIndex(NVVM::ClusterId::create(b, loc, b.getI32Type()).getResult());
  if (!schedule.getPersistent())
    setTileOfBlock();

  SwizzledSharedMemory shared =
      createSwizzledSharedMemory(b, loc, kSwizzleAlignmentBytes);
  smem = shared.smem;
  smemAddress = shared.address;
  pad = shared.pad;

  barriers = createBarrierGroup(b, loc, numBarriers());
  ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
    for (int64_t i = 0; i < numBarriers(); ++i) {
      // Full barriers complete on the producer's arrive plus the TMA bytes;
      // empty ones when every consumer warp has released the stage (or Q).
      int64_t count = isEmptyBarrier(i) ? 4 * consumers : 1;
      if (schedule.getKvMulticast() && isKVEmptyBarrier(i))
        count *= 2;
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(count), idx(i),
                                    Value());
    }
    for (Value map : {qMap, kMap, vMap, oMap})
      if (map)
        nvgpu::TmaPrefetchOp::create(b, loc, map, Value());
    fenceProxyAsyncShared(b, loc); // mbarrier init before TMA uses them
    // kv_multicast: the peer's TMA and consumers complete these too.
    if (schedule.getKvMulticast())
      NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (schedule.getRowSumMma()) { // The ones, one word per thread.
    int64_t one = elementType.isBF16() ? 0x3F80 : 0x3C00;
    ifThen(cmp(arith::CmpIPredicate::ult, tid, idx(kOnesTileBytes / 4)), [&] {
      LLVM::StoreOp::create(b, loc, i32(one << 16 | one),
                            sharedPointer(add(mul(tid, 4), idx(onesOffset()))));
      fenceProxyAsyncShared(b, loc); // before wgmma reads them
    });
  }
  gpu::BarrierOp::create(b, loc);
  syncCluster(); // The peer's barriers are initialized before any arrive.

  Value warpgroup = div(tid, 128);
  Value isProducer = cmp(arith::CmpIPredicate::eq, warpgroup, idx(0));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    emitProducer();
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    emitConsumer(arith::SubIOp::create(b, loc, warpgroup, idx(1)));
  }
  // The peer's consumers may still arrive on this block's barriers.
  syncCluster();
  gpu::ReturnOp::create(b, loc);
}

LogicalResult lowerSdpa(func::FuncOp func, SdpaOp op, ModuleOp module,
                        bool registerBudgets) {
  if (failed(verifyKernelFunction(func)))
    return failure();
  // The kernel reads its operands from the function's arguments.
  Value operands[] = {op.getQ(), op.getK(),   op.getV(),
                      op.getO(), op.getLse(), op.getScale()};
  for (auto [i, value] : llvm::enumerate(operands)) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        arg.getArgNumber() != i)
      return op.emitOpError("with producer = tma expects its operands to be "
                            "the function's arguments in order (q, k, v, o, "
                            "lse, scale), but operand #")
             << i << " is not argument #" << i;
  }
  if (func.getNumArguments() != 6)
    return func.emitOpError("with producer = tma expects 6 arguments (q, k, "
                            "v, o, lse, scale), but got ")
           << func.getNumArguments();

  ScheduleAttr schedule = op.getSchedule();
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, func.getLoc(), func.getName());
  b.setInsertionPointToStart(gpuModule.getBody());
  SmallVector<Type> inputs(func.getFunctionType().getInputs());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  // dynamic_tiles: the tile counter, a zeroed i32 in global memory. Then the
  // tensor maps, which MarkTensorMapParams expects last.
  if (schedule.getDynamicTiles())
    inputs.push_back(ptr);
  if (schedule.getSplitTail()) // split_tail: the workspace.
    inputs.push_back(ptr);
  inputs.append({ptr, ptr, ptr});
  if (schedule.getTmaStore())
    inputs.push_back(ptr);
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       b.getFunctionType(inputs, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(schedule.getNumThreads()), 1, 1}));
  kernel->setAttr(kScheduleAttrName, schedule);
  if (schedule.getKvMulticast()) // Neighbouring query tiles, in pairs.
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr({2, 1, 1}));
  if (int64_t entry = schedule.getEntryRegs()) {
    // Several blocks per multiprocessor: a fixed register count at entry
    // (which setmaxnreg then moves per role) and the occupancy to plan for.
    kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    b.getI32IntegerAttr(entry));
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(schedule.getCtasPerSm()));
  }

  OpBuilder inner(module.getContext());
  HopperKernelEmitter emitter(inner, op, kernel, registerBudgets);
  emitter.emit();
  kernel->setAttr("tiledattn.dynamic_smem_bytes",
                  b.getI64IntegerAttr(emitter.dynamicSmemBytes()));
  if (schedule.getSplitTail())
    kernel->setAttr(kWorkspaceBytesAttrName,
                    b.getI64IntegerAttr(emitter.workspaceBytesPerBlock()));
  // What the runtime must build: one tensor map per operand, in parameter
  // order, boxes of 64 columns (128 bytes, the swizzle span) by rows.
  auto map = [&](StringRef operand, int64_t rows) {
    return tensorMapEntry(b, operand, rows);
  };
  SmallVector<Attribute> maps = {map("q", emitter.qBoxRows()),
                                 map("k", emitter.kvBoxRows()),
                                 map("v", emitter.kvBoxRows())};
  if (schedule.getTmaStore()) // One box per consumer and 64-column atom.
    maps.push_back(map("o", 64));
  kernel->setAttr(kTensorMapsAttrName, b.getArrayAttr(maps));
  func.erase();
  return success();
}

class ConvertSdpaToHopperPass
    : public tiledattn::impl::ConvertSdpaToHopperPassBase<
          ConvertSdpaToHopperPass> {
public:
  using ConvertSdpaToHopperPassBase::ConvertSdpaToHopperPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, SdpaOp>> work;
    module.walk([&](SdpaOp op) {
      if (!op.getSchedule().isWarpSpecialized())
        return;
      if (auto func = dyn_cast<func::FuncOp>(op->getParentOp()))
        work.push_back({func, op});
    });
    if (work.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    for (auto [func, op] : work) {
      if (failed(lowerSdpa(func, op, module, registerBudgets)))
        return signalPassFailure();
    }
  }
};
} // namespace
