//===- InitAllTiledAttn.cpp - Register everything tiledattn uses -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "tiledattn/InitAllTiledAttn.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnDialect.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"
#include "tiledattn/Pipelines/Pipelines.h"

void mlir::tiledattn::registerAllTiledAttnDialects(DialectRegistry &registry) {
  registry
      .insert<TiledAttnDialect, arith::ArithDialect, func::FuncDialect,
              gpu::GPUDialect, index::IndexDialect, LLVM::LLVMDialect,
              math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
              nvgpu::NVGPUDialect, scf::SCFDialect, vector::VectorDialect>();
  // To-LLVM interfaces, the NVVM target attribute and LLVM IR translation:
  // what gpu-lower-to-nvvm-pipeline and gpu-module-to-binary look up.
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void mlir::tiledattn::registerAllTiledAttnPasses() {
  registerTiledAttnPasses();
  registerTiledAttnConversionPasses();
  registerTiledAttnPipelines();
  // Upstream stages, so that each step of our pipeline can be replayed.
  registerTransformsPasses();
  registerConversionPasses();
  registerGPUPasses();
  gpu::registerGPUToNVVMPipeline();
}
