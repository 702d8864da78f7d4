"""GPU tests of tiledattn.context_parallel on one GPU: the ring's chunks run
on tiledattn's kernels (flash_forward) and merged by lse match float64
attention over the whole sequence (FlashAttention's criterion), gradients
included; and inside enabled(), torch's flash SDPA backend runs tiledattn.
They skip, saying why, without a Hopper GPU."""

import math

import pytest
import torch
import torch.nn.functional as F
from test_context_parallel import ring, ring_backward
from test_gpu import _skip_reason, check_out, reference

from tiledattn import context_parallel

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _kernel_forward(qi, kj, vj, is_causal, scale):
    out, lse, *_ = context_parallel.flash_forward(qi, kj, vj, is_causal=is_causal, scale=scale)
    return out, lse


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_ring_on_tiledattn_matches_float64(causal):
    torch.manual_seed(causal)
    q, k, v = (torch.randn(2, 4, 1024, 128, device="cuda", dtype=torch.bfloat16) for _ in "qkv")
    out, lse = ring(q, k, v, causal, 4, _kernel_forward)
    ref, _, low = reference(q, k, v, causal, 1 / math.sqrt(128))
    check_out(out.to(q.dtype), ref, low, f"ring causal={causal}", dtype=torch.bfloat16)
    # gradients: the per-pair backwards against float64 autograd
    grad = torch.randn_like(out)
    got = ring_backward(grad.to(q.dtype), q, k, v, out.to(q.dtype), lse, causal, 4)
    leaves = [t.double().requires_grad_() for t in (q, k, v)]
    F.scaled_dot_product_attention(*leaves, is_causal=causal).backward(grad.double())
    for name, g, leaf in zip("qkv", got, leaves):
        scale = leaf.grad.abs().max().item()
        error = (g.double() - leaf.grad).abs().max().item()
        assert error <= 2e-2 * scale, f"d{name}: {error:.3g} vs largest {scale:.3g}"


def test_torch_flash_sdpa_runs_tiledattn_inside_enabled():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(0)
    q, k, v = (
        torch.randn(1, 4, 500, 128, device="cuda", dtype=torch.bfloat16).requires_grad_()
        for _ in "qkv"
    )
    calls = []
    forward = context_parallel.flash_forward

    def counted(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)

    context_parallel.flash_forward = counted
    try:
        with context_parallel.enabled(), sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.float().sum().backward()
    finally:
        context_parallel.flash_forward = forward
    assert calls, "the flash backend did not run tiledattn"
    ref, _, low = reference(q.detach(), k.detach(), v.detach(), True, 1 / math.sqrt(128))
    check_out(out.detach(), ref, low, "flash backend on tiledattn", dtype=torch.bfloat16)
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
