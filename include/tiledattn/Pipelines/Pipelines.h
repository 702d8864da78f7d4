//===- Pipelines.h - TiledAttn pass pipelines -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One pipeline builder serves tiledattn-opt, tiledattn-compile and the Python
// package, so any production compile can be replayed stage by stage.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_PIPELINES_PIPELINES_H
#define TILEDATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::tiledattn {
struct TiledAttnToPTXOptions
    : public PassPipelineOptions<TiledAttnToPTXOptions> {
  PassOptions::Option<std::string> chip{*this, "chip",
                                        llvm::cl::desc("GPU the PTX is for"),
                                        llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{*this, "features",
                                            llvm::cl::desc("PTX ISA features"),
                                            llvm::cl::init("+ptx80")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM optimization level (0-3)"),
      llvm::cl::init(3)};
  PassOptions::Option<bool> experimentalWgmma{
      *this, "experimental-wgmma",
      llvm::cl::desc("Lower mma = wgmma schedules (not yet checked on a GPU)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> registerBudgets{
      *this, "register-budgets",
      llvm::cl::desc("Give warp roles their register budgets with setmaxnreg "
                     "(off for builds run under compute-sanitizer)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> entryRegisters{
      *this, "entry-registers",
      llvm::cl::desc("Declare the registers a warp-specialized tile "
                     "program's threads start with (.maxnreg), which "
                     "tiledattn-compile asks for where ptxas would drop "
                     "setmaxnreg (C7508)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("libdevice bitcode to link into the kernels, for math "
                     "functions in score_mod bodies (default: the toolkit's "
                     "under CUDA_HOME, if set)"),
      llvm::cl::init("")};
};

/// tiledattn.sdpa -> tile program -> gpu.module of nvgpu/nvvm/vector code.
/// Our passes, from tiledattn.sdpa or a tile program to a gpu.module of
/// nvgpu/nvvm code (the first half of tiledattn-to-ptx-pipeline).
void buildTiledAttnToNVGPUPipeline(OpPassManager &pm,
                                   const TiledAttnToPTXOptions &options);

/// gpu.module of nvgpu/nvvm code -> gpu.binary holding PTX for `chip`
/// (upstream gpu-lower-to-nvvm-pipeline, serialized as PTX text).
void buildNVGPUToPTXPipeline(OpPassManager &pm,
                             const TiledAttnToPTXOptions &options);

/// The whole path, the two above in sequence: tiledattn.sdpa -> gpu.binary.
void buildTiledAttnToPTXPipeline(OpPassManager &pm,
                                 const TiledAttnToPTXOptions &options);

/// Registers tiledattn-to-nvgpu-pipeline and tiledattn-to-ptx-pipeline.
void registerTiledAttnPipelines();
} // namespace mlir::tiledattn

#endif // TILEDATTN_PIPELINES_PIPELINES_H
