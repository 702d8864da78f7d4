//===- HopperConsumer.cpp - A consumer's tile -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A consumer warpgroup's tile: its blocks, the rows' totals and lse, the
// store of O (direct or by TMA), and the split tail shared between
// consumers.
//
//===----------------------------------------------------------------------===//

#include "HopperKernelEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::hopper;

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
  AccumulatorPlace place = math.place(tid);
  localTid = place.localTid;
  lane = place.lane;
  group = place.group;
  quad = place.quad;
  warpRow = place.warpRow;
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
          waitUntilFlagSet(b, loc, flagOf(slot, gridX));
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
  // A slot holds O, then max and sum of row half 0, then of row half 1.
  auto rowsOf = [&](ArrayRef<Value> state) {
    return RowState{{state[nAcc], state[nAcc + 2]},
                    {state[nAcc + 1], state[nAcc + 3]}};
  };
  Regs acc(mine.begin(), mine.begin() + nAcc);
  RowState st = rowsOf(mine);
  math.mergeState(acc, st, other.take_front(nAcc), rowsOf(other));
  llvm::copy(acc, mine.begin());
  for (int r = 0; r < 2; ++r) {
    mine[nAcc + 2 * r] = st.max[r];
    mine[nAcc + 2 * r + 1] = st.sum[r];
  }
}
