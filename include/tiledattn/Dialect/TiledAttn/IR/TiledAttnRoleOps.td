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

    With `uniform_index` the index reaches the consumer region through a
    warp reduction (redux.sync), so ptxas knows it is the same in every lane
    and keeps what follows from it (Q's descriptors, the turn barriers, the
    rows' arithmetic) on the uniform datapath. It changes no result, only
    how ptxas allocates registers, which may be faster or slower
    (docs/Schedules.md, `uniform_consumer`). With `narrow_index` the index
    is computed in 32 bits and zero-extended (one register, its high word
    known zero), likewise only a matter of register allocation
    (`narrow_consumer_index`).

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
                       I64Attr:$producer_regs, I64Attr:$consumer_regs,
                       UnitAttr:$uniform_index, UnitAttr:$narrow_index);
  let regions = (region MaxSizedRegion<1>:$producer,
                        MaxSizedRegion<1>:$consumer);
  let assemblyFormat = [{
    `producer` `regs` `(` $producer_regs `)` custom<EnclosedRegion>($producer)
    `consumers` `(` $consumers `)` `regs` `(` $consumer_regs `)`
    (`uniform_index` $uniform_index^)? (`narrow_index` $narrow_index^)?
    custom<EnclosedRegion>($consumer) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Threads per block: one warpgroup per role instance.
    int64_t getNumThreads() { return 128 * (getConsumers() + 1); }
    /// Registers per thread at the kernel's entry (its .maxnreg), which
    /// the roles' budgets share.
    int64_t getEntryRegs() { return entryRegisters(getNumThreads()); }
  }];
}

def TiledAttn_YieldOp : TiledAttn_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["TurnOp", "ScoreModOp", "SdpaOp", "ForEachTileOp"]>]> {
  let summary = "The values a tiledattn region hands out";
  let description = [{
    The `tiledattn.yield` operation ends a `tiledattn.turn` body, whose
    results its operands become, a `tiledattn.for_each_tile` body (the
    values the next tile starts from), a `tiledattn.score_mod` or
    `tiledattn.sdpa` score_mod body (the new score), or a `tiledattn.sdpa`
    kv_rows body (the row of a K/V block).

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
  let assemblyFormat = "(`->` type($results)^)? custom<YieldingRegion>($body) attr-dict";
  let hasVerifier = 1;
}

def TiledAttn_ConsumersSyncOp : TiledAttn_Op<"consumers_sync"> {
  let summary = "All consumer warpgroups meet before going on";
  let description = [{
    The `tiledattn.consumers_sync` operation waits until every consumer
    warpgroup of the enclosing `tiledattn.warp_specialize` has reached it
    (one named barrier of `128 x consumers` threads; the producer does not
    take part). A consumer then reads what the others wrote to shared memory
    before it: the backward's dQ, where each consumer stages its keys' dS^T
    and then multiplies the whole of it.

    Example:

    ```mlir
    tiledattn.stage %ds into %dsbuf[%row] : !tiledattn.tile<64x64xf32>, !tiledattn.smem<128x64xbf16>
    tiledattn.consumers_sync
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def TiledAttn_ForEachTileOp : TiledAttn_Op<"for_each_tile", [
    RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "The query tiles a thread block runs: its own, every "
                "grid-th one (persistent), or the next one free (dynamic)";
  let description = [{
    The `tiledattn.for_each_tile` operation runs its body once for each
    query tile the thread block owns, out of `q_blocks x heads x batches`
    tiles (a tile: `block_m` query rows of one head of one batch). The
    body's arguments are the tile's query block, head and batch, the number
    of tiles this block ran before it (`done`, 0 for the first: the position
    of per-tile ring slots such as Q's), then (`dynamic` only, below) the
    tile's rank or its slot, then the `iter_args`: values carried from one
    tile to the next (the ring position of the next K/V block, say), which
    the body's `tiledattn.yield` hands on and the last tile's become the
    results.

    Which tiles a block owns follows the kernel's schedule, so that the
    launch the bundle's manifest describes always agrees with the program:
    one, the block's own (query block `blockIdx.x`, head `blockIdx.y`, batch
    `blockIdx.z`), or with `persistent` the tiles `blockIdx.x`,
    `blockIdx.x + gridDim.x`, ... in the order query blocks fastest, then
    heads, then batches. With `longest_first` the query blocks run from the
    last one down (causal rows: the longest first, so short tiles fill the
    tail). With `across_heads` (persistent only) heads and batches run
    fastest and query blocks slowest, so that the blocks running at once
    share a query block's rows across heads; with `longest_first` as well,
    every other full round of the grid runs backwards, so that no block
    always gets the longest tile of a round. A warp-specialized program puts
    one in each role, so that the producer and the consumers walk the same
    tiles.

    With `dynamic` (the schedule's `dynamic_tiles`) a block takes its tiles
    one at a time, in the order above, from a counter the launch shares
    (the manifest's `tile_counter`): it starts at rank `blockIdx.x` and, at
    the start of each tile, asks for the next (the atomic's latency hides
    under the tile); a block that finishes early takes more. This form,
    the producer's, gives the body the tile's rank (i32) after `done`, and
    runs in one thread (every thread that runs it takes ranks). The
    consumers learn the producer's ranks from the tags of its puts: with
    `ranks_from %ring` the loop takes the slot of position `done` of
    `%ring` (a `tiledattn.ring.get`, waited for), reads the rank in its tag
    and runs the body with the slot and its token after `done`, which the
    body releases; a rank past the last tile ends the loop (the producer's
    end mark: a tagged put that copies nothing), and the loop releases
    that slot.

    With `split_tail(%kv_blocks)` (the schedule's `split_tail`; persistent,
    tiles of `%kv_blocks` K/V blocks each) the tiles of the last, partial
    round of the grid are cut along their K/V blocks: of the
    `(tiles mod gridDim.x) * %kv_blocks` (tile, block) steps left after the
    full rounds, block `j` runs `[j * n / G, (j + 1) * n / G)`, one or two
    pieces of tiles, so that every block ends at about the same time. The
    body takes three more arguments after `done`: the piece's first K/V
    block and its number of blocks (0 and `%kv_blocks` for a whole tile),
    and `holders`, the number of blocks after this one that run the rest of
    its tile (0 unless the piece starts a tile that others finish). A piece
    hands its partial O to the one that starts its tile with
    `tiledattn.merge_pieces`; only that one stores. (A tail of fewer steps
    than blocks runs as a full round.)

    Example:

    ```mlir
    %kv = tiledattn.for_each_tile %q_blocks, %heads, %batches longest_first
        iter_args(%c0 : index) -> index {
    ^bb0(%q_block: index, %head: index, %batch: index, %done: index,
         %kv_first: index):
      // this tile's K/V blocks at ring positions %kv_first + j
      tiledattn.yield %kv_next : index
    }
    // the producer of a dynamic loop, and a consumer
    %r:2 = tiledattn.for_each_tile %q_blocks, %heads, %batches dynamic
        iter_args(%c0, %c0 : index, index) -> (index, index) {
    ^bb0(%q_block: index, %head: index, %batch: index, %done: index,
         %rank: i32, %kv_first: index, %n: index):
      tiledattn.ring.put %q_ring[%done] tag(%rank) : !tiledattn.ring<2, 128x128xbf16> {
        ...
      }
      tiledattn.yield %kv_next, %n_next : index, index
    }
    tiledattn.ring.put %q_ring[%r#1] tag(%tiles) : !tiledattn.ring<2, 128x128xbf16> {
    ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
    }
    %kv = tiledattn.for_each_tile %q_blocks, %heads, %batches dynamic
        ranks_from %q_ring : !tiledattn.ring<2, 128x128xbf16>
        iter_args(%c0 : index) -> index {
    ^bb0(%q_block: index, %head: index, %batch: index, %done: index,
         %q_slot: !tiledattn.smem<128x128xbf16>, %q_token: !tiledattn.token,
         %kv_first: index):
      ...
      tiledattn.ring.release %q_ring, %q_token : !tiledattn.ring<2, 128x128xbf16>
      tiledattn.yield %kv_next : index
    }
    // split_tail: a piece of a tile, K/V blocks [%first, %first + %count)
    %kv2 = tiledattn.for_each_tile %q_blocks, %heads, %batches
        split_tail(%kv_blocks) iter_args(%c0 : index) -> index {
    ^bb0(%q_block: index, %head: index, %batch: index, %done: index,
         %first: index, %count: index, %holders: index, %kv_first: index):
      ...
      tiledattn.yield %kv_next : index
    }
    ```
  }];
  let arguments = (ins Index:$q_blocks, Index:$heads, Index:$batches,
                       Optional<TiledAttn_RingType>:$ranks_from,
                       Optional<Index>:$split_tail,
                       Variadic<AnyType>:$inits, UnitAttr:$longest_first,
                       UnitAttr:$across_heads, UnitAttr:$dynamic);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $q_blocks `,` $heads `,` $batches (`longest_first` $longest_first^)?
    (`across_heads` $across_heads^)? (`dynamic` $dynamic^)?
    (`ranks_from` $ranks_from^ `:` qualified(type($ranks_from)))?
    (`split_tail` `(` $split_tail^ `)`)?
    (`iter_args` `(` $inits^ `:` type($inits) `)`)? (`->` type($results)^)?
    custom<EnclosedRegion>($body) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's first arguments: q block, head, batch, done.
    static constexpr unsigned kNumTileArguments = 4;
    /// split_tail: the piece's first block, its blocks, and the holders.
    static constexpr unsigned kNumPieceArguments = 3;
    /// The body's arguments before the iter_args: the tile's, then with
    /// `dynamic` its rank, or with `ranks_from` its slot and token, or with
    /// `split_tail` the piece's.
    unsigned getNumLeadingArguments() {
      if (getSplitTail())
        return kNumTileArguments + kNumPieceArguments;
      if (!getDynamic())
        return kNumTileArguments;
      return kNumTileArguments + (getRanksFrom() ? 2 : 1);
    }
    /// With ranks_from, the body's argument that holds the token of the
    /// slot the loop took (its release is the body's); else null.
    ::mlir::BlockArgument getTakenToken() {
      ::mlir::Block &body = getBody().front();
      unsigned index = kNumTileArguments + 1;
      if (!getRanksFrom() || body.getNumArguments() <= index)
        return {};
      return body.getArgument(index);
    }
    /// The body's arguments after the leading ones.
    ::mlir::Block::BlockArgListType getCarriedArguments() {
      return getBody().front().getArguments().drop_front(
          getNumLeadingArguments());
    }
  }];
}

def TiledAttn_UniformOp : TiledAttn_Op<"uniform", [
    NoMemoryEffect, AllTypesMatch<["value", "result"]>]> {
  let summary = "An index or condition the same in every lane of a warp, "
                "said so";
  let description = [{
    The `tiledattn.uniform` operation returns `value`, which the program
    says is the same in every lane of the warp (computed, say, from a
    consumer warpgroup's index and the tile). The lowering passes an index
    through a warp reduction (redux.sync) and a condition through a vote
    (vote.sync), so that ptxas knows it and keeps what follows from it (a
    loop bound, and the ring slots and descriptors of that loop) on the
    uniform datapath, and branches on a condition without a reconvergence
    barrier; unsaid, a per-consumer loop bound at D = 256 moved that
    arithmetic into registers the softmax needed (docs/perf-notes.md,
    skip_masked_blocks). Every lane of the warp must reach it.

    Example:

    ```mlir
    %mine = tiledattn.uniform %blocks : index
    %narrow = tiledattn.uniform %diagonal : i1
    ```
  }];
  let arguments = (ins AnyTypeOf<[Index, I1]>:$value);
  let results = (outs AnyTypeOf<[Index, I1]>:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def TiledAttn_FirstQueryBlockOp : TiledAttn_Op<"first_query_block", [Pure]> {
  let summary = "The first query block a key tile meets under the program's "
                "mask";
  let description = [{
    The `tiledattn.first_query_block` operation gives the first of
    `query_blocks` blocks of `query_rows` queries that key tile `key_tile`
    (keys `key_tile * key_rows ..`) meets: 0 without a mask; with `causal`
    (torch's top-left: query `i` sees keys `0 .. i`) the block that holds
    query `key_tile * key_rows`, `min(key_tile * key_rows / query_rows,
    query_blocks)`, since the blocks before it see none of the tile's keys.
    A backward program, which walks the query blocks for each key tile,
    starts its loops there, so that `tiledattn-derive-program{mask=causal}`
    derives its causal form by setting `causal` here (and on its
    `tiledattn.mask`). `tiledattn-lower-roles` lowers it to `arith`.

    Example (64-query blocks, 128-key tiles):

    ```mlir
    %first = tiledattn.first_query_block %kt of %qb rows(64) keys(128) causal
    ```
  }];
  let arguments = (ins Index:$key_tile, Index:$query_blocks,
                       I64Attr:$query_rows, I64Attr:$key_rows,
                       UnitAttr:$causal);
  let results = (outs Index:$first);
  let assemblyFormat = [{
    $key_tile `of` $query_blocks `rows` `(` $query_rows `)` `keys` `(`
    $key_rows `)` (`causal` $causal^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The op's value as arith ops at `b`'s insertion point.
    ::mlir::Value expand(::mlir::OpBuilder &b);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TiledAttn_KeyBlockEndOp : TiledAttn_Op<"key_block_end", [Pure]> {
  let summary = "The end of the key blocks a query tile meets under the "
                "program's mask";
  let description = [{
    The `tiledattn.key_block_end` operation is `tiledattn.first_query_block`
    seen from the other side: the end (one past the last) of `key_blocks`
    blocks of `key_rows` keys that query tile `query_tile` (queries
    `query_tile * query_rows ..`) meets: `key_blocks` without a mask; with
    `causal` (torch's top-left: query `i` sees keys `0 .. i`) one past the
    block that holds the tile's last query's key,
    `min(ceil((query_tile + 1) * query_rows / key_rows), key_blocks)`, since
    the blocks after it hold only keys after every query of the tile. A
    program that walks the key blocks for each query tile (the
    deterministic backward's dQ) ends its loops there, so that
    `tiledattn-derive-program{mask=causal}` derives its causal form by
    setting `causal` here (and on its `tiledattn.mask`).
    `tiledattn-lower-roles` lowers it to `arith`.

    Example (128-query tiles, 64-key blocks):

    ```mlir
    %end = tiledattn.key_block_end %qt of %kb rows(128) keys(64) causal
    ```
  }];
  let arguments = (ins Index:$query_tile, Index:$key_blocks,
                       I64Attr:$query_rows, I64Attr:$key_rows,
                       UnitAttr:$causal);
  let results = (outs Index:$end);
  let assemblyFormat = [{
    $query_tile `of` $key_blocks `rows` `(` $query_rows `)` `keys` `(`
    $key_rows `)` (`causal` $causal^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The op's value as arith ops at `b`'s insertion point.
    ::mlir::Value expand(::mlir::OpBuilder &b);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNROLEOPS_TD
