"""torch SDPA's attn_mask on tiledattn kernels: the mask is a tensor the
kernel's score_mod reads (flex.py's captured tensors), compiled once per
mask kind (bool or additive, its dtype, which dimensions broadcast) and
reading each call's mask, as FlexAttention would with
`score_mod(score, b, h, q_idx, kv_idx)`.

A bool mask keeps the scores where it is True (the others are -inf); a float
mask is added to the scaled scores. A row no key is kept for gives zeros, as
torch's SDPA does since 2.5. Broadcast dimensions (size 1, or stride 0 as
from `expand`) are read at index 0, so an expanded mask is never copied.

The kernel reads a block map too (tiledattn.sdpa's `block_map`), built here
on the mask's device from the mask and kept for the next call with the same
mask (a model's layers share one): per tile of query rows, the K/V blocks
whose scores the mask leaves unchanged (full: no mask applied), then those
it changes in part (partial: the mask applied per score); blocks it masks
entirely are skipped.
"""

import functools

import torch

from tiledattn._tensor_cache import kept_while_unchanged
from tiledattn.errors import InvalidInputError, UnsupportedInputError

_OP = "tiledattn.scaled_dot_product_attention"
_MASK_DTYPES = (torch.bool, torch.float16, torch.bfloat16, torch.float32)


def check_attn_mask(attn_mask, query: torch.Tensor, is_causal) -> None:
    """What can be checked before the inputs' shapes are: the mask's type,
    dtype, device and rank, and torch's rule against is_causal with it."""
    if not isinstance(attn_mask, torch.Tensor):
        raise TypeError(
            f"{_OP}: expected 'attn_mask' to be a torch.Tensor or None but got "
            f"{type(attn_mask).__name__}"
        )
    if is_causal:
        # torch's SDPA refuses both as well.
        raise InvalidInputError(
            f"{_OP}: expected 'attn_mask' to be None when is_causal=True (torch's "
            "rule: put the causal mask into attn_mask instead)"
        )
    if attn_mask.dtype not in _MASK_DTYPES:
        raise InvalidInputError(
            f"{_OP}: expected 'attn_mask' to have dtype torch.bool (True: keep) or a "
            f"float dtype (added to the scores) but got {attn_mask.dtype}"
        )
    if attn_mask.dtype not in (torch.bool, torch.float32, query.dtype):
        # torch's SDPA refuses a half mask of the other half type too.
        raise InvalidInputError(
            f"{_OP}: expected a float 'attn_mask' to have dtype torch.float32 or the "
            f"query's dtype {query.dtype} (torch's rule) but got {attn_mask.dtype}"
        )
    if attn_mask.device != query.device:
        raise InvalidInputError(
            f"{_OP}: expected 'attn_mask' on {query.device} (the device of 'query') "
            f"but got {attn_mask.device}"
        )
    if attn_mask.is_nested or attn_mask.layout != torch.strided:
        raise UnsupportedInputError(
            f"{_OP}: expected 'attn_mask' to be a dense tensor but got layout {attn_mask.layout}",
            "attn_mask layout",
        )
    if query.dim() > 4:
        raise UnsupportedInputError(
            f"{_OP}: 'attn_mask' is supported for inputs of 3 or 4 dimensions but "
            f"'query' has shape {tuple(query.shape)}",
            "attn_mask rank",
        )


def compact_mask(attn_mask: torch.Tensor, scores_shape: tuple, squeeze: bool):
    """`attn_mask` as the kernel reads it, for scores of shape `scores_shape`
    (B, H, L, S): 4-D, one element along each dimension it does not vary
    along (size 1, or stride 0 as from `expand`: no copy), contiguous; and
    which of (B, H, L, S) it varies along. `squeeze`: the inputs had no head
    dimension, so the mask's last three dimensions are (N, L, S)."""
    mask = attn_mask.unsqueeze(-3) if squeeze and attn_mask.dim() >= 3 else attn_mask
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != tuple(scores_shape):
        expected = "(N, L, S)" if squeeze else "(B, H, L, S)"
        raise InvalidInputError(
            f"{_OP}: expected 'attn_mask' to broadcast to the attention scores' shape "
            f"{expected} = {tuple(scores_shape[1:] if squeeze else scores_shape)} but got "
            f"shape {tuple(attn_mask.shape)}"
        )
    mask = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
    for dim in range(4):
        if mask.shape[dim] > 1 and mask.stride(dim) == 0:
            mask = mask.narrow(dim, 0, 1)
    mask = mask.contiguous()
    return mask, tuple(mask.shape[dim] > 1 for dim in range(4))


def mask_score_mod(mask: torch.Tensor, varies: tuple):
    """A FlexAttention score_mod applying a compacted 4-D `mask` (see
    compact_mask), read at index 0 along the dimensions it does not vary
    along: where it is True (bool), or added (float)."""

    def index(b, h, q_idx, kv_idx):
        return tuple(i if v else 0 for i, v in zip((b, h, q_idx, kv_idx), varies))

    if mask.dtype == torch.bool:

        def attn_mask_keep(score, b, h, q_idx, kv_idx):
            return torch.where(mask[index(b, h, q_idx, kv_idx)], score, -float("inf"))

        return attn_mask_keep

    def attn_mask_add(score, b, h, q_idx, kv_idx):
        return score + mask[index(b, h, q_idx, kv_idx)]

    return attn_mask_add


def _blocks_along(t: torch.Tensor, dim: int, block: int, pad: bool, reduce) -> torch.Tensor:
    """`t` reduced (`reduce`: torch.any or torch.all) over blocks of `block`
    elements along `dim`, the last block padded with `pad`; a dimension of
    size 1 (broadcast) stays as it is."""
    size = t.shape[dim]
    if size == 1:
        return t
    blocks = -(-size // block)
    if blocks * block != size:
        shape = list(t.shape)
        shape[dim] = blocks * block - size
        t = torch.cat([t, t.new_full(shape, pad)], dim)
    shape = list(t.shape)
    shape[dim : dim + 1] = [blocks, block]
    return reduce(t.reshape(shape), dim=dim + 1)


def block_map(mask: torch.Tensor, scores_shape: tuple, block_m: int, block_n: int) -> torch.Tensor:
    """The block map (tiledattn.sdpa's `block_map`, int32) of a compacted
    4-D `mask` (see compact_mask) for scores of `scores_shape` (B, H, L, S)
    and tiles of `block_m` x `block_n`: for every (batch, head, query block)
    the number of full K/V blocks, the number of blocks listed, then their
    indices, full ones first, each kind in key order. Dimensions 0 and 1 are
    1 where the mask's are. A query block that no key reaches lists block 0
    as partial, where the mask gives the rows zeros. A block past the keys'
    end is partial at best (the kernel masks the keys beyond it)."""
    _, _, length_q, length_k = scores_shape
    keep = mask if mask.dtype == torch.bool else mask != float("-inf")
    unchanged = mask if mask.dtype == torch.bool else mask == 0
    state = block_states(keep, unchanged, block_m, block_n)
    return map_from_blocks(state, length_q, length_k, block_m, block_n)


def block_states(
    keep: torch.Tensor, unchanged: torch.Tensor, block_m: int, block_n: int
) -> torch.Tensor:
    """Per block of `block_m` query rows (dimension 2) by `block_n` keys
    (dimension 3): 2 where the mask leaves every score `unchanged` (full),
    1 where it `keep`s some (partial), 0 where none (skipped). Rows past the
    queries' end are never stored: they neither keep a block nor spoil a
    full one; keys past the end do not keep one."""
    any_kept = _blocks_along(keep, 2, block_m, False, torch.any)
    all_unchanged = _blocks_along(unchanged, 2, block_m, True, torch.all)
    any_kept = _blocks_along(any_kept, 3, block_n, False, torch.any)
    all_unchanged = _blocks_along(all_unchanged, 3, block_n, False, torch.all)
    return torch.where(all_unchanged, 2, any_kept.to(torch.int64))


def map_from_blocks(
    state: torch.Tensor, length_q: int, length_k: int, block_m: int, block_n: int
) -> torch.Tensor:
    """The block map (see block_map) of `state`, an integer tensor of shape
    (B|1, H|1, query blocks|1, key blocks) holding 2 for a full block, 1 for
    a partial one, 0 for one masked whole. A full block past the keys' end
    becomes partial (the kernel masks the keys beyond it there)."""
    key_blocks = -(-length_k // block_n)
    state = state[..., :key_blocks].to(torch.int64)
    inside = (torch.arange(key_blocks, device=state.device) + 1) * block_n <= length_k
    state = torch.where((state == 2) & ~inside, 1, state)
    rows = (state.shape[0], state.shape[1], -(-length_q // block_m), key_blocks)
    state = state.expand(rows)
    order = torch.sort(state, dim=-1, descending=True, stable=True).indices
    full = (state == 2).sum(-1, keepdim=True)
    listed = (state > 0).sum(-1, keepdim=True).clamp(min=1)
    return torch.cat([full, listed, order], -1).to(torch.int32).contiguous()


# The block maps of the masks seen last (_tensor_cache).
_block_maps: dict = {}


def cached_block_map(
    attn_mask: torch.Tensor, mask: torch.Tensor, scores_shape: tuple, blocks: tuple
) -> torch.Tensor:
    """block_map of `mask` (the compacted `attn_mask`), computed once per
    `attn_mask` as long as it lives unchanged."""
    params = (tuple(scores_shape), blocks, mask.shape, mask.dtype)
    return kept_while_unchanged(
        _block_maps, (attn_mask,), params, lambda: block_map(mask, scores_shape, *blocks)
    )


@functools.lru_cache(maxsize=256)
def _kernel_text(mask_dtype, varies, dtype, head_dim, head_dim_v) -> str:
    """The schedule of a mask kind's kernel: traced once, from a stand-in
    mask (the text depends on the mask's dtype and shape kind only)."""
    from tiledattn.flex import schedule_text, trace_score_mod

    stand_in = torch.empty([2 if v else 1 for v in varies], dtype=mask_dtype, device="meta")
    # A mask_mod: with the block map it runs on the partial blocks only.
    region = trace_score_mod(mask_score_mod(stand_in, varies), region="mask_mod")
    return schedule_text(
        region, dtype, head_dim, "sdpa_attn_mask", head_dim_v=head_dim_v, block_map=True
    )


def mask_kernel_text(
    attn_mask: torch.Tensor,
    scores_shape: tuple,
    squeeze: bool,
    dtype: torch.dtype,
    head_dim: int,
    head_dim_v: int,
) -> "tuple[str, list[torch.Tensor]]":
    """The schedule (MLIR text, the compile cache's key) of the kernel that
    applies `attn_mask` to scores of `scores_shape`, and the tensors it
    reads at the call: the compacted mask and its block map."""
    from tiledattn.flex import schedule_blocks

    mask, varies = compact_mask(attn_mask, scores_shape, squeeze)
    text = _kernel_text(mask.dtype, varies, dtype, head_dim, head_dim_v)
    blocks = schedule_blocks(head_dim, head_dim_v)
    return text, [mask, cached_block_map(attn_mask, mask, scores_shape, blocks)]
