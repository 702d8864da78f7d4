"""torch SDPA's attn_mask on tiledattn kernels: the mask is a tensor the
kernel's score_mod reads (flex.py's captured tensors), compiled once per
mask kind (bool or additive, its dtype, which dimensions broadcast) and
reading each call's mask, as FlexAttention would with
`score_mod(score, b, h, q_idx, kv_idx)`.

A bool mask keeps the scores where it is True (the others are -inf); a float
mask is added to the scaled scores. A row no key is kept for gives zeros, as
torch's SDPA does since 2.5. Broadcast dimensions (size 1, or stride 0 as
from `expand`) are read at index 0, so an expanded mask is never copied.
Every K/V block is computed: the block map that skips fully masked blocks
is not built yet.
"""

import functools

import torch

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


@functools.lru_cache(maxsize=256)
def _kernel_text(mask_dtype, varies, dtype, head_dim, head_dim_v) -> str:
    """The schedule of a mask kind's kernel: traced once, from a stand-in
    mask (the text depends on the mask's dtype and shape kind only)."""
    from tiledattn.flex import schedule_text, trace_score_mod

    stand_in = torch.empty([2 if v else 1 for v in varies], dtype=mask_dtype, device="meta")
    region = trace_score_mod(mask_score_mod(stand_in, varies))
    return schedule_text(region, dtype, head_dim, "sdpa_attn_mask", head_dim_v=head_dim_v)


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
    reads at the call."""
    mask, varies = compact_mask(attn_mask, scores_shape, squeeze)
    return _kernel_text(mask.dtype, varies, dtype, head_dim, head_dim_v), [mask]
