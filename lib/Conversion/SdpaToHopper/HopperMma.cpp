//===- HopperMma.cpp - wgmmas and one K/V block -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S = Q.K^T and O += P.V as wgmma groups, their retire, and one K/V block
// (in order, or with the softmax overlapped).
//
//===----------------------------------------------------------------------===//

#include "HopperKernelEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::hopper;

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
