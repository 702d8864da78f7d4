//===- TiledAttnScoreOps.td - Modifications of the scores ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What attention variants do to the scores between Q.K^T and the softmax,
// as a region on one score: softcap, ALiBi, relative biases, masks by
// index (windows, documents). FlexAttention's score_mod, in tile IR.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNSCOREOPS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNSCOREOPS_TD

def TiledAttn_ScoreModOp : TiledAttn_Op<"score_mod", [
    RecursiveMemoryEffects, SingleBlock,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "Apply a scalar function of the score and its indices to a score tile";
  let description = [{
    The `tiledattn.score_mod` operation takes an `M x N` f32 score tile whose
    element `(i, j)` belongs to query row `row + i` and key row `col + j`,
    and replaces each element by its body applied to the score and the two
    indices:

    ```
    result[i, j] = body(scores[i, j], row + i, col + j)
    ```

    The body is one block with arguments `(f32, index, index)` ending in a
    `tiledattn.yield` of one f32; it may use values from outside (the batch
    and head, the scale, captured tensors it reads with `memref.load`) but
    may not write memory or touch tiles. A score the body sets to -inf is
    masked: the online softmax gives it probability 0. The body is applied
    to every element, including those of keys at or past the sequence's
    end and rows past the query's end (the mask and the store take care of
    them), so indices it uses to read a tensor must be kept in range by the
    body.

    It is lowered on a warpgroup's accumulator tiles (`tiledattn-lower-mma`):
    the body is copied once per register a thread holds.

    Example (softcap 30 on raw scores; `arith` and `math` ops in the body):

    ```mlir
    %capped = tiledattn.score_mod %s[%row, %col] : !tiledattn.tile<64x128xf32> {
    ^bb0(%x: f32, %q_idx: index, %kv_idx: index):
      %cap = arith.constant 30.0 : f32
      %t = arith.divf %x, %cap : f32
      %h = math.tanh %t : f32
      %y = arith.mulf %h, %cap : f32
      tiledattn.yield %y : f32
    }
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$scores, Index:$row, Index:$col);
  let results = (outs TiledAttn_AnyTile:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $scores `[` $row `,` $col `]` attr-dict `:` qualified(type($scores)) custom<EnclosedRegion>($body)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNSCOREOPS_TD
