"""Variable-length (packed) attention, as FlashAttention's
flash_attn_varlen_func: sequences of different lengths packed along one
token dimension, delimited by cumulative lengths.

It is document masking over the packed tokens (flex.py and masks.py's
machinery, no kernel of its own): a mask_mod keeps the pairs of one
sequence (and, causal, those at or before the query's position,
bottom-right aligned as FlashAttention does when a sequence has more keys
than queries), reading four int32 tensors of the call, and a block map
built from the lengths on the GPU lets the kernel skip the blocks between
sequences and apply the mask only on the blocks that straddle a boundary.
The kernel is compiled once per (dtype, head dims, causal) and the map
kept per cu_seqlens pair while those tensors live unchanged.
"""

import functools

import torch

from tiledattn._tensor_cache import kept_while_unchanged
from tiledattn.errors import InvalidInputError, UnsupportedInputError, require_kernel_device

_OP = "tiledattn.varlen_attention"


def _check_cu_seqlens(name: str, cu: torch.Tensor, total: int, device) -> None:
    if not isinstance(cu, torch.Tensor):
        raise TypeError(
            f"{_OP}: expected '{name}' to be a torch.Tensor but got {type(cu).__name__}"
        )
    if cu.dtype != torch.int32 or cu.dim() != 1 or cu.numel() < 2:
        raise InvalidInputError(
            f"{_OP}: expected '{name}' to be a 1-D int32 tensor of batch + 1 >= 2 "
            f"cumulative lengths but got {cu.dtype} of shape {tuple(cu.shape)}"
        )
    if cu.device != device:
        raise InvalidInputError(
            f"{_OP}: expected '{name}' on {device} (the device of 'query') but got {cu.device}"
        )
    if cu.device.type == "meta":
        return
    first, last, ordered = (cu[0], cu[-1], (cu[1:] >= cu[:-1]).all())
    first, last, ordered = torch.stack([first, last, ordered.to(cu.dtype)]).tolist()
    if first != 0 or last != total or not ordered:
        raise InvalidInputError(
            f"{_OP}: expected '{name}' to start at 0, never decrease and end at the "
            f"tokens' count {total} but got {cu.tolist() if cu.numel() <= 16 else cu}"
        )


def positions(cu_q: torch.Tensor, cu_k: torch.Tensor, total_q: int, total_k: int, causal: bool):
    """(ids_q, ids_k, pos_q, pos_k), int32: each token's sequence, and its
    position such that query i sees key j of its sequence when pos_q[i] >=
    pos_k[j] (causal, bottom-right aligned: pos_q counts from the sequence's
    last key); without causal pos_q is the sequence's key count and pos_k
    its position (every key of the sequence kept)."""
    device = cu_q.device
    tokens_q = torch.arange(total_q, device=device, dtype=torch.int32)
    tokens_k = torch.arange(total_k, device=device, dtype=torch.int32)
    ids_q = torch.searchsorted(cu_q[1:], tokens_q, right=True).to(torch.int32)
    ids_k = torch.searchsorted(cu_k[1:], tokens_k, right=True).to(torch.int32)
    pos_k = tokens_k - cu_k[ids_k.long()]
    lengths_k = (cu_k[1:] - cu_k[:-1])[ids_q.long()]
    if causal:
        lengths_q = (cu_q[1:] - cu_q[:-1])[ids_q.long()]
        pos_q = tokens_q - cu_q[ids_q.long()] + lengths_k - lengths_q
    else:
        pos_q = lengths_k
    return ids_q, ids_k, pos_q.to(torch.int32), pos_k.to(torch.int32)


def _mask_mod(ids_q, ids_k, pos_q, pos_k):
    def same_sequence(b, h, q_idx, kv_idx):
        return (ids_q[q_idx] == ids_k[kv_idx]) & (pos_q[q_idx] >= pos_k[kv_idx])

    return same_sequence


def block_map(tensors, total_q: int, total_k: int, block_m: int, block_n: int) -> torch.Tensor:
    """The block map (masks.block_map) of the packed mask, built in chunks of
    query rows so that at most 8 query blocks' rows by every key are held."""
    from tiledattn.masks import block_states, map_from_blocks

    ids_q, ids_k, pos_q, pos_k = tensors
    states = []
    step = block_m * 8
    for start in range(0, total_q, step):
        rows = slice(start, min(total_q, start + step))
        keep = (ids_q[rows, None] == ids_k[None, :]) & (pos_q[rows, None] >= pos_k[None, :])
        keep = keep[None, None]  # a kept pair is left unchanged: no bias
        states.append(block_states(keep, keep, block_m, block_n))
    return map_from_blocks(torch.cat(states, 2), total_q, total_k, block_m, block_n)


@functools.lru_cache(maxsize=64)
def _kernel_text(dtype, head_dim, head_dim_v) -> "tuple[str, tuple[int, ...]]":
    """The kernel's schedule for a kind, traced once from meta stand-ins,
    and the order in which it takes (ids_q, ids_k, pos_q, pos_k)."""
    from tiledattn.flex import _masked, schedule_text, trace_score_mod

    stand_ins = [torch.empty(2, dtype=torch.int32, device="meta") for _ in range(4)]
    region = trace_score_mod(_masked(_mask_mod(*stand_ins)), "mask_mod")
    order = tuple(next(i for i, s in enumerate(stand_ins) if s is c) for c in region.captures)
    text = schedule_text(region, dtype, head_dim, "varlen", head_dim_v=head_dim_v, block_map=True)
    return text, order


def _padded(tensors, block_m: int, block_n: int):
    """positions()' tensors as the kernel reads them: the query-side ones to
    a whole number of query tiles, the key-side ones of K/V blocks (the
    last tile's rows past the end, and the last block's keys, get scores
    too, not stored or masked after the mask_mod, which must not read past
    the tensors), padded with their last value."""
    ids_q, ids_k, pos_q, pos_k = tensors

    def pad(t, multiple):
        extra = -t.numel() % multiple
        return torch.cat([t, t[-1:].expand(extra)]) if extra else t

    return pad(ids_q, block_m), pad(ids_k, block_n), pad(pos_q, block_m), pad(pos_k, block_n)


# The positions and block maps of the cu_seqlens pairs seen last, and the
# int32 offsets of nested tensors (_tensor_cache).
_maps: dict = {}
_offsets_int32: dict = {}


def varlen_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    *,
    causal: bool = False,
    scale: "float | None" = None,
    return_lse: bool = False,
    cache=None,
):
    """Attention over packed sequences, FlashAttention's varlen layout:
    query (total_q, Hq, D), key (total_k, Hkv, D), value (total_k, Hkv, Dv),
    float16 or bfloat16 CUDA tensors; cu_seqlens_q/k int32 (batch + 1,), from
    0 to the tokens' count. Query i of sequence s attends to the keys of s
    (causal: those up to its position, bottom-right aligned). Hq a multiple
    of Hkv (grouped-query attention). Returns out (total_q, Hq, Dv) and, with
    return_lse, lse (Hq, total_q) in float32 (-inf for a query with no key).
    """
    from tiledattn.attention import _prepare
    from tiledattn.compiler import kernel_entry
    from tiledattn.flex import _kernel_captures, schedule_blocks

    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"{_OP}: expected '{name}' to be a torch.Tensor but got {type(t).__name__}"
            )
        if t.dim() != 3:
            raise InvalidInputError(
                f"{_OP}: expected '{name}' of shape (total tokens, heads, head dim) but got "
                f"shape {tuple(t.shape)}"
            )
    for name, t in (("key", key), ("value", value)):
        if t.device != query.device:
            raise InvalidInputError(
                f"{_OP}: expected '{name}' on {query.device} (the device of 'query') but "
                f"got {t.device}"
            )
    if key.shape[0] != value.shape[0]:
        raise InvalidInputError(
            f"{_OP}: expected 'key' and 'value' to have as many tokens but got "
            f"{key.shape[0]} and {value.shape[0]}"
        )
    total_q, total_k = query.shape[0], key.shape[0]
    _check_cu_seqlens("cu_seqlens_q", cu_seqlens_q, total_q, query.device)
    _check_cu_seqlens("cu_seqlens_k", cu_seqlens_k, total_k, query.device)
    if cu_seqlens_q.numel() != cu_seqlens_k.numel():
        raise InvalidInputError(
            f"{_OP}: expected 'cu_seqlens_q' and 'cu_seqlens_k' to hold as many sequences "
            f"but got {cu_seqlens_q.numel() - 1} and {cu_seqlens_k.numel() - 1}"
        )
    if total_q == 0 or total_k == 0:
        raise UnsupportedInputError(
            f"{_OP}: expected tokens in 'query' and 'key' but got {total_q} and {total_k}",
            "varlen empty",
        )
    # Before anything is built or compiled: CPU tensors never reach a kernel.
    require_kernel_device(_OP, query.device)
    blocks = schedule_blocks(query.shape[-1], value.shape[-1])
    text, order = _kernel_text(query.dtype, query.shape[-1], value.shape[-1])

    def build():
        tensors = positions(cu_seqlens_q, cu_seqlens_k, total_q, total_k, causal)
        return _padded(tensors, *blocks), block_map(tensors, total_q, total_k, *blocks)

    tensors, bmap = kept_while_unchanged(
        _maps, (cu_seqlens_q, cu_seqlens_k), (causal, blocks), build
    )
    captures = _kernel_captures([tensors[i] for i in order], query)
    entry = kernel_entry(text, cache=cache)
    # (tokens, heads, dim) as one batch of (heads, tokens, dim): a view.
    q4, k4, v4 = (t.transpose(0, 1)[None] for t in (query, key, value))
    enable_gqa = key.shape[1] != query.shape[1]
    launch = _prepare(q4, k4, v4, None, 0.0, False, scale, enable_gqa, False, entry)
    launch.captures = captures + [bmap]
    if not return_lse:
        return launch.run()[0].transpose(0, 1)
    out, lse = launch.run_with_lse()
    return out[0].transpose(0, 1), lse[0]


def _offsets(t: torch.Tensor) -> torch.Tensor:
    """The int32 cu_seqlens of a nested jagged tensor, one per offsets tensor
    (so that varlen's map, kept per cu_seqlens, is found again)."""
    offsets = t.offsets()
    return kept_while_unchanged(_offsets_int32, (offsets,), None, lambda: offsets.to(torch.int32))


def nested_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """scaled_dot_product_attention on nested jagged tensors [B, H, j, D]
    (torch's variable-length input): varlen_attention on their values, the
    result nested as the query. Raises UnsupportedInputError for what it
    cannot run (so that fallback=True gives torch's SDPA)."""
    from tiledattn.compiler import CompileError

    op = "tiledattn.scaled_dot_product_attention"
    names = ("query", "key", "value")
    for name, t in zip(names, (query, key, value)):
        if not (isinstance(t, torch.Tensor) and t.is_nested and t.layout == torch.jagged):
            raise UnsupportedInputError(
                f"{op}: expected '{name}' to be a nested jagged tensor like 'query' but got "
                f"{'a dense tensor' if isinstance(t, torch.Tensor) else type(t).__name__}",
                "nested mixed",
            )
        if t.dim() != 4 or t._ragged_idx != 2 or t.lengths() is not None:
            raise UnsupportedInputError(
                f"{op}: expected '{name}' to be a nested jagged tensor [B, H, j, D] ragged "
                f"along dimension 2 without holes (torch's SDPA layout) but got shape "
                f"{tuple(t.shape)} ragged along dimension {t._ragged_idx}"
                + (" with holes (lengths)" if t.lengths() is not None else ""),
                "nested layout",
            )
    if attn_mask is not None or dropout_p != 0.0:
        raise UnsupportedInputError(
            f"{op}: nested jagged inputs take no attn_mask or dropout here but got "
            f"{'an attn_mask' if attn_mask is not None else f'dropout_p={dropout_p}'}",
            "nested mask or dropout",
        )
    heads_q, heads_k = query.shape[1], key.shape[1]
    if heads_q != heads_k and not enable_gqa:
        raise InvalidInputError(
            f"{op}: expected 'key' with {heads_q} heads (the query's; enable_gqa=True for "
            f"fewer) but got {heads_k}"
        )
    cu_q, cu_k = _offsets(query), _offsets(key)
    if is_causal and cu_q is not cu_k and not torch.equal(cu_q, cu_k):
        raise UnsupportedInputError(
            f"{op}: is_causal with nested jagged query and key of other lengths: torch's "
            "is_causal is top-left aligned, FlashAttention's varlen bottom-right, and "
            "tiledattn does not choose (pass equal lengths, or tiledattn.varlen_attention "
            "for bottom-right)",
            "nested causal lengths",
        )
    values = [t.transpose(1, 2).values() for t in (query, key, value)]
    try:
        out = varlen_attention(*values, cu_q, cu_k, causal=is_causal, scale=scale)
    except CompileError as error:
        # No compiler here and no cached kernel: fallback=True gives torch's.
        raise UnsupportedInputError(
            f"{op}: nested jagged inputs run on the varlen kernel, which failed to "
            f"compile: {error}",
            "nested compile",
        ) from None
    nested = torch.nested.nested_tensor_from_jagged(out, offsets=query.offsets())
    return nested.transpose(1, 2)
