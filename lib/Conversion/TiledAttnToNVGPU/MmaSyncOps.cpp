//===- MmaSyncOps.cpp - One tile op each ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The code of each tile op on its fragments: load, constant, mma, mask,
// online softmax, rescale and store.
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::mmasync;

LogicalResult MmaSyncEmitter::emitLoad(LoadOp op) {
  std::optional<Layout> layout = la.lookup(op.getResult());
  if (!layout) // Unused: nothing to load.
    return success();
  Location loc = op.getLoc();
  Value src = map.lookup(op.getSource());
  Value bh[] = {map.lookup(op.getBatch()), map.lookup(op.getHead())};
  Value row = map.lookup(op.getRow());
  TileType tile = op.getResult().getType();
  int64_t rows = tile.getNumRows(), cols = tile.getNumCols();
  Value seqLen = memref::DimOp::create(b, loc, src, idx(loc, 2));
  Value lastRow = arith::SubIOp::create(b, loc, seqLen, idx(loc, 1));
  Regs regs;
  if (*layout == Layout::Lhs && wgmmaPad)
    return stageLhsForWgmma(op, src, bh, row, seqLen, lastRow);
  switch (*layout) {
  case Layout::Lhs: {
    if (failed(checkBlockRows(op, tile)) ||
        failed(checkMultiple(op, cols, 16, "columns")))
      return failure();
    Value lo = add(loc, add(loc, row, warpRow), group);
    Value rLo = clampRow(loc, lo, lastRow);
    Value rHi = clampRow(loc, add(loc, lo, 8), lastRow);
    for (int64_t k = 0; k < cols; k += 16) {
      Value c = add(loc, twoT, k);
      Value c8 = add(loc, twoT, k + 8);
      regs.append(
          {loadPair(loc, src, bh, rLo, c), loadPair(loc, src, bh, rHi, c),
           loadPair(loc, src, bh, rLo, c8), loadPair(loc, src, bh, rHi, c8)});
    }
    break;
  }
  case Layout::RhsT:
  case Layout::Rhs: {
    // B fragments are read at the mma that uses them, one k-step at a
    // time, so that ptxas can schedule them against the mmas instead of
    // holding the whole K or V tile in registers.
    bool t = *layout == Layout::RhsT;
    if (failed(checkMultiple(op, rows, t ? 8 : 16, "rows")) ||
        failed(checkMultiple(op, cols, t ? 16 : 8, "columns")))
      return failure();
    DeferredRhs d{src, bh[0], bh[1], row, lastRow, t, Value(), Value()};
    if (schedule.getProducer() == Producer::cp_async) {
      auto it = streamed.find(op.getResult());
      if (it == streamed.end())
        return op.emitOpError(
            "is an mma rhs, which producer = cp_async stages through "
            "shared memory; expected it directly in an scf.for body with "
            "the loop's induction variable as its row and the loop step "
            "as its row count");
      d.ring = it->second.ring;
      d.stage = it->second.stage;
    }
    deferred[op.getResult()] = d;
    return success();
  }
  case Layout::Acc:
  case Layout::RowVec:
    return op.emitOpError("loads an f16/bf16 tile that is used as ")
           << layoutName(*layout) << ", which must be f32";
  }
  frags[op.getResult()] = std::move(regs);
  return success();
}

std::pair<MmaSyncEmitter::Regs, MmaSyncEmitter::Regs>
MmaSyncEmitter::rhsFragmentsFromRing(Location loc, const DeferredRhs &d,
                                     int64_t n, int64_t k) {
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(loc, 32));
  Value matrix = arith::DivUIOp::create(b, loc, lane, idx(loc, 8));
  Value r = arith::RemUIOp::create(b, loc, lane, idx(loc, 8));
  Value row, col;
  if (d.transposed) {
    row = add(loc, r, n * 8);
    col = add(loc, arith::MulIOp::create(b, loc, matrix, idx(loc, 8)), k * 16);
  } else {
    row = add(loc,
              add(loc, arith::MulIOp::create(b, loc, matrix, idx(loc, 8)), r),
              k * 16);
    col = idx(loc, n * 8);
  }
  Type elementType = cast<MemRefType>(d.ring.getType()).getElementType();
  auto resultType = VectorType::get({4, 2}, elementType);
  Value frag = nvgpu::LdMatrixOp::create(
      b, loc, resultType, d.ring,
      ValueRange{d.stage, row, swizzle(loc, row, col)},
      /*transpose=*/!d.transposed, /*numTiles=*/4);
  Regs regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(
        vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i}));
  return {Regs{regs[0], regs[1]}, Regs{regs[2], regs[3]}};
}

MmaSyncEmitter::Regs MmaSyncEmitter::rhsFragment(Location loc,
                                                 const DeferredRhs &d,
                                                 int64_t n, int64_t k) {
  Value bh[] = {d.batch, d.head};
  if (d.transposed) {
    Value r = clampRow(loc, add(loc, add(loc, d.row, group), n * 8), d.lastRow);
    return {loadPair(loc, d.src, bh, r, add(loc, twoT, k * 16)),
            loadPair(loc, d.src, bh, r, add(loc, twoT, k * 16 + 8))};
  }
  auto memTy = cast<MemRefType>(d.src.getType());
  auto vecTy = VectorType::get({2}, memTy.getElementType());
  Value c = add(loc, group, n * 8);
  Value k0 = add(loc, d.row, twoT);
  Regs regs;
  for (int64_t half : {0, 8}) {
    Value e0 =
        loadScalar(loc, d.src, bh,
                   clampRow(loc, add(loc, k0, k * 16 + half), d.lastRow), c);
    Value e1 = loadScalar(
        loc, d.src, bh,
        clampRow(loc, add(loc, k0, k * 16 + half + 1), d.lastRow), c);
    regs.push_back(
        vector::FromElementsOp::create(b, loc, vecTy, ValueRange{e0, e1}));
  }
  return regs;
}

LogicalResult MmaSyncEmitter::emitConstant(ConstantOp op) {
  std::optional<Layout> layout = la.lookup(op.getResult());
  if (!layout)
    return success();
  TileType tile = op.getResult().getType();
  if (failed(checkBlockRows(op, tile)))
    return failure();
  Value v = f32Const(op.getLoc(), op.getValue().convertToFloat());
  int64_t n = *layout == Layout::RowVec ? 2 : tile.getNumCols() / 8 * 4;
  if (*layout == Layout::Acc &&
      failed(checkMultiple(op, tile.getNumCols(), 8, "columns")))
    return failure();
  if (*layout != Layout::Acc && *layout != Layout::RowVec)
    return op.emitOpError("makes an f32 tile that is used as ")
           << layoutName(*layout) << ", which must be f16 or bf16";
  frags[op.getResult()] = Regs(n, v);
  return success();
}

MmaSyncEmitter::Regs MmaSyncEmitter::mma(Location loc, ArrayRef<Value> a,
                                         ArrayRef<Value> bFrag,
                                         ArrayRef<Value> c, Type elementType) {
  NVVM::MMATypes ptxType =
      elementType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // bf16 operands travel as packed i32 registers; f16 as vector<2xf16>.
  auto operand = [&](Value v) -> Value {
    if (!elementType.isBF16())
      return v;
    Value asI32 = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), v);
    return vector::ExtractOp::create(b, loc, asI32, ArrayRef<int64_t>{0});
  };
  Regs aOps, bOps;
  for (Value v : a)
    aOps.push_back(operand(v));
  for (Value v : bFrag)
    bOps.push_back(operand(v));
  Type f32 = b.getF32Type();
  auto resTy =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = NVVM::MmaOp::create(
      b, loc, resTy, aOps, bOps, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  Regs d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(), i));
  return d;
}

LogicalResult MmaSyncEmitter::emitMma(MmaOp op) {
  if (wgmmaPad)
    return emitWgmma(op);
  Location loc = op.getLoc();
  TileType lhs = op.getLhs().getType(), acc = op.getAcc().getType();
  if (failed(checkBlockRows(op, lhs)))
    return failure();
  int64_t kSteps = lhs.getNumCols() / 16, nSlices = acc.getNumCols() / 8;
  auto rhs = deferred.find(op.getRhs());
  if (rhs == deferred.end())
    return op.emitOpError("expected rhs to come from tiledattn.load");
  const Regs &a = frags[op.getLhs()];
  const Regs &c = frags[op.getAcc()];
  Regs d;
  const DeferredRhs &src = rhs->second;
  if (src.ring && kSteps % 2 != 0)
    return op.emitOpError("expected an even number of k-steps (reduction "
                          "dim a multiple of 32) for ldmatrix.x4, but got ")
           << kSteps;
  for (int64_t n = 0; n < nSlices; ++n) {
    Regs cur(c.begin() + 4 * n, c.begin() + 4 * n + 4);
    Regs next; // fragment of k-step k + 1 from the last ldmatrix.x4
    for (int64_t k = 0; k < kSteps; ++k) {
      ArrayRef<Value> aFrag = ArrayRef<Value>(a).slice(4 * k, 4);
      Regs bFrag;
      if (!src.ring) {
        bFrag = rhsFragment(loc, src, n, k);
      } else if (k % 2 == 0) {
        std::tie(bFrag, next) = rhsFragmentsFromRing(loc, src, n, k);
      } else {
        bFrag = next;
      }
      cur = mma(loc, aFrag, bFrag, cur, lhs.getElementType());
    }
    d.append(cur);
  }
  frags[op.getResult()] = std::move(d);
  return success();
}

LogicalResult MmaSyncEmitter::emitMask(MaskOp op) {
  Location loc = op.getLoc();
  TileType t = op.getScores().getType();
  if (failed(checkBlockRows(op, t)))
    return failure();
  Value row = map.lookup(op.getRow()), col = map.lookup(op.getCol());
  Value seqK = op.getSeqlenK() ? map.lookup(op.getSeqlenK()) : Value();
  Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
  Value rows[2] = {threadRow(loc, row, 0), threadRow(loc, row, 2)};
  Value colBase = add(loc, col, twoT);
  const Regs &s = frags[op.getScores()];
  Regs out;
  for (int64_t n = 0; n < t.getNumCols() / 8; ++n) {
    for (int64_t e = 0; e < 4; ++e) {
      Value c = add(loc, colBase, n * 8 + (e & 1));
      Value masked;
      if (seqK)
        masked =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, c, seqK);
      if (op.getCausal()) {
        Value future = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                             c, rows[e / 2]);
        masked = masked ? arith::OrIOp::create(b, loc, masked, future) : future;
      }
      out.push_back(
          masked ? arith::SelectOp::create(b, loc, masked, negInf, s[4 * n + e])
                 : s[4 * n + e]);
    }
  }
  frags[op.getResult()] = std::move(out);
  return success();
}

LogicalResult MmaSyncEmitter::emitOnlineSoftmax(OnlineSoftmaxOp op) {
  Location loc = op.getLoc();
  TileType t = op.getScores().getType();
  if (failed(checkBlockRows(op, t)) ||
      failed(checkMultiple(op, t.getNumCols(), 16, "columns")))
    return failure();
  if (op.getProbs().getType().getElementType().isF32())
    return op.emitOpError("has f32 probs (packed later by tiledattn.truncate), "
                          "which only a warp-specialized (producer = tma) "
                          "program lowers; expected f16 or bf16 probs here");
  if (op.getRawMax())
    return op.emitOpError("keeps raw_max maxima, which only a "
                          "warp-specialized (producer = tma) program lowers; "
                          "expected maxima of the scaled scores here");
  int64_t nSlices = t.getNumCols() / 8;
  const Regs &s = frags[op.getScores()];
  const Regs &m = frags[op.getRowMax()];
  const Regs &l = frags[op.getRowSum()];
  Value scaleLog2 =
      arith::MulFOp::create(b, loc, map.lookup(op.getScale()),
                            f32Const(loc, static_cast<float>(M_LOG2E)));
  Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
  Value zero = f32Const(loc, 0.0f);
  Regs x, p(s.size());
  for (Value v : s)
    x.push_back(arith::MulFOp::create(b, loc, v, scaleLog2));
  Regs newMax, newSum, alpha;
  for (int64_t half = 0; half < 2; ++half) {
    Value mx = negInf;
    for (int64_t n = 0; n < nSlices; ++n)
      for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
        mx = arith::MaximumFOp::create(b, loc, mx, x[4 * n + e]);
    mx = quadReduce(loc, mx, /*isMax=*/true);
    Value mNew = arith::MaximumFOp::create(b, loc, m[half], mx);
    // A row that has only seen -inf subtracts 0 instead (no inf - inf).
    Value allMasked =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    Value mUse = arith::SelectOp::create(b, loc, allMasked, zero, mNew);
    Value a = exp2(loc, arith::SubFOp::create(b, loc, m[half], mUse));
    Value sum = zero;
    for (int64_t n = 0; n < nSlices; ++n)
      for (int64_t e = 2 * half; e < 2 * half + 2; ++e) {
        Value pe = exp2(loc, arith::SubFOp::create(b, loc, x[4 * n + e], mUse));
        p[4 * n + e] = pe;
        sum = arith::AddFOp::create(b, loc, sum, pe);
      }
    sum = quadReduce(loc, sum, /*isMax=*/false);
    Value lNew = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, l[half], a), sum);
    newMax.push_back(mNew);
    newSum.push_back(lNew);
    alpha.push_back(a);
  }
  // C fragments of column slices 2k and 2k + 1 are exactly the A fragment
  // of k-step k (FlashAttention-2's register reuse): no data movement.
  Type elementType = op.getProbs().getType().getElementType();
  Regs probs;
  for (int64_t k = 0; k < nSlices / 2; ++k) {
    int64_t lo = 4 * (2 * k), hi = 4 * (2 * k + 1);
    probs.append({packPair(loc, p[lo], p[lo + 1], elementType),
                  packPair(loc, p[lo + 2], p[lo + 3], elementType),
                  packPair(loc, p[hi], p[hi + 1], elementType),
                  packPair(loc, p[hi + 2], p[hi + 3], elementType)});
  }
  frags[op.getProbs()] = std::move(probs);
  frags[op.getNewRowMax()] = std::move(newMax);
  frags[op.getNewRowSum()] = std::move(newSum);
  frags[op.getRescale()] = std::move(alpha);
  return success();
}

LogicalResult MmaSyncEmitter::emitRescale(RescaleOp op) {
  Location loc = op.getLoc();
  const Regs &acc = frags[op.getAcc()];
  const Regs &f = frags[op.getFactor()];
  Regs out;
  for (auto [i, v] : llvm::enumerate(acc))
    out.push_back(arith::MulFOp::create(b, loc, v, f[(i % 4) / 2]));
  frags[op.getResult()] = std::move(out);
  return success();
}

LogicalResult MmaSyncEmitter::emitStore(StoreOp op) {
  Location loc = op.getLoc();
  TileType t = op.getAcc().getType();
  if (failed(checkBlockRows(op, t)))
    return failure();
  Value dest = map.lookup(op.getDest());
  Value lse = op.getLse() ? map.lookup(op.getLse()) : Value();
  Value bIdx = map.lookup(op.getBatch()), hIdx = map.lookup(op.getHead());
  Value row = map.lookup(op.getRow());
  const Regs &acc = frags[op.getAcc()];
  const Regs &m = frags[op.getRowMax()];
  const Regs &l = frags[op.getRowSum()];
  Type elementType = cast<MemRefType>(dest.getType()).getElementType();
  Value seqQ = memref::DimOp::create(b, loc, dest, idx(loc, 2));
  Value zero = f32Const(loc, 0.0f), one = f32Const(loc, 1.0f);
  for (int64_t half = 0; half < 2; ++half) {
    Value r = threadRow(loc, row, 2 * half);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, seqQ);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l[half], zero);
    Value inv = arith::SelectOp::create(
        b, loc, empty, zero, arith::DivFOp::create(b, loc, one, l[half]));
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // Columns past dest's head dim (a padded tile) are not stored.
    int64_t cols = std::min(t.getNumCols(),
                            cast<MemRefType>(dest.getType()).getShape()[3]);
    for (int64_t n = 0; n < cols / 8; ++n) {
      Value x = arith::MulFOp::create(b, loc, acc[4 * n + 2 * half], inv);
      Value y = arith::MulFOp::create(b, loc, acc[4 * n + 2 * half + 1], inv);
      Value v = packPair(loc, x, y, elementType);
      auto st = vector::StoreOp::create(
          b, loc, v, dest, ValueRange{bIdx, hIdx, r, add(loc, twoT, n * 8)});
      st.setAlignmentAttr(b.getI64IntegerAttr(4));
    }
    if (lse) {
      auto lead = scf::IfOp::create(b, loc, isGroupLeader, false);
      b.setInsertionPointToStart(lead.thenBlock());
      // lse = ln(sum_j exp(scale * s_ij)) = (m + log2 l) * ln 2.
      Value log2l = log2(loc, l[half]);
      Value v = arith::MulFOp::create(
          b, loc, arith::AddFOp::create(b, loc, m[half], log2l),
          f32Const(loc, static_cast<float>(M_LN2)));
      Value negInf = f32Const(loc, -std::numeric_limits<float>::infinity());
      v = arith::SelectOp::create(b, loc, empty, negInf, v);
      memref::StoreOp::create(b, loc, v, lse, ValueRange{bIdx, hIdx, r});
    }
  }
  return success();
}
