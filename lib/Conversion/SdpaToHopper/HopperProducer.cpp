//===- HopperProducer.cpp - The TMA producer --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The producer warpgroup: Q, K and V by TMA into their buffers and ring.
//
//===----------------------------------------------------------------------===//

#include "HopperKernelEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::hopper;

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
