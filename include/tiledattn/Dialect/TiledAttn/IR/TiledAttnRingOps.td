//===- TiledAttnRingOps.td - Rings of shared-memory slots ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The producer/consumer hand-off of a warp-specialized kernel as ops: a ring
// of shared-memory slots, filled by TMA in `ring.put`, read between
// `ring.get` and `ring.release`. `tiledattn-lower-rings` turns them into
// shared memory, mbarriers and TMA copies; nothing else speaks of barriers.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNRINGOPS_TD
#define TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNRINGOPS_TD

defvar TiledAttn_RingPositionDoc = [{
    `position` counts the ring's uses from the start of the kernel: it names
    slot `position mod N` and that slot's phase `(position / N) mod 2`. The
    producer and the consumers must use the same positions in the same
    order; the k-th use of a ring has position k.
}];

def TiledAttn_RingOp : TiledAttn_Op<"ring", [MemoryEffects<[MemAlloc]>]> {
  let summary = "A ring of shared-memory slots with a full and an empty barrier each";
  let description = [{
    The `tiledattn.ring` operation allocates the `N` slots of its
    `!tiledattn.ring<N, RxCxT>` result in shared memory, and for every slot a
    "full" barrier (completed by the producer's copies) and an "empty" one
    (completed by `releases` arrivals, one per consumer warp that reads the
    slot). It sits in the entry block of a kernel function, so that the
    barriers are set up once, before any role runs.

    With `parts(P)` each slot fills in `P` parts, equal ranges of its
    columns (whole 64-column atoms), each with a full barrier of its own:
    a consumer can start on the first part of a slot while the others
    still arrive (a `partial` `tiledattn.ring.get`, whose reader names it
    in `after_parts`). One-tile D = 256 kernels start their first
    `Q K^T` on Q's first atom this way (`q_by_atom`).

    With `cluster(2)` the ring is shared by the two blocks of a thread-block
    cluster (the schedule's `kv_multicast`): each block's puts copy its half
    of the slot's rows (block rank r: rows `r * R / 2 ..`) into the slot of
    both blocks by TMA multicast, so each block reads half the bytes from
    L2, and a slot is empty once the readers of both blocks released it
    (each release arrives on both blocks' empty barriers). Both blocks must
    put the same rows in the same order. The slot's rows must halve into
    whole swizzle periods (a multiple of 16 rows); no parts.

    Example:

    ```mlir
    %k = tiledattn.ring releases(8) : !tiledattn.ring<2, 128x128xbf16>
    %q = tiledattn.ring releases(8) parts(4) : !tiledattn.ring<1, 128x256xbf16>
    %v = tiledattn.ring releases(8) cluster(2) : !tiledattn.ring<2, 128x128xbf16>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$releases,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$parts,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$cluster);
  let results = (outs TiledAttn_RingType:$ring);
  let assemblyFormat = [{
    `releases` `(` $releases `)` (`parts` `(` $parts^ `)`)?
    (`cluster` `(` $cluster^ `)`)? attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parts each slot fills in (1 without `parts`).
    int64_t getNumParts() { return getParts().value_or(1); }
    /// The blocks that share each slot (1 without `cluster`).
    int64_t getClusterBlocks() { return getCluster().value_or(1); }
  }];
}

def TiledAttn_RingPutOp : TiledAttn_Op<"ring.put", [
    SingleBlock, NoTerminator, AttrSizedOperandSegments]> {
  let summary = "Fill the next slot of a ring by TMA";
  let description = !strconcat([{
    The `tiledattn.ring.put` operation waits until the slot of `position` is
    empty (its previous use released), then runs its body with the slot as
    the block argument. The body's `tiledattn.tma_load`s fill the slot; it
    becomes full, and `tiledattn.ring.get` on it returns, once their bytes
    have landed. The loads must cover the slot exactly.

    On a ring with `parts(P)`, `parts(first to end)` fills parts
    `first .. end - 1` only (their columns; each completes on its own full
    barrier): the slot of one position may be filled by several puts of
    disjoint part ranges, say its first part before the first K block and
    the rest after. Every part of a position must be put exactly once.

    With `with %other[%q]` the put fills the slot of another ring's
    position too (its body takes both slots), part by part on this ring's
    barriers: part `p` of both slots, the same columns, completes on this
    slot's part-`p` barrier, so that the first mma can start on the first
    part of both (`k0_by_atom`: Q's and the first K block's atoms). The
    other slot's own full barrier completes once the copies are issued:
    its reader takes it with a `partial` get and names this slot's token in
    `after_parts` too.

    With `tag(%t)` the put also leaves the i32 `%t` in a word beside the
    slot, written before the slot becomes full, which its readers take with
    `tiledattn.ring.tag` (a dynamic tile loop's rank, handed from the
    producer to the consumers with Q). A tagged put may copy nothing (an
    empty body): the slot becomes full at once and carries only the tag,
    say the end mark of a dynamic tile loop.
  }], TiledAttn_RingPositionDoc, [{

    Example:

    ```mlir
    tiledattn.ring.put %ring[%p] : !tiledattn.ring<2, 128x128xbf16> {
    ^bb0(%slot: !tiledattn.smem<128x128xbf16>):
      tiledattn.tma_load %k[%b, %h, %row] into %slot
          : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x128xbf16>
    }
    tiledattn.ring.put %q_ring[%p] parts(1 to 4) : !tiledattn.ring<1, 128x256xbf16> {
    ^bb0(%slot: !tiledattn.smem<128x256xbf16>):
      tiledattn.tma_load %q[%b, %h, %row] into %slot
          : memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x256xbf16>
    }
    tiledattn.ring.put %q_ring[%p] with %k_ring[%kv]
        : !tiledattn.ring<1, 128x256xbf16>, !tiledattn.ring<2, 64x256xbf16> {
    ^bb0(%slot: !tiledattn.smem<128x256xbf16>, %k_slot: !tiledattn.smem<64x256xbf16>):
      tiledattn.tma_load %q[%b, %h, %row] into %slot
          : memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<128x256xbf16>
      tiledattn.tma_load %k[%b, %h_kv, %c0] into %k_slot
          : memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>,
            !tiledattn.smem<64x256xbf16>
    }
    ```
  }]);
  let arguments = (ins TiledAttn_RingType:$ring, Index:$position,
                       Optional<TiledAttn_RingType>:$with_ring,
                       Optional<Index>:$with_position,
                       Optional<I32>:$tag,
                       OptionalAttr<I64Attr>:$first_part,
                       OptionalAttr<I64Attr>:$end_part);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $ring `[` $position `]`
    (`parts` `(` $first_part^ `to` $end_part `)`)?
    (`with` $with_ring^ `[` $with_position `]`)?
    (`tag` `(` $tag^ `)`)? attr-dict `:`
    qualified(type($ring)) (`,` qualified(type($with_ring))^)? custom<EnclosedRegion>($body)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    RingType getRingType() { return ::llvm::cast<RingType>(getRing().getType()); }
    /// The slot, as the body sees it.
    ::mlir::BlockArgument getSlot() { return getBody().front().getArgument(0); }
    /// With `with`, the other ring's slot, as the body sees it.
    ::mlir::Value getWithSlot() {
      return getWithRing() ? getBody().front().getArgument(1) : ::mlir::Value();
    }
    /// The parts [first, end) it fills: all of the ring's without `parts`.
    std::pair<int64_t, int64_t> getPartRange();
  }];
}

def TiledAttn_TmaLoadOp : TiledAttn_Op<"tma_load", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Copy rows of one head into a ring slot by TMA";
  let description = !strconcat([{
    The `tiledattn.tma_load` operation copies rows `row .. row + R - 1` of
    `source[b, h, :, :]` into the `R x C` slot it is given, one TMA box per
    64-column atom, asynchronously. Given `N` rows, it copies the slot's
    `R` rows in `N` equal pieces, piece `i` from rows `row_i .. row_i +
    R / N - 1` (a paged KV cache's pages of fewer keys than a block): each
    piece a multiple of 8 rows, the 128-byte swizzle's period, one box per
    piece and atom. The copy completes on the slot's full
    barrier (on a ring with parts, each part's columns on that part's). It
    appears only in the body of a `tiledattn.ring.put`, into one of the
    put's slots. `source` is one of the kernel's head tensors (q, k, v), its
    head dim `C` and element type the slot's. Rows past the end of the
    sequence read as zeros. Into a `cluster(2)` ring's slot it takes one
    row: each block copies its half of the rows, multicast to both blocks.
  }], TiledAttn_RowsPastEndDoc, [{

    Example:

    ```mlir
    tiledattn.tma_load %q[%b, %h, %row0] into %slot
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          !tiledattn.smem<128x128xbf16>
    // A K block from eight pages of 16 keys:
    tiledattn.tma_load %k[%b, %h, %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7]
        into %kslot : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          !tiledattn.smem<128x128xbf16>
    ```
  }]);
  let arguments = (ins TiledAttn_HeadMemRef:$source, Index:$batch,
                       Index:$head, Variadic<Index>:$rows,
                       TiledAttn_SmemType:$dest);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $rows `]` `into` $dest attr-dict `:`
    type($source) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RingGetOp : TiledAttn_Op<"ring.get", [
    MemoryEffects<[MemRead]>,
    TypesMatchWith<"the slot has the ring's slot type", "ring", "slot",
                   "::llvm::cast<RingType>($_self).getSlotType()">]> {
  let summary = "Wait for a ring slot to be full and take it";
  let description = !strconcat([{
    The `tiledattn.ring.get` operation waits until the slot of `position` is
    full and returns it, with the token the consumer gives back in
    `tiledattn.ring.release` when it is done reading. The token is released
    exactly once, in the same block as the get (or as the `tiledattn.turn`
    it leaves through), so that every path that takes a slot gives it back
    and every phase of the slot's barriers is waited for.

    With `uniform` the position reaches the wait through a warp reduction
    (redux.sync), so ptxas knows it, and the slot's address, are the same
    in every lane and keeps the slot, phase and descriptor arithmetic on
    the uniform datapath (docs/Schedules.md, `uniform_ring`). Every lane of
    the warp must reach the get.

    With `partial` the get does not wait: it hands out the slot at once,
    and the `tiledattn.mma_async`s that name the token in `after_parts`
    wait for each part of the slot just before the k-steps that read it.
    Its token must be named so; the slot is full once such an mma has
    issued, for every reader after it.
  }], TiledAttn_RingPositionDoc, [{

    Example:

    ```mlir
    %slot, %held = tiledattn.ring.get %ring[%p] : !tiledattn.ring<2, 128x128xbf16>
    %slot2, %held2 = tiledattn.ring.get %ring[%p] uniform : !tiledattn.ring<2, 128x128xbf16>
    %q, %q_held = tiledattn.ring.get %q_ring[%p] partial : !tiledattn.ring<1, 128x256xbf16>
    ```
  }]);
  let arguments = (ins TiledAttn_RingType:$ring, Index:$position,
                       UnitAttr:$uniform, UnitAttr:$partial);
  let results = (outs TiledAttn_SmemType:$slot, TiledAttn_TokenType:$token);
  let assemblyFormat = [{
    $ring `[` $position `]` (`uniform` $uniform^)? (`partial` $partial^)?
    attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RingReleaseOp : TiledAttn_Op<"ring.release", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Give a ring slot back to the producer";
  let description = [{
    The `tiledattn.ring.release` operation ends a consumer's use of the slot
    `token` came with: one thread of each warp arrives on the slot's empty
    barrier (on a `cluster(2)` ring, on both blocks' copies of it). Every
    read of the slot must be complete (an mma on it waited for) before it.
    `token` comes from a `tiledattn.ring.get` on `ring`.

    Example:

    ```mlir
    tiledattn.ring.release %ring, %held : !tiledattn.ring<2, 128x128xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_RingType:$ring, TiledAttn_TokenType:$token);
  let assemblyFormat = [{
    $ring `,` $token attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RingSkipOp : TiledAttn_Op<"ring.skip", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Release a slot for consumer warps that will not read it";
  let description = !strconcat([{
    The `tiledattn.ring.skip` operation makes, in the calling thread,
    `readers` of the arrivals on the empty barrier of the slot of
    `position` that its consumer warps would make in
    `tiledattn.ring.release`: for warps that will not take this use of the
    slot (a causal consumer whose rows end before the block). The producer
    makes them right after its `tiledattn.ring.put` of the position, having
    waited there for the slot's previous use; the skipping warps then
    neither get nor release it.
  }], TiledAttn_RingPositionDoc, [{

    Example: consumer 0 (4 warps) does not read K/V block `%j`.

    ```mlir
    tiledattn.ring.skip %k_ring[%p] readers(4) : !tiledattn.ring<2, 64x256xbf16>
    ```
  }]);
  let arguments = (ins TiledAttn_RingType:$ring, Index:$position,
                       ConfinedAttr<I64Attr, [IntPositive]>:$readers);
  let assemblyFormat = [{
    $ring `[` $position `]` `readers` `(` $readers `)` attr-dict `:`
    qualified(type($ring))
  }];
  let hasVerifier = 1;
}

def TiledAttn_RingTagOp : TiledAttn_Op<"ring.tag", [
    MemoryEffects<[MemRead]>]> {
  let summary = "The tag the put of a held slot left beside it";
  let description = [{
    The `tiledattn.ring.tag` operation returns the i32 that the
    `tiledattn.ring.put ... tag(%t)` of the slot `token` holds left beside
    it. `token` comes from a `tiledattn.ring.get` on `ring` (not `partial`:
    the tag is read once the slot is full), and the read comes before the
    token's release.

    Example: a consumer learns which tile the producer put into Q's slot.

    ```mlir
    %q, %held = tiledattn.ring.get %q_ring[%done] : !tiledattn.ring<2, 128x128xbf16>
    %rank = tiledattn.ring.tag %q_ring, %held : !tiledattn.ring<2, 128x128xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_RingType:$ring, TiledAttn_TokenType:$token);
  let results = (outs I32:$tag);
  let assemblyFormat = [{
    $ring `,` $token attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory outside the rings, and the TMA store
//===----------------------------------------------------------------------===//

def TiledAttn_AllocOp : TiledAttn_Op<"alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "A shared-memory tile of the kernel's own, outside any ring";
  let description = [{
    The `tiledattn.alloc` operation reserves a `!tiledattn.smem` tile in
    shared memory for the whole kernel, laid out after the rings. It has no
    barriers: the program orders its writes and reads itself (for a tile
    that stages `tiledattn.tma_store`s, with `tiledattn.tma_store_wait`
    before it is written again). Like `tiledattn.ring` it sits in the entry
    block of a kernel function.

    Example: the tile a persistent kernel stages O in, so that the next
    tile's Q can arrive in the ring slot meanwhile.

    ```mlir
    %stage = tiledattn.alloc : !tiledattn.smem<128x128xbf16>
    ```
  }];
  let results = (outs TiledAttn_SmemType:$tile);
  let assemblyFormat = [{ attr-dict `:` qualified(type($tile)) }];
  let hasVerifier = 1;
}

def TiledAttn_TmaStoreOp : TiledAttn_Op<"tma_store", [
    MemoryEffects<[MemRead, MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "Normalize an output tile into shared memory and store it by TMA";
  let description = [{
    The `tiledattn.tma_store` operation finishes the online softmax like
    `tiledattn.store` (the same rows of `dest`, the same values, the same
    log-sum-exp), but writes O through shared memory. Without `row_max` and
    `row_sum` (and then without `lse`) it stores `acc` as it is: O already
    normalized, say by `tiledattn.rescale` with the factors
    `tiledattn.finish_rows` returns, in f32 or packed to `dest`'s element
    type (`tiledattn.truncate`: a program that holds O across a loop's back
    edge holds half the registers, words stmatrix takes as they are). The
    warpgroup writes
    the normalized rows of its `64 x C` accumulator into rows
    `stage_row .. stage_row + 63` (and the first `C` columns) of `stage`,
    then one of its threads copies them to `dest` by TMA, one box per
    64-column atom. TMA drops the rows at or past the end of the sequence.
    The lse is written from registers.

    The copy is asynchronous: it reads `stage` until the warpgroup's next
    `tiledattn.tma_store_wait` returns. `stage` is a slot the warpgroup
    holds (a `tiledattn.ring.get`'s, not yet released) or a
    `tiledattn.alloc` tile; `stage_row` is a multiple of 8 (the swizzle's
    period); `dest` is the kernel's output argument, for which the runtime
    builds a tensor map. It runs in a consumer warpgroup of a
    `tiledattn.warp_specialize`, all of whose threads reach it.

    Example:

    ```mlir
    tiledattn.tma_store %acc, %m, %l into %o[%b, %h, %row] via %slot[%r]
        lse(%lse)
        : !tiledattn.tile<64x128xf32>,
          memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>,
          !tiledattn.smem<128x128xbf16>, !tiledattn.tile<64xf32>, !tiledattn.tile<64xf32>,
          memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc,
                       Optional<TiledAttn_AnyTile>:$row_max,
                       Optional<TiledAttn_AnyTile>:$row_sum,
                       TiledAttn_HeadMemRef:$dest,
                       Index:$batch, Index:$head, Index:$row,
                       TiledAttn_SmemType:$stage, Index:$stage_row,
                       Optional<TiledAttn_LseMemRef>:$lse);
  let assemblyFormat = [{
    $acc (`,` $row_max^ `,` $row_sum)? `into` $dest `[` $batch `,` $head `,`
    $row `]` `via` $stage `[` $stage_row `]` (`lse` `(` $lse^ `)`)? attr-dict
    `:` qualified(type($acc)) `,` type($dest) `,` qualified(type($stage))
    (`,` qualified(type($row_max))^ `,` qualified(type($row_sum)))?
    (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

def TiledAttn_FinishRowsOp : TiledAttn_Op<"finish_rows", [
    MemoryEffects<[MemWrite]>, AllTypesMatch<["row_max", "row_sum", "inv"]>]> {
  let summary = "The rows' 1 / sum and log-sum-exp, before O is ready";
  let description = [{
    The `tiledattn.finish_rows` operation does the part of
    `tiledattn.store` that needs only the online softmax's row statistics:
    for each row `i` of the warpgroup's `64`-row tiles with `row + i < Sq`
    (dimension 2 of `lse`) it stores

    ```
    lse[b, h, row + i] = (m[i] + log2(l[i])) * ln(2)    (-inf when l[i] = 0)
    ```

    and it returns `inv[i] = 1 / l[i]` (0 when `l[i] = 0`). A program runs
    it under the last P.V (FlashAttention-3's epilogue overlap), then
    scales O with `tiledattn.rescale` and stores it with a
    `tiledattn.tma_store` without statistics.

    Example:

    ```mlir
    %inv = tiledattn.finish_rows %m, %l into %lse[%b, %h, %row]
        : !tiledattn.tile<64xf32>, memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$row_max, TiledAttn_AnyTile:$row_sum,
                       TiledAttn_LseMemRef:$lse, Index:$batch, Index:$head,
                       Index:$row);
  let results = (outs TiledAttn_AnyTile:$inv);
  let assemblyFormat = [{
    $row_max `,` $row_sum `into` $lse `[` $batch `,` $head `,` $row `]`
    attr-dict `:` qualified(type($row_max)) `,` type($lse)
  }];
  let hasVerifier = 1;
}

def TiledAttn_MergePiecesOp : TiledAttn_Op<"merge_pieces", [
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["acc", "merged_acc"]>,
    AllTypesMatch<["row_max", "row_sum", "merged_max", "merged_sum"]>]> {
  let summary = "A split tile's pieces brought together in the block that "
                "starts it";
  let description = [{
    The `tiledattn.merge_pieces` operation ends a piece of a tile in a
    `tiledattn.for_each_tile ... split_tail` loop, whose body gives it the
    piece's `first` block and `holders` (see there). It takes a consumer
    warpgroup's online-softmax state after the piece's last P.V: the
    unnormalized O (`acc`), the rows' maxima (scaled, as
    `tiledattn.online_softmax` keeps them) and sums.

    - A piece that does not start its tile (`first != 0`) leaves its state
      in the launch's workspace (the manifest's `workspace`, a slot per
      block and consumer warpgroup) and raises its slot's flag; it returns
      its state unchanged, which the program must not store.
    - A piece that starts a tile others finish (`holders > 0`) waits for
      the flags of the `holders` blocks after its own and folds their
      states into its own, as the online softmax folds a block; it returns
      the tile's state, which it stores, and lowers the flags again for
      the next launch.
    - Otherwise (a whole tile) it returns its operands.

    A block's piece that writes is its first in the tail and the ones that
    merge come after, so no block waits for one that waits.
    `convert-tiledattn-to-nvgpu` adds the workspace to the kernel's
    arguments; `tiledattn-lower-mma` lowers the op on accumulator
    registers (every thread writes and reads its own registers: no
    shuffle).

    Example:

    ```mlir
    %o2, %m2, %l2 = tiledattn.merge_pieces %o, %m, %l first(%first)
        holders(%holders) : !tiledattn.tile<64x128xf32>, !tiledattn.tile<64xf32>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc, TiledAttn_AnyTile:$row_max,
                       TiledAttn_AnyTile:$row_sum, Index:$first,
                       Index:$holders);
  let results = (outs TiledAttn_AnyTile:$merged_acc,
                      TiledAttn_AnyTile:$merged_max,
                      TiledAttn_AnyTile:$merged_sum);
  let assemblyFormat = [{
    $acc `,` $row_max `,` $row_sum `first` `(` $first `)`
    `holders` `(` $holders `)` attr-dict `:` qualified(type($acc)) `,`
    qualified(type($row_max))
  }];
  let hasVerifier = 1;
}

def TiledAttn_StageOp : TiledAttn_Op<"stage", [MemoryEffects<[MemWrite]>]> {
  let summary = "Write a warpgroup's accumulator tile into shared memory for an mma";
  let description = [{
    The `tiledattn.stage` operation writes a warpgroup's `64 x N` f32
    accumulator tile, converted to `stage`'s element type (f16 or bf16),
    into rows `stage_row .. stage_row + 63` and columns `stage_col ..
    stage_col + N - 1` (default: the first `N`) of `stage`, in the layout
    every slot and `tiledattn.alloc` tile has (128-byte swizzle in 64-column
    atoms), so that a `tiledattn.mma_async` reads
    it as its `A` (also with `transpose_a`) or `B`. When it returns, the
    warpgroup's threads have all written their rows and the writes are
    visible to the tensor cores, so the warpgroup's next mma may read them.
    The backward stages `dS^T` this way for `dQ = dS K`.

    The warpgroup must not stage into the rows again before the mmas that
    read them have been waited for. `stage` is a slot the warpgroup holds
    or a `tiledattn.alloc` tile; `stage_row` is a multiple of 8 (the
    swizzle's period); `N` and `stage_col` are multiples of 16 (the stores
    go two 8-column groups at a time). A consumer that holds some of a
    tile's columns (the head dim 256 backward's `S` over 32 of 64 keys)
    stages them at `stage_col`, beside the other consumer's. It runs in a
    consumer warpgroup of a `tiledattn.warp_specialize`, all of whose
    threads reach it.

    Example:

    ```mlir
    tiledattn.stage %ds into %buf[%c0]
        : !tiledattn.tile<64x64xf32>, !tiledattn.smem<64x64xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_AnyTile:$acc, TiledAttn_SmemType:$stage,
                       Index:$stage_row, Optional<Index>:$stage_col);
  let assemblyFormat = [{
    $acc `into` $stage `[` $stage_row (`,` $stage_col^)? `]` attr-dict `:`
    qualified(type($acc)) `,` qualified(type($stage))
  }];
  let hasVerifier = 1;
}

def TiledAttn_ColumnsOp : TiledAttn_Op<"columns", [Pure]> {
  let summary = "A shared-memory tile's columns from a 64-column atom on";
  let description = [{
    The `tiledattn.columns` operation views columns `col .. col + N - 1` of
    a shared-memory tile (a ring slot or a `tiledattn.alloc` tile) as a
    tile of their own, `N` its result's columns: the same rows, the same
    128-byte-swizzled atoms of 64 columns (one atom of the tile's rows
    after another), so every op that reads or writes a tile takes the view
    as it takes the tile. `col` is a multiple of 64 (an atom boundary; it
    may be a consumer's own, computed from its index) and `N` a multiple of
    64 with `col + N` inside the tile. The head dim 256 backward takes a
    consumer's half of the head dim this way: its half of dK (from Q), dV
    (from dO) and dQ (from K). `tiledattn-lower-rings` lowers it to the
    tile's address plus `col / 64` atoms.

    Example:

    ```mlir
    %half = tiledattn.columns %slot[%col]
        : !tiledattn.smem<64x256xbf16> to !tiledattn.smem<64x128xbf16>
    ```
  }];
  let arguments = (ins TiledAttn_SmemType:$tile, Index:$col);
  let results = (outs TiledAttn_SmemType:$view);
  let assemblyFormat = [{
    $tile `[` $col `]` attr-dict `:` qualified(type($tile)) `to`
    qualified(type($view))
  }];
  let hasVerifier = 1;
}

def TiledAttn_TmaStoreWaitOp : TiledAttn_Op<"tma_store_wait", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait until a warpgroup's TMA stores have read shared memory";
  let description = [{
    The `tiledattn.tma_store_wait` operation returns once every
    `tiledattn.tma_store` the calling warpgroup issued before it has read
    its `stage`: the rows may then be written again, or their ring slot
    released. (The copies to global memory may still be in flight; the
    kernel's end completes them.) A warpgroup that staged stores waits
    before the kernel ends, so that its shared memory outlives the reads.

    Example:

    ```mlir
    tiledattn.tma_store_wait
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // TILEDATTN_DIALECT_TILEDATTN_IR_TILEDATTNRINGOPS_TD
