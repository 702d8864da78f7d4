//===- TiledAttnToNVGPU.cpp - Tile programs to GPU kernels ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers a tile program (a func.func marked tiledattn.kernel) to a gpu.func.
//
// A tile has no layout in the IR; its layout follows from how it is used.
// The pass first assigns each tile value one fragment layout (an mma lhs, a
// transposed or plain rhs, an accumulator, a row vector), unifying the values
// that an scf.for ties together, then walks the program in order and emits,
// for every tile op, the per-thread code on those fragments. With mma_sync
// (m16n8k16) warp w owns rows 16w .. 16w+15 of the block; inside a warp,
// thread `lane` has group g = lane / 4 and index t = lane % 4, and holds rows
// g and g + 8 and columns 2t, 2t + 1 of each 8-wide column slice (PTX ISA,
// "Matrix Fragments for mma.m16n8k16").
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"
#include "TileLoops.h"
#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_CONVERTTILEDATTNTONVGPUPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::mmasync;

LogicalResult MmaSyncEmitter::emitFunction(func::FuncOp func,
                                           gpu::GPUFuncOp kernel) {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (auto [from, to] : llvm::zip(func.getArguments(), kernel.getArguments()))
    map.map(from, to);
  Location loc = func.getLoc();
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(loc, 32));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(loc, 32));
  group = arith::DivUIOp::create(b, loc, lane, idx(loc, 4));
  Value inGroup = arith::RemUIOp::create(b, loc, lane, idx(loc, 4));
  warpRow = arith::MulIOp::create(b, loc, warp, idx(loc, 16));
  twoT = arith::MulIOp::create(b, loc, inGroup, idx(loc, 2));
  isGroupLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        inGroup, idx(loc, 0));
  if (schedule.getProducer() == Producer::cp_async) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    smemBase = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
  }
  if (schedule.getMma() == MmaKind::wgmma)
    setUpWgmma(loc);
  if (failed(emitBlock(func.getBody().front())))
    return failure();
  kernel->setAttr(kDynamicSmemAttrName, b.getI64IntegerAttr(smemBytes));
  return success();
}

namespace {
LogicalResult collectLayouts(func::FuncOp func, LayoutAssignment &la) {
  WalkResult r = func.walk([&](Operation *op) -> WalkResult {
    return TypeSwitch<Operation *, WalkResult>(op)
        .Case([&](MmaOp mma) {
          la.require(mma.getLhs(), Layout::Lhs, op);
          la.require(mma.getRhs(),
                     mma.getTransposed() ? Layout::RhsT : Layout::Rhs, op);
          la.require(mma.getAcc(), Layout::Acc, op);
          la.require(mma.getResult(), Layout::Acc, op);
          return WalkResult::advance();
        })
        .Case([&](MaskOp mask) {
          la.require(mask.getScores(), Layout::Acc, op);
          la.require(mask.getResult(), Layout::Acc, op);
          return WalkResult::advance();
        })
        .Case([&](OnlineSoftmaxOp sm) {
          la.require(sm.getScores(), Layout::Acc, op);
          for (Value v : {sm.getRowMax(), sm.getRowSum(), sm.getNewRowMax(),
                          sm.getNewRowSum(), sm.getRescale()})
            la.require(v, Layout::RowVec, op);
          la.require(sm.getProbs(), Layout::Lhs, op);
          return WalkResult::advance();
        })
        .Case([&](RescaleOp rs) {
          la.require(rs.getAcc(), Layout::Acc, op);
          la.require(rs.getResult(), Layout::Acc, op);
          la.require(rs.getFactor(), Layout::RowVec, op);
          return WalkResult::advance();
        })
        .Case([&](StoreOp st) {
          la.require(st.getAcc(), Layout::Acc, op);
          la.require(st.getRowMax(), Layout::RowVec, op);
          la.require(st.getRowSum(), Layout::RowVec, op);
          return WalkResult::advance();
        })
        .Case([&](scf::ForOp loop) {
          for (auto [init, arg, res] :
               llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                         loop.getResults())) {
            if (!isTile(init))
              continue;
            la.tie(init, arg);
            la.tie(arg, res);
          }
          auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
          for (auto [arg, operand] :
               llvm::zip(loop.getRegionIterArgs(), yield.getOperands()))
            if (isTile(arg))
              la.tie(arg, operand);
          return WalkResult::advance();
        })
        .Case([&](ScoreModOp mod) {
          mod.emitOpError("is lowered on warpgroup accumulators "
                          "(producer = tma programs, tiledattn-lower-mma) "
                          "so far, not on mma_sync fragments");
          return WalkResult::interrupt();
        })
        .Case<ConstantOp, LoadOp, scf::YieldOp>(
            [&](Operation *) { return WalkResult::advance(); })
        .Default([&](Operation *other) {
          auto touchesTile = [](TypeRange types) {
            return llvm::any_of(types, [](Type t) { return isa<TileType>(t); });
          };
          if (touchesTile(other->getOperandTypes()) ||
              touchesTile(other->getResultTypes())) {
            other->emitOpError("takes or makes a tile, which "
                               "convert-tiledattn-to-nvgpu cannot lower "
                               "outside the tiledattn ops, scf.for and "
                               "scf.yield");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
  });
  if (r.wasInterrupted())
    return failure();
  return la.solve();
}

/// A gpu.func named and typed like `func`, in a gpu.module of its own at the
/// end of `module`: a kernel of `threads` threads running `schedule`.
gpu::GPUFuncOp createKernel(OpBuilder &b, ModuleOp module, func::FuncOp func,
                            int64_t threads, ScheduleAttr schedule) {
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, func.getLoc(), func.getName());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       func.getFunctionType());
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  kernel->setAttr(kScheduleAttrName, schedule);
  return kernel;
}

/// A producer = tma program (warp roles, rings, asynchronous mmas) keeps its
/// ops: its body moves into a gpu.func, where tiledattn-lower-roles,
/// tiledattn-lower-rings and tiledattn-lower-mma lower them.
LogicalResult moveWarpSpecializedKernel(func::FuncOp func, ModuleOp module,
                                        ScheduleAttr schedule) {
  if (func.isExternal())
    return func.emitOpError("is marked ")
           << kKernelAttrName << " but has no body";
  if (func.getFunctionType().getNumResults() != 0)
    return func.emitOpError("a kernel function must return nothing");
  // The launch (grid, clusters, tiles per block) follows the schedule: a
  // ring shared by a cluster's blocks needs the clusters kv_multicast asks
  // for.
  bool clusterRings = false;
  func.walk([&](RingOp ring) { clusterRings |= ring.getClusterBlocks() > 1; });
  if (clusterRings && !schedule.getKvMulticast())
    return func.emitOpError(
        "has a ring shared by a cluster's blocks (cluster(2)), but its "
        "schedule launches no clusters: expected kv_multicast = true with it, "
        "but got false");
  bool walksTiles = false;
  func.walk([&](ForEachTileOp) { walksTiles = true; });
  if (schedule.getPersistent() && !walksTiles)
    return func.emitOpError(
        "has a schedule with persistent = true, but its program has no "
        "tiledattn.for_each_tile: the grid would hold one block per "
        "multiprocessor and each would run one tile; walk the tiles with "
        "tiledattn.for_each_tile (in each role) or leave persistent out");
  SmallVector<WarpSpecializeOp> roles;
  func.walk([&](WarpSpecializeOp op) { roles.push_back(op); });
  if (roles.size() != 1)
    return func.emitOpError("with a producer = tma schedule expects one "
                            "tiledattn.warp_specialize (the kernel's warp "
                            "roles), but found ")
           << roles.size();
  int64_t threads = roles.front().getNumThreads();
  if (threads != schedule.getNumThreads())
    return roles.front().emitOpError("has ")
           << roles.front().getConsumers() << " consumers, so the block has "
           << threads << " threads, but the kernel's schedule says warps = "
           << schedule.getWarps() << " (" << schedule.getNumThreads()
           << " threads)";

  OpBuilder b(module.getContext());
  gpu::GPUFuncOp kernel = createKernel(b, module, func, threads, schedule);
  // ctas_per_sm blocks share a multiprocessor: each thread starts with its
  // share of the registers (which setmaxnreg then moves between the roles),
  // and ptxas plans for that many blocks.
  if (int64_t entry = schedule.getEntryRegs())
    setEntryRegisters(kernel, entry, schedule.getCtasPerSm());
  kernel.getBody().front().erase();
  kernel.getBody().takeBody(func.getBody());
  for (Block &block : kernel.getBody()) {
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      continue;
    b.setInsertionPoint(ret);
    gpu::ReturnOp::create(b, ret.getLoc());
    ret.erase();
  }
  func.erase();
  return lowerTileLoops(kernel, schedule);
}

LogicalResult convertKernel(func::FuncOp func, ModuleOp module,
                            bool experimentalWgmma) {
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  if (!schedule)
    return func.emitOpError("is marked ") << kKernelAttrName << " but has no "
                                          << kScheduleAttrName << " attribute";
  if (schedule.getMma() == MmaKind::wgmma && experimentalWgmma &&
      schedule.getProducer() == Producer::cp_async) {
    if (schedule.getWarps() != 4 || schedule.getBlockM() != 64 ||
        schedule.getSwizzle() != 128)
      return func.emitOpError("mma = wgmma is lowered for one warpgroup "
                              "(warps = 4, block_m = 64) with swizzle = 128 "
                              "so far, but the schedule is ")
             << schedule;
  } else if (schedule.getMma() == MmaKind::wgmma && !experimentalWgmma &&
             schedule.getProducer() == Producer::cp_async) {
    return func.emitOpError(
        "mma = wgmma with producer = cp_async is lowered only with the "
        "experimental-wgmma option: it compiles and assembles but has not "
        "yet been checked on a GPU");
  } else if (schedule.getProducer() == Producer::tma) {
    return moveWarpSpecializedKernel(func, module, schedule);
  } else if (schedule.getMma() != MmaKind::mma_sync)
    return func.emitOpError("schedule asks for mma = ")
           << stringifyMmaKind(schedule.getMma())
           << ", producer = " << stringifyProducer(schedule.getProducer())
           << "; convert-tiledattn-to-nvgpu lowers only mma = mma_sync with "
              "producer = direct or cp_async so far";
  if (func.getFunctionType().getNumResults() != 0)
    return func.emitOpError("a kernel function must return nothing");
  // The emitter reads the entry block and maps only its ops: a declaration
  // crashed it, and further blocks were dropped (leaving branches to blocks
  // of the erased function).
  if (func.isExternal())
    return func.emitOpError("is marked ")
           << kKernelAttrName << " but has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("expected a kernel body of one block, but got ")
           << func.getBody().getBlocks().size();
  // Tiles live in registers of one thread block: a tile argument has no
  // fragments to start from (its uses crashed the emitter).
  for (BlockArgument arg : func.getArguments())
    if (isTile(arg))
      return func.emitOpError("expected kernel arguments that are not tiles, "
                              "but argument #")
             << arg.getArgNumber() << " is " << arg.getType();

  LayoutAssignment la;
  if (failed(collectLayouts(func, la)))
    return failure();

  OpBuilder b(module.getContext());
  gpu::GPUFuncOp kernel =
      createKernel(b, module, func, schedule.getNumThreads(), schedule);
  auto gpuModule = kernel->getParentOfType<gpu::GPUModuleOp>();

  MmaSyncEmitter emitter(b, schedule, la);
  if (failed(emitter.emitFunction(func, kernel))) {
    gpuModule.erase();
    return failure();
  }
  func.erase();
  return success();
}

class ConvertTiledAttnToNVGPUPass
    : public tiledattn::impl::ConvertTiledAttnToNVGPUPassBase<
          ConvertTiledAttnToNVGPUPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kKernelAttrName))
        kernels.push_back(func);
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    for (func::FuncOp func : kernels)
      if (failed(convertKernel(func, module, experimentalWgmma)))
        return signalPassFailure();
  }
};
} // namespace
