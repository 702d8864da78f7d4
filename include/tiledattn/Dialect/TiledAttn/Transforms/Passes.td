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

    A `producer = tma` schedule gets the warp-specialized program instead:
    `tiledattn.ring`s of Q, K and V slots that one producer thread fills by
    `tiledattn.tma_load`, and in `tiledattn.warp_specialize` consumer
    warpgroups of 64 query rows each running the same loop with
    `tiledattn.mma_async` / `tiledattn.wait` (S from shared memory, P from
    registers), in `tiledattn.turn`s when `pingpong`, releasing each slot
    after the mma that read it. Its refinements (`persistent`,
    `overlap_softmax`, `tma_store`, ...) are not written yet: the pass
    names any the schedule sets and fails.

    The enclosing `func.func` becomes the kernel: it must hold exactly one
    `tiledattn.sdpa` and nothing else with side effects. The pass copies the
    schedule onto the function as `tiledattn.schedule`, marks it
    `tiledattn.kernel` and, when causal, `tiledattn.causal` (what
    tiledattn-compile's manifest says of the program); block indices come
    from `gpu.block_id` (x: query block, y: query head, z: batch).

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

def DeriveProgramPass : Pass<"tiledattn-derive-program", "::mlir::ModuleOp"> {
  let summary = "A tile program's form for another element type or operand head dim";
  let description = [{
    Derives a variant of a hand-written tile program (the backward's
    programs are written for bf16 and one head dim) as an edit of its IR:

    - `element-type=f16`: every bf16 in the program's types (operands, shared
      memory tiles, rings, register tiles, futures) becomes f16, and `bf16`
      in each function's name becomes `f16`. The lowering takes either.
    - `head-dim=N`: the operands' head dim, the last dimension of every
      `memref<?x?x?xDxT>` (D the program's, which must be the same for all
      of them), becomes N, a positive multiple of 16 below D, and the
      function's `_d<D>` becomes `_d<N>`. The tiles keep their D columns:
      TMA fills the columns past N with zeros, and the caller keeps the
      first N columns of what the kernel writes D wide.

    - `mask=causal`: torch's `is_causal` (top-left: query i sees keys 0 ..
      i) on a program without a mask that says where its mask goes: each
      `tiledattn.mask` (the identity, in such a program) becomes `causal`,
      setting the scores of keys after their query to -inf, each
      `tiledattn.first_query_block` and `tiledattn.key_block_end` become
      `causal` (the loops start, or end, at the diagonal), and the function
      gets `_causal` in its name and `tiledattn.causal` (its bundle's
      manifest: mask causal_top_left). A program without a mask and a loop
      bound is refused: masking the scores without bounding the loops at
      the diagonal, or the other way round, would be slow or wrong.

    tiledattn-compile's `--derive` runs it on the program before anything
    else; `tiledattn.backward_kernels` asks for the float16 forms and the
    smaller head dims this way (the cache keys a bundle by the program's text
    and the derivation).

    Example: `--tiledattn-derive-program="element-type=f16 head-dim=96"`
    turns `@bwd_main_bf16_d128_rows(%q: memref<?x?x?x128xbf16, ...>, ...)`
    into `@bwd_main_f16_d96_rows(%q: memref<?x?x?x96xf16, ...>, ...)`.
  }];
  let options = [
    Option<"elementType", "element-type", "std::string", /*default=*/"\"\"",
           "the element type to derive for: f16 (from bf16), or empty">,
    Option<"headDim", "head-dim", "int64_t", /*default=*/"0",
           "the operands' head dim to derive for, or 0">,
    Option<"mask", "mask", "std::string", /*default=*/"\"\"",
           "the mask to derive for: causal (from a program without one), or "
           "empty">
  ];
}

#endif // TILEDATTN_DIALECT_TILEDATTN_TRANSFORMS_PASSES_TD
