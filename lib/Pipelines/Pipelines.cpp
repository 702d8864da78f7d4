//===- Pipelines.cpp - TiledAttn pass pipelines -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Our passes up to a gpu.module, then the passes of upstream's
// gpu-lower-to-nvvm-pipeline (which ends in gpu-module-to-binary) with one of
// ours inserted where the kernels have become llvm.func: it marks TMA
// tensor-map parameters as grid constants. The binary is PTX text ("isa"):
// tiledattn-compile runs ptxas itself so that it can report registers and
// spills and pick the flags.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

using namespace mlir;

void mlir::tiledattn::buildTiledAttnToNVGPUPipeline(
    OpPassManager &pm, const TiledAttnToPTXOptions &options) {
  pm.addPass(createTileSdpaPass());
  ConvertTiledAttnToNVGPUPassOptions conversion;
  conversion.experimentalWgmma = options.experimentalWgmma;
  pm.addPass(createConvertTiledAttnToNVGPUPass(conversion));
  // Warp-specialized programs: their roles, rings and asynchronous mmas
  // (each pass leaves kernels without its ops alone).
  LowerRolesPassOptions roles;
  roles.registerBudgets = options.registerBudgets;
  roles.entryRegisters = options.entryRegisters;
  pm.addPass(createLowerRolesPass(roles));
  pm.addPass(createLowerRingsPass());
  pm.addPass(createLowerMmaPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tiledattn::buildTiledAttnToPTXPipeline(
    OpPassManager &pm, const TiledAttnToPTXOptions &options) {
  buildTiledAttnToNVGPUPipeline(pm, options);
  buildNVGPUToPTXPipeline(pm, options);
}

void mlir::tiledattn::buildNVGPUToPTXPipeline(
    OpPassManager &pm, const TiledAttnToPTXOptions &options) {
  // Upstream's gpu-lower-to-nvvm-pipeline (GPUToNVVMPipeline.cpp), pass for
  // pass, for 64-bit indices and the default calling conventions.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  if (!options.libdevice.empty())
    target.linkLibs.push_back(options.libdevice);
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  OpPassManager &gpuModule = pm.nest<gpu::GPUModuleOp>();
  gpuModule.addPass(createStripDebugInfoPass());
  gpuModule.addPass(createApproximateMathPass()); // ours: tanh.approx
  gpuModule.addPass(createConvertGpuOpsToNVVMOps());
  gpuModule.addPass(LLVM::createNVVMOptimizeForTargetPass());
  gpuModule.addPass(createCanonicalizerPass());
  gpuModule.addPass(createCSEPass());
  gpuModule.addPass(createReconcileUnrealizedCastsPass());
  gpuModule.addPass(createMarkTensorMapParamsPass());       // ours
  gpuModule.addPass(createExternDynamicSharedMemoryPass()); // ours

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tiledattn::registerTiledAttnPipelines() {
  PassPipelineRegistration<TiledAttnToPTXOptions>(
      "tiledattn-to-nvgpu-pipeline",
      "Lower tiledattn.sdpa to a gpu.module of nvgpu/nvvm/vector code",
      buildTiledAttnToNVGPUPipeline);
  PassPipelineRegistration<TiledAttnToPTXOptions>(
      "tiledattn-to-ptx-pipeline",
      "Lower tiledattn.sdpa to a gpu.binary holding PTX for the chosen chip",
      buildTiledAttnToPTXPipeline);
}
