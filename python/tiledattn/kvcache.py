"""Attention against a KV cache with per-sequence lengths, paged or not, in
the style of FlashAttention's flash_attn_with_kvcache: a decode step (or a
few tokens: speculative decoding) of a serving loop.

    out = tiledattn.kvcache_attention(q, k_cache, v_cache, cache_seqlens,
                                      block_table, k=k_new, v=v_new, causal=True)

The decode kernel (tiledattn.decode: GQA packing, split-KV, a combine by
lse) with three things more, all tile-IR edits of the flex schedule:
- a mask_mod `kv_idx <= bounds[b, h, q_idx]`: each packed row's last key,
  from its sequence's length (bottom-right causal for Sq > 1), -1 for a
  split that has no block of a short sequence;
- a block map per sequence, built on the GPU from the lengths (no host
  sync): split s of sequence b lists its blocks, the partial ones last;
- with a block_table, a `kv_rows` region: the row of a block's first key
  is table[b, key / P] * P + key % P, so the producer loads each block from
  its page, while the masks see the key's position in its sequence. Pages
  of a multiple of the 128-key block hold whole blocks; pages of 8, 16, 32
  or 64 keys (vLLM's and FlashInfer's sizes) are `kv_span(P)`: the region
  runs for each page of a block, and the producer loads the block page by
  page. K and V are the pages as one sequence, broadcast over the batch
  (stride 0).
"""

import functools
import typing
import warnings

import torch

from tiledattn.errors import (
    InvalidInputError,
    UnsupportedInputError,
    require_4d,
    require_kernel_device,
)

_OP = "tiledattn.kvcache_attention"
_BLOCK_ROWS = 128  # the flex schedule's block_m: the bounds' rows per head
_BLOCK_KEYS = 128  # its block_n: the keys of a K/V block
# Page sizes whose kernels the package carries compiled, 0 a contiguous
# cache (scripts/package_kernels.py; head dims decode.PACKAGED_HEAD_DIMS).
PACKAGED_PAGE_SIZES = (0, 16, 64, 128, 256)
# Pages shorter than a block: a block's pages, each a whole number of the
# 128-byte swizzle's 8-row periods (tiledattn.sdpa's kv_span).
SHORT_PAGE_SIZES = (8, 16, 32, 64)


def kvcache_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cache_seqlens,
    block_table: "torch.Tensor | None" = None,
    *,
    k: "torch.Tensor | None" = None,
    v: "torch.Tensor | None" = None,
    causal: bool = False,
    scale: "float | None" = None,
    splits: "int | None" = None,
    return_lse: bool = False,
    cache=None,
):
    """Attention of q [B, Sq, Hq, D] against each sequence's first
    cache_seqlens[b] (+ Sq_new) keys of the cache, FlashAttention's layout:
    k_cache, v_cache [B, Sk_max, Hkv, D] or, with block_table [B, pages]
    (int32), pages [num_pages, P, Hkv, D] with P 8, 16, 32, 64 or a
    multiple of 128.
    cache_seqlens: an int or an int32/int64 tensor [B]. k, v [B, Sq_new,
    Hkv, D] (optional) are written into the cache at each sequence's end
    first (in place) and attended to. `causal` is bottom-right aligned per
    sequence (query i sees keys up to length - Sq + i; each length must be
    at least Sq). Cache slots past a sequence's length must hold finite
    values (a masked score's weight is 0, and 0 times inf is NaN).
    Hq / Hkv x Sq <= 128. Returns out [B, Sq, Hq, Dv] and, with
    return_lse, the lse [B, Hq, Sq] (float32)."""
    from tiledattn.compiler import kernel_entry
    from tiledattn.decode import multiprocessors, run

    page = _check(q, k_cache, v_cache, block_table, k, v)
    lengths = _lengths(cache_seqlens, q.shape[0], q.device)
    require_kernel_device(_OP, q.device)
    sms = multiprocessors(q.device)
    # The kernel before the cache is written: a call that cannot run
    # changes nothing.
    text = kernel_text(q.dtype, q.shape[-1], v_cache.shape[-1], page)
    entry = kernel_entry(text, cache=cache)
    if k is not None:
        _append(k_cache, v_cache, k, v, lengths, block_table, page)
        lengths = lengths + k.shape[1]
    plan, keys, values = _plan(q, k_cache, v_cache, lengths, block_table, page, causal, splits, sms)
    result = run(plan, keys, values, scale, entry, return_lse)
    if return_lse:
        return result[0].transpose(1, 2), result[1]
    return result.transpose(1, 2)


def _plan(q, k_cache, v_cache, lengths, block_table, page, causal, splits, multiprocessors):
    """What kvcache_attention launches: the decode _Plan (packed queries
    [B, Hkv * S, g * Sq, D], captures: bounds, the block table with pages,
    the block map) and the kernel's K and V views."""
    from tiledattn.decode import _Plan, num_splits, pack_queries

    batch, length_q, heads_q, head_dim = q.shape
    heads_kv, head_dim_v = k_cache.shape[2], v_cache.shape[3]
    capacity = block_table.shape[1] * page if page else k_cache.shape[1]
    key_blocks = -(-capacity // _BLOCK_KEYS)
    if splits is None:
        splits = num_splits(batch * heads_kv, key_blocks, multiprocessors)
    if not isinstance(splits, int) or not 1 <= splits <= key_blocks:
        raise InvalidInputError(
            f"{_OP}: expected 'splits' from 1 to the {key_blocks} K/V blocks of the cache's "
            f"capacity but got {splits!r}"
        )
    packed = pack_queries(q.transpose(1, 2), heads_kv, splits)
    keys, values = _kv_views(k_cache, v_cache, batch, page)
    bounds, bmap = _prologue(lengths, length_q, causal, heads_kv, splits, key_blocks)
    table = [block_table.to(torch.int32).contiguous()] if page else []
    shape = (batch, heads_q, length_q, head_dim_v)
    return _Plan(packed, [bounds, *table, bmap], shape, heads_kv, splits), keys, values


def _check(q, k_cache, v_cache, block_table, k, v) -> int:
    """The page size (0 without a block_table), after the shapes' checks."""
    require_4d(_OP, "", q=q, k_cache=k_cache, v_cache=v_cache)
    batch, length_q, heads_q, head_dim = q.shape
    heads_kv = k_cache.shape[2]
    if (
        k_cache.shape[:3] != v_cache.shape[:3]
        or k_cache.shape[3] != head_dim
        or heads_kv == 0
        or heads_q % heads_kv
    ):
        raise InvalidInputError(
            f"{_OP}: expected 'k_cache' [*, *, Hkv, {head_dim}] and 'v_cache' [*, *, Hkv, Dv] "
            f"of the same first three sizes, Hkv dividing the query's {heads_q} heads, but got "
            f"{tuple(k_cache.shape)} and {tuple(v_cache.shape)}"
        )
    if not 1 <= heads_q // heads_kv * length_q <= _BLOCK_ROWS:
        raise UnsupportedInputError(
            f"{_OP}: expected 1 to {_BLOCK_ROWS} packed query rows (query heads per KV head x "
            f"Sq = {heads_q // heads_kv} x {length_q})",
            "kvcache rows",
        )
    page = 0
    if block_table is not None:
        if block_table.dim() != 2 or block_table.shape[0] != batch or block_table.shape[1] == 0:
            raise InvalidInputError(
                f"{_OP}: expected 'block_table' [B = {batch}, pages >= 1] but got "
                f"{tuple(block_table.shape)}"
            )
        if block_table.dtype not in (torch.int32, torch.int64):
            raise InvalidInputError(
                f"{_OP}: expected 'block_table' of dtype int32 or int64 but got {block_table.dtype}"
            )
        page = k_cache.shape[1]
        if page % _BLOCK_KEYS and page not in SHORT_PAGE_SIZES:
            raise UnsupportedInputError(
                f"{_OP}: expected pages of 8, 16, 32, 64 or a multiple of 128 keys (a 128-key "
                f"K/V block in whole pages, or within one) but 'k_cache' has pages of {page}",
                "kvcache page size",
            )
    elif k_cache.shape[0] != batch:
        raise InvalidInputError(
            f"{_OP}: expected 'k_cache' [B = {batch}, Sk_max, Hkv, D] without a block_table but "
            f"got {tuple(k_cache.shape)}"
        )
    if (k is None) != (v is None):
        raise InvalidInputError(f"{_OP}: expected 'k' and 'v' together (new keys and values)")
    if k is not None and (
        k.dim() != 4
        or k.shape[0] != batch
        or k.shape[2:] != k_cache.shape[2:]
        or v.shape[:3] != k.shape[:3]
        or v.shape[3] != v_cache.shape[3]
    ):
        raise InvalidInputError(
            f"{_OP}: expected 'k' [B, Sq_new, Hkv, D] and 'v' [B, Sq_new, Hkv, Dv] matching the "
            f"cache but got {tuple(k.shape)} and {tuple(v.shape)}"
        )
    return page


def _lengths(cache_seqlens, batch, device) -> torch.Tensor:
    if isinstance(cache_seqlens, int):
        return torch.full((batch,), cache_seqlens, dtype=torch.int64, device=device)
    if (
        not isinstance(cache_seqlens, torch.Tensor)
        or cache_seqlens.shape != (batch,)
        or cache_seqlens.dtype not in (torch.int32, torch.int64)
    ):
        raise InvalidInputError(
            f"{_OP}: expected 'cache_seqlens' to be an int or an int32/int64 tensor [{batch}] "
            f"but got {cache_seqlens!r}"
        )
    return cache_seqlens.to(device=device, dtype=torch.int64)


def _append(k_cache, v_cache, k, v, lengths, block_table, page) -> None:
    """k and v written at each sequence's end (positions lengths[b] + t)."""
    batch, new = k.shape[:2]
    positions = lengths[:, None] + torch.arange(new, device=lengths.device)  # [B, new]
    if page:
        pages = torch.gather(block_table.to(torch.int64), 1, positions // page)
        index = (pages, positions % page)
    else:
        index = (torch.arange(batch, device=lengths.device)[:, None], positions)
    k_cache[index] = k
    v_cache[index] = v


def _kv_views(k_cache, v_cache, batch, page):
    """The kernel's K and V: [B, Hkv, Sk, D] views; with pages, all the
    pages as one sequence, broadcast over the batch (stride 0)."""
    views = []
    for t in (k_cache, v_cache):
        if page:
            pool = t.reshape(1, t.shape[0] * page, t.shape[2], t.shape[3]).transpose(1, 2)
            views.append(pool.expand(batch, *pool.shape[1:]))
        else:
            views.append(t.transpose(1, 2))
    return views


def _prologue(lengths, length_q, causal, heads_kv, splits, key_blocks):
    """_bounds_and_map's results; on CUDA outside a graph capture, from a
    CUDA graph of it kept per shape and stream and replayed on a copy of
    the lengths: two launches from the host instead of its six to eight
    ops (each a few microseconds of host time). Each replay overwrites the
    outputs of the one before on the same stream, after that call's kernel
    (same stream) has read them."""
    args = (length_q, causal, heads_kv, splits, key_blocks)
    device = lengths.device
    if device.type != "cuda" or torch.cuda.is_current_stream_capturing():
        return _bounds_and_map(lengths, *args)
    stream = torch.cuda.current_stream(device)
    key = (lengths.shape[0], *args, device, stream.cuda_stream)
    graph = _prologue_graphs.get(key, _NOT_YET)
    if graph is _NOT_YET:
        if len(_prologue_graphs) >= 64:  # a few per model; start over past that
            _prologue_graphs.clear()
        graph = _prologue_graphs[key] = _capture_prologue(lengths, args)
    if graph is None:  # the capture failed: the ops one by one
        return _bounds_and_map(lengths, *args)
    cuda_graph, static, outputs = graph
    static.copy_(lengths)
    cuda_graph.replay()
    return outputs


def _capture_prologue(lengths, args):
    """(graph, its lengths buffer, its outputs) of _bounds_and_map for
    `lengths`' shape, or None where CUDA cannot capture it (warned once per
    shape; the ops then run one by one)."""
    static = lengths.clone()
    _bounds_and_map(static, *args)  # warm up outside the capture
    cuda_graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(cuda_graph):  # captured on a side stream
            outputs = _bounds_and_map(static, *args)
    except RuntimeError as error:
        warnings.warn(f"{_OP}: the bounds and block map run op by op ({error})", stacklevel=3)
        return None
    return cuda_graph, static, outputs


# The prologue's CUDA graphs by (batch, its arguments, device, stream):
# (graph, its lengths buffer, its outputs), None where capture failed.
_prologue_graphs: dict = {}
_NOT_YET = object()


def _bounds_and_map(lengths, length_q, causal, heads_kv, splits, key_blocks, block=_BLOCK_KEYS):
    """The mask_mod's bounds [B, Hkv * S, 128] (int32: each packed row's
    last key; -1 for a split with no block) and the block map [B, Hkv * S,
    1, 2 + W] of the splits' blocks (full first, then partial: those with a
    key past some row's bound), from the lengths (>= 0) on the device.

    Six to eight kernels, not thirty (each costs the GPU a few microseconds
    even in a CUDA graph): every value is a floor of a linear function of
    the sequence's blocks n or its full blocks fe, so one op computes all
    of them side by side (columns of `y`, _Columns), and three more pick and
    combine them into the map: its row for split s is [clamp(fe, first,
    nxt) - first, max(nxt - first, 1), first + e where first + e < nxt,
    else 0], first and nxt the split's block range."""
    cols = _columns(length_q, causal, heads_kv, splits, key_blocks, block, lengths.device)
    batch, k = lengths.shape[0], cols.width
    z = lengths[:, None] if cols.shift is None else lengths[:, None] - cols.shift
    z = torch.floor_divide(z, cols.divisor)  # [B, columns]: -n, fe, bounds' L - d + 1
    y = torch.addcmul(cols.beta, z[:, None, None, : cols.alpha.shape[-1]], cols.alpha)
    if cols.delta is not None:
        y.floor_divide_(cols.delta)  # [B, Hkv, S, 3K + 5], the layout of _Columns
    keep = torch.lt(y[..., : k + 1], y[..., k + 1 : 2 * k + 2])  # [..., K]: split not empty
    part = torch.clamp(y[..., :k], y[..., 2 * k + 3 : 3 * k + 3], y[..., k + 3 : 2 * k + 3])
    bmap = torch.empty(batch, heads_kv, splits, k, dtype=torch.int32, device=lengths.device)
    torch.addcmul(y[..., 2 * k + 5 : 3 * k + 5], keep[..., :k], part, out=bmap)
    last = lengths[:, None, None, None] if cols.shift is None else z[:, None, None, -_BLOCK_ROWS:]
    bounds = torch.empty(
        batch, heads_kv, splits, _BLOCK_ROWS, dtype=torch.int32, device=lengths.device
    )
    torch.addcmul(cols.minus_one, keep[..., k:], last, out=bounds)  # -1, or L - d
    return bounds.view(batch, heads_kv * splits, _BLOCK_ROWS), bmap.view(batch, -1, 1, k)


class _Columns(typing.NamedTuple):
    """_bounds_and_map's constants for one shape. Column j of y is
    floor((alpha * z + beta) / delta), z = -n or fe (floor_divide(L -
    shift, divisor)); the columns of a split's row, K = 2 + W of them:
      [0, K]            fe, nxt - 1, first + e (W), first    (x, then `keep`'s left)
      [K+1, 2K+1]       BIG, BIG, nxt (W), nxt               (`keep`'s right)
      2K+2              BIG; hi = [K+3, 2K+2]: nxt (K - 1), BIG
      2K+3, 2K+4        first, first; lo = [2K+3, 3K+2]: first, first, A's first W
      [2K+5, 3K+4]      A: -first, 1 - first, 0 (W)
    so that keep = x < right (keep[..., K]: the split has a block), part =
    clamp(x, lo, hi) and the map is A + keep * part. With causal Sq > 1,
    128 more columns of z hold each packed row's L - d + 1."""

    width: int
    shift: "torch.Tensor | None"
    divisor: torch.Tensor
    alpha: torch.Tensor  # [S, 3K + 5]
    beta: torch.Tensor  # [Hkv, S, 3K + 5]: the Hkv copies of the map and bounds
    delta: "torch.Tensor | None"  # [S, 3K + 5]; None: all 1 (one split)
    minus_one: torch.Tensor


_BIG = 1 << 62


def _columns(length_q, causal, heads_kv, splits, key_blocks, block, device) -> _Columns:
    """The shape's _Columns, built on the device (no copy from the host: a
    CUDA graph capture may be the first call of a shape) and kept, except
    those built in a capture (they hold values only once it replays)."""
    key = (length_q, causal, heads_kv, splits, key_blocks, block, device)
    cols = _columns_kept.get(key)
    if cols is not None:
        return cols
    ns, width = splits, -(-key_blocks // splits)
    # (count, z is fe, alpha = a * s + a0, beta = b * S + b1 + e * S (e: 0, 1, ...), divide by S)
    groups = [
        (1, True, 0, 1, 0, 0, False, False),  # fe
        (1, False, -1, -1, -1, 0, False, True),  # nxt - 1 ((s + 1) n - S) / S
        (width, False, -1, 0, 0, 0, True, True),  # first + e
        (1, False, -1, 0, 0, 0, False, True),  # first
        (2, False, 0, 0, 0, _BIG, False, False),
        (width + 1, False, -1, -1, 0, 0, False, True),  # nxt
        (1, False, 0, 0, 0, _BIG, False, False),
        (2, False, -1, 0, 0, 0, False, True),  # first, first
        (1, False, 1, 0, 1, -1, False, True),  # -first = (-s n + S - 1) // S
        (1, False, 1, 0, 2, -1, False, True),  # 1 - first
        (width, False, 0, 0, 0, 0, False, False),  # 0
    ]

    def column(values):
        parts = []
        for (count, *_), value in zip(groups, values):
            if isinstance(value, torch.Tensor):
                parts.append(value)
            else:
                parts.append(torch.full((count,), value, dtype=torch.int64, device=device))
        return torch.cat(parts)

    s = torch.arange(ns, dtype=torch.int64, device=device)[:, None]
    alpha = s * column([g[2] for g in groups]) + column([g[3] for g in groups])
    e = torch.arange(width, dtype=torch.int64, device=device) * ns
    beta = column([e if g[6] else g[4] * ns + g[5] for g in groups])
    beta = beta.expand(heads_kv, ns, beta.shape[0]).contiguous()
    delta = None
    if ns > 1:
        delta = column([ns if g[7] else 1 for g in groups]).expand(ns, -1).contiguous()
    fe = column([g[1] for g in groups]).bool()
    shift_fe = length_q - 1 if causal else 0  # fe = (L - shift) // block: full blocks
    shift = fe * shift_fe
    divisor = torch.where(fe, block, -block)  # -n = L // -block
    if causal and length_q > 1:  # d = Sq - i for row j * Sq + i; L - d + 1
        rows = torch.arange(_BLOCK_ROWS, dtype=torch.int64, device=device)
        shift = torch.cat([shift, length_q - 1 - rows % length_q])
        divisor = torch.cat([divisor, torch.ones_like(rows)])
    minus_one = torch.full((_BLOCK_ROWS,), -1, dtype=torch.int64, device=device)
    cols = _Columns(
        width + 2,
        shift if causal and length_q > 1 else None,  # (no host sync: a capture may be on)
        divisor,
        alpha,
        beta,
        delta,
        minus_one,
    )
    capturing = device.type == "cuda" and torch.cuda.is_current_stream_capturing()
    if not capturing and len(_columns_kept) < 256:
        _columns_kept[key] = cols
    return cols


# _columns' results by shape and device, never dropped: a CUDA graph that
# read them (the prologue's, or a caller's capture) reads them at replay.
_columns_kept: dict = {}


@functools.lru_cache(maxsize=16)
def kernel_text(dtype: torch.dtype, head_dim: int, head_dim_v: int, page: int) -> str:
    """The kernel's schedule file: the flex schedule with the bounds'
    mask_mod, a block map and, for pages of `page` keys (0: none), the
    kv_rows region that reads the block table (run per page of a block,
    kv_span, for pages shorter than one)."""
    from tiledattn.flex import ScoreModRegion, _masked, schedule_text, trace_score_mod

    stand_in = torch.empty(1, 1, 1, dtype=torch.int32, device="meta")

    def bounded(b, h, q_idx, kv_idx):
        return kv_idx <= stand_in[b, h, q_idx]

    mask = trace_score_mod(_masked(bounded), "mask_mod")
    captures: tuple[torch.Tensor, ...] = tuple(mask.captures)
    text = str(mask)
    if page:
        table = f"%cap{len(captures)}"
        span = f" kv_span({page})" if page < _BLOCK_KEYS else ""
        text += (
            f"{span} kv_rows {{\n"
            "  ^bb0(%b: index, %hkv: index, %key: index):\n"
            f"    %page_keys = arith.constant {page} : index\n"
            "    %n = arith.divui %key, %page_keys : index\n"
            "    %at = arith.remui %key, %page_keys : index\n"
            f"    %page = memref.load {table}[%b, %n] : memref<?x?xi32>\n"
            "    %first = arith.index_cast %page : i32 to index\n"
            "    %row0 = arith.muli %first, %page_keys : index\n"
            "    %row = arith.addi %row0, %at : index\n"
            "    tiledattn.yield %row : index\n"
            "  }"
        )
        captures += (torch.empty(1, 1, dtype=torch.int32, device="meta"),)
    region = ScoreModRegion(text)
    region.captures = captures
    return schedule_text(region, dtype, head_dim, "kvcache", head_dim_v=head_dim_v, block_map=True)
