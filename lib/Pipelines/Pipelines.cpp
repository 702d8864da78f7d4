//===- Pipelines.cpp - TiledAttn pass pipelines -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Our passes up to a gpu.module, then upstream's gpu-lower-to-nvvm-pipeline
// (which ends in gpu-module-to-binary). The binary is PTX text ("isa"):
// tiledattn-compile runs ptxas itself so that it can report registers and
// spills and pick the flags.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tiledattn/Conversion/Passes.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"

using namespace mlir;

void mlir::tiledattn::buildTiledAttnToNVGPUPipeline(OpPassManager &pm,
                                                    bool experimentalWgmma) {
  pm.addPass(createTileSdpaPass());
  ConvertTiledAttnToNVGPUPassOptions conversion;
  conversion.experimentalWgmma = experimentalWgmma;
  pm.addPass(createConvertTiledAttnToNVGPUPass(conversion));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tiledattn::buildTiledAttnToPTXPipeline(
    OpPassManager &pm, const TiledAttnToPTXOptions &options) {
  buildTiledAttnToNVGPUPipeline(pm, options.experimentalWgmma);
  buildNVGPUToPTXPipeline(pm, options);
}

void mlir::tiledattn::buildNVGPUToPTXPipeline(
    OpPassManager &pm, const TiledAttnToPTXOptions &options) {
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = "isa";
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::tiledattn::registerTiledAttnPipelines() {
  PassPipelineRegistration<>(
      "tiledattn-to-nvgpu-pipeline",
      "Lower tiledattn.sdpa to a gpu.module of nvgpu/nvvm/vector code",
      [](OpPassManager &pm) { buildTiledAttnToNVGPUPipeline(pm); });
  PassPipelineRegistration<TiledAttnToPTXOptions>(
      "tiledattn-to-ptx-pipeline",
      "Lower tiledattn.sdpa to a gpu.binary holding PTX for the chosen chip",
      buildTiledAttnToPTXPipeline);
}
