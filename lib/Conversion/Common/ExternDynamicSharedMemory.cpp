//===- ExternDynamicSharedMemory.cpp - extern __shared__ ---------*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-extern-dynamic-shared-memory: the zero-length shared arrays
// upstream makes for gpu.dynamic_shared_memory get external linkage, so
// that NVPTX declares them `.extern .shared ... []` (the dynamic shared
// memory, after the static variables) instead of demoting them to a
// one-byte static that ptxas places beside the mbarriers (see the pass
// description).
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDMEMORYPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;

namespace {
class ExternDynamicSharedMemoryPass
    : public tiledattn::impl::ExternDynamicSharedMemoryPassBase<
          ExternDynamicSharedMemoryPass> {
public:
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (!array || array.getNumElements() != 0 ||
          global.getAddrSpace() != NVVM::NVVMMemorySpace::Shared)
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};
} // namespace
