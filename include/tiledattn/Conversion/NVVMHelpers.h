//===- NVVMHelpers.h - Small NVVM builders both lowerings use ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Pieces of GPU code that convert-tiledattn-to-nvgpu (mma_sync and its
// experimental wgmma path), tiledattn-lower-rings, tiledattn-lower-roles and
// tiledattn-lower-mma emit alike.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_NVVMHELPERS_H
#define TILEDATTN_CONVERSION_NVVMHELPERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include <optional>
#include <utility>

namespace mlir::tiledattn {
/// An f32 MUFU approximation (llvm.nvvm.ex2.approx*, lg2.approx*) called
/// directly: math.exp2 / math.log2 would lower to libdevice, which links only
/// where a CUDA toolkit is found at compile time, and cost the same op.
inline Value callApproxIntrinsic(OpBuilder &b, Location loc,
                                 StringRef intrinsic, Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(intrinsic), x)
      .getResult(0);
}

/// A wgmma shared-memory matrix descriptor with the 128-byte swizzle for the
/// operand at shared-memory `address` (an index): start address >> 4,
/// leading and stride byte offsets >> 4 (PTX ISA, "Matrix Descriptor
/// Format").
inline Value buildWgmmaDescriptor(OpBuilder &b, Location loc, Value address,
                                  int64_t leading, int64_t stride) {
  Value a64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, a64, c64(0x3FFFF)), c64(4));
  int64_t fields =
      ((leading >> 4) << 16) | ((stride >> 4) << 32) | (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, c64(fields));
}

/// Orders this thread's generic-proxy accesses to shared memory (stores,
/// mbarrier init, cp.async) before later async-proxy ones (wgmma, TMA).
inline void fenceProxyAsyncShared(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

//===----------------------------------------------------------------------===//
// TMA tensor maps (128-byte swizzle, boxes of 64 columns)
//===----------------------------------------------------------------------===//

/// The descriptor type of a tensor map whose boxes are `rows` x 64 columns
/// of `elementType` (one 128-byte swizzle atom), out-of-bounds reads zero.
inline nvgpu::TensorMapDescriptorType
tmaDescriptorType(OpBuilder &b, Type elementType, int64_t rows) {
  auto tensor =
      MemRefType::get({1, 1, rows, 64}, elementType,
                      MemRefLayoutAttrInterface(), b.getI64IntegerAttr(3));
  return nvgpu::TensorMapDescriptorType::get(
      b.getContext(), tensor, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

/// One entry of a kernel's tiledattn.tensor_maps: what the runtime builds
/// for `operand` (q, k, v or o) and passes by value, in parameter order.
inline DictionaryAttr tensorMapEntry(OpBuilder &b, StringRef operand,
                                     int64_t rows) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("operand", b.getStringAttr(operand)),
       b.getNamedAttr("box_rows", b.getI64IntegerAttr(rows)),
       b.getNamedAttr("box_cols", b.getI64IntegerAttr(64)),
       b.getNamedAttr("swizzle", b.getI64IntegerAttr(128))});
}

//===----------------------------------------------------------------------===//
// Dynamic shared memory and mbarriers
//===----------------------------------------------------------------------===//

/// The kernel's dynamic shared memory, its address, and the pad (0 to 1023
/// bytes) to its first 1 KiB boundary, where swizzled tiles start: the
/// 128-byte swizzle repeats every 1024 bytes, and TMA and wgmma derive it
/// from the address.
struct SwizzledSharedMemory {
  Value smem, address, pad;
};
inline SwizzledSharedMemory
createSwizzledSharedMemory(OpBuilder &b, Location loc, int64_t alignment) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto rem = [&](Value a, int64_t c) -> Value {
    return arith::RemUIOp::create(b, loc, a, idx(c));
  };
  SwizzledSharedMemory s;
  s.smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
  s.address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, s.smem);
  s.pad = rem(
      arith::SubIOp::create(b, loc, idx(alignment), rem(s.address, alignment)),
      alignment);
  return s;
}

/// A group of `count` mbarriers in shared memory.
inline Value createBarrierGroup(OpBuilder &b, Location loc, int64_t count) {
  auto groupType = nvgpu::MBarrierGroupType::get(
      b.getContext(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup),
      count);
  return nvgpu::MBarrierCreateOp::create(b, loc, groupType);
}

//===----------------------------------------------------------------------===//
// Rings of shared-memory slots on mbarriers (tiledattn-lower-rings, and
// tiledattn-lower-mma's waits on a slot's parts)
//===----------------------------------------------------------------------===//

/// Slot and phase parity (i1) of ring position `position` (index) in a ring
/// of `depth` slots: slot position mod depth, parity (position / depth) mod 2.
inline std::pair<Value, Value>
ringSlotAndParity(OpBuilder &b, Location loc, Value position, int64_t depth) {
  Value round = arith::DivUIOp::create(
      b, loc, position, arith::ConstantIndexOp::create(b, loc, depth));
  Value parity = arith::TruncIOp::create(
      b, loc, b.getI1Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), round));
  Value slot = arith::RemUIOp::create(
      b, loc, position, arith::ConstantIndexOp::create(b, loc, depth));
  return {slot, parity};
}

/// The parity a producer waits for on an "empty" barrier: a fresh barrier
/// counts as having completed the phase before phase 0, so the first wait
/// is for parity 1 and passes.
inline Value emptyParity(OpBuilder &b, Location loc, Value parity) {
  return arith::XOrIOp::create(b, loc, parity,
                               arith::ConstantIntOp::create(b, loc, 1, 1));
}

/// Waits until barrier `index` of `barriers` has completed the phase of
/// `parity`.
inline void waitParity(OpBuilder &b, Location loc, Value barriers, Value index,
                       Value parity) {
  nvgpu::MBarrierTryWaitParityOp::create(
      b, loc, barriers, parity,
      arith::ConstantIndexOp::create(b, loc, 10000000), index);
}

/// The waits a `partial` ring get leaves to the mmas that name its token in
/// `after_parts`: tiledattn-lower-rings hands them to tiledattn-lower-mma as
/// a cast of (barriers, the slot's first full barrier, parity, parts) to
/// the token's type, part p's barrier being `first + p`.
struct PartWaits {
  Value barriers, first, parity;
  int64_t parts;

  Value cast(OpBuilder &b, Location loc, Type token) const {
    Value operands[] = {barriers, first, parity,
                        arith::ConstantIndexOp::create(b, loc, parts)};
    return UnrealizedConversionCastOp::create(b, loc, token, operands)
        .getResult(0);
  }
  /// From such a cast, or nothing.
  static std::optional<PartWaits> from(Value token) {
    auto cast = token.getDefiningOp<UnrealizedConversionCastOp>();
    if (!cast || cast.getInputs().size() != 4)
      return std::nullopt;
    std::optional<int64_t> parts = getConstantIntValue(cast.getInputs()[3]);
    if (!parts)
      return std::nullopt;
    return PartWaits{cast.getInputs()[0], cast.getInputs()[1],
                     cast.getInputs()[2], *parts};
  }
  /// Waits for part `part`.
  void wait(OpBuilder &b, Location loc, int64_t part) const {
    Value index = first;
    if (part)
      index = arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, part));
    waitParity(b, loc, barriers, index, parity);
  }
};

/// One arrival on barrier `index` of `barriers` by the calling thread.
inline void arriveOn(OpBuilder &b, Location loc, Value barriers, Value index) {
  nvgpu::MBarrierArriveOp::create(
      b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), barriers, index);
}

//===----------------------------------------------------------------------===//
// Warp roles (tiledattn-lower-roles)
//===----------------------------------------------------------------------===//

/// setmaxnreg: the calling warpgroup's registers per thread move to
/// `registers` (decrease: given back to the block's pool; increase: taken).
inline void setRegisterBudget(OpBuilder &b, Location loc, int64_t registers,
                              NVVM::SetMaxRegisterAction action) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(registers),
      NVVM::SetMaxRegisterActionAttr::get(b.getContext(), action));
}

/// The registers per thread `kernel` starts with (.maxnreg), unless it has
/// a count already: without one ptxas drops setmaxnreg (C7508) wherever it
/// cannot tell the count at entry, and the roles keep the launch's count
/// instead of their budgets. With `blocksPerSm` > 1 (ctas_per_sm) also the
/// occupancy ptxas plans for (.minnctapersm).
inline void setEntryRegisters(gpu::GPUFuncOp kernel, int64_t registers,
                              int64_t blocksPerSm = 1) {
  auto i32 = [&](int64_t v) {
    return IntegerAttr::get(IntegerType::get(kernel.getContext(), 32), v);
  };
  StringRef name = NVVM::NVVMDialect::getMaxnregAttrName();
  if (!kernel->hasAttr(name))
    kernel->setAttr(name, i32(registers));
  if (blocksPerSm > 1)
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), i32(blocksPerSm));
}

/// `index` through a warp reduction (redux.sync umin): the same value, now
/// known warp-uniform to ptxas, which keeps what follows from it on the
/// uniform datapath. Every lane of the warp must reach it.
inline Value warpUniformIndex(OpBuilder &b, Location loc, Value index) {
  Value word = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  Value same =
      NVVM::ReduxOp::create(b, loc, b.getI32Type(), word, NVVM::ReduxKind::UMIN,
                            arith::ConstantIntOp::create(b, loc, -1, 32));
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), same);
}

/// `cond` (i1), the same in every lane of the warp, through vote.sync: ptxas
/// then knows it and branches on it without a reconvergence barrier.
inline Value warpUniformCondition(OpBuilder &b, Location loc, Value cond) {
  return NVVM::VoteSyncOp::create(b, loc, b.getI1Type(),
                                  arith::ConstantIntOp::create(b, loc, -1, 32),
                                  cond, NVVM::VoteSyncKind::any);
}

/// Ping-pong: consumer warpgroup c (index) may issue once named barrier
/// kTurnBarrier + c completes: it syncs there (128 threads) and consumer
/// c - 1 arrives (128 more) when its own turn ends. Barrier 0 is
/// gpu.barrier's.
constexpr int64_t kTurnBarrier = 1;

inline void beginTurn(OpBuilder &b, Location loc, Value consumer) {
  Value id = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(),
      arith::AddIOp::create(
          b, loc, consumer,
          arith::ConstantIndexOp::create(b, loc, kTurnBarrier)));
  NVVM::BarrierOp::create(b, loc, Type(), id,
                          arith::ConstantIntOp::create(b, loc, 256, 32),
                          NVVM::BarrierReductionAttr(), Value());
}

/// Consumer warpgroups: at most three (the schedule's verifier).
constexpr int64_t kMaxConsumerWarpgroups = 3;
/// A warpgroup's own named barrier (128 threads), after the turn ones:
/// warpgroup w (0 the producer, 1.. the consumers) syncs on
/// kWarpgroupBarrier + w.
constexpr int64_t kWarpgroupBarrier = kTurnBarrier + kMaxConsumerWarpgroups;
/// The consumer warpgroups' common barrier (tiledattn.consumers_sync),
/// after the warpgroups' own (the producer's and up to 3 consumers').
constexpr int64_t kConsumersBarrier =
    kWarpgroupBarrier + 1 + kMaxConsumerWarpgroups;

/// Syncs the 128 threads of the calling thread's (`tid`'s) warpgroup.
inline void syncWarpgroup(OpBuilder &b, Location loc, Value tid) {
  Value warpgroup = arith::DivUIOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, 128));
  Value id = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(),
      arith::AddIOp::create(
          b, loc, warpgroup,
          arith::ConstantIndexOp::create(b, loc, kWarpgroupBarrier)));
  NVVM::BarrierOp::create(b, loc, Type(), id,
                          arith::ConstantIntOp::create(b, loc, 128, 32),
                          NVVM::BarrierReductionAttr(), Value());
}

/// Ends consumer `consumer`'s turn: the next consumer (of `consumers`) may
/// begin its own.
inline void endTurn(OpBuilder &b, Location loc, Value consumer,
                    int64_t consumers) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value next = arith::AddIOp::create(
      b, loc,
      arith::RemUIOp::create(b, loc,
                             arith::AddIOp::create(b, loc, consumer, idx(1)),
                             idx(consumers)),
      idx(kTurnBarrier));
  NVVM::BarrierArriveOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), next),
      arith::ConstantIntOp::create(b, loc, 256, 32));
}

/// Rank `t` (i32) of a block that takes ranks b, b + G, b + 2G, ... (G,
/// `step`, the grid), with every other full round of G ranks run backwards:
/// across heads, a round of causal tiles holds tiles of a few lengths, and
/// no block should always get the longest.
inline Value mirrorOddRounds(OpBuilder &b, Location loc, Value t, Value step,
                             Value tiles) {
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  Value round = arith::DivUIOp::create(b, loc, t, step);
  Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), round);
  Value roundStart = arith::MulIOp::create(b, loc, round, step);
  Value roundEnd = arith::AddIOp::create(b, loc, roundStart, step);
  Value full =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, roundEnd, tiles);
  // roundStart + (roundEnd - 1 - t): the same round backwards.
  Value mirrored = arith::AddIOp::create(
      b, loc, roundStart,
      arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, roundEnd, i32(1)), t));
  return arith::SelectOp::create(
      b, loc, arith::AndIOp::create(b, loc, odd, full), mirrored, t);
}

/// Spins until the i32 at `flag` (a global pointer) is set: an acquire load
/// in an scf.while, so what its writer stored before raising it (with
/// release) is visible after. split_tail's merging blocks wait so.
inline void waitUntilFlagSet(OpBuilder &b, Location loc, Value flag) {
  auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
  Value seen =
      LLVM::LoadOp::create(b, loc, b.getI32Type(), flag, 4, false, false, false,
                           false, LLVM::AtomicOrdering::acquire);
  scf::ConditionOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, seen,
                            arith::ConstantIntOp::create(b, loc, 0, 32)),
      ValueRange{});
  b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
  scf::YieldOp::create(b, loc, ValueRange{});
}

/// Runs `lower` on every gpu.func kernel of `module`, once every op of type
/// OpT is known to be in one (else OpT's error: "expected to be in a
/// gpu.func kernel: " and `why`).
template <typename OpT>
LogicalResult
lowerEachKernel(Operation *module, StringRef why,
                function_ref<LogicalResult(gpu::GPUFuncOp)> lower) {
  WalkResult walk = module->walk([&](OpT op) {
    if (op->template getParentOfType<gpu::GPUFuncOp>())
      return WalkResult::advance();
    op->emitOpError("expected to be in a gpu.func kernel: ") << why;
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  SmallVector<gpu::GPUFuncOp> kernels;
  module->walk([&](gpu::GPUFuncOp k) { kernels.push_back(k); });
  for (gpu::GPUFuncOp k : kernels)
    if (failed(lower(k)))
      return failure();
  return success();
}
} // namespace mlir::tiledattn

#endif // TILEDATTN_CONVERSION_NVVMHELPERS_H
