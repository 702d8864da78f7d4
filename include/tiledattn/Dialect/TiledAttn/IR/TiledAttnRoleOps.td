//===- TiledAttnRoleOps.td - Warp roles ---------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The warp roles of a warp-specialized kernel as regions: a producer
// warpgroup and consumer warpgroups with their register budgets, and the
// turns the consumers take issuing their mmas (ping-pong).
// `tiledattn-lower-roles` turns them into the warpgroup split, setmaxnreg and
// named barriers.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNROLEOPS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNROLEOPS_TD

include "mlir/Interfaces/ControlFlowInterfaces.td"

def TiledAttn_WarpSpecializeOp : TiledAttn_Op<"warp_specialize", [
    NoTerminator, RecursiveMemoryEffects]> {
  let summary = "A producer warpgroup and consumer warpgroups, side by side";
  let description = [{
    The `tiledattn.warp_specialize` operation splits the thread block into
    warpgroups of 128 threads: warpgroup 0 runs the `producer` region, with
    `producer_regs` registers per thread, and warpgroups 1 to `consumers`
    run the `consumer` region, with `consumer_regs` registers per thread
    and their index `c` (0 to `consumers - 1`) as the region's argument.
    The block has `128 * (consumers + 1)` threads. A warpgroup's registers
    move from the launch's count to its role's budget (setmaxnreg), so
    `128 * (producer_regs + consumers * consumer_regs)` must fit the
    multiprocessor's 65536; budgets are multiples of 8 in [24, 256].

    Example:

    ```mlir
    tiledattn.warp_specialize producer regs(24) {
      // TMA loads into rings
    } consumers(2) regs(240) {
    ^bb0(%c: index):
      // mmas and the softmax on 64 query rows each
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$consumers,
                       I64Attr:$producer_regs, I64Attr:$consumer_regs);
  let regions = (region MaxSizedRegion<1>:$producer,
                        MaxSizedRegion<1>:$consumer);
  let assemblyFormat = [{
    `producer` `regs` `(` $producer_regs `)` $producer
    `consumers` `(` $consumers `)` `regs` `(` $consumer_regs `)` $consumer
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Threads per block: one warpgroup per role instance.
    int64_t getNumThreads() { return 128 * (getConsumers() + 1); }
  }];
}

def TiledAttn_YieldOp : TiledAttn_Op<"yield", [
    Pure, Terminator, ReturnLike, ParentOneOf<["TurnOp", "ScoreModOp", "SdpaOp"]>]> {
  let summary = "The values a tiledattn region hands out";
  let description = [{
    The `tiledattn.yield` operation ends a `tiledattn.turn` body, whose
    results its operands become, or a `tiledattn.score_mod` or
    `tiledattn.sdpa` score_mod body (the new score).

    Example:

    ```mlir
    tiledattn.yield %s : !tiledattn.tile<64x128xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

def TiledAttn_TurnOp : TiledAttn_Op<"turn", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "Work the consumer warpgroups do one at a time, in rotation";
  let description = [{
    The `tiledattn.turn` operation runs its body in each consumer warpgroup
    of the enclosing `tiledattn.warp_specialize` in turn: consumer 0's first
    turn, then consumer 1's, ..., then consumer 0's second, and so on. It
    holds the issue of a consumer's mmas, so that one consumer's softmax
    runs while another's mmas hold the tensor cores (ping-pong). Every
    consumer must take the same number of turns, or the rotation stops. The
    body's `tiledattn.yield` operands are the turn's results.

    Example:

    ```mlir
    %f = tiledattn.turn -> !tiledattn.tile<64x128xf32> {
      ...
      tiledattn.yield %s : !tiledattn.tile<64x128xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNROLEOPS_TD
