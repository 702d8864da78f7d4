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

//===----------------------------------------------------------------------===//
// Asynchronous hand-off between warp roles
//===----------------------------------------------------------------------===//

def TiledAttn_SmemType : TypeDef<TiledAttn_Dialect, "Smem"> {
  let mnemonic = "smem";
  let summary = "A tile in shared memory, laid out for TMA and wgmma";
  let description = [{
    A `!tiledattn.smem<RxCxT>` is an `R x C` tile of f16 or bf16 in shared
    memory, in the layout TMA writes and wgmma's swizzled descriptors read:
    `C / 64` atoms of `R` rows of 64 columns (128 bytes a row), atom after
    atom, each row's 16-byte chunks under the 128-byte swizzle. So `C` is a
    multiple of 64 and `R` at most 256 (a TMA box). A slot of a
    `!tiledattn.ring` has this type.

    Example:

    ```mlir
    !tiledattn.smem<128x128xbf16>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// 64-column atoms.
    int64_t getAtoms() const { return getCols() / 64; }
    int64_t getBytes() const { return getRows() * getCols() * 2; }
  }];
}

def TiledAttn_RingType : TypeDef<TiledAttn_Dialect, "Ring"> {
  let mnemonic = "ring";
  let summary = "A ring of shared-memory slots handed from a producer to consumers";
  let description = [{
    A `!tiledattn.ring<N, RxCxT>` is `N` slots of `!tiledattn.smem<RxCxT>`,
    each with a "full" and an "empty" barrier. A producer fills slot
    `p mod N` in `tiledattn.ring.put`, consumers read it between
    `tiledattn.ring.get` and `tiledattn.ring.release`; ring position `p`
    counts the slot's uses (phase `(p / N) mod 2`), so that every phase of
    every barrier has its waiter and nothing else in the program speaks of
    barriers.

    Example:

    ```mlir
    !tiledattn.ring<2, 128x128xbf16>
    ```
  }];
  let parameters = (ins "int64_t":$depth, "SmemType":$slotType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def TiledAttn_TokenType : TypeDef<TiledAttn_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "A ring slot held by a consumer, to be released";
  let description = [{
    A `!tiledattn.token` is what `tiledattn.ring.get` hands a consumer along
    with the slot: the consumer gives it back with `tiledattn.ring.release`
    once it has finished reading the slot, which lets the producer refill it.

    Example:

    ```mlir
    %k, %held = tiledattn.ring.get %ring[%p] : !tiledattn.ring<2, 128x128xbf16>
    tiledattn.ring.release %ring, %held : !tiledattn.ring<2, 128x128xbf16>
    ```
  }];
}

def TiledAttn_FutureType : TypeDef<TiledAttn_Dialect, "Future"> {
  let mnemonic = "future";
  let summary = "The result of an asynchronous mma, not yet retired";
  let description = [{
    A `!tiledattn.future<MxNxf32>` is the `M x N` f32 accumulator of a
    `tiledattn.mma_async` the tensor cores may still be writing. Nothing
    reads it but `tiledattn.wait`, which returns it as a
    `!tiledattn.tile<MxNxf32>` once the mma has completed; between the two,
    the program runs other work (the softmax of another block, another
    consumer's mmas).

    Example:

    ```mlir
    !tiledattn.future<64x128xf32>
    ```
  }];
  let parameters = (ins "TileType":$tileType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNTYPES_TD
