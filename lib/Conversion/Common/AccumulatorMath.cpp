//===- AccumulatorMath.cpp - Softmax on wgmma accumulators ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/AccumulatorMath.h"
#include "tiledattn/Conversion/NVVMHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include <limits>

using namespace mlir;
using namespace mlir::tiledattn;

Value AccumulatorMath::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value AccumulatorMath::f32(double v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                        APFloat(static_cast<float>(v)));
}
Value AccumulatorMath::fmax(Value a, Value c) {
  return arith::MaxNumFOp::create(b, loc, a, c);
}
Value AccumulatorMath::fmul(Value a, Value c) {
  return arith::MulFOp::create(b, loc, a, c);
}
Value AccumulatorMath::fadd(Value a, Value c) {
  return arith::AddFOp::create(b, loc, a, c);
}
Value AccumulatorMath::fsub(Value a, Value c) {
  return arith::SubFOp::create(b, loc, a, c);
}
Value AccumulatorMath::fma(Value a, Value c, Value d) {
  return LLVM::FMAOp::create(b, loc, a, c, d);
}
Value AccumulatorMath::exp2(Value x) {
  return callApproxIntrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32", x);
}
Value AccumulatorMath::log2(Value x) {
  return callApproxIntrinsic(b, loc, "llvm.nvvm.lg2.approx.f", x);
}

/// x is clamped to -126 (so the exponent below cannot wrap; 2^-126 stands
/// for smaller values, in unmasked blocks only), t = x + 1.5 * 2^23 rounds
/// it to an integer r in t's low bits, 2^(x - r) (x - r in [-0.5, 0.5]) is
/// a degree-3 polynomial (relative error 7.5e-5), and r goes into its
/// exponent by an integer add of t's bits shifted by 23. `exactZero`: x
/// below -126 (-inf: a masked score) gives 0, as MUFU's 2^x does.
Value AccumulatorMath::exp2OnFmaPipe(Value x, bool exactZero) {
  Value magic = f32(12582912.0f);
  Value clamped = fmax(x, f32(-126.0f));
  Value shifted = fadd(clamped, magic);
  Value fraction = fsub(clamped, fsub(shifted, magic));
  Value p = f32(0.055171627551317215f);
  for (float c :
       {0.24261116981506348f, 0.6932610273361206f, 0.9999280571937561f})
    p = fma(p, fraction, f32(c));
  Type i32Type = b.getI32Type();
  Value bits = arith::AddIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32Type, p),
      arith::ShLIOp::create(
          b, loc, arith::BitcastOp::create(b, loc, i32Type, shifted), i32(23)));
  Value result = arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  if (!exactZero)
    return result;
  Value tiny =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, f32(-126.0f));
  return arith::SelectOp::create(b, loc, tiny, f32(0.0f), result);
}

void AccumulatorMath::chooseIf(Value cond, Regs &values,
                               function_ref<void(Regs &)> then,
                               function_ref<void(Regs &)> otherwise) {
  SmallVector<Type> types = llvm::to_vector(ValueRange(values).getTypes());
  auto branch = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  for (auto [block, change] : {std::make_pair(branch.thenBlock(), then),
                               std::make_pair(branch.elseBlock(), otherwise)}) {
    b.setInsertionPointToStart(block);
    Regs changed = values;
    change(changed);
    scf::YieldOp::create(b, loc, changed);
  }
  values.assign(branch.getResults().begin(), branch.getResults().end());
}

AccumulatorPlace AccumulatorMath::place(Value tid) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  AccumulatorPlace p;
  p.localTid = arith::RemUIOp::create(b, loc, tid, idx(128));
  p.lane = arith::RemUIOp::create(b, loc, p.localTid, idx(32));
  p.group = arith::DivUIOp::create(b, loc, p.lane, idx(4));
  p.quad = arith::RemUIOp::create(b, loc, p.lane, idx(4));
  Value warp = arith::DivUIOp::create(b, loc, p.localTid, idx(32));
  p.warpRow = arith::MulIOp::create(b, loc, warp, idx(16));
  return p;
}

Regs AccumulatorMath::rowValues(ArrayRef<Value> scores, int r) {
  Regs out;
  for (int64_t i = 0, e = scores.size(); i < e; i += 4)
    out.append({scores[i + 2 * r], scores[i + 2 * r + 1]});
  return out;
}

Value AccumulatorMath::treeReduce(Regs values,
                                  function_ref<Value(Value, Value)> combine) {
  while (values.size() > 1) {
    Regs next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(combine(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

Value AccumulatorMath::scaledMaximum(Value newMax) {
  Value isInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                            f32(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, isInf, f32(0.0),
                                 fmul(newMax, scaleLog2));
}

Value AccumulatorMath::finiteOrZero(Value scaledMax) {
  Value isInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, scaledMax,
                            f32(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, isInf, f32(0.0), scaledMax);
}

Value AccumulatorMath::factorFrom(Value oldMax, Value scaledMax) {
  return exp2(fsub(fmul(oldMax, scaleLog2), scaledMax));
}

/// Keys past the end of the sequence and, when causal, right of the query
/// row see -inf. Register 4i + h holds key key0 + c with the constant
/// c = 8i + h % 2, so a row's keys from its limit on are those with
/// c >= limit - key0: one 32-bit compare with an immediate per score
/// instead of 64-bit key arithmetic (masked blocks are the diagonal ones, a
/// large share of the work of short causal rows).
void AccumulatorMath::applyMask(Regs &scores, const BlockMask &mask,
                                Value negInf) {
  auto toI32 = [&](Value index) -> Value {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  };
  if (!mask.seqK && !mask.causal)
    return; // no mask: nothing to emit, not even the first key
  int64_t chunks = scores.size() / 4; // of 8 keys
  Value key0 = toI32(mask.firstKey());
  Value threshold[2];
  for (int r = 0; r < 2; ++r) {
    Value limit = mask.seqK;
    if (mask.causal) { // keys <= row
      int64_t next = r * 8 + 1;
      Value row = mask.rowBase;
      if (std::optional<int64_t> constant = getConstantIntValue(row))
        row = arith::ConstantIndexOp::create(b, loc, *constant + next);
      else
        row = arith::AddIOp::create(
            b, loc, row, arith::ConstantIndexOp::create(b, loc, next));
      limit = limit ? arith::MinUIOp::create(b, loc, limit, row) : row;
    }
    threshold[r] = arith::SubIOp::create(b, loc, toI32(limit), key0);
  }
  for (int64_t i = 0; i < chunks; ++i)
    for (int64_t h = 0; h < 4; ++h) {
      Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                        i32(8 * i + h % 2), threshold[h / 2]);
      scores[4 * i + h] =
          arith::SelectOp::create(b, loc, bad, negInf, scores[4 * i + h]);
    }
}

void AccumulatorMath::softmax(Regs &scores, RowState &st, const BlockMask *mask,
                              Value (&rescale)[2], Value maskIf,
                              std::optional<bool> mayBeMasked) {
  bool guard = mayBeMasked.value_or(mask != nullptr);
  Value negInf = f32(-std::numeric_limits<float>::infinity());
  if (mask && !maskIf)
    applyMask(scores, *mask, negInf);
  else if (mask)
    changeIf(maskIf, scores, [&](Regs &s) { applyMask(s, *mask, negInf); });

  // Row maxima over this block: the thread's own values, then the four
  // threads of the row (quads differ in the low two lane bits).
  Value blockMax[2];
  for (int r = 0; r < 2; ++r)
    blockMax[r] = treeReduce(rowValues(scores, r),
                             [&](Value x, Value y) { return fmax(x, y); });
  Value offset[2];
  for (int r = 0; r < 2; ++r) {
    for (int64_t x : {1, 2})
      blockMax[r] = fmax(blockMax[r],
                         gpu::ShuffleOp::create(b, loc, blockMax[r], i32(x),
                                                i32(32), gpu::ShuffleMode::XOR)
                             .getShuffleResult());
    // Without a mask every key of the block counts, so the new maximum is
    // finite for finite scores: the -inf guard (a compare and a select on
    // the way from the maximum to the exponents) is for masked blocks.
    Value newMax, scaledMax;
    if (options.scaledMaxima) {
      newMax = fmax(st.max[r], fmul(blockMax[r], scaleLog2));
      scaledMax = guard ? finiteOrZero(newMax) : newMax;
      rescale[r] = exp2(fsub(st.max[r], scaledMax));
    } else {
      newMax = fmax(st.max[r], blockMax[r]);
      scaledMax = guard ? scaledMaximum(newMax) : fmul(newMax, scaleLog2);
      rescale[r] = factorFrom(st.max[r], scaledMax);
    }
    offset[r] = arith::NegFOp::create(b, loc, scaledMax);
    st.max[r] = newMax;
  }
  // P = exp2(S * scale * log2(e) - max * scale * log2(e)): one FMA and one
  // MUFU op per score (exp2_on_fma: some on the FMA pipe, spread evenly).
  // Row sums stay per thread until the end.
  int64_t n = scores.size();
  int64_t onFma = options.exp2OnFma;
  for (int64_t i = 0; i < n; ++i) {
    Value x = fma(scores[i], scaleLog2, offset[(i % 4) / 2]);
    bool polynomial = (i + 1) * onFma / n > i * onFma / n;
    scores[i] = polynomial ? exp2OnFmaPipe(x, guard) : exp2(x);
  }
  for (int r = 0; r < 2; ++r)
    st.sum[r] = fma(st.sum[r], rescale[r],
                    treeReduce(rowValues(scores, r),
                               [&](Value x, Value y) { return fadd(x, y); }));
}

Regs AccumulatorMath::pack(ArrayRef<Value> probs, Type elementType) {
  auto pairType = VectorType::get({2}, elementType);
  auto wordType = VectorType::get({1}, b.getI32Type());
  Regs packed;
  for (int64_t i = 0, e = probs.size(); i < e; i += 2) {
    Value lo = arith::TruncFOp::create(b, loc, elementType, probs[i]);
    Value hi = arith::TruncFOp::create(b, loc, elementType, probs[i + 1]);
    Value pair =
        vector::FromElementsOp::create(b, loc, pairType, ValueRange{lo, hi});
    Value word = vector::BitCastOp::create(b, loc, wordType, pair);
    packed.push_back(
        vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
  }
  return packed;
}

std::array<Value, 2> AccumulatorMath::unpack(Value word, Type elementType) {
  auto wordType = VectorType::get({1}, b.getI32Type());
  auto pairType = VectorType::get({2}, elementType);
  Value pair = vector::BitCastOp::create(
      b, loc, pairType,
      vector::FromElementsOp::create(b, loc, wordType, ValueRange{word}));
  std::array<Value, 2> out;
  for (int64_t e = 0; e < 2; ++e) {
    Value half = vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{e});
    out[e] = arith::ExtFOp::create(b, loc, b.getF32Type(), half);
  }
  return out;
}

void AccumulatorMath::scaleAcc(Regs &acc, Value (&rescale)[2]) {
  for (int64_t i = 0, e = acc.size(); i < e; ++i)
    acc[i] = fmul(acc[i], rescale[(i % 4) / 2]);
}

void AccumulatorMath::mergeState(Regs &acc, RowState &st,
                                 ArrayRef<Value> otherAcc,
                                 const RowState &other) {
  Value factor[2][2]; // [mine, other][row half]
  for (int r = 0; r < 2; ++r) {
    Value newMax = fmax(st.max[r], other.max[r]);
    Value offset =
        options.scaledMaxima ? finiteOrZero(newMax) : scaledMaximum(newMax);
    auto factorOf = [&](Value max) {
      return options.scaledMaxima ? exp2(fsub(max, offset))
                                  : factorFrom(max, offset);
    };
    factor[0][r] = factorOf(st.max[r]);
    factor[1][r] = factorOf(other.max[r]);
    st.sum[r] = fma(other.sum[r], factor[1][r], fmul(st.sum[r], factor[0][r]));
    st.max[r] = newMax;
  }
  for (int64_t i = 0, e = acc.size(); i < e; ++i) {
    int r = (i % 4) / 2; // registers 4i + 2r, 4i + 2r + 1: row half r
    acc[i] = fma(otherAcc[i], factor[1][r], fmul(acc[i], factor[0][r]));
  }
}
