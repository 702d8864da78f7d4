//===- MarkTensorMapParams.cpp - Tensor maps as grid constants --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime passes each TMA tensor map (a 128-byte CUtensorMap) by value
// as a kernel parameter; TMA then reads it through the parameter's generic
// address (cvta.param), which NVPTX allows for byval parameters marked
// nvvm.grid_constant. gpu.func drops argument attributes when it becomes an
// llvm.func, so the marks go on here, after that lowering.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tiledattn {
#define GEN_PASS_DEF_MARKTENSORMAPPARAMSPASS
#include "tiledattn/Conversion/Passes.h.inc"
} // namespace mlir::tiledattn

using namespace mlir;
using namespace mlir::tiledattn;

namespace {
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlignment = 64;

class MarkTensorMapParamsPass
    : public tiledattn::impl::MarkTensorMapParamsPassBase<
          MarkTensorMapParamsPass> {
public:
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto maps = func->getAttrOfType<ArrayAttr>(kTensorMapsAttrName);
      if (!maps)
        continue;
      unsigned numArgs = func.getNumArguments();
      if (maps.size() > numArgs) {
        func.emitOpError("lists ")
            << maps.size() << " tensor maps in " << kTensorMapsAttrName
            << " but has only " << numArgs << " parameters";
        return signalPassFailure();
      }
      Builder b(func.getContext());
      auto bytes = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
      for (unsigned i = numArgs - maps.size(); i < numArgs; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitOpError("expected tensor-map parameter #")
              << i << " to be a pointer, but got "
              << func.getArgument(i).getType();
          return signalPassFailure();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(bytes));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlignment));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
    }
  }
};
} // namespace
