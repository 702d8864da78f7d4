//===- Passes.td - TiledAttn conversion passes -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_CONVERSION_PASSES_TD
#define TILEDATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// TiledAttnToNVGPU
//===----------------------------------------------------------------------===//

def ConvertTiledAttnToNVGPUPass
    : Pass<"convert-tiledattn-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Lower tile programs to a gpu.module of register-fragment code";
  let description = [{
    Turns every `func.func` marked `tiledattn.kernel` into a `gpu.func` kernel
    of the same name inside its own `gpu.module`. Each tile value becomes the
    per-thread register fragments of the mma instruction the schedule names:
    with `mma = mma_sync`, warp `w` owns query rows `16w .. 16w + 15` of the
    block; `lhs` tiles are m16n8k16 A fragments, `rhs` tiles B fragments (read
    row-wise from K for a transposed rhs, column-wise from V otherwise),
    accumulators C fragments, row tiles two values per thread. Row maxima
    and sums are reduced across the four threads of a row group with
    `gpu.shuffle xor`; exponentials are `llvm.nvvm.ex2.approx.f32` (no libdevice needed).

    With `experimental-wgmma`, `mma = wgmma` schedules (one warpgroup, 64 x 64
    tiles, `producer = cp_async`) lower to `nvvm.wgmma.mma_async` on
    shared-memory descriptors instead; this path has not been run on a GPU.

    #### Input invariant
    Tile programs as `tiledattn-tile-sdpa` makes them: tile values are
    defined by tile ops or `scf.for` iteration arguments, and consumed by
    tile ops, `scf.for` and `scf.yield`. Anything else that touches a tile
    is reported as an error.

    #### Output IR
    `gpu.module` / `gpu.func` with `nvvm.mma.sync` (m16n8k16, f16 or bf16
    operands, f32 accumulation), `vector`, `memref`, `arith`, `llvm.call_intrinsic` (ex2/lg2 approximations), `scf`
    and `gpu.shuffle`. No tiledattn op or type remains.
  }];
  let options = [
    Option<"experimentalWgmma", "experimental-wgmma", "bool", "false",
           "Lower mma = wgmma (with producer = cp_async, 64 x 64 tiles). It "
           "lowers to PTX that ptxas accepts but has not been checked on a "
           "GPU yet">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // TILEDATTN_CONVERSION_PASSES_TD
