"""CPU tests of tiledattn.context_parallel's ring arithmetic: chunks of Q,
K and V, per-pair forwards merged by their lse and per-pair backwards given
the merged out and lse (what PyTorch's ring does with the flash ops) match
attention over the whole sequence, causal (diagonal pairs causal, pairs
above it skipped) and not. The forward here is a float64 stand-in for the
kernel; the kernel's run: test_gpu_context_parallel.py."""

import math

import pytest
import torch

from tiledattn import context_parallel
from tiledattn.backward import forward_with_lse, sdpa_backward


def ring(q, k, v, causal, chunks, forward):
    """The ring on one device: out and lse per query chunk, merged over the
    key chunks it sees; then dq, dk, dv from the per-pair backwards."""
    scale = 1 / math.sqrt(q.shape[-1])
    qs, ks, vs = (t.chunk(chunks, dim=2) for t in (q, k, v))
    outs, lses = [], []
    for i, qi in enumerate(qs):
        out = lse = None
        for j, (kj, vj) in enumerate(zip(ks, vs)):
            if causal and j > i:
                continue
            block_out, block_lse = forward(qi, kj, vj, causal and i == j, scale)
            if out is None:
                out, lse = block_out.float(), block_lse
            else:
                out, lse = context_parallel.merge(out, lse, block_out, block_lse)
        outs.append(out)
        lses.append(lse)
    return torch.cat(outs, 2), torch.cat(lses, 2)


def ring_backward(grad, q, k, v, out, lse, causal, chunks):
    scale = 1 / math.sqrt(q.shape[-1])
    split = [t.chunk(chunks, dim=2) for t in (q, k, v, out, lse, grad)]
    dq = [torch.zeros_like(t) for t in split[0]]
    dk = [torch.zeros_like(t) for t in split[1]]
    dv = [torch.zeros_like(t) for t in split[2]]
    for i in range(chunks):
        for j in range(chunks):
            if causal and j > i:
                continue
            a, b, c = context_parallel.flash_backward(
                split[5][i],
                split[0][i],
                split[1][j],
                split[2][j],
                split[3][i],
                split[4][i],
                None,
                None,
                0,
                0,
                0.0,
                causal and i == j,
                None,
                None,
                scale=scale,
            )
            dq[i] += a
            dk[j] += b
            dv[j] += c
    return torch.cat(dq, 2), torch.cat(dk, 2), torch.cat(dv, 2)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("chunks", [2, 4])
def test_the_ring_matches_attention_over_the_whole_sequence(causal, chunks):
    gen = torch.Generator().manual_seed(chunks + causal)
    q, k, v = (torch.randn(2, 3, 64, 16, generator=gen, dtype=torch.float64) for _ in "qkv")
    scale = 1 / math.sqrt(16)

    def forward(qi, kj, vj, is_causal, scale):
        return forward_with_lse(qi, kj, vj, is_causal, scale)

    out, lse = ring(q, k, v, causal, chunks, forward)
    want_out, want_lse = forward_with_lse(q, k, v, causal, scale)
    torch.testing.assert_close(out.double(), want_out, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(lse, want_lse, rtol=1e-10, atol=1e-10)
    grad = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    got = ring_backward(grad, q, k, v, out.double(), lse, causal, chunks)
    want = sdpa_backward(
        grad, None, q, k, v, want_out, want_lse, causal, scale, compute=torch.float64
    )
    for name, g, w in zip("qkv", got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4, msg=f"d{name}")


def test_the_forward_refuses_dropout():
    q = torch.empty(1, 1, 4, 64, device="meta")
    with pytest.raises(tiledattn_error(), match="dropout_p 0"):
        context_parallel.flash_forward(q, q, q, dropout_p=0.1)


def tiledattn_error():
    from tiledattn.errors import UnsupportedInputError

    return UnsupportedInputError
