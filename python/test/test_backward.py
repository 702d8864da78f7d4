"""CPU tests of tiledattn.backward (FlashAttention-2's backward in torch
ops, the autograd of tiledattn::sdpa_fwd until the backward kernel): its
gradients, from the forward's output and lse, against float64 autograd of
plain attention, GQA, top-left causal with Sq != Sk, the lse's own
gradient, and chunks of query rows. The GPU run: test_gpu.py."""

import math

import pytest
import torch

from tiledattn.backward import sdpa_backward


def _attention(q, k, v, causal, scale):
    group = q.shape[1] // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = s.masked_fill(torch.arange(sk)[None, :] > torch.arange(sq)[:, None], -math.inf)
    return torch.matmul(torch.softmax(s, -1), v), torch.logsumexp(s, -1)


@pytest.mark.parametrize("chunk_bytes", [1 << 30, 4096], ids=["one-chunk", "many-chunks"])
@pytest.mark.parametrize("with_lse", [False, True], ids=["out", "out-and-lse"])
@pytest.mark.parametrize(
    "shape, causal",
    [
        ((2, 4, 4, 37, 53, 16, 16), False),
        ((1, 8, 2, 64, 40, 32, 16), True),  # GQA 4, Sq > Sk, Dv != D
        ((2, 2, 1, 17, 90, 16, 16), True),  # MQA, Sq < Sk
    ],
    ids=["mha", "gqa-causal", "mqa-causal"],
)
def test_gradients_match_float64_autograd(shape, causal, with_lse, chunk_bytes):
    batch, heads_q, heads_kv, length_q, length_k, d, dv = shape
    gen = torch.Generator().manual_seed(sum(shape))
    q = torch.randn(batch, heads_q, length_q, d, generator=gen, dtype=torch.float64)
    k = torch.randn(batch, heads_kv, length_k, d, generator=gen, dtype=torch.float64)
    v = torch.randn(batch, heads_kv, length_k, dv, generator=gen, dtype=torch.float64)
    scale = 1 / math.sqrt(d)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out, lse = _attention(*leaves, causal, scale)
    grad_out = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    grad_lse = torch.randn(lse.shape, generator=gen, dtype=torch.float64) if with_lse else None
    torch.autograd.backward(
        [out, lse] if with_lse else [out], [grad_out, grad_lse] if with_lse else [grad_out]
    )
    got = sdpa_backward(
        grad_out, grad_lse, q, k, v, out.detach(), lse.detach(), causal, scale, chunk_bytes
    )
    # float32 arithmetic inside: a float32-sized tolerance
    for name, g, leaf in zip("qkv", got, leaves):
        torch.testing.assert_close(g, leaf.grad, rtol=1e-4, atol=1e-4, msg=f"d{name}")


def test_a_wrong_lse_gives_wrong_gradients():
    # The recomputed P rests on the saved lse: the test above can fail.
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 8, 16, generator=gen, dtype=torch.float64) for _ in "qkv")
    out, lse = _attention(q, k, v, False, 0.25)
    grad = torch.ones_like(out)
    right = sdpa_backward(grad, None, q, k, v, out, lse, False, 0.25)
    wrong = sdpa_backward(grad, None, q, k, v, out, lse + 0.1, False, 0.25)
    assert not torch.allclose(right[0], wrong[0], rtol=1e-3, atol=1e-3)
