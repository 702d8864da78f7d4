//===- TiledAttnDialect.td - TiledAttn dialect -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def TiledAttn_Dialect : Dialect {
  let name = "tiledattn";
  let summary = "Tile-level scaled-dot-product attention";
  let description = [{
    The `tiledattn` dialect expresses scaled-dot-product attention at two
    levels. `tiledattn.sdpa` is the whole forward attention on memref views of
    Q, K and V, carrying a `#tiledattn.schedule` that says how it is to be run.
    `tiledattn-tile-sdpa` expands it into a tile program: an `scf.for` over
    K/V blocks of `tiledattn.load`, `tiledattn.mma`, `tiledattn.mask`,
    `tiledattn.online_softmax`, `tiledattn.rescale` and `tiledattn.store` on
    `!tiledattn.tile` values. `convert-tiledattn-to-nvgpu` maps tiles onto
    per-thread register fragments and emits a `gpu.func`.
  }];
  let cppNamespace = "::mlir::tiledattn";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // tiledattn.min_seqlen_k / tiledattn.max_seqlen_k on a schedule's function.
  let hasOperationAttrVerify = 1;
  // Index values that ops fold to (tiledattn.first_query_block,
  // tiledattn.key_block_end) as arith.constant.
  let hasConstantMaterializer = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::gpu::GPUDialect"
  ];
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class TiledAttn_Op<string mnemonic, list<Trait> traits = []>
    : Op<TiledAttn_Dialect, mnemonic, traits>;

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNDIALECT_TD
