//===- MmaSyncWgmma.cpp - The experimental wgmma path -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mma = wgmma behind experimental-wgmma: one warpgroup, Q and P staged in
// shared memory, K and V from the cp.async ring.
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"
#include "tiledattn/Conversion/WgmmaHelpers.h"

using namespace mlir;
using namespace mlir::tiledattn;
using namespace mlir::tiledattn::mmasync;

void MmaSyncEmitter::setUpWgmma(Location loc) {
  baseAddress =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smemBase);
  Value rem =
      arith::RemUIOp::create(b, loc, baseAddress, idx(loc, kWgmmaAlignment));
  wgmmaPad = arith::RemUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, idx(loc, kWgmmaAlignment), rem),
      idx(loc, kWgmmaAlignment));
}

Value MmaSyncEmitter::wgmmaTile(Location loc, int64_t byteOffset,
                                Type elementType) {
  auto type = MemRefType::get(
      {kWgmmaTileBytes / 2}, elementType, MemRefLayoutAttrInterface(),
      cast<MemRefType>(smemBase.getType()).getMemorySpace());
  Value shift = wgmmaPad;
  if (byteOffset)
    shift = arith::AddIOp::create(b, loc, wgmmaPad, idx(loc, byteOffset));
  return memref::ViewOp::create(b, loc, type, smemBase, shift, ValueRange{});
}

LogicalResult MmaSyncEmitter::stageLhsForWgmma(LoadOp op, Value src,
                                               ArrayRef<Value> bh, Value row,
                                               Value seqLen, Value lastRow) {
  Location loc = op.getLoc();
  TileType tile = op.getResult().getType();
  if (failed(checkWgmmaTile(op, tile)))
    return failure();
  Value q = wgmmaTile(loc, 0, tile.getElementType());
  Value chunk = arith::RemUIOp::create(b, loc, tid, idx(loc, 8));
  Value firstRow = arith::DivUIOp::create(b, loc, tid, idx(loc, 8));
  SmallVector<Value> tokens;
  for (int64_t r0 = 0; r0 < 64; r0 += 16) {
    Value r = add(loc, firstRow, r0);
    Value global = arith::AddIOp::create(b, loc, row, r);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         global, seqLen);
    Value srcElements =
        arith::SelectOp::create(b, loc, inside, idx(loc, 8), idx(loc, 0));
    Value dst = arith::DivUIOp::create(b, loc, swizzledByte(loc, r, chunk),
                                       idx(loc, 2));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), q,
        ValueRange{dst}, src,
        ValueRange{bh[0], bh[1], clampRow(loc, global, lastRow),
                   arith::MulIOp::create(b, loc, chunk, idx(loc, 8))},
        b.getIndexAttr(8), srcElements, b.getUnitAttr()));
  }
  lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  smemLhs[op.getResult()] = 0;
  return success();
}

LogicalResult MmaSyncEmitter::emitWgmma(MmaOp op) {
  Location loc = op.getLoc();
  TileType lhs = op.getLhs().getType(), acc = op.getAcc().getType();
  if (failed(checkWgmmaTile(op, lhs)) || failed(checkWgmmaTile(op, acc)))
    return failure();
  auto rhs = deferred.find(op.getRhs());
  if (rhs == deferred.end() || !rhs->second.ring)
    return op.emitOpError("expected rhs to be a K/V tile staged by "
                          "producer = cp_async");
  Type elementType = lhs.getElementType();
  // A: Q, staged once, or P, written from registers now.
  int64_t aOffset;
  auto q = smemLhs.find(op.getLhs());
  if (q != smemLhs.end()) {
    aOffset = q->second;
  } else {
    aOffset = kWgmmaTileBytes;
    storeProbs(loc, frags[op.getLhs()], elementType);
  }
  const DeferredRhs &d = rhs->second;
  auto [ringOffset, stageBytes] = ringByteOffset[d.ring];
  Value bBase = arith::AddIOp::create(
      b, loc, idx(loc, kWgmmaFixedBytes + ringOffset),
      arith::MulIOp::create(b, loc, d.stage, idx(loc, stageBytes)));
  // K rows are K-major (head dim contiguous); V rows are MN-major.
  bool bTransposed = !d.transposed;
  const Regs &c = frags[op.getAcc()];
  Value accStruct =
      LLVM::UndefOp::create(b, loc, f32Struct(b.getContext(), c.size()));
  for (auto [i, v] : llvm::enumerate(c))
    accStruct = LLVM::InsertValueOp::create(b, loc, accStruct, v, i);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t k = 0; k < lhs.getNumCols() / 16; ++k) {
    // K-major: the next 16 elements of each 128-byte row (32 bytes on);
    // MN-major: the next 16 rows (2048 bytes on).
    Value descA = descriptor(loc, idx(loc, aOffset + 32 * k), /*leading=*/16,
                             /*stride=*/1024);
    Value descB =
        descriptor(loc, add(loc, bBase, bTransposed ? 2048 * k : 32 * k),
                   /*leading=*/bTransposed ? 1024 : 16, /*stride=*/1024);
    accStruct = wgmmaSmem(b, loc, accStruct, descA, descB, acc.getNumCols(),
                          elementType, /*accumulate=*/true,
                          /*bKMajor=*/!bTransposed);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  Regs out;
  for (int64_t i = 0, e = c.size(); i < e; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, accStruct, i));
  frags[op.getResult()] = std::move(out);
  return success();
}

void MmaSyncEmitter::storeProbs(Location loc, const Regs &p, Type elementType) {
  Value pTile = wgmmaTile(loc, kWgmmaTileBytes, elementType);
  Value rows[2] = {add(loc, warpRow, group),
                   add(loc, add(loc, warpRow, group), 8)};
  for (int64_t k = 0; k < static_cast<int64_t>(p.size()) / 4; ++k) {
    for (int64_t j = 0; j < 4; ++j) {
      Value r = rows[j % 2];
      Value chunk = idx(loc, 2 * k + j / 2);
      Value byte = add(loc, swizzledByte(loc, r, chunk),
                       arith::MulIOp::create(b, loc, twoT, idx(loc, 2)));
      Value element = arith::DivUIOp::create(b, loc, byte, idx(loc, 2));
      auto st = vector::StoreOp::create(b, loc, p[4 * k + j], pTile,
                                        ValueRange{element});
      st.setAlignmentAttr(b.getI64IntegerAttr(4));
    }
  }
  fenceProxyAsyncShared(b, loc);
  gpu::BarrierOp::create(b, loc);
}
