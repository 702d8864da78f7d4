//===- TiledAttnOps.td - TiledAttn dialect ops -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_TD

include "tiledattn/Dialect/TiledAttn/IR/TiledAttnDialect.td"
include "tiledattn/Dialect/TiledAttn/IR/TiledAttnTypes.td"
include "tiledattn/Dialect/TiledAttn/IR/TiledAttnAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

defvar TiledAttn_RowsPastEndDoc = [{
    Rows at or past the end of the sequence dimension (dimension 2 of the
    memref) hold unspecified finite values: a program must mask them with
    `tiledattn.mask` before they can reach a result.
}];

def TiledAttn_HeadMemRef : MemRefRankOf<[F16, BF16, F32], [4]>;
def TiledAttn_LseMemRef : MemRefRankOf<[F32], [3]>;

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

def TiledAttn_SdpaOp : TiledAttn_Op<"sdpa", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Forward scaled-dot-product attention on memref views";
  let description = [{
    The `tiledattn.sdpa` operation computes, for every batch `b`, query head
    `h` and query row `i`,

    ```
    O[b, h, i, :] = sum_j softmax_j(scale * Q[b, h, i, :] . K[b, h / g, j, :]) * V[b, h / g, j, :]
    LSE[b, h, i]  = log(sum_j exp(scale * Q[b, h, i, :] . K[b, h / g, j, :]))
    ```

    where `g = Hq / Hkv` (grouped-query attention when `g > 1`) and, with
    `causal`, only keys `j <= i` take part (top-left alignment, as
    `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`).

    `q` is `B x Hq x Sq x D`, `k` is `B x Hkv x Sk x D`, `v` is
    `B x Hkv x Sk x Dv`, `o` is `B x Hq x Sq x Dv` and `lse` is `B x Hq x Sq`.
    All four head tensors share the element type (f16 or bf16); the head dim
    `D` and the value head dim `Dv` are static, and differ only with
    `producer = tma` (DeepSeek's 192 and 128, say). Their innermost stride
    must be 1 and the other strides may be anything. The `schedule` says how
    the computation is tiled; the verifier rejects one that cannot run with
    these operands.

    An optional `score_mod` region changes each scaled score before the
    softmax (and before the causal mask), as FlexAttention's `score_mod`:
    its block takes `(score: f32, b: index, h: index, q_idx: index,
    kv_idx: index)` and yields the new score with `tiledattn.yield`; it may
    use arith and math ops and values from outside, and may not write
    memory. A score set to -inf is masked. `tiledattn-tile-sdpa` writes it
    into the warp-specialized program as a `tiledattn.score_mod` (so the
    schedule must be `producer = tma` without refinements); the kernel's
    manifest records it, and the package never picks such a kernel for a
    plain attention call. Example (Gemma-2's softcap at 30):

    ```mlir
    tiledattn.sdpa %q, %k, %v, %scale into %o, %lse schedule(...) score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
      %cap = arith.constant 30.0 : f32
      %t = arith.divf %s, %cap : f32
      %th = math.tanh %t : f32
      %y = arith.mulf %th, %cap : f32
      tiledattn.yield %y : f32
    } : ...
    ```

    An optional `mask_mod` region, of the same form, runs after the
    `score_mod`; it masks (a score set to -inf) or biases scores. Without a
    `block_map` it runs on every block, as a second `score_mod` would.

    An optional `block_map` (a `memref<?x?x?x?xi32>`, an argument of the
    kernel function) says which K/V blocks of `block_n` keys each tile of
    `block_m` query rows reads, as FlexAttention's BlockMask does: row
    `map[b, h, m]` holds `F`, the number of full blocks, then `N >= 1`, the
    number of blocks listed, then the `N` block indices, full ones first.
    Blocks not listed are skipped (every score of theirs is masked); the
    `mask_mod` runs on the partial blocks only, so it must leave the scores
    of full blocks unchanged, while the `score_mod` runs on every block
    listed; a block that holds keys past the sequence's end must be partial.
    Dimensions 0 and 1 may be 1 (one row for every batch or head). It needs
    `producer = tma` and excludes `causal` (the map's partial blocks carry
    any mask). `tiledattn.scaled_dot_product_attention` builds one from an
    `attn_mask` on the GPU, `tiledattn.flex_attention` from a BlockMask.
    Example:

    ```mlir
    tiledattn.sdpa %q, %k, %v, %scale into %o, %lse schedule(...)
        block_map(%map : memref<?x?x?x?xi32>) mask_mod {...} : ...
    ```

    An optional `kv_rows` region says where each K/V block is: its block
    takes `(b: index, hkv: index, kv_idx: index)`, a batch, a K/V head and
    the first key of a block the tile reads, and yields the row of
    `k[b, hkv]` and `v[b, hkv]` that holds that key; the block's `block_n`
    keys are the rows from there on. Only the loads move: masks and mods
    still see `kv_idx`. It may read memory (captured tensors) and not
    write it. It needs `producer = tma` and a `block_map` (a sequence's
    keys are what the map lists, not `k`'s rows). A paged KV cache (pages
    of `P` keys, `P` a multiple of `block_n`, a table of pages per
    sequence) is `k` and `v` the pages as one sequence (batch stride 0)
    and:

    ```mlir
    kv_rows {
    ^bb0(%b: index, %hkv: index, %key: index):
      %page_keys = arith.constant 256 : index
      %n = arith.divui %key, %page_keys : index
      %at = arith.remui %key, %page_keys : index
      %page = memref.load %table[%b, %n] : memref<?x?xi32>
      %first = arith.index_cast %page : i32 to index
      %row0 = arith.muli %first, %page_keys : index
      %row = arith.addi %row0, %at : index
      tiledattn.yield %row : index
    }
    ```

    With `kv_span(S)` before it, `kv_rows` says where each run of `S` keys
    is (`S` a multiple of 8 dividing `block_n`): the region runs for the
    first key of each run of a block, and the producer loads each run from
    its rows, `block_n / S` copies a block. Pages of fewer keys than a block
    (16, 32 or 64 keys, as vLLM's and FlashInfer's) are `kv_span(P)` with
    the region above.

    Rows of a listed block past a sequence's end are another page's or
    unwritten slots (not zeros, as past `k`'s end): a `mask_mod` must mask
    them, and they must hold finite values (0 times inf is NaN).

    Example:

    ```mlir
    func.func @attn(%q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
                    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
                    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
                    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
                    %lse: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>,
                    %scale: f32) {
      tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
          schedule(#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 1,
                   warps = 4, mma = mma_sync, producer = direct, swizzle = 0>)
          : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
            memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
      return
    }
    ```
  }];
  let arguments = (ins TiledAttn_HeadMemRef:$q, TiledAttn_HeadMemRef:$k,
                       TiledAttn_HeadMemRef:$v, F32:$scale,
                       TiledAttn_HeadMemRef:$o, TiledAttn_LseMemRef:$lse,
                       UnitAttr:$causal, TiledAttn_ScheduleAttr:$schedule,
                       Optional<MemRefRankOf<[I32], [4]>>:$block_map,
                       OptionalAttr<I64Attr>:$kv_span);
  let regions = (region MaxSizedRegion<1>:$score_mod,
                        MaxSizedRegion<1>:$mask_mod,
                        MaxSizedRegion<1>:$kv_rows);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $scale `into` $o `,` $lse (`causal` $causal^)?
    `schedule` `(` $schedule `)`
    (`block_map` `(` $block_map^ `:` type($block_map) `)`)?
    (`score_mod` custom<EnclosedRegion>($score_mod)^)? (`mask_mod` custom<EnclosedRegion>($mask_mod)^)?
    (`kv_span` `(` $kv_span^ `)`)? (`kv_rows` custom<EnclosedRegion>($kv_rows)^)? attr-dict `:`
    type($q) `,` type($k) `,` type($v) `,` type($o) `,` type($lse)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// D, of q and k.
    int64_t getHeadDim() { return getQ().getType().getShape()[3]; }
    /// Dv, of v and o.
    int64_t getHeadDimV() { return getV().getType().getShape()[3]; }
  }];
}

//===----------------------------------------------------------------------===//
// Tile program ops
//===----------------------------------------------------------------------===//

def TiledAttn_ConstantOp : TiledAttn_Op<"constant", [Pure, ConstantLike]> {
  let summary = "Tile with every element equal to one value";
  let description = [{
    The `tiledattn.constant` operation makes a tile whose elements all equal
    `value`. It initializes accumulators (0), running maxima (-inf) and running
    sums (0). The tile is f32 and `value` an f32 attribute.

    Example:

    ```mlir
    %acc = tiledattn.constant 0.0 : !tiledattn.tile<64x128xf32>
    %m = tiledattn.constant 0xFF800000 : !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins F32Attr:$value);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def TiledAttn_LoadOp : TiledAttn_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "Load a tile of consecutive sequence rows of one head";
  let description = !strconcat([{
    The `tiledattn.load` operation reads rows `row .. row + M - 1` of
    `source[b, h, :, :]` into a `M x D` tile, where `D` is the static innermost
    dimension of `source` and must equal the tile's column count. The element
    types of the memref and the tile must match.
  }], TiledAttn_RowsPastEndDoc, [{

    Example:

    ```mlir
    %kt = tiledattn.load %k[%b, %h, %j]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
          -> !tiledattn.tile<64x128xf16>
    ```
  }]);
  let arguments = (ins TiledAttn_HeadMemRef:$source, Index:$batch,
                       Index:$head, Index:$row);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` attr-dict `:` type($source)
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TiledAttn_MmaOp : TiledAttn_Op<"mma", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "Tile matrix-multiply-accumulate";
  let description = [{
    The `tiledattn.mma` operation computes `result = lhs * rhs + acc`, or
    `result = lhs * transpose(rhs) + acc` with `transposed`, in f32.

    `lhs`, `rhs`, `acc` must be `M x K`, `K x N` (`N x K` when transposed) and
    `M x N`. `lhs` and `rhs` have the same element type, f16 or bf16; `acc`
    and the result are f32.

    Example:

    ```mlir
    %s = tiledattn.mma %qt, %kt transposed, %zero
        : !tiledattn.tile<64x128xf16>, !tiledattn.tile<64x128xf16>,
          !tiledattn.tile<64x64xf32>
    %o = tiledattn.mma %p, %vt, %acc
        : !tiledattn.tile<64x64xf16>, !tiledattn.tile<64x128xf16>,
          !tiledattn.tile<64x128xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$lhs, TiledAttn_AnyTile:$rhs,
                       TiledAttn_AnyTile:$acc, UnitAttr:$transposed);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transposed` $transposed^)? `,` $acc attr-dict `:`
    qualified(type($lhs)) `,` qualified(type($rhs)) `,` qualified(type($acc))
  }];
  let hasVerifier = 1;
}

def TiledAttn_MaskOp : TiledAttn_Op<"mask", [Pure,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "Set out-of-range (and, if causal, future) scores to -inf";
  let description = [{
    The `tiledattn.mask` operation takes an `M x N` f32 score tile whose
    element `(i, j)` belongs to query row `row + i` and key row `col + j`, and
    sets it to -inf where `col + j >= seqlen_k` (when `seqlen_k` is given)
    or, with `causal`, where `col + j > row + i` (top-left alignment). Other
    elements pass unchanged. Query rows past `seqlen_q` are not masked:
    `tiledattn.store` drops them.

    With neither it is the identity and folds away: a hand-written program
    without a mask keeps one where its mask goes, so that
    `tiledattn-derive-program{mask=causal}` derives its causal form.

    Example:

    ```mlir
    %sm = tiledattn.mask %s, %row, %j, %sk causal : !tiledattn.tile<64x64xf32>
    %p = tiledattn.mask %s, %row, %j : !tiledattn.tile<64x64xf32> // none yet
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$scores, Index:$row, Index:$col,
                       Optional<Index>:$seqlen_k, UnitAttr:$causal);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $scores `,` $row `,` $col (`,` $seqlen_k^)? (`causal` $causal^)?
    attr-dict `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TiledAttn_OnlineSoftmaxOp : TiledAttn_Op<"online_softmax", [Pure,
    AllTypesMatch<["row_max", "row_sum", "new_row_max", "new_row_sum",
                   "rescale"]>]> {
  let summary = "One step of the streaming (online) softmax over a score tile";
  let description = [{
    The `tiledattn.online_softmax` operation folds one `M x N` block of scores
    `s` into the running row maximum `m` and row sum `l` (both `M` tiles). It
    works in base 2 with the softmax scale folded in, so the kernel needs one
    `exp2` per score. With `x = s * scale * log2(e)`, for every row `i`:

    ```
    m'[i]     = max(m[i], max_j x[i, j])
    alpha[i]  = 2^(m[i] - m'[i])
    p[i, j]   = 2^(x[i, j] - m'[i])
    l'[i]     = alpha[i] * l[i] + sum_j p[i, j]
    ```

    `m` therefore holds the running maximum of `scale * s` in units of
    `log2(e)`. A row that has seen only -inf keeps `m' = -inf` and gets `p = 0`,
    `alpha = 0` and `l' = 0` (its sum and accumulator are still zero). The results are `p` (in the element type of
    the `p` result, f16 or bf16, ready to be an mma operand; or f32, for a
    program that packs P later with `tiledattn.truncate`), `m'`, `l'` and
    `alpha`, the factor by which the caller rescales its output accumulator
    (`tiledattn.rescale`).

    With `finite` the program promises that every score is finite (a block
    no mask or score_mod touched): then `m'` is finite too and the lowering
    leaves out the -inf guard on the way from the maximum to the exponents
    (a compare and a select per row, on the softmax's critical path). A
    -inf score under `finite` gives NaN rows.

    With `exp2_on_fma(n)`, `n` of the exponentials each thread computes per
    block (a 64-row tile gives a thread `N / 2` scores) are a degree-3
    polynomial on the FMA pipe instead of the MUFU unit, spread evenly
    (relative error 7.5e-5, under half an f16 ulp). Worth it where MUFU is
    the bottleneck, as when a score_mod adds a `math.tanh` per score. Outside
    `finite` blocks a -inf score still gives exactly 0.

    With `raw_max` the maxima `m` and `m'` are of the scores `s` themselves,
    not of `x`: `m'[i] = max(m[i], max_j s[i, j])`, and `x`'s maximum is
    `m'[i] * scale * log2(e)`, formed where the exponents need it. The same
    probabilities for `scale > 0` (the runtime launches no other: it negates
    Q for a negative scale); it changes the dependence chain ptxas schedules
    the next mmas around. Such maxima go through `tiledattn.scale_max` before
    an op that takes `x`'s units (`store`, `tma_store`, `finish_rows`,
    `merge_pieces`).

    Example:

    ```mlir
    %p, %m1, %l1, %alpha = tiledattn.online_softmax %s, %m, %l, %scale
        : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
          -> !tiledattn.tile<64x64xf16>
    %p2, %m2, %l2, %alpha2 = tiledattn.online_softmax %s, %m1, %l1, %scale finite
        : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
          -> !tiledattn.tile<64x64xf16>
    %p3, %m3, %l3, %alpha3 = tiledattn.online_softmax %s, %m2, %l2, %scale
        exp2_on_fma(16)
        : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
          -> !tiledattn.tile<64x64xf16>
    %p4, %m4, %l4, %alpha4 = tiledattn.online_softmax %s, %m3, %l3, %scale
        finite raw_max
        : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
          -> !tiledattn.tile<64x64xf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$scores, TiledAttn_AnyTile:$row_max,
                       TiledAttn_AnyTile:$row_sum, F32:$scale,
                       UnitAttr:$finite, OptionalAttr<I64Attr>:$exp2_on_fma,
                       UnitAttr:$raw_max);
  let results = (outs TiledAttn_AnyTile:$probs, TiledAttn_AnyTile:$new_row_max,
                      TiledAttn_AnyTile:$new_row_sum,
                      TiledAttn_AnyTile:$rescale);
  let assemblyFormat = [{
    $scores `,` $row_max `,` $row_sum `,` $scale (`finite` $finite^)?
    (`exp2_on_fma` `(` $exp2_on_fma^ `)`)? (`raw_max` $raw_max^)? attr-dict `:` qualified(type($scores)) `,` qualified(type($row_max)) `->`
    qualified(type($probs))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$scores, "::mlir::Value":$rowMax,
                   "::mlir::Value":$rowSum, "::mlir::Value":$scale,
                   "::mlir::Type":$probsElementType,
                   CArg<"bool", "false">:$finite,
                   CArg<"bool", "false">:$rawMax)>
  ];
  let hasVerifier = 1;
}

def TiledAttn_ScaleMaxOp : TiledAttn_Op<"scale_max", [Pure,
    AllTypesMatch<["row_max", "result"]>]> {
  let summary = "Raw row maxima in the online softmax's units";
  let description = [{
    The `tiledattn.scale_max` operation turns the maxima of the raw scores
    that `tiledattn.online_softmax ... raw_max` keeps into the maxima of
    `x = s * scale * log2(e)` that `store`, `tma_store`, `finish_rows` and
    `merge_pieces` take: `result[i] = row_max[i] * scale * log2(e)` (-inf
    stays -inf; `scale > 0`). `row_max` is an `M` f32 tile.

    Example:

    ```mlir
    %mx = tiledattn.scale_max %m, %scale : !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$row_max, F32:$scale);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $row_max `,` $scale attr-dict `:` qualified(type($row_max))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RowDotOp : TiledAttn_Op<"row_dot", [Pure,
    AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "Dot product of two tiles' rows, in f32";
  let description = [{
    The `tiledattn.row_dot` operation computes `result[i] = sum_j lhs[i, j]
    * rhs[i, j]` in f32 for two `M x N` tiles of one type: a warpgroup's
    f32 accumulators, or f16 / bf16 tiles as `tiledattn.read_rows` reads
    them (an mma's A words). `result` is an `M` f32 tile, a row's value
    each, as `online_softmax`'s statistics are. The backward's first step,
    `D = rowsum(dO * O)` per query row, is one `row_dot`.

    Example:

    ```mlir
    %d = tiledattn.row_dot %do, %o
        : !tiledattn.tile<64x128xbf16> -> !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$lhs, TiledAttn_AnyTile:$rhs);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TiledAttn_StoreRowsOp : TiledAttn_Op<"store_rows", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Store a row's value each into a [B, H, S] f32 memref";
  let description = [{
    The `tiledattn.store_rows` operation writes `dest[b, h, row + i] =
    rows[i]` for each row `i` of an `M` f32 tile with `row + i < S`
    (dimension 2 of `dest`), as `tiledattn.store` writes the lse. Rows at
    or past `S` are not written.

    Example:

    ```mlir
    tiledattn.store_rows %d into %delta[%b, %h, %row]
        : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$rows, TiledAttn_LseMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row);
  let assemblyFormat = [{
    $rows `into` $dest `[` $batch `,` $head `,` $row `]` attr-dict `:`
    qualified(type($rows)) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def TiledAttn_StoreTileOp : TiledAttn_Op<"store_tile", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Store a warpgroup's accumulator tile as it is";
  let description = [{
    The `tiledattn.store_tile` operation writes `dest[b, h, row + i, :] =
    acc[i, :]`, converted to dest's element type (f16 or bf16), for each
    row `i` of a warpgroup's `64 x D` f32 accumulator tile with `row + i <
    S` (dimension 2 of `dest`), two elements a store, as
    `tiledattn.store` writes O but without normalizing. Rows at or past
    `S` are not written. Dimension 3 of `dest` is the tile's columns (a
    dynamic one, a captured tensor's, is taken to be). The backward writes
    a K/V tile's dK and dV this way, once, when one block owns their rows.
    With `col` the tile goes to columns `col ..` of `dest` instead (a
    multiple of 8; dimension 3 of `dest` then holds at least `col` plus the
    tile's): a consumer that holds half of the head dim (the head dim 256
    backward) writes its half.

    Example:

    ```mlir
    tiledattn.store_tile %dk into %grad_k[%b, %h, %row]
        : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc, TiledAttn_HeadMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row,
                       Optional<Index>:$col);
  let assemblyFormat = [{
    $acc `into` $dest `[` $batch `,` $head `,` $row (`,` $col^)? `]`
    attr-dict `:` qualified(type($acc)) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def TiledAttn_LoadRowsOp : TiledAttn_Op<"load_rows", [
    MemoryEffects<[MemRead]>]> {
  let summary = "Read a row's value each from a [B, H, S] f32 memref";
  let description = [{
    The `tiledattn.load_rows` operation reads `rows[i] = source[b, h, row +
    i]` for each row `i` of a warpgroup's `64` f32 row tile (two values a
    thread, in the rows of its accumulators), and `outside` for rows at or
    past `S` (dimension 2 of `source`): the inverse of
    `tiledattn.store_rows`. It lets a program read the backward's saved
    lse and D where their latency hides under an mma, and hand them to
    `tiledattn.exp_from_lse` and `tiledattn.softmax_grad` `per_row` later
    (a global load cannot move past the fence of a `tiledattn.stage`).

    Example (the lse, whose rows past S are -inf, 0xFF800000):

    ```mlir
    %lse_rows = tiledattn.load_rows %lse[%b, %h, %row] outside(0xFF800000)
        : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_LseMemRef:$source, Index:$batch,
                       Index:$head, Index:$row, F32Attr:$outside);
  let results = (outs TiledAttn_AnyTile:$rows);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` `outside` `(` $outside `)`
    attr-dict `:` type($source) `->` qualified(type($rows))
  }];
  let hasVerifier = 1;
}

def TiledAttn_ExpFromLseOp : TiledAttn_Op<"exp_from_lse", [Pure,
    AttrSizedOperandSegments, AllTypesMatch<["scores", "result"]>]> {
  let summary = "The softmax's probabilities from a saved log-sum-exp, per column";
  let description = [{
    The `tiledattn.exp_from_lse` operation recomputes the probabilities of
    a forward softmax whose log-sum-exp was saved: `result[i, j] =
    exp(scale * scores[i, j] - lse[b, h, col + j])`, in f32, taken as
    `exp2(scale * log2(e) * s - lse * log2(e))`. `scores` is a warpgroup's
    f32 accumulator tile of `S^T = K Q^T` (a key per row, a query per
    column), so the saved value broadcasts along columns: `lse` is the
    forward's `[B, H, S]` f32 lse, natural log, and column `j` reads its
    entry `col + j`. Columns at or past `S` (dimension 2 of `lse`) and
    columns whose lse is -inf (a query row that saw no key, whose output
    is zero) give 0.

    With `per_row`, `scores` is `S = Q K^T` as it is (a query per row): row
    `i` reads entry `col + i` (`col` is then the tile's first query), two
    values a thread instead of `N / 4`; rows at or past `S` give 0. The
    backward's two-consumer program takes this form to keep its registers
    for dK and dV. There `lse` may also be the rows as `tiledattn.load_rows`
    read them earlier (a rank-1 f32 tile, no indices), so that the load's
    latency is not paid here.

    Example:

    ```mlir
    %p = tiledattn.exp_from_lse %st, %lse[%b, %h, %col], %scale
        : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    %p2 = tiledattn.exp_from_lse %s, %lse[%b, %h, %row] per_row, %scale
        : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    %p3 = tiledattn.exp_from_lse %s, %lse_rows per_row, %scale
        : !tiledattn.tile<64x64xf32>, !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$scores,
                       AnyTypeOf<[TiledAttn_LseMemRef, TiledAttn_AnyTile]>:$lse,
                       Optional<Index>:$batch, Optional<Index>:$head,
                       Optional<Index>:$col, F32:$scale, UnitAttr:$per_row);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $scores `,` $lse (`[` $batch^ `,` $head `,` $col `]`)?
    (`per_row` $per_row^)? `,` $scale attr-dict
    `:` qualified(type($scores)) `,` type($lse)
  }];
  let hasVerifier = 1;
}

def TiledAttn_SoftmaxGradOp : TiledAttn_Op<"softmax_grad", [Pure,
    AttrSizedOperandSegments, AllTypesMatch<["probs", "grad", "result"]>]> {
  let summary = "The gradient through the softmax, with a per-column row sum";
  let description = [{
    The `tiledattn.softmax_grad` operation takes the gradient of the
    scores from that of the probabilities: `result[i, j] = probs[i, j] *
    (grad[i, j] - delta[b, h, col + j])`, in f32, where `delta` is the
    backward's `D = rowsum(dO * O)` per query (`tiledattn.row_dot`,
    stored by `tiledattn.store_rows`). As for `tiledattn.exp_from_lse`,
    the tiles are transposed (a key per row, a query per column: `P^T` and
    `dP^T = V dO^T`), so column `j` reads `delta[b, h, col + j]`; columns
    at or past `S` (dimension 2 of `delta`) read 0. The softmax's scale
    is left to the caller (it multiplies dK and dQ once, at the end).
    With `per_row` the tiles are `P` and `dP = dO V^T` as they are and row
    `i` reads `delta[b, h, col + i]`, as in `tiledattn.exp_from_lse`, and
    `delta` may be the rows as `tiledattn.load_rows` read them earlier.
    With `scale(s)` the result is multiplied by `s` (the softmax's scale
    taken here, so that dQ = dS K and dK = dS^T Q come out scaled).

    Example:

    ```mlir
    %ds = tiledattn.softmax_grad %p, %dp, %delta[%b, %h, %col]
        : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    %ds2 = tiledattn.softmax_grad %p2, %dp2, %delta[%b, %h, %row] per_row scale(%scale)
        : !tiledattn.tile<64x64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$probs, TiledAttn_AnyTile:$grad,
                       AnyTypeOf<[TiledAttn_LseMemRef, TiledAttn_AnyTile]>:$delta,
                       Optional<Index>:$batch, Optional<Index>:$head,
                       Optional<Index>:$col, UnitAttr:$per_row,
                       Optional<F32>:$scale);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $probs `,` $grad `,` $delta (`[` $batch^ `,` $head `,` $col `]`)?
    (`per_row` $per_row^)? (`scale` `(` $scale^ `)`)? attr-dict
    `:` qualified(type($probs)) `,` type($delta)
  }];
  let hasVerifier = 1;
}

def TiledAttn_ReduceAddOp : TiledAttn_Op<"reduce_add", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Add an accumulator tile atomically into a [B, H, S, D] f32 memref";
  let description = [{
    The `tiledattn.reduce_add` operation adds a warpgroup's f32
    accumulator tile into global memory: `dest[b, h, row + i, j] +=
    acc[i, j]` for each row `i` with `row + i < S` (dimension 2 of `dest`)
    and each of the tile's `N` columns (dimension 3 of `dest` must be `N`).
    The adds are atomic, so blocks that own the same rows may add in any
    order: the backward's dQ, to which every K/V tile adds `dS K`, is
    accumulated this way in f32 and then scaled and cast by a second
    kernel. Rows at or past `S` are not written. The order of the adds is
    not fixed, so the sums may differ in their last bits run to run.

    Example:

    ```mlir
    tiledattn.reduce_add %dq into %dq_accum[%b, %h, %row]
        : !tiledattn.tile<64x128xf32>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc,
                       MemRefRankOf<[F32], [4]>:$dest, Index:$batch,
                       Index:$head, Index:$row);
  let assemblyFormat = [{
    $acc `into` $dest `[` $batch `,` $head `,` $row `]` attr-dict `:`
    qualified(type($acc)) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def TiledAttn_BulkReduceAddOp : TiledAttn_Op<"bulk_reduce_add", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Add an accumulator tile into a fragment-ordered f32 block by one bulk reduction";
  let description = [{
    The `tiledattn.bulk_reduce_add` operation adds a warpgroup's f32
    `64 x N` accumulator tile into block `block` of `dest[b, h]` by one
    reduction of the TMA unit (`cp.reduce.async.bulk ... .add.f32`, done
    in L2) instead of `64 N` atomic adds (`tiledattn.reduce_add`). The
    block is the tile in the warpgroup's register order, not row-major:
    `dest[b, h, block, 2 (128 j + t) + e] += acc[r, c]` for thread `t` of
    the warpgroup and its registers `2j + e` (`j < N / 4`, `e < 2`), which
    hold row `r = 16 (t / 32) + 8 (j % 2) + (t % 32) / 4` and column
    `c = 8 (j / 2) + 2 (t % 4) + e`. So `dest`'s dimension 3 is `64 N` and
    a second pass puts the rows in order (the backward's dQ postprocess,
    tiledattn.backward_kernels).

    Each thread writes its registers into `stage` as plain f32 in that
    order (consecutive threads, consecutive 8 bytes: no bank conflicts; the
    tile's swizzled layout is not used, so `stage` must only hold `256 N`
    bytes), the warpgroup syncs, and one thread issues the reduction.
    Before writing, the op waits until that thread's previous bulk copies
    have read shared memory; `tiledattn.tma_store_wait` after the last one
    keeps the kernel alive until its stage is read. `dest` is contiguous
    (identity layout) and 16-byte aligned, as a fresh torch tensor is. The
    order of the adds is not fixed.

    Example:

    ```mlir
    tiledattn.bulk_reduce_add %dq into %dq_frags[%b, %h, %i] via %buf
        : !tiledattn.tile<64x128xf32>, memref<?x?x?x8192xf32>, !tiledattn.smem<128x128xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc,
                       MemRefRankOf<[F32], [4]>:$dest, Index:$batch,
                       Index:$head, Index:$block, TiledAttn_SmemType:$stage);
  let assemblyFormat = [{
    $acc `into` $dest `[` $batch `,` $head `,` $block `]` `via` $stage
    attr-dict `:` qualified(type($acc)) `,` type($dest) `,`
    qualified(type($stage))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RescaleOp : TiledAttn_Op<"rescale", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "Multiply each row of an accumulator tile by a per-row factor";
  let description = [{
    The `tiledattn.rescale` operation computes `result[i, j] = acc[i, j] *
    factor[i]`. `acc` is an `M x N` f32 tile and `factor` an `M` f32 tile.

    Example:

    ```mlir
    %acc1 = tiledattn.rescale %acc, %alpha
        : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc, TiledAttn_AnyTile:$factor);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $acc `,` $factor attr-dict `:` qualified(type($acc)) `,`
    qualified(type($factor))
  }];
  let hasVerifier = 1;
}

def TiledAttn_TruncateOp : TiledAttn_Op<"truncate", [Pure]> {
  let summary = "A warpgroup's f32 tile as f16 or bf16 words of an mma's A";
  let description = [{
    The `tiledattn.truncate` operation rounds a 64-row f32 register tile
    (an accumulator's layout) to f16 or bf16, packed as the words a
    register A of `tiledattn.mma_async` takes. A program that takes the
    online softmax's P in f32 packs it here, after a wait: new A words
    written while an mma that reads the previous ones is in flight make
    ptxas serialize the kernel's wgmmas.

    Example:

    ```mlir
    %p16 = tiledattn.truncate %p : !tiledattn.tile<64x64xf32> to !tiledattn.tile<64x64xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$tile);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $tile attr-dict `:` qualified(type($tile)) `to` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TiledAttn_ResizeOp : TiledAttn_Op<"resize", [Pure]> {
  let summary = "A warpgroup's register tile with fewer columns, or with "
                "zero columns added";
  let description = [{
    The `tiledattn.resize` operation returns the first columns of a 64-row
    register tile (an accumulator or an mma's A), or the tile with zero
    columns after its own: `result[i, j] = tile[i, j]` where `tile` has a
    column `j`, else 0. Rows and element type stay; the columns are a
    multiple of 16. In registers a tile's first columns are its first
    words, so it costs nothing but the zeros. A narrow block's P (the keys
    of a causal diagonal's first half) is widened this way to the type a
    loop carries, and narrowed again for a P.V over those keys only
    (`mma_async ... b_rows`).

    Example:

    ```mlir
    %wide = tiledattn.resize %p : !tiledattn.tile<64x64xbf16> to !tiledattn.tile<64x128xbf16>
    %p64 = tiledattn.resize %wide : !tiledattn.tile<64x128xbf16> to !tiledattn.tile<64x64xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$tile);
  let results = (outs TiledAttn_AnyTile:$result);
  let assemblyFormat = [{
    $tile attr-dict `:` qualified(type($tile)) `to` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TiledAttn_StoreOp : TiledAttn_Op<"store", [MemoryEffects<[MemWrite]>,
    AllTypesMatch<["row_max", "row_sum"]>]> {
  let summary = "Normalize and store an output tile, and optionally its log-sum-exp";
  let description = [{
    The `tiledattn.store` operation finishes the online softmax. For each row
    `i` of the `M x D` f32 accumulator with `row + i < Sq` (dimension 2 of
    `dest`):

    ```
    dest[b, h, row + i, :] = acc[i, :] / l[i]              (converted to dest's type)
    lse[b, h, row + i]     = (m[i] + log2(l[i])) * ln(2)   (natural log, when given)
    ```

    with `m` and `l` as produced by `tiledattn.online_softmax`. A row with
    `l[i] = 0` (no key took part) stores zeros and an lse of -inf. Rows at
    or past `Sq` are not written.

    Example:

    ```mlir
    tiledattn.store %acc, %m, %l into %o[%b, %h, %row] lse(%lse)
        : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>,
          memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>,
          memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc, TiledAttn_AnyTile:$row_max,
                       TiledAttn_AnyTile:$row_sum, TiledAttn_HeadMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row,
                       Optional<TiledAttn_LseMemRef>:$lse);
  let assemblyFormat = [{
    $acc `,` $row_max `,` $row_sum `into` $dest `[` $batch `,` $head `,` $row `]`
    (`lse` `(` $lse^ `)`)? attr-dict `:` qualified(type($acc)) `,`
    qualified(type($row_max)) `,` type($dest) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

include "tiledattn/Dialect/TiledAttn/IR/TiledAttnRingOps.td"
include "tiledattn/Dialect/TiledAttn/IR/TiledAttnRoleOps.td"
include "tiledattn/Dialect/TiledAttn/IR/TiledAttnMmaOps.td"
include "tiledattn/Dialect/TiledAttn/IR/TiledAttnScoreOps.td"

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNOPS_TD
