//===- Passes.td - TiledAttn dialect passes ----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_TD
#define TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileSdpaPass : Pass<"tiledattn-tile-sdpa", "::mlir::ModuleOp"> {
  let summary = "Expand tiledattn.sdpa into a tile program for its schedule";
  let description = [{
    Replaces each `tiledattn.sdpa` with the tile program that computes it for
    one thread block: read the block's query tile, loop over K/V blocks of
    `block_n` rows (`scf.for`, ending at the diagonal when causal), and in
    each iteration `mma` (S = Q·Kᵀ), `mask`, `online_softmax`, `rescale` and
    `mma` (O += P·V); then `store` the normalized output and log-sum-exp.

    The enclosing `func.func` becomes the kernel: it must hold exactly one
    `tiledattn.sdpa` and nothing else with side effects. The pass copies the
    schedule onto the function as `tiledattn.schedule` and marks it
    `tiledattn.kernel`; block indices come from `gpu.block_id`
    (x: query block, y: query head, z: batch).

    #### Input invariant
    Functions hold at most one `tiledattn.sdpa`, whose operands are
    function arguments or values defined before it.

    #### Output IR
    No `tiledattn.sdpa` remains; tile ops, `scf`, `arith`, `memref.dim` and
    `gpu.block_id`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_TD
