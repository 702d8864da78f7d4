"""FlashAttention's attention variants as one call: causal (bottom-right
aligned, as FlashAttention and KV caches have it), a sliding window of
(left, right) keys, a softcap and ALiBi, on [B, H, S, D] tensors.

Each is a FlexAttention callable run by tiledattn.flex_attention (no kernel
of its own): softcap and ALiBi a score_mod (ALiBi reading its slopes
tensor), causal and the window a mask_mod in a BlockMask, whose block map
lets the kernel skip the blocks outside the window and mask only those
that straddle its edges. Top-left causal with no window is the causal
kernel. The BlockMask and the callables are kept per distinct arguments,
so a model's layers trace and compile once.
"""

import functools
import math

import torch

from tiledattn._tensor_cache import kept_while_unchanged
from tiledattn.errors import InvalidInputError

_OP = "tiledattn.variant_attention"


def _causal(b, h, q_idx, kv_idx):
    """Top-left causal: flex_attention runs it as the causal kernel."""
    return q_idx >= kv_idx


@functools.lru_cache(maxsize=32)
def _offsets(offset: int, heads: int, device) -> torch.Tensor:
    """Sk - Sq per query head (int32): the regions read it, so that one
    kernel serves every offset (a KV cache's grows at each step)."""
    return torch.full((heads,), offset, dtype=torch.int32, device=device)


@functools.lru_cache(maxsize=32)
def _mask_mod(offsets: torch.Tensor, left: int, right: int, causal: bool):
    """keep(q, kv): kv - (q + offset) in [-left, right] (-1: unbounded),
    and kv <= q + offset when causal; offset = Sk - Sq (bottom-right), read
    from `offsets` (one per head, all equal)."""
    upper = 0 if causal else right

    def window_mask(b, h, q_idx, kv_idx):
        diagonal = q_idx + offsets[h]
        if upper < 0:
            return kv_idx >= diagonal - left
        if left < 0:
            return kv_idx <= diagonal + upper
        return (kv_idx <= diagonal + upper) & (kv_idx >= diagonal - left)

    return window_mask


@functools.lru_cache(maxsize=32)
def _block_mask(offset, left, right, causal, heads, length_q, length_k, device):
    from torch.nn.attention.flex_attention import create_block_mask

    if causal and offset == 0 and left < 0:
        # top-left is bottom-right here: the causal kernel
        return create_block_mask(_causal, None, None, length_q, length_k, device=device)
    mask_mod = _mask_mod(_offsets(offset, heads, device), left, right, causal)
    return _band_block_mask(mask_mod, offset, left, right, causal, length_q, length_k, device)


def _band_block_mask(mask_mod, offset, left, right, causal, length_q, length_k, device):
    """The BlockMask (128 x 128 blocks, one for every batch and head) that
    create_block_mask makes of `mask_mod`, the band lo <= kv - q - offset <=
    hi, from each block's least and greatest kv - q instead of from the
    mask_mod at every (q, kv): a new offset (a KV cache's next step) costs a
    few small tensor ops instead of two dense evaluations (this one and
    flex_attention's check, which it is spared: the blocks follow from the
    band's definition; python/test/test_variants.py compares them with
    create_block_mask's)."""
    from torch.nn.attention.flex_attention import BlockMask

    from tiledattn.flex import trust_block_mask

    block = 128
    lo = -left if left >= 0 else -math.inf
    hi = 0 if causal else (right if right >= 0 else math.inf)
    q_first = torch.arange(0, length_q, block, device=device)
    k_first = torch.arange(0, length_k, block, device=device)
    q_last = torch.clamp(q_first + block, max=length_q) - 1
    k_last = torch.clamp(k_first + block, max=length_k) - 1
    least = k_first[None, :] - q_last[:, None] - offset
    most = k_last[None, :] - q_first[:, None] - offset
    some = (most >= lo) & (least <= hi)
    # A ragged block (past a length's end) is never full, as torch pads it
    # with dropped scores.
    whole = ((q_last - q_first + 1) == block)[:, None] & ((k_last - k_first + 1) == block)[None, :]
    full = some & whole & (least >= lo) & (most <= hi)
    partial = some & ~full

    def lists(kept):
        order = torch.argsort(kept.to(torch.int8), dim=-1, descending=True, stable=True)
        return kept.sum(-1).to(torch.int32)[None, None], order.to(torch.int32)[None, None]

    block_mask = BlockMask.from_kv_blocks(
        *lists(partial),
        *lists(full),
        BLOCK_SIZE=block,
        mask_mod=mask_mod,
        seq_lengths=(length_q, length_k),
    )
    return trust_block_mask(block_mask)


def _score_mod(softcap: float, slopes, offsets, causal: bool):
    """softcap * tanh(s / softcap), then ALiBi's -slope * |q + offset - kv|
    (FlashAttention's order and sign; the offset read from `offsets`), or
    None."""
    if not softcap and slopes is None:
        return None
    per_batch = slopes is not None and slopes.dim() == 2

    def softcap_alibi(score, b, h, q_idx, kv_idx):
        if softcap:
            score = softcap * torch.tanh(score / softcap)
        if slopes is not None:
            slope = slopes[b, h] if per_batch else slopes[h]
            distance = q_idx + offsets[h] - kv_idx
            if not causal:
                distance = torch.where(distance < 0, -distance, distance)
            score = score - slope * distance
        return score

    return softcap_alibi


def _cached_score_mod(softcap, slopes, offsets, causal):
    """_score_mod, one callable per (arguments, slopes and offsets tensors)
    while the tensors live unchanged: flex_attention keeps traces per
    callable."""
    if slopes is None:
        return _score_mod_plain(softcap)
    return kept_while_unchanged(
        _score_mods,
        (slopes, offsets),
        (softcap, causal),
        lambda: _score_mod(softcap, slopes, offsets, causal),
        limit=32,
    )


@functools.lru_cache(maxsize=32)
def _score_mod_plain(softcap):
    return _score_mod(softcap, None, None, False)


# The score_mods that read ALiBi slopes (_tensor_cache).
_score_mods: dict = {}


def _callables(query, key, causal, window_size, softcap, alibi_slopes):
    """(score_mod, BlockMask) of the variant, both kept per arguments."""
    left, right = window_size
    length_q, length_k = query.shape[2], key.shape[2]
    offset, heads = length_k - length_q, query.shape[1]
    block_mask = None
    if causal or left >= 0 or right >= 0:
        block_mask = _block_mask(
            offset, left, right, causal, heads, length_q, length_k, query.device
        )
    offsets = _offsets(offset, heads, query.device)
    return _cached_score_mod(float(softcap), alibi_slopes, offsets, causal), block_mask


def kernel_text(query, key, value, **variant) -> "str | None":
    """The schedule variant_attention() runs for these inputs and variant (None:
    the shipped kernels), for compiling ahead (scripts/flex_cache.py)."""
    from tiledattn.flex import flex_kernel

    args = {"causal": False, "window_size": (-1, -1), "softcap": 0.0, "alibi_slopes": None}
    args.update(variant)
    score_mod, block_mask = _callables(query, key, *args.values())
    return flex_kernel(query, key, value, score_mod, block_mask).text


def variant_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    causal: bool = False,
    window_size: "tuple[int, int]" = (-1, -1),
    softcap: float = 0.0,
    alibi_slopes: "torch.Tensor | None" = None,
    scale: "float | None" = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    cache=None,
):
    """Attention with FlashAttention's variants on [B, H, S, D] tensors
    (flash_attn_func's arguments, torch's layout): `causal` bottom-right
    aligned (query i sees keys up to i + Sk - Sq), `window_size` (left,
    right) keys around that diagonal (-1: unbounded), `softcap` (> 0: the
    scaled scores become softcap * tanh(s / softcap)), `alibi_slopes` (H,)
    or (B, H) float32 (a bias of -slope * |i + Sk - Sq - j|). Returns the
    output, and with return_lse its log-sum-exp [B, H, Sq] (float32).
    """
    from tiledattn.flex import flex_attention

    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise InvalidInputError(
                f"{_OP}: expected '{name}' to be a 4-D tensor [B, H, S, D] but got "
                f"{tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__}"
            )
    if (
        not isinstance(window_size, (tuple, list))
        or len(window_size) != 2
        or not all(isinstance(w, int) and w >= -1 for w in window_size)
    ):
        raise InvalidInputError(
            f"{_OP}: expected 'window_size' to be (left, right), integers >= -1 "
            f"(-1: unbounded), but got {window_size!r}"
        )
    if not (isinstance(softcap, (int, float)) and softcap >= 0 and math.isfinite(softcap)):
        raise InvalidInputError(
            f"{_OP}: expected 'softcap' to be a finite float >= 0 (0: none) but got {softcap!r}"
        )
    batch, heads = query.shape[:2]
    if alibi_slopes is not None:
        shapes = ((heads,), (batch, heads))
        if (
            not isinstance(alibi_slopes, torch.Tensor)
            or alibi_slopes.dtype != torch.float32
            or tuple(alibi_slopes.shape) not in shapes
        ):
            raise InvalidInputError(
                f"{_OP}: expected 'alibi_slopes' to be a float32 tensor of shape "
                f"({heads},) or ({batch}, {heads}) but got "
                + (
                    f"{alibi_slopes.dtype} of shape {tuple(alibi_slopes.shape)}"
                    if isinstance(alibi_slopes, torch.Tensor)
                    else type(alibi_slopes).__name__
                )
            )
    score_mod, block_mask = _callables(query, key, causal, window_size, softcap, alibi_slopes)
    return flex_attention(
        query,
        key,
        value,
        score_mod=score_mod,
        block_mask=block_mask,
        scale=scale,
        enable_gqa=enable_gqa,
        return_lse=return_lse,
        cache=cache,
    )
