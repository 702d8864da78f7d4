//===- RolesToNVGPU.cpp - Warp roles to warpgroups ---------------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-lower-roles: tiledattn.warp_specialize becomes the split of the
// block into a producer warpgroup and consumer warpgroups with their
// register budgets (with uniform_index the consumer index through
// redux.sync, with narrow_index in 32 bits), tiledattn.turn the named-barrier
// rotation between the consumers (NVVMHelpers.h).
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_LOWERROLESPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// Moves `block`'s ops before `before`.
void inlineBlock(Block &block, Operation *before) {
  for (Operation &op : llvm::make_early_inc_range(block))
    op.moveBefore(before);
}

/// The consumer index each warp_specialize's turns rotate on, once lowered.
struct Consumers {
  Value index;
  int64_t count;
};

void lowerRoles(WarpSpecializeOp roles, Consumers &consumers,
                bool registerBudgets, bool entryRegisters) {
  OpBuilder b(roles);
  Location loc = roles.getLoc();
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warpgroup = arith::DivUIOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, 128));
  Value isProducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto split = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);

  if (registerBudgets && entryRegisters)
    setEntryRegisters(roles->getParentOfType<gpu::GPUFuncOp>(),
                      roles.getEntryRegs());
  b.setInsertionPointToStart(&split.getThenRegion().front());
  if (registerBudgets)
    setRegisterBudget(b, loc, roles.getProducerRegs(),
                      NVVM::SetMaxRegisterAction::decrease);
  if (!roles.getProducer().empty())
    inlineBlock(roles.getProducer().front(),
                split.getThenRegion().front().getTerminator());

  Block &consumerBlock = roles.getConsumer().front();
  b.setInsertionPointToStart(&split.getElseRegion().front());
  Value consumer;
  if (roles.getNarrowIndex()) { // one register, the high word known zero
    Value word =
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), warpgroup);
    consumer = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        arith::SubIOp::create(b, loc, word,
                              arith::ConstantIntOp::create(b, loc, 1, 32)));
  } else {
    consumer = arith::SubIOp::create(b, loc, warpgroup,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  }
  if (roles.getUniformIndex())
    consumer = warpUniformIndex(b, loc, consumer);
  if (registerBudgets)
    setRegisterBudget(b, loc, roles.getConsumerRegs(),
                      NVVM::SetMaxRegisterAction::increase);
  bool turns = false;
  consumerBlock.walk([&](TurnOp) { turns = true; });
  if (turns) { // Consumer 0 takes the first turn.
    int64_t last = roles.getConsumers() - 1;
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, consumer,
                              arith::ConstantIndexOp::create(b, loc, last));
    auto first = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    NVVM::BarrierArriveOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, kTurnBarrier, 32),
        arith::ConstantIntOp::create(b, loc, 256, 32));
  }
  consumerBlock.getArgument(0).replaceAllUsesWith(consumer);
  inlineBlock(consumerBlock, split.getElseRegion().front().getTerminator());
  consumers = {consumer, static_cast<int64_t>(roles.getConsumers())};
  roles.erase();
}

void lowerTurn(TurnOp turn, const Consumers &consumers) {
  OpBuilder b(turn);
  Location loc = turn.getLoc();
  beginTurn(b, loc, consumers.index);
  Block &body = turn.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  turn.replaceAllUsesWith(yield.getValues());
  yield.erase();
  inlineBlock(body, turn);
  endTurn(b, loc, consumers.index, consumers.count);
  turn.erase();
}

class LowerRolesPass
    : public tiledattn::impl::LowerRolesPassBase<LowerRolesPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    WalkResult walk = getOperation().walk([](WarpSpecializeOp roles) {
      if (roles->getParentOfType<gpu::GPUFuncOp>())
        return WalkResult::advance();
      roles.emitOpError("expected to be in a gpu.func kernel: "
                        "tiledattn-lower-roles lowers kernels after "
                        "convert-tiledattn-to-nvgpu made them");
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Each turn rotates on its warp_specialize's consumers: note which
    // before the roles are lowered and the turns move out of them.
    SmallVector<WarpSpecializeOp> roles;
    DenseMap<Operation *, SmallVector<TurnOp>> turnsOf;
    DenseMap<Operation *, SmallVector<ConsumersSyncOp>> syncsOf;
    getOperation().walk([&](WarpSpecializeOp r) {
      roles.push_back(r);
      r.getConsumer().walk([&](TurnOp turn) { turnsOf[r].push_back(turn); });
      r.getConsumer().walk(
          [&](ConsumersSyncOp sync) { syncsOf[r].push_back(sync); });
    });
    for (WarpSpecializeOp r : roles) {
      SmallVector<TurnOp> turns = turnsOf.lookup(r);
      Consumers consumers;
      lowerRoles(r, consumers, registerBudgets, entryRegisters);
      for (TurnOp turn : turns)
        lowerTurn(turn, consumers);
      for (ConsumersSyncOp sync : syncsOf.lookup(r)) {
        OpBuilder b(sync);
        Location loc = sync.getLoc();
        NVVM::BarrierOp::create(
            b, loc, Type(),
            arith::ConstantIntOp::create(b, loc, kConsumersBarrier, 32),
            arith::ConstantIntOp::create(b, loc, 128 * consumers.count, 32),
            NVVM::BarrierReductionAttr(), Value());
        sync.erase();
      }
    }
    // What the program says is warp-uniform, through redux.sync (an index)
    // or vote.sync (a condition).
    getOperation().walk([](UniformOp uniform) {
      OpBuilder b(uniform);
      Location loc = uniform.getLoc();
      Value value = uniform.getValue();
      uniform.replaceAllUsesWith(value.getType().isIndex()
                                     ? warpUniformIndex(b, loc, value)
                                     : warpUniformCondition(b, loc, value));
      uniform.erase();
    });
    // The loop bounds a mask gives, as arith.
    getOperation().walk([](Operation *op) {
      TypeSwitch<Operation *>(op).Case<FirstQueryBlockOp, KeyBlockEndOp>(
          [](auto bound) {
            OpBuilder b(bound);
            bound.replaceAllUsesWith(bound.expand(b));
            bound.erase();
          });
    });
  }
};
} // namespace
