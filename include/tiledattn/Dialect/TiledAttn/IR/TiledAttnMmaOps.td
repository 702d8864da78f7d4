//===- TiledAttnMmaOps.td - Asynchronous warpgroup mmas -----*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tensor-core work of a Hopper consumer warpgroup as ops: an mma issued
// asynchronously on shared-memory slots (or a register tile) and a wait
// that retires it. `tiledattn-lower-mma` turns them into wgmma, its fence,
// commit and wait_group; nothing else speaks of wgmma groups.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNMMAOPS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNMMAOPS_TD

def TiledAttn_MmaAsyncOp : TiledAttn_Op<"mma_async", [
    AttrSizedOperandSegments, MemoryEffects<[MemRead]>,
    OptionalTypesMatchWith<"the accumulator is the result's tile", "result",
                           "acc",
                           "::llvm::cast<FutureType>($_self).getTileType()">,
    OptionalTypesMatchWith<"the accumulator in flight is the result's future",
                           "result", "acc_in_flight", "$_self">]> {
  let summary = "Start a warpgroup's 64-row mma on the tensor cores";
  let description = [{
    The `tiledattn.mma_async` operation starts, for the 128 threads of one
    warpgroup, `result = A * B (+ acc)`, or `A * transpose(B) (+ acc)` with
    `transpose_b`, in f32, and returns at once: the result is a
    `!tiledattn.future` that `tiledattn.wait` retires. `A` is 64 x K:
    either rows `a_row .. a_row + 63` of a shared-memory tile (a ring slot)
    or a `!tiledattn.tile<64xKxT>` in registers. `B` is a shared-memory tile,
    `K x N`, or `N x K` with `transpose_b`. Without `acc` the result starts
    from zero.

    For attention, `S = Q K^T` reads the consumer's 64 rows of the Q slot
    and a K slot (keys x head dim) with `transpose_b`; `O += P V` takes P
    from registers and a V slot (keys x head dim) as it is.

    With `uniform_a` the shared-memory A's address (the slot and `a_row`)
    is the same in every lane of the warp, as a warpgroup's rows are: the
    lowering passes it through `redux.sync` at each issue, so that ptxas
    keeps A's descriptors on the uniform datapath instead of holding one per
    k-step in registers across the loop (at D = 256, 32 registers that the
    softmax then lacks).

    `after_parts` names the tokens of `partial` ring gets (of A's or, with
    `transpose_b`, B's slot: their columns are K): the mma waits for part
    `p` of each such slot just before its k-steps reach that part's
    columns, so the tensor cores start on a slot's first part while the
    rest still arrives.

    With `b_rows(R)` the mma reads only B's first `R` rows, a multiple of
    8 below B's rows: N = R with `transpose_b` (a narrower S, on the keys
    of the block that a causal diagonal leaves), else K = R (a P.V over
    those keys only), the slot's layout (its atoms of B's full rows)
    unchanged.

    With `[b_row]` the rows that `b_rows` (or B's whole height) counts
    start at row `b_row` of B, a multiple of 8: with `transpose_b` the
    keys of one consumer's half of a K slot (`S = Q K_c^T`), else K from
    that row (the second half of a `dQ = dS K` over a 128-key slot).

    With `b_col(C)` (B as it is, `K x N`) the mma reads B's columns `C ..
    C + N - 1`, `N` the result's columns and `C` a multiple of 64 (a
    64-column atom of the slot): the backward's dQ in two 64-column halves,
    each a 32-register accumulator instead of one of 64.

    With `transpose_a` the mma reads a shared-memory A transposed: A is
    the transpose of rows `a_row .. a_row + K - 1` and columns `0 .. 63` of
    the tile (K x 64 stored, M = 64), K being B's (its rows, or `b_rows`, or
    its columns with `transpose_b`). The backward's `dQ = dS K` reads `dS^T`
    this way, as `tiledattn.stage` wrote it from the registers of `S^T`'s
    layout.

    A shared-memory `A` starts on a row that is a multiple of 8 (the
    swizzle's period). `K` is a multiple of 16 and `N` at most 256 (one
    wgmma); `A` and `B` hold the same element type, f16 or bf16.

    With `acc_in_flight(%f)` the accumulator is the result of an earlier
    `tiledattn.mma_async` of the same block that nobody has waited for:
    this mma's k-steps continue that one's on the tensor cores (one chain
    of wgmmas into the same registers, no wait between), and `%f` is used
    by this op only; the chain's last future is waited for. The backward's
    `dQ = dS_0 K_0 + dS_1 K_1` over two consumers' keys is two such mmas.

    Example:

    ```mlir
    %s = tiledattn.mma_async %q[%row], %k transpose_b
        : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x128xf32>
    %o = tiledattn.mma_async %p, %v acc(%acc)
        : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x128xf32>
    %s2 = tiledattn.mma_async %q[%row] uniform_a, %k transpose_b
        : !tiledattn.smem<128x256xbf16>, !tiledattn.smem<64x256xbf16>
          -> !tiledattn.future<64x64xf32>
    %s3 = tiledattn.mma_async %q[%row], %k transpose_b after_parts(%q_held)
        : !tiledattn.smem<128x256xbf16>, !tiledattn.smem<64x256xbf16>
          -> !tiledattn.future<64x64xf32>
    %s4 = tiledattn.mma_async %q[%row], %k b_rows(64) transpose_b
        : !tiledattn.smem<128x128xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x64xf32>
    %o4 = tiledattn.mma_async %p64, %v b_rows(64) acc(%acc)
        : !tiledattn.tile<64x64xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x128xf32>
    %dq = tiledattn.mma_async %dst[%c0] transpose_a, %k b_rows(64)
        : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x128xf32>
    %dq1 = tiledattn.mma_async %dst[%c0] transpose_a, %k b_col(64)
        : !tiledattn.smem<64x64xbf16>, !tiledattn.smem<64x128xbf16>
          -> !tiledattn.future<64x64xf32>
    %s5 = tiledattn.mma_async %q[%c0], %k[%c64] b_rows(64) transpose_b
        : !tiledattn.smem<64x128xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x64xf32>
    %dq0 = tiledattn.mma_async %ds[%c0], %k b_rows(64) b_col(0)
        : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x64xf32>
    %dq = tiledattn.mma_async %ds[%c64], %k[%c64] b_rows(64) b_col(0)
        acc_in_flight(%dq0)
        : !tiledattn.smem<128x64xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x64xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[TiledAttn_SmemType, TiledAttn_AnyTile]>:$a,
                       Optional<Index>:$a_row, TiledAttn_SmemType:$b,
                       Optional<Index>:$b_row,
                       Optional<TiledAttn_AnyTile>:$acc,
                       Optional<TiledAttn_FutureType>:$acc_in_flight,
                       Variadic<TiledAttn_TokenType>:$after_parts,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       UnitAttr:$uniform_a,
                       OptionalAttr<I64Attr>:$b_rows,
                       OptionalAttr<I64Attr>:$b_col);
  let results = (outs TiledAttn_FutureType:$result);
  let assemblyFormat = [{
    $a (`[` $a_row^ `]`)? (`transpose_a` $transpose_a^)?
    (`uniform_a` $uniform_a^)? `,` $b (`[` $b_row^ `]`)?
    (`b_rows` `(` $b_rows^ `)`)? (`b_col` `(` $b_col^ `)`)?
    (`transpose_b` $transpose_b^)?
    (`acc` `(` $acc^ `)`)? (`acc_in_flight` `(` $acc_in_flight^ `)`)?
    (`after_parts` `(` $after_parts^ `)`)? attr-dict
    `:` qualified(type($a)) `,` qualified(type($b)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    FutureType getFutureType() { return ::llvm::cast<FutureType>(getResult().getType()); }
    /// The reduction length: A's columns (with transpose_a, B's K).
    int64_t getK();
    /// The result's columns.
    int64_t getN() { return getFutureType().getTileType().getNumCols(); }
    /// Whether A comes from shared memory (else from registers).
    bool isASmem() { return ::llvm::isa<SmemType>(getA().getType()); }
  }];
}

def TiledAttn_ReadRowsOp : TiledAttn_Op<"read_rows", [
    MemoryEffects<[MemRead]>]> {
  let summary = "Read a warpgroup's 64 rows of a shared-memory tile into "
                "registers, as an mma's A";
  let description = [{
    The `tiledattn.read_rows` operation copies rows `row .. row + 63` of a
    shared-memory tile (a ring slot) into a register tile of the warpgroup,
    in the layout `tiledattn.mma_async` takes for a register A (one
    ldmatrix.x4 per 16 columns). A consumer that reads its rows of Q once
    per tile this way (`q_in_registers`) lets the tensor cores read only K
    from shared memory during each Q K^T. `row` is a multiple of 8 (the
    swizzle's period); the element type is f16 or bf16.

    Example:

    ```mlir
    %qa = tiledattn.read_rows %q[%row]
        : !tiledattn.smem<128x128xbf16> -> !tiledattn.tile<64x128xbf16>
    %s = tiledattn.mma_async %qa, %k transpose_b
        : !tiledattn.tile<64x128xbf16>, !tiledattn.smem<128x128xbf16>
          -> !tiledattn.future<64x128xf32>
    ```
  }];
  let arguments = (ins TiledAttn_SmemType:$slot, Index:$row);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $slot `[` $row `]` attr-dict `:` qualified(type($slot)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TiledAttn_WaitOp : TiledAttn_Op<"wait", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"the result is the future's tile", "future", "result",
                   "::llvm::cast<FutureType>($_self).getTileType()">]> {
  let summary = "Wait for an asynchronous mma and take its result";
  let description = [{
    The `tiledattn.wait` operation waits until the `tiledattn.mma_async`
    that made `future` has completed and returns its result as a register
    tile. Mmas the warpgroup started after that one may stay in flight: a
    program starts `S_j = Q K_j^T`, then `O += P_{j-1} V_{j-1}`, waits for
    `S_j` and runs the softmax while the second mma still runs. After the
    wait, the mma's shared-memory operands may be released.

    Example:

    ```mlir
    %s = tiledattn.wait %sf : !tiledattn.future<64x128xf32>
    ```
  }];
  let arguments = (ins TiledAttn_FutureType:$future);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNMMAOPS_TD
