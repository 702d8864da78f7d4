//===- RingsToNVGPU.cpp - Rings to mbarriers and TMA -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-lower-rings: the ring ops of a gpu.func kernel become shared
// memory, a full and an empty mbarrier per slot, waits, arrives and TMA
// copies (the waits, arrives and slot/phase arithmetic: NVVMHelpers.h); a
// ring shared by a cluster's blocks (`cluster(2)`) also gets multicast
// copies, arrivals on the other block's barriers and cluster syncs. It
// also lays out the tiledattn.alloc tiles (after the rings) and issues the
// TMA copies of tiledattn.tma_store (whose registers tiledattn-lower-mma
// writes into the stage, before the copy) and its waits.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/NVVMHelpers.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_LOWERRINGSPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
/// Where a ring lives once lowered: its first slot's byte offset past the
/// alignment pad and its first barrier (the full barriers, `parts` per slot,
/// then the empty ones).
struct LoweredRing {
  RingType type;
  int64_t parts = 1;
  /// The blocks of a cluster that share each slot (`cluster`; 1: none).
  int64_t clusterBlocks = 1;
  int64_t offset = 0, firstBarrier = 0;
  /// Where its slots' tag words start (past the pad), if a put tags them.
  std::optional<int64_t> tagOffset;
  int64_t slotBytes() const { return type.getSlotType().getBytes(); }
  int64_t fullBarriers() const { return type.getDepth() * parts; }
  int64_t firstEmptyBarrier() const { return firstBarrier + fullBarriers(); }
};

/// The tensor-map operands the runtime knows, by kernel argument.
constexpr StringLiteral kTmaOperands[] = {"q", "k", "v", "o"};

class RingLowering {
public:
  RingLowering(gpu::GPUFuncOp kernel) : kernel(kernel), b(kernel) {}

  LogicalResult run() {
    Block &entry = kernel.getBody().front();
    SmallVector<RingOp> rings(entry.getOps<RingOp>());
    SmallVector<AllocOp> allocs(entry.getOps<AllocOp>());
    if (rings.empty() && allocs.empty())
      return success();
    WalkResult turns = kernel.walk([](Operation *op) {
      if (!isa<TurnOp, WarpSpecializeOp>(op))
        return WalkResult::advance();
      op->emitOpError("expected tiledattn-lower-roles to have run before "
                      "tiledattn-lower-rings (ring tokens pass through the "
                      "roles' regions)");
      return WalkResult::interrupt();
    });
    if (turns.wasInterrupted())
      return failure();
    if (kernel->hasAttr(kDynamicSmemAttrName))
      return kernel.emitOpError("already has ")
             << kDynamicSmemAttrName
             << ": tiledattn-lower-rings lays out the shared memory of "
                "kernels whose only shared memory is their rings and "
                "tiledattn.alloc tiles";
    Operation *first = rings.empty() ? allocs.front().getOperation()
                                     : rings.front().getOperation();
    loc = first->getLoc();
    b.setInsertionPoint(first);
    planRings(rings, allocs);
    if (failed(createTensorMaps()))
      return failure();
    emitSetup(allocs);
    // In program order; a put's body moves out as the put is lowered.
    SmallVector<Operation *> ops;
    kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<RingPutOp, RingGetOp, RingReleaseOp, RingSkipOp, RingTagOp,
              TmaStoreOp, TmaStoreWaitOp, ColumnsOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      loc = op->getLoc();
      LogicalResult result =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](RingPutOp put) { return lowerPut(put); })
              .Case([&](RingGetOp get) { return lowerGet(get); })
              .Case(
                  [&](RingReleaseOp release) { return lowerRelease(release); })
              .Case([&](RingSkipOp skip) { return lowerSkip(skip); })
              .Case([&](RingTagOp tag) { return lowerTag(tag); })
              .Case([&](TmaStoreOp store) { return lowerStoreCopy(store); })
              .Case([&](TmaStoreWaitOp wait) { return lowerStoreWait(wait); })
              .Case([&](ColumnsOp view) { return lowerColumns(view); });
      if (failed(result))
        return failure();
    }
    for (Operation *op : llvm::reverse(dead))
      op->erase();
    for (RingOp ring : rings)
      ring.erase();
    for (AllocOp alloc : allocs)
      alloc.erase();
    return success();
  }

private:
  gpu::GPUFuncOp kernel;
  OpBuilder b;
  Location loc = kernel.getLoc();
  llvm::MapVector<Value, LoweredRing> lowered;
  int64_t bytes = 0, numBarriers = 0;
  /// The blocks per cluster of the kernel's cluster rings (1: none).
  int64_t clusterBlocks = 1;
  /// With cluster rings: this block's rank in its cluster (an index).
  Value clusterRank;
  /// Each alloc tile's byte offset past the pad, in entry-block order.
  SmallVector<int64_t> allocOffsets;
  /// Shared memory (its memref and address) and its barriers, once
  /// emitSetup has made them.
  Value smem, smemAddress, pad, barriers, tid;
  /// A tensor map per (source argument, box rows): its descriptor value.
  llvm::MapVector<std::pair<unsigned, int64_t>, Value> maps;
  /// A slot once lowered: its byte offset past the pad and its index.
  struct Slot {
    LoweredRing ring;
    Value offset, slot;
  };
  DenseMap<Value, Slot> slots;
  /// The byte offset past the shared memory's base (pad included) of each
  /// slot or alloc tile, by the address value that replaced it.
  DenseMap<Value, Value> tileOffsets;
  /// Lowered ops, erased in reverse order once every op is lowered.
  SmallVector<Operation *> dead;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  Value mul(Value a, int64_t c) {
    return arith::MulIOp::create(b, loc, a, idx(c));
  }
  Value rem(Value a, int64_t c) {
    return arith::RemUIOp::create(b, loc, a, idx(c));
  }
  Value eq(Value a, int64_t c) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, idx(c));
  }
  template <typename Fn>
  void ifThen(Value cond, Fn body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }

  /// Slots one after another, each ring on a 1 KiB boundary (the swizzle's
  /// period, from which TMA and wgmma derive it), then the alloc tiles, each
  /// on one too; barriers in ring order.
  void planRings(ArrayRef<RingOp> rings, ArrayRef<AllocOp> allocs) {
    for (RingOp ring : rings) {
      LoweredRing l;
      l.type = cast<RingType>(ring.getType());
      l.parts = ring.getNumParts();
      l.clusterBlocks = ring.getClusterBlocks();
      clusterBlocks = std::max(clusterBlocks, l.clusterBlocks);
      l.offset = llvm::alignTo(bytes, kSwizzleAlignmentBytes);
      l.firstBarrier = numBarriers;
      bytes = l.offset + l.type.getDepth() * l.slotBytes();
      numBarriers += l.fullBarriers() + l.type.getDepth();
      lowered[ring.getResult()] = l;
    }
    for (AllocOp alloc : allocs) {
      int64_t offset = llvm::alignTo(bytes, kSwizzleAlignmentBytes);
      allocOffsets.push_back(offset);
      bytes = offset + alloc.getType().getBytes();
    }
    // A word per slot of each ring whose puts leave a tag, after the rest.
    kernel.walk([&](RingPutOp put) {
      LoweredRing &l = lowered[put.getRing()];
      if (!put.getTag() || l.tagOffset)
        return;
      l.tagOffset = llvm::alignTo(bytes, 16);
      bytes = *l.tagOffset + 4 * l.type.getDepth();
    });
    kernel->setAttr(kDynamicSmemAttrName,
                    b.getI64IntegerAttr(bytes + kSwizzleAlignmentBytes));
  }

  /// An !llvm.ptr parameter per TMA source and box, appended in the order
  /// the copies appear, and its entry in tiledattn.tensor_maps.
  LogicalResult createTensorMaps() {
    SmallVector<Attribute> entries;
    if (auto existing = kernel->getAttrOfType<ArrayAttr>(kTensorMapsAttrName))
      entries.append(existing.begin(), existing.end());
    Block &entry = kernel.getBody().front();
    // A map per (argument, box rows): TMA loads fill slots in boxes of
    // their pieces' rows, a TMA store copies a warpgroup's 64.
    auto mapFor = [&](Operation *op, Value tensor, StringRef name, int64_t rows,
                      Type elementType) {
      auto arg = dyn_cast<BlockArgument>(tensor);
      if (!arg || arg.getOwner() != &entry ||
          arg.getArgNumber() >= std::size(kTmaOperands)) {
        op->emitOpError("expected the ")
            << name
            << " to be one of the kernel's first four arguments (q, k, v, "
               "o), which the runtime builds tensor maps for";
        return WalkResult::interrupt();
      }
      auto key = std::make_pair(arg.getArgNumber(), rows);
      if (maps.count(key))
        return WalkResult::advance();
      auto ptr = LLVM::LLVMPointerType::get(b.getContext());
      unsigned index = kernel.getNumArguments();
      if (failed(kernel.insertArgument(index, ptr, {}, op->getLoc())))
        return WalkResult::interrupt();
      Value pointer = kernel.getArgument(index);
      maps[key] = UnrealizedConversionCastOp::create(
                      b, loc, tmaDescriptorType(b, elementType, rows), pointer)
                      .getResult(0);
      entries.push_back(
          tensorMapEntry(b, kTmaOperands[arg.getArgNumber()], rows));
      return WalkResult::advance();
    };
    WalkResult walk = kernel.walk([&](Operation *op) {
      if (auto load = dyn_cast<TmaLoadOp>(op))
        return mapFor(op, load.getSource(), "source",
                      boxRows(load, sharesOf(load)),
                      load.getDest().getType().getElementType());
      if (auto store = dyn_cast<TmaStoreOp>(op))
        return mapFor(op, store.getDest(), "dest", kWarpgroupRows,
                      store.getStage().getType().getElementType());
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (!entries.empty())
      kernel->setAttr(kTensorMapsAttrName, b.getArrayAttr(entries));
    return success();
  }

  /// The address value of the tile at byte `offset` past the pad, cast to
  /// `type` (what tiledattn-lower-mma reads), noted in tileOffsets.
  Value tileAddress(Type type, Value offset) {
    Value address = add(smemAddress, offset);
    Value cast =
        UnrealizedConversionCastOp::create(b, loc, type, address).getResult(0);
    tileOffsets[cast] = offset;
    return cast;
  }

  /// The byte offset of `tile` (`op`'s operand, called `what`), a ring
  /// slot or alloc tile lowered before `op`; else a diagnostic.
  FailureOr<Value> offsetOf(Operation *op, Value tile, StringRef what) {
    if (Value offset = tileOffsets.lookup(tile))
      return offset;
    return op->emitOpError("expected the ")
           << what
           << " to be a ring slot taken by tiledattn.ring.get or a "
              "tiledattn.alloc tile";
  }

  /// Shared memory, the alloc tiles' addresses, the barriers, and their
  /// initialization by thread 0 before any role runs (fenced for the async
  /// proxy, then a block-wide barrier).
  void emitSetup(ArrayRef<AllocOp> allocs) {
    SwizzledSharedMemory shared =
        createSwizzledSharedMemory(b, loc, kSwizzleAlignmentBytes);
    smem = shared.smem;
    smemAddress = shared.address;
    pad = shared.pad;
    for (auto [i, alloc] : llvm::enumerate(allocs)) {
      AllocOp tile = alloc;
      tile.getTile().replaceAllUsesWith(
          tileAddress(tile.getType(), add(pad, idx(allocOffsets[i]))));
    }
    barriers = createBarrierGroup(b, loc, numBarriers);
    tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    if (clusterBlocks > 1)
      clusterRank = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          NVVM::ClusterId::create(b, loc, b.getI32Type()).getResult());
    ifThen(eq(tid, 0), [&] {
      for (auto &[ring, l] : lowered) {
        int64_t depth = l.type.getDepth();
        int64_t releases = cast<RingOp>(ring.getDefiningOp()).getReleases();
        for (int64_t i = 0; i < l.fullBarriers(); ++i)
          nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(1),
                                        idx(l.firstBarrier + i), Value());
        // A cluster ring's slot is empty once every block's readers
        // released it.
        for (int64_t s = 0; s < depth; ++s)
          nvgpu::MBarrierInitOp::create(
              b, loc, barriers, idx(releases * l.clusterBlocks),
              idx(l.firstEmptyBarrier() + s), Value());
      }
      for (auto &[key, map] : maps)
        nvgpu::TmaPrefetchOp::create(b, loc, map, Value());
      fenceProxyAsyncShared(b, loc); // mbarrier init before TMA uses them
      // The other blocks' copies and releases complete these too.
      if (clusterBlocks > 1)
        NVVM::FenceMbarrierInitOp::create(b, loc);
    });
    gpu::BarrierOp::create(b, loc);
    if (clusterBlocks == 1)
      return;
    // Every block's barriers are set up before any block's copy or release
    // reaches them, and none exits while another may still arrive on its
    // barriers.
    syncCluster();
    kernel.walk([&](gpu::ReturnOp ret) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ret);
      syncCluster();
    });
    kernel->setAttr(
        NVVM::NVVMDialect::getClusterDimAttrName(),
        b.getDenseI32ArrayAttr({static_cast<int32_t>(clusterBlocks), 1, 1}));
  }

  /// Every thread of the cluster's blocks meets here. Relaxed: what must be
  /// seen across the cluster is the barriers' init, which
  /// fence.mbarrier_init publishes (a release arrive fences the whole GPU).
  void syncCluster() {
    NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  }

  /// One arrival on the other block's copy of barrier `index` (cluster
  /// pairs: the block of rank `clusterRank xor 1`).
  void arriveOnPeer(Value index) {
    MLIRContext *ctx = b.getContext();
    Value address =
        nvgpu::MBarrierGetOp::create(b, loc, b.getI32Type(), barriers, index);
    Value local = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 3), address);
    Value peer = arith::XOrIOp::create(
        b, loc,
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), clusterRank),
        arith::ConstantIntOp::create(b, loc, 1, 32));
    Value remote = NVVM::MapaOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7), local, peer);
    // CTA scope, as for a local arrive: the slot's reads are done (the
    // wgmma wait retired them). Cluster scope made ptxas fence the whole
    // GPU (MEMBAR.ALL.GPU) per arrive: 20-30% slower (fourteenth session).
    NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                   NVVM::MemScopeKind::CTA);
  }

  /// One reader's release of `slot` (an index value) of `l`: an arrival on
  /// its empty barrier and, on a cluster ring, on the other block's copy
  /// (whose producer copies into this block's slot too).
  void arriveOnEmpty(const LoweredRing &l, Value slot) {
    Value empty = barrier(l.firstEmptyBarrier(), slot);
    arriveOn(b, loc, barriers, empty);
    if (l.clusterBlocks > 1)
      arriveOnPeer(empty);
  }

  /// Barrier `first + slot` (slot an index value).
  Value barrier(int64_t first, Value slot) { return add(slot, idx(first)); }

  /// The full barrier of part `part` of `slot`.
  Value fullBarrier(const LoweredRing &l, Value slot, int64_t part) {
    if (l.parts == 1)
      return barrier(l.firstBarrier, slot);
    return add(mul(slot, l.parts), idx(l.firstBarrier + part));
  }

  Slot slotAt(const LoweredRing &l, Value slot) {
    return {l, add(mul(slot, l.slotBytes()), idx(l.offset)), slot};
  }

  /// The slot of `position` in `l` once empty (waited for).
  Slot emptySlot(const LoweredRing &l, Value position) {
    auto [slot, parity] =
        ringSlotAndParity(b, loc, position, l.type.getDepth());
    waitParity(b, loc, barriers, barrier(l.firstEmptyBarrier(), slot),
               emptyParity(b, loc, parity));
    return slotAt(l, slot);
  }

  /// Waits for the slot (and the `with` slot) to be empty, announces each
  /// of its parts' bytes on the part's full barrier, and inlines the body,
  /// whose copies complete there, part by part (only the put's parts'
  /// columns). The `with` slot's own full barrier completes once they are
  /// issued.
  LogicalResult lowerPut(RingPutOp put) {
    const LoweredRing &l = lowered.lookup(put.getRing());
    Slot s = emptySlot(l, put.getPosition());
    std::optional<Slot> with;
    if (put.getWithRing())
      with =
          emptySlot(lowered.lookup(put.getWithRing()), put.getWithPosition());
    // The tag before the slot is full (the arrive releases it).
    if (Value tag = put.getTag())
      memref::StoreOp::create(b, loc, tag, tagWord(l, s.slot), idx(0));
    auto [first, end] = put.getPartRange();
    int64_t partBytes =
        (l.slotBytes() + (with ? with->ring.slotBytes() : 0)) / l.parts;
    Block &body = put.getBody().front();
    SmallVector<TmaLoadOp> loads(body.getOps<TmaLoadOp>());
    SmallVector<Value> full;
    for (int64_t part = first; part < end; ++part) {
      full.push_back(fullBarrier(l, s.slot, part));
      if (!loads.empty())
        nvgpu::MBarrierArriveExpectTxOp::create(
            b, loc, barriers, idx(partBytes), full.back(), Value());
      else // A tag alone: full at once.
        arriveOn(b, loc, barriers, full.back());
    }
    dead.push_back(put); // after the body's ops, which use its slots
    for (Operation &op : llvm::make_early_inc_range(body)) {
      op.moveBefore(put);
      if (isa<TmaLoadOp>(op))
        dead.push_back(&op);
    }
    b.setInsertionPoint(put);
    for (int64_t part = first; part < end; ++part)
      for (TmaLoadOp load : loads)
        emitLoad(load, load.getDest() == put.getSlot() ? s : *with,
                 part * l.type.getSlotType().getAtoms() / l.parts,
                 (part + 1) * l.type.getSlotType().getAtoms() / l.parts,
                 full[part - first]);
    if (with)
      arriveOn(b, loc, barriers, fullBarrier(with->ring, with->slot, 0));
    return success();
  }

  /// A TMA box of `rows` x 64 columns of shared memory at byte `offset`
  /// (past the shared memory's base, pad included).
  Value atomView(Type elementType, int64_t rows, Value offset) {
    auto view = MemRefType::get(
        {1, 1, rows, 64}, elementType, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup));
    return memref::ViewOp::create(b, loc, view, smem, offset, ValueRange{});
  }

  /// One TMA copy per 64-column atom [firstAtom, endAtom) of the slot and
  /// row piece, completing on `full`: atoms `rows` x 128 bytes apart, the
  /// load's pieces one after another in each.
  void emitLoad(TmaLoadOp load, const Slot &s, int64_t firstAtom,
                int64_t endAtom, Value full) {
    SmemType type = load.getDest().getType();
    int64_t rows = type.getRows();
    int64_t pieceRows = boxRows(load, s.ring.clusterBlocks);
    auto arg = cast<BlockArgument>(load.getSource());
    Value map = maps.lookup({arg.getArgNumber(), pieceRows});
    // A cluster ring: this block copies its share of the rows (its rank's)
    // into the slot of every block of the cluster.
    Value share, multicast;
    if (s.ring.clusterBlocks > 1) {
      share = mul(clusterRank, pieceRows);
      multicast = arith::ConstantIntOp::create(
          b, loc, (1 << s.ring.clusterBlocks) - 1, 16);
    }
    for (int64_t a = firstAtom; a < endAtom; ++a)
      for (auto [i, row] : llvm::enumerate(load.getRows())) {
        Value offset = add(s.offset, idx((a * rows + i * pieceRows) * 128));
        Value first = row;
        if (share) {
          offset = add(offset, mul(share, 128));
          first = add(row, share);
        }
        Value dest =
            atomView(type.getElementType(), pieceRows, add(pad, offset));
        nvgpu::TmaAsyncLoadOp::create(
            b, loc, dest, barriers, map,
            ValueRange{idx(64 * a), first, load.getHead(), load.getBatch()},
            full, multicast, Value());
      }
  }

  /// The rows of each of a load's boxes: its slot's, cut into its pieces,
  /// and on a ring shared by `shares` blocks into one share per block.
  static int64_t boxRows(TmaLoadOp load, int64_t shares) {
    return load.getDest().getType().getRows() /
           static_cast<int64_t>(load.getRows().size()) / shares;
  }

  /// The blocks that share the slot a load (still in its put) fills.
  int64_t sharesOf(TmaLoadOp load) {
    auto put = cast<RingPutOp>(load->getParentOp());
    return load.getDest() == put.getSlot()
               ? lowered.lookup(put.getRing()).clusterBlocks
               : 1;
  }

  /// Waits for the slot to be full (with `uniform`, at a position known
  /// warp-uniform), each of its parts. A partial get does not wait: the
  /// mmas that name its token in `after_parts` do, tiledattn-lower-mma
  /// placing the waits (partWaits).
  LogicalResult lowerGet(RingGetOp get) {
    const LoweredRing &l = lowered.lookup(get.getRing());
    Value position = get.getPosition();
    if (get.getUniform())
      position = warpUniformIndex(b, loc, position);
    auto [slot, parity] =
        ringSlotAndParity(b, loc, position, l.type.getDepth());
    if (get.getPartial())
      partWaits(get, l, slot, parity);
    else
      for (int64_t part = 0; part < l.parts; ++part)
        waitParity(b, loc, barriers, fullBarrier(l, slot, part), parity);
    Slot s = slotAt(l, slot);
    slots[get.getToken()] = s;
    // Readers (tiledattn-lower-mma) take the slot's shared-memory address.
    if (!get.getSlot().use_empty())
      get.getSlot().replaceAllUsesWith(
          tileAddress(get.getSlot().getType(), add(pad, s.offset)));
    dead.push_back(get);
    return success();
  }

  /// The token of a partial get, where an mma names it in `after_parts`,
  /// becomes what tiledattn-lower-mma waits on before the k-steps of each
  /// part: a cast of the barriers, the slot's first full barrier, the
  /// phase's parity and the number of parts (PartWaits in
  /// NVVMHelpers.h).
  void partWaits(RingGetOp get, const LoweredRing &l, Value slot,
                 Value parity) {
    Value waits =
        PartWaits{barriers, fullBarrier(l, slot, 0), parity, l.parts}.cast(
            b, loc, get.getToken().getType());
    get.getToken().replaceUsesWithIf(
        waits, [](OpOperand &use) { return isa<MmaAsyncOp>(use.getOwner()); });
  }

  /// Lane 0 of each warp arrives on the slot's empty barrier.
  LogicalResult lowerRelease(RingReleaseOp release) {
    const Slot &s = slots[getOfToken(release.getToken()).getToken()];
    Value lane = rem(tid, 32);
    ifThen(eq(lane, 0), [&] { arriveOnEmpty(s.ring, s.slot); });
    dead.push_back(release);
    return success();
  }

  /// The i32 tag word of `slot` (an index value) of `l`, as a memref<1xi32>.
  Value tagWord(const LoweredRing &l, Value slot) {
    auto type =
        MemRefType::get({1}, b.getI32Type(), MemRefLayoutAttrInterface(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup));
    Value offset = add(pad, add(mul(slot, 4), idx(*l.tagOffset)));
    return memref::ViewOp::create(b, loc, type, smem, offset, ValueRange{});
  }

  /// The slot's tag word, read once the get has waited.
  LogicalResult lowerTag(RingTagOp tag) {
    const Slot &s = slots[getOfToken(tag.getToken()).getToken()];
    if (!s.ring.tagOffset)
      return tag.emitOpError("expected a tiledattn.ring.put with a tag on "
                             "this ring (no put leaves one to read)");
    tag.getTag().replaceAllUsesWith(
        memref::LoadOp::create(b, loc, tagWord(s.ring, s.slot), idx(0))
            .getResult());
    dead.push_back(tag);
    return success();
  }

  /// The skipping readers' arrivals on the slot's empty barrier, made by
  /// the calling thread.
  LogicalResult lowerSkip(RingSkipOp skip) {
    const LoweredRing &l = lowered.lookup(skip.getRing());
    Value slot = rem(skip.getPosition(), l.type.getDepth());
    for (uint64_t i = 0; i < skip.getReaders(); ++i)
      arriveOnEmpty(l, slot);
    dead.push_back(skip);
    return success();
  }

  /// After the store (whose rows tiledattn-lower-mma writes into the stage
  /// with stmatrix): the writes fenced for the async proxy, the warpgroup
  /// synced, then its first thread copies one 64 x 64 box per atom and
  /// commits them as a bulk group. The op stays for tiledattn-lower-mma.
  LogicalResult lowerStoreCopy(TmaStoreOp store) {
    FailureOr<Value> offset = offsetOf(store, store.getStage(), "stage");
    if (failed(offset))
      return failure();
    SmemType stage = store.getStage().getType();
    int64_t rows = kWarpgroupRows;
    auto dest = cast<BlockArgument>(store.getDest());
    Value map = maps.lookup({dest.getArgNumber(), rows});
    b.setInsertionPointAfter(store);
    fenceProxyAsyncShared(b, loc); // the stmatrix before the TMA reads
    syncWarpgroup(b, loc, tid);
    Value first = add(*offset, mul(store.getStageRow(), 128));
    int64_t atoms = store.getAcc().getType().getNumCols() / 64;
    ifThen(eq(rem(tid, 128), 0), [&] {
      for (int64_t a = 0; a < atoms; ++a) {
        Value source = atomView(stage.getElementType(), rows,
                                add(first, idx(a * stage.getRows() * 128)));
        nvgpu::TmaAsyncStoreOp::create(b, loc, source, map,
                                       ValueRange{idx(64 * a), store.getRow(),
                                                  store.getHead(),
                                                  store.getBatch()},
                                       Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
    return success();
  }

  /// A view of a tile's columns: the tile's address, `col / 64` atoms of
  /// its rows on (the tile's, a slot or alloc tile, lowered before it in
  /// program order).
  LogicalResult lowerColumns(ColumnsOp view) {
    FailureOr<Value> offset = offsetOf(view, view.getTile(), "tile");
    if (failed(offset))
      return failure();
    int64_t atomBytes = view.getTile().getType().getRows() * 128;
    Value atoms = arith::DivUIOp::create(b, loc, view.getCol(), idx(64));
    view.getView().replaceAllUsesWith(tileAddress(
        view.getView().getType(), add(*offset, mul(atoms, atomBytes))));
    dead.push_back(view);
    return success();
  }

  /// The thread that issued the warpgroup's copies waits until they have
  /// read shared memory; the warpgroup then syncs.
  LogicalResult lowerStoreWait(TmaStoreWaitOp wait) {
    ifThen(eq(rem(tid, 128), 0), [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                           b.getUnitAttr());
    });
    syncWarpgroup(b, loc, tid);
    dead.push_back(wait);
    return success();
  }
};

class LowerRingsPass
    : public tiledattn::impl::LowerRingsPassBase<LowerRingsPass> {
public:
  void runOnOperation() override {
    if (failed(lowerEachKernel<RingOp>(
            getOperation(),
            "tiledattn-lower-rings lowers kernels after "
            "convert-tiledattn-to-nvgpu made them",
            [](gpu::GPUFuncOp k) { return RingLowering(k).run(); })))
      signalPassFailure();
  }
};
} // namespace
