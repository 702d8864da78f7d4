//===- TiledAttnTypes.td - TiledAttn types -----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNTYPES_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNTYPES_TD

include "tiledattn/Dialect/TiledAttn/IR/TiledAttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def TiledAttn_TileType : TypeDef<TiledAttn_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "A statically shaped tile of values owned by one thread block";
  let description = [{
    A `!tiledattn.tile<MxNxT>` (rank 2) or `!tiledattn.tile<MxT>` (rank 1) is a
    value distributed over the threads of one thread block. Its layout in
    registers is not part of the type: `convert-tiledattn-to-nvgpu` picks it
    from how the tile is used (an mma operand, an accumulator, a row vector).
    Dimensions are static and positive; the element type is f16, bf16 or f32.

    Example:

    ```mlir
    !tiledattn.tile<64x128xf16>
    !tiledattn.tile<64xf32>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumRows() const { return getShape()[0]; }
    int64_t getNumCols() const { return getShape().size() > 1 ? getShape()[1] : 1; }
  }];
}

def TiledAttn_AnyTile : Type<CPred<"::llvm::isa<::mlir::tiledattn::TileType>($_self)">,
                             "tiledattn tile", "::mlir::tiledattn::TileType">;

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNTYPES_TD
