//===- AccumulatorMath.h - Softmax on wgmma accumulators --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The online softmax of attention on one warpgroup's wgmma accumulator
// registers: mask, row maxima across the quad, exponents (MUFU or the FMA
// pipe), row sums, the rescale of O and P packed into wgmma A words: the
// code tiledattn-lower-mma emits for the softmax ops on accumulator tiles.
//
// Layout (m64nN, per thread): register 4i + h (h = 0..3) holds row
// warpRow + group (+ 8 for h >= 2) and column 8i + 2 * quad (+ 1 for odd h),
// where group = lane / 4 and quad = lane % 4. A thread's two rows are its
// "row halves" r = 0, 1.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_ACCUMULATORMATH_H
#define TILEDATTN_CONVERSION_ACCUMULATORMATH_H

#include "mlir/IR/Builders.h"
#include <array>
#include <limits>
#include <optional>

namespace mlir::tiledattn {
using Regs = SmallVector<Value>;

/// Row statistics of the online softmax for the two rows a thread holds:
/// the running maximum of the scores (raw, or scaled: SoftmaxOptions) and
/// the running sum.
struct RowState {
  Value max[2], sum[2];
};

/// How the softmax is computed (schedule fields, docs/Schedules.md).
struct SoftmaxOptions {
  /// Exponents per block computed on the FMA pipe (exp2_on_fma; in masked
  /// blocks too, where the polynomial gives exactly 0 for -inf).
  int64_t exp2OnFma = 0;
  /// RowState::max holds the maximum of scale * log2(e) * s (the tile
  /// ops' `online_softmax`) rather than of the raw scores s (`raw_max`).
  /// The same values for scale > 0; one multiply fewer a row.
  bool scaledMaxima = true;
};

/// Which scores of a block the mask removes: keys at or past `seqK` (if
/// set) and, when `causal`, keys right of the row (`rowBase`: the thread's
/// first row; its second is 8 further). `firstKey` builds the key of the
/// thread's register 0 (an index), where the mask is emitted.
struct BlockMask {
  function_ref<Value()> firstKey;
  Value rowBase, seqK;
  bool causal = false;
};

/// A consumer thread's coordinates in the accumulator layout.
struct AccumulatorPlace {
  /// The thread's index in its warpgroup, its lane, group (lane / 4), quad
  /// (lane % 4) and its warp's first row (16 per warp).
  Value localTid, lane, group, quad, warpRow;
};

class AccumulatorMath {
public:
  /// `scaleLog2` (softmax scale * log2(e)) is read when the softmax is
  /// emitted, so it may be set after construction.
  AccumulatorMath(OpBuilder &b, const Location &loc, const Value &scaleLog2,
                  SoftmaxOptions options)
      : b(b), loc(loc), scaleLog2(scaleLog2), options(options) {}

  /// The coordinates of the thread `tid` (gpu.thread_id x) in its
  /// warpgroup's accumulators.
  AccumulatorPlace place(Value tid);
  /// Mask (where `mask`; only when `maskIf` holds, if given) and online
  /// softmax of one block of scores, in place: `scores` becomes P (f32);
  /// `st` moves on; sets `rescale`, the factor O must take. `mayBeMasked`
  /// (default: whether `mask` is given) keeps rows whose scores are all
  /// -inf at P = 0 instead of NaN.
  void softmax(Regs &scores, RowState &st, const BlockMask *mask,
               Value (&rescale)[2], Value maskIf = Value(),
               std::optional<bool> mayBeMasked = std::nullopt);
  /// Sets the masked scores to -inf (the mask alone, for tiledattn.mask).
  void mask(Regs &scores, const BlockMask &mask) {
    applyMask(scores, mask, f32(-std::numeric_limits<float>::infinity()));
  }
  /// P packed into 16-bit pairs of `elementType`: k-step kk takes chunks 2kk
  /// and 2kk + 1, rows (g, g + 8) each, the A-fragment order of wgmma.
  Regs pack(ArrayRef<Value> probs, Type elementType);
  /// pack's inverse for one word: its two 16-bit elements as f32, the
  /// low half (the lower column) first.
  std::array<Value, 2> unpack(Value word, Type elementType);
  /// O's registers times their row's factor.
  void scaleAcc(Regs &acc, Value (&rescale)[2]);
  /// Folds another softmax state of the same rows (`otherAcc`, `other`)
  /// into `acc` and `st`, as the online softmax folds a block: each row
  /// half's maximum becomes the larger, and both O and both sums are moved
  /// to it (maxima raw or scaled, as `options.scaledMaxima` says).
  /// split_tail's merge of a tile's pieces.
  void mergeState(Regs &acc, RowState &st, ArrayRef<Value> otherAcc,
                  const RowState &other);

  /// The thread's values of row half `r` (registers 4i + 2r, 4i + 2r + 1).
  static Regs rowValues(ArrayRef<Value> scores, int r);
  /// Pairwise reduction: a dependence chain of log2(n) instead of n, so the
  /// softmax waits less on instruction latency (the profile's top stall).
  Value treeReduce(Regs values, function_ref<Value(Value, Value)> combine);
  /// A row's new maximum times scale * log2(e), the exp2 offset of its
  /// probabilities. A row with every key masked so far keeps max -inf;
  /// its offset is 0 then, not -inf, so exp2(-inf) = 0 instead of NaN.
  Value scaledMaximum(Value newMax);
  /// scaledMaxima's scaledMaximum: a maximum already scaled, 0 for -inf.
  Value finiteOrZero(Value scaledMax);
  /// The factor that moves values scaled for maximum `oldMax` to the new
  /// one, `scaledMax` (from scaledMaximum).
  Value factorFrom(Value oldMax, Value scaledMax);

  /// `values` changed by `then` where `cond` (i1, uniform) holds and by
  /// `otherwise` where it does not: an scf.if yielding them, so only one
  /// of the two runs. Both keep the values' number and types.
  void chooseIf(Value cond, Regs &values, function_ref<void(Regs &)> then,
                function_ref<void(Regs &)> otherwise);
  /// `values` changed by `change` where `cond` holds, left as they are
  /// otherwise: the work is skipped, not selected away.
  void changeIf(Value cond, Regs &values, function_ref<void(Regs &)> change) {
    chooseIf(cond, values, change, [](Regs &) {});
  }

  // Small builders.
  Value i32(int64_t v);
  Value f32(double v);
  // maxnum (max.f32), not maximumf (max.NaN.f32): scores hold no NaN, and
  // the NaN-propagating form costs extra instructions per score.
  Value fmax(Value a, Value c);
  Value fmul(Value a, Value c);
  Value fadd(Value a, Value c);
  Value fsub(Value a, Value c);
  /// llvm.intr.fma, not math.fma: the latter becomes a libdevice call
  /// (__nv_fmaf), and bundles must build without libdevice.
  Value fma(Value a, Value c, Value d);
  /// 2^x by the MUFU approximation. ex2 flushes subnormal results to zero
  /// (.ftz): without it ptxas wraps every MUFU.EX2 in a range fix-up, and P
  /// below 2^-126 rounds to 0 in bf16/f16 anyway.
  Value exp2(Value x);
  /// exp2_on_fma: 2^x for x <= 0 without MUFU (AccumulatorMath.cpp).
  Value exp2OnFmaPipe(Value x, bool exactZero = false);
  /// Sets exp2_on_fma for the softmaxes emitted next (a tile op's own).
  void setExp2OnFma(int64_t n) { options.exp2OnFma = n; }
  void setScaledMaxima(bool scaled) { options.scaledMaxima = scaled; }
  Value log2(Value x);

private:
  OpBuilder &b;
  const Location &loc;
  const Value &scaleLog2;
  SoftmaxOptions options;

  /// Sets masked scores to `negInf`.
  void applyMask(Regs &scores, const BlockMask &mask, Value negInf);
};
} // namespace mlir::tiledattn

#endif // TILEDATTN_CONVERSION_ACCUMULATORMATH_H
