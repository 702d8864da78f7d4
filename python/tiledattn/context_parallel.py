"""tiledattn under PyTorch's context parallelism (ring attention): the
forward-with-lse and backward in the signatures of torch's flash-attention
ops, which the ring calls on each pair of sequence chunks
(torch.distributed.tensor.experimental.context_parallel), and a context
that makes those ops run on tiledattn.

    with tiledattn.context_parallel.enabled():
        with context_parallel(mesh, buffers=..., buffer_seq_dims=...):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)

merge() is the ring's merge of two chunks' results by their lse. The
backward is tiledattn.backward's (torch ops) until the backward kernel.
Issue 26; run on one GPU (python/test/test_gpu_context_parallel.py), not
yet on several.
"""

import contextlib
import math

import torch

from tiledattn.errors import UnsupportedInputError

_OP = "tiledattn.context_parallel"


def flash_forward(
    query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None
):
    """aten._scaled_dot_product_flash_attention on tiledattn's kernels:
    (out, lse [B, H, Sq] float32, and the dense call's empty rest)."""
    from tiledattn.attention import _prepare

    if dropout_p != 0.0 or return_debug_mask:
        raise UnsupportedInputError(
            f"{_OP}: expected dropout_p 0 and no debug mask but got {dropout_p}, "
            f"{return_debug_mask}",
            "dropout_p",
        )
    launch = _prepare(query, key, value, None, 0.0, is_causal, scale, False, False, None)
    with torch.no_grad():  # the ring's backward op computes the gradients
        out, lse = launch.run_with_lse()
    empty = torch.empty(0, dtype=torch.int64, device=query.device)
    return (
        out,
        lse,
        empty,
        empty,
        query.shape[-2],
        key.shape[-2],
        empty,
        empty,
        torch.empty(0, dtype=query.dtype, device=query.device),
    )


def flash_backward(
    grad_out,
    query,
    key,
    value,
    out,
    logsumexp,
    cum_seq_q,
    cum_seq_k,
    max_q,
    max_k,
    dropout_p,
    is_causal,
    philox_seed,
    philox_offset,
    *,
    scale=None,
):
    """aten._scaled_dot_product_flash_attention_backward: (dq, dk, dv) of
    one chunk pair given the merged out and lse (the ring passes those)."""
    from tiledattn.backward import sdpa_backward

    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    return sdpa_backward(grad_out, None, query, key, value, out, logsumexp, is_causal, scale)


def merge(out, lse, block_out, block_lse):
    """Two partial results (over disjoint keys) as one, by their lse, as
    the ring merges them: (out, lse), in float32."""
    out, block_out = out.float(), block_out.float()
    weight = torch.sigmoid(block_lse - lse).unsqueeze(-1)
    return out - weight * (out - block_out), lse - torch.nn.functional.logsigmoid(lse - block_lse)


@contextlib.contextmanager
def enabled():
    """Within it, torch's flash-attention forward and backward ops run on
    tiledattn for CUDA tensors: what scaled_dot_product_attention's flash
    backend and context parallelism's ring call."""
    library = torch.library.Library("aten", "IMPL")
    try:
        library.impl("_scaled_dot_product_flash_attention", flash_forward, "CUDA")
        library.impl("_scaled_dot_product_flash_attention_backward", flash_backward, "CUDA")
        yield
    finally:
        library._destroy()
