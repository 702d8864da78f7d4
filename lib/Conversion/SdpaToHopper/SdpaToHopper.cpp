//===- SdpaToHopper.cpp - Warp-specialized Hopper attention -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers a tiledattn.sdpa whose schedule says producer = tma straight to a
// warp-specialized gpu.func (FlashAttention-3's arrangement):
//
//   warpgroup 0 (producer): setmaxnreg.dec, then one thread issues TMA loads
//     of Q once and of K and V into a ring of num_stages buffers, each stage
//     guarded by a "full" mbarrier (TMA transaction count) and an "empty"
//     one (consumers arrive when the stage's wgmmas have read it);
//   warpgroups 1..C (consumers): setmaxnreg.inc, 64 query rows each;
//     S = Q.K^T by wgmma with both operands in shared memory, the online
//     softmax in registers (exp2 with the scale folded in), then O += P.V by
//     wgmma with P straight from registers (the accumulator layout of S is
//     the A-fragment layout, so no shared-memory round trip).
//
// All shared tiles use TMA's 128-byte swizzle in 64-column atoms
// ([atom][rows][64] elements), which is what wgmma's 128B-swizzled
// descriptors read: K-major for Q and K, MN-major (transposed B) for V.
// The tensor maps arrive as grid-constant kernel parameters built by the
// runtime (see tiledattn.tensor_maps on the kernel).
//
// Schedule options: pingpong (the consumers take turns issuing wgmmas, on
// named barriers), overlap_softmax (S of block j and P.V of block j-1 issued
// together, block j's softmax under them), ctas_per_sm (.maxnreg and
// .minnctapersm for two resident blocks), persistent (one block per
// multiprocessor loops over the tiles; a "Q empty" mbarrier lets the
// producer load the next tile's Q once the consumers' last Q.K^T of this
// one has read it, and the K/V ring runs on across tiles), q_buffers (with
// 2, tiles alternate between two Q buffers, so the next tile's Q loads
// while this one runs), dynamic_tiles (the producer takes each next tile
// from a global counter and hands its index to the consumers in a shared
// slot next to the tile's Q, published by the Q-full barrier),
// conditional_rescale (O's rescale after a block only when a warp vote says
// some row got a new maximum), overlap_epilogue (the rows' totals and lse
// under the tile's last P.V), stage_o_in_q (with two Q buffers, O staged
// for its TMA store in its tile's own Q buffer, returned to the producer
// after the next tile's first block).
//
//===----------------------------------------------------------------------===//

#include "HopperKernelEmitter.h"
#include "tiledattn/Conversion/Passes.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_CONVERTSDPATOHOPPERPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

using namespace mlir::tiledattn::hopper;

void HopperKernelEmitter::emit() {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  q = entry.getArgument(0);
  k = entry.getArgument(1);
  v = entry.getArgument(2);
  o = entry.getArgument(3);
  lse = entry.getArgument(4);
  scale = entry.getArgument(5);
  unsigned firstMap = 6;
  if (schedule.getDynamicTiles())
    tileCounter = entry.getArgument(firstMap++);
  if (schedule.getSplitTail())
    workspace = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
        entry.getArgument(firstMap++));
  qMapPointer = entry.getArgument(firstMap);
  qMap = UnrealizedConversionCastOp::create(b, loc, mapType(qBoxRows()),
                                            qMapPointer)
             .getResult(0);
  kMapPointer = entry.getArgument(firstMap + 1);
  vMapPointer = entry.getArgument(firstMap + 2);
  kMap = UnrealizedConversionCastOp::create(b, loc, mapType(kvBoxRows()),
                                            kMapPointer)
             .getResult(0);
  vMap = UnrealizedConversionCastOp::create(b, loc, mapType(kvBoxRows()),
                                            vMapPointer)
             .getResult(0);
  if (schedule.getTmaStore())
    oMap = UnrealizedConversionCastOp::create(b, loc, mapType(64),
                                              entry.getArgument(firstMap + 3))
               .getResult(0);

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  batches = memref::DimOp::create(b, loc, q, 0);
  headsQ = memref::DimOp::create(b, loc, q, 1);
  headsKV = memref::DimOp::create(b, loc, k, 1);
  seqQ = memref::DimOp::create(b, loc, q, 2);
  seqK = memref::DimOp::create(b, loc, k, 2);
  if (schedule.getKvMulticast())
    clusterRank =
        toIndex(NVVM::ClusterId::create(b, loc, b.getI32Type()).getResult());
  if (!schedule.getPersistent())
    setTileOfBlock();

  SwizzledSharedMemory shared =
      createSwizzledSharedMemory(b, loc, kSwizzleAlignmentBytes);
  smem = shared.smem;
  smemAddress = shared.address;
  pad = shared.pad;

  barriers = createBarrierGroup(b, loc, numBarriers());
  ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
    for (int64_t i = 0; i < numBarriers(); ++i) {
      // Full barriers complete on the producer's arrive plus the TMA bytes;
      // empty ones when every consumer warp has released the stage (or Q).
      int64_t count = isEmptyBarrier(i) ? 4 * consumers : 1;
      if (schedule.getKvMulticast() && isKVEmptyBarrier(i))
        count *= 2;
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(count), idx(i),
                                    Value());
    }
    for (Value map : {qMap, kMap, vMap, oMap})
      if (map)
        nvgpu::TmaPrefetchOp::create(b, loc, map, Value());
    fenceProxyAsyncShared(b, loc); // mbarrier init before TMA uses them
    // kv_multicast: the peer's TMA and consumers complete these too.
    if (schedule.getKvMulticast())
      NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (schedule.getRowSumMma()) { // The ones, one word per thread.
    int64_t one = elementType.isBF16() ? 0x3F80 : 0x3C00;
    ifThen(cmp(arith::CmpIPredicate::ult, tid, idx(kOnesTileBytes / 4)), [&] {
      LLVM::StoreOp::create(b, loc, i32(one << 16 | one),
                            sharedPointer(add(mul(tid, 4), idx(onesOffset()))));
      fenceProxyAsyncShared(b, loc); // before wgmma reads them
    });
  }
  gpu::BarrierOp::create(b, loc);
  syncCluster(); // The peer's barriers are initialized before any arrive.

  Value warpgroup = div(tid, 128);
  Value isProducer = cmp(arith::CmpIPredicate::eq, warpgroup, idx(0));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    emitProducer();
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    emitConsumer(arith::SubIOp::create(b, loc, warpgroup, idx(1)));
  }
  // The peer's consumers may still arrive on this block's barriers.
  syncCluster();
  gpu::ReturnOp::create(b, loc);
}

namespace {
LogicalResult lowerSdpa(func::FuncOp func, SdpaOp op, ModuleOp module,
                        bool registerBudgets) {
  if (failed(verifyKernelFunction(func)))
    return failure();
  // The kernel reads its operands from the function's arguments.
  Value operands[] = {op.getQ(), op.getK(),   op.getV(),
                      op.getO(), op.getLse(), op.getScale()};
  for (auto [i, value] : llvm::enumerate(operands)) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        arg.getArgNumber() != i)
      return op.emitOpError("with producer = tma expects its operands to be "
                            "the function's arguments in order (q, k, v, o, "
                            "lse, scale), but operand #")
             << i << " is not argument #" << i;
  }
  if (func.getNumArguments() != 6)
    return func.emitOpError("with producer = tma expects 6 arguments (q, k, "
                            "v, o, lse, scale), but got ")
           << func.getNumArguments();

  ScheduleAttr schedule = op.getSchedule();
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, func.getLoc(), func.getName());
  b.setInsertionPointToStart(gpuModule.getBody());
  SmallVector<Type> inputs(func.getFunctionType().getInputs());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  // dynamic_tiles: the tile counter, a zeroed i32 in global memory. Then the
  // tensor maps, which MarkTensorMapParams expects last.
  if (schedule.getDynamicTiles())
    inputs.push_back(ptr);
  if (schedule.getSplitTail()) // split_tail: the workspace.
    inputs.push_back(ptr);
  inputs.append({ptr, ptr, ptr});
  if (schedule.getTmaStore())
    inputs.push_back(ptr);
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       b.getFunctionType(inputs, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(schedule.getNumThreads()), 1, 1}));
  kernel->setAttr(kScheduleAttrName, schedule);
  if (schedule.getKvMulticast()) // Neighbouring query tiles, in pairs.
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr({2, 1, 1}));
  // Several blocks per multiprocessor: a fixed register count at entry
  // (which setmaxnreg then moves per role) and the occupancy to plan for.
  if (int64_t entry = schedule.getEntryRegs())
    setEntryRegisters(kernel, entry, schedule.getCtasPerSm());

  OpBuilder inner(module.getContext());
  HopperKernelEmitter emitter(inner, op, kernel, registerBudgets);
  emitter.emit();
  kernel->setAttr("tiledattn.dynamic_smem_bytes",
                  b.getI64IntegerAttr(emitter.dynamicSmemBytes()));
  if (schedule.getSplitTail())
    kernel->setAttr(kWorkspaceBytesAttrName,
                    b.getI64IntegerAttr(emitter.workspaceBytesPerBlock()));
  // What the runtime must build: one tensor map per operand, in parameter
  // order, boxes of 64 columns (128 bytes, the swizzle span) by rows.
  auto map = [&](StringRef operand, int64_t rows) {
    return tensorMapEntry(b, operand, rows);
  };
  SmallVector<Attribute> maps = {map("q", emitter.qBoxRows()),
                                 map("k", emitter.kvBoxRows()),
                                 map("v", emitter.kvBoxRows())};
  if (schedule.getTmaStore()) // One box per consumer and 64-column atom.
    maps.push_back(map("o", 64));
  kernel->setAttr(kTensorMapsAttrName, b.getArrayAttr(maps));
  func.erase();
  return success();
}

class ConvertSdpaToHopperPass
    : public tiledattn::impl::ConvertSdpaToHopperPassBase<
          ConvertSdpaToHopperPass> {
public:
  using ConvertSdpaToHopperPassBase::ConvertSdpaToHopperPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, SdpaOp>> work;
    module.walk([&](SdpaOp op) {
      // A score_mod, head dim 192 or a value head dim of its own goes
      // through tiledattn-tile-sdpa's tile program.
      if (!isLoweredByHopperEmitter(op))
        return;
      auto func = dyn_cast<func::FuncOp>(op->getParentOp());
      // The default pipeline: the tile program where it writes the schedule,
      // unless the function keeps this pass's kernel.
      if (unexpressedOnly && op.getSchedule().getHopperRefinements().empty() &&
          !(func && func->hasAttr(kHopperEmitterAttrName)))
        return;
      if (func)
        work.push_back({func, op});
    });
    if (work.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    for (auto [func, op] : work) {
      if (failed(lowerSdpa(func, op, module, registerBudgets)))
        return signalPassFailure();
    }
  }
};
} // namespace
