//===- HopperKernelEmitter.h - The Hopper kernel emitter --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The class convert-sdpa-to-hopper builds its kernels with (SdpaToHopper.cpp
// says what the kernel does). Its methods live in the files named for their
// part: HopperProducer.cpp (the TMA producer), HopperTileLoops.cpp (which
// tiles a block runs), HopperMma.cpp (the wgmmas and one K/V block),
// HopperConsumer.cpp (a consumer's tile, its epilogue and split tail) and
// SdpaToHopper.cpp (the kernel and the pass).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_CONVERSION_SDPATOHOPPER_HOPPERKERNELEMITTER_H
#define TILEDATTN_LIB_CONVERSION_SDPATOHOPPER_HOPPERKERNELEMITTER_H

#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
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

namespace mlir::tiledattn::hopper {
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
    if (value.getType().isIndex())
      return warpUniformIndex(b, loc, value);
    return NVVM::ReduxOp::create(b, loc, b.getI32Type(), value,
                                 NVVM::ReduxKind::UMIN, i32(-1));
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
    return warpUniformCondition(b, loc, narrow); // the same in every lane
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
  /// after all slots, one i32 flag per slot (the layout
  /// tiledattn.merge_pieces lowers to).
  int64_t partialWords() const { return splitTailSlotWords(headDim); }

public:
  /// Rows of Q's TMA box: the tile, or (q_per_consumer) a consumer's 64.
  int64_t qBoxRows() const { return schedule.getQPerConsumer() ? 64 : blockM; }
  /// Rows of a K/V load: kv_multicast splits each block between the two
  /// blocks of the cluster.
  int64_t kvBoxRows() const {
    return schedule.getKvMulticast() ? blockN / 2 : blockN;
  }
  int64_t workspaceBytesPerBlock() const {
    return splitTailWorkspaceBytes(consumers, headDim);
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
} // namespace mlir::tiledattn::hopper

#endif // TILEDATTN_LIB_CONVERSION_SDPATOHOPPER_HOPPERKERNELEMITTER_H
