"""GPU tests of the backward (tiledattn.backward under autograd on the
shipped forward kernels): gradients against float64 with FlashAttention's
criterion, under torch.compile(fullgraph=True) (the training test:
test_gpu_training.py). They skip, saying why,
without a Hopper GPU."""

import pytest
import torch
import torch.nn.functional as F
from test_gpu import _skip_reason

import tiledattn

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _grads(fn, q, k, v, grad_out):
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = fn(*leaves)
    out.backward(grad_out.to(out.dtype))
    return [t.grad for t in leaves]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize(
    "shape, causal",
    [
        ((2, 8, 8, 300, 300, 128), True),
        ((1, 8, 2, 257, 1000, 64), False),  # GQA 4, Sq != Sk
        ((2, 4, 1, 128, 128, 128), True),  # MQA
        ((2, 4, 4, 333, 333, 128), False),  # bf16: the tile programs
    ],
    ids=["mha-causal", "gqa-long-k", "mqa-causal", "mha"],
)
def test_gradients_match_float64(shape, causal, dtype):
    # FlashAttention's criterion: each gradient's error at most twice torch's
    # same-precision error (its math backend) plus a noise floor.
    b, hq, hkv, sq, sk, d = shape
    torch.manual_seed(sum(shape))
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype) for _ in "kv")
    grad_out = torch.randn(b, hq, sq, d, device="cuda")
    gqa = hq != hkv

    def ours(q, k, v):
        return tiledattn.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    def torch_sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    want = _grads(torch_sdpa, q.double(), k.double(), v.double(), grad_out.double())
    low = _grads(torch_sdpa, q, k, v, grad_out)
    got = _grads(ours, q, k, v, grad_out)
    for name, g, lo, ref in zip("qkv", got, low, want):
        error = (g.double() - ref).abs().max().item()
        floor = (lo.double() - ref).abs().max().item()
        assert error <= 2 * floor + 1e-3, f"d{name}: {error:.3g} > 2 x {floor:.3g} + 1e-3"


def test_forward_and_backward_under_torch_compile_fullgraph():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 200, 64, device="cuda", dtype=torch.bfloat16) for _ in "qkv")

    def loss(q, k, v):
        return (
            tiledattn.scaled_dot_product_attention(q, k, v, is_causal=True).float().square().sum()
        )

    compiled = torch.compile(loss, fullgraph=True)
    eager_grads = torch.autograd.grad(loss(*(t.requires_grad_() for t in (q, k, v))), (q, k, v))
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    compiled_grads = torch.autograd.grad(compiled(*leaves), leaves)
    for a, b in zip(eager_grads, compiled_grads):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2)


def test_the_torch_ops_backward_is_bitwise_identical_run_to_run():
    # fp16 (the programs' is bf16): the torch-ops backward has no atomics.
    torch.manual_seed(5)
    q, k, v = (torch.randn(2, 8, 700, 128, device="cuda", dtype=torch.float16) for _ in "qkv")
    grad_out = torch.randn(2, 8, 700, 128, device="cuda")

    def ours(q, k, v):
        return tiledattn.scaled_dot_product_attention(q, k, v, is_causal=True)

    first, second = _grads(ours, q, k, v, grad_out), _grads(ours, q, k, v, grad_out)
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_the_tile_programs_take_the_backward_they_cover(monkeypatch):
    # bf16, head dim 128, not causal, no GQA: autograd runs the backward's
    # tile programs (tiledattn.backward_kernels), not the torch-ops backward,
    # here with the lse's gradient too (the loss reads both outputs), and
    # matches float64 with FlashAttention's criterion.
    from tiledattn import backward
    from tiledattn.attention import _prepare

    def refuse(*args, **kwargs):
        raise AssertionError("the torch-ops backward ran")

    monkeypatch.setattr(backward, "sdpa_backward", refuse)
    torch.manual_seed(3)
    q, k, v = (torch.randn(1, 2, 200, 128, device="cuda", dtype=torch.bfloat16) for _ in "qkv")
    grad_out = torch.randn(1, 2, 200, 128, device="cuda")
    grad_lse = torch.randn(1, 2, 200, device="cuda")

    def ours(q, k, v):
        out, lse = _prepare(q, k, v, None, 0.0, False, None, False, False, None).run_with_lse()
        return out, lse

    def reference(q, k, v):
        scores = q @ k.transpose(-1, -2) * 128**-0.5
        return torch.softmax(scores, -1) @ v, torch.logsumexp(scores, -1)

    def grads(fn, dtype):
        leaves = [t.detach().to(dtype).requires_grad_() for t in (q, k, v)]
        out, lse = fn(*leaves)
        torch.autograd.backward((out, lse), (grad_out.to(out.dtype), grad_lse.to(lse.dtype)))
        return [t.grad for t in leaves]

    want, low, got = (
        grads(reference, torch.float64),
        grads(reference, torch.bfloat16),
        grads(ours, torch.bfloat16),
    )
    for name, g, lo, ref in zip("qkv", got, low, want):
        error = (g.double() - ref).abs().max().item()
        floor = (lo.double() - ref).abs().max().item()
        assert error <= 2 * floor + 1e-3, f"d{name}: {error:.3g} > 2 x {floor:.3g} + 1e-3"


def test_deterministic_mode_gives_bitwise_identical_gradients_where_programs_run(monkeypatch):
    # The programs add dQ atomically; torch.use_deterministic_algorithms
    # sends their inputs to the torch-ops backward, which has no atomics
    # (its matmuls need cuBLAS's fixed workspace in that mode).
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.manual_seed(6)
    q, k, v = (torch.randn(2, 4, 700, 128, device="cuda", dtype=torch.bfloat16) for _ in "qkv")
    grad_out = torch.randn(2, 4, 700, 128, device="cuda")
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first, second = (
            _grads(tiledattn.scaled_dot_product_attention, q, k, v, grad_out) for _ in "12"
        )
    finally:
        torch.use_deterministic_algorithms(before)
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_the_tile_programs_backward_under_torch_compile_fullgraph():
    torch.manual_seed(4)
    q, k, v = (torch.randn(1, 4, 256, 128, device="cuda", dtype=torch.bfloat16) for _ in "qkv")

    def loss(q, k, v):
        return tiledattn.scaled_dot_product_attention(q, k, v).float().square().sum()

    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    want = torch.autograd.grad(loss(*leaves), leaves)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    got = torch.autograd.grad(torch.compile(loss, fullgraph=True)(*leaves), leaves)
    for a, b in zip(want, got):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(
    "shape",
    [(1, 8, 2, 300, 300), (2, 4, 1, 129, 1000), (1, 6, 3, 1000, 77)],
    ids=["gqa4", "mqa_sq_lt_sk", "gqa2_sq_gt_sk"],
)
def test_the_row_forms_take_gqa_and_cross_attention_through_autograd(shape, causal, monkeypatch):
    # GQA / MQA and q, k of their own lengths, causal (top-left) or not, go
    # to the tile programs (the row forms; not the torch-ops backward) and
    # match float64 with FlashAttention's criterion; dK and dV summed over
    # each group.
    from tiledattn import backward, backward_kernels

    def refuse(*args, **kwargs):
        raise AssertionError("the torch-ops backward ran")

    monkeypatch.setattr(backward, "sdpa_backward", refuse)
    monkeypatch.setenv("TILEDATTN_BACKWARD_MAIN", "main_bf16_d128_rows.mlir")
    causal_form = (backward_kernels.CAUSAL_MAIN, torch.bfloat16, 128)
    monkeypatch.setattr(
        backward_kernels, "IN_AUTOGRAD", backward_kernels.IN_AUTOGRAD | {causal_form}
    )
    b, hq, hkv, sq, sk = shape
    torch.manual_seed(sq + sk)
    q = torch.randn(b, hq, sq, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, sk, 128, device="cuda", dtype=torch.bfloat16) for _ in "kv")
    grad_out = torch.randn(b, hq, sq, 128, device="cuda")

    def ours(q, k, v):
        return tiledattn.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

    def reference(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

    got = _grads(ours, q, k, v, grad_out)
    want = _grads(reference, *(t.double() for t in (q, k, v)), grad_out)
    low = _grads(reference, q, k, v, grad_out)
    for name, g, lo, ref in zip("qkv", got, low, want):
        assert g.shape == ref.shape, name
        error = (g.double() - ref).abs().max().item()
        floor = (lo.double() - ref).abs().max().item()
        assert error <= 2 * floor + 1e-3, f"d{name}: {error:.3g} > 2 x {floor:.3g} + 1e-3"


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [128, 64, 32])
def test_deterministic_mode_runs_the_programs_without_atomics_once_on(d, causal, monkeypatch):
    # The mode is in IN_AUTOGRAD (its GPU tests passed): it runs the
    # head dim's pair (dkdv_bf16_d128.mlir and dq_bf16_d128.mlir, or the
    # D = 64 pair for head dims up to 64; their derived _causal forms for
    # is_causal), not the torch-ops backward, and the gradients are bitwise
    # the same run to run.
    from test_gpu_flex import CACHE

    from tiledattn import backward, backward_kernels

    def refuse(*args, **kwargs):
        raise AssertionError("the torch-ops backward ran")

    monkeypatch.setattr(backward, "sdpa_backward", refuse)
    # The forward's kernel of head dim 32 (scripts/flex_cache.py)
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", str(CACHE))
    pair = backward_kernels.DETERMINISTIC_PROGRAMS[backward_kernels.tile_head_dim(d), causal]
    assert (pair[0], torch.bfloat16, d) in backward_kernels.IN_AUTOGRAD
    torch.manual_seed(7)
    q = torch.randn(2, 8, 700, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, 4, 700, d, device="cuda", dtype=torch.bfloat16) for _ in "kv")
    grad_out = torch.randn(2, 8, 700, d, device="cuda")

    def ours(q, k, v):
        return tiledattn.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first, second = (_grads(ours, q, k, v, grad_out) for _ in "12")
    finally:
        torch.use_deterministic_algorithms(before)
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    want = _grads(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True),
        *(t.double() for t in (q, k, v)),
        grad_out,
    )
    for name, g, ref in zip("qkv", first, want):
        error = (g.double() - ref).abs().max().item()
        assert error <= 2e-2 * ref.abs().max().item() + 1e-3, f"d{name}: {error:.3g}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize(
    "shape, causal",
    [
        ((2, 4, 2, 300, 300, 128), True),
        ((1, 4, 1, 200, 333, 64), False),
        ((1, 4, 2, 129, 300, 96), True),
        ((2, 2, 2, 100, 100, 32), False),
        ((2, 4, 2, 300, 300, 64), True),
        ((1, 4, 1, 129, 200, 32), True),
        ((1, 4, 2, 300, 300, 256), True),
        ((2, 2, 1, 129, 200, 256), False),
        ((1, 4, 2, 300, 300, 192), True),
        ((2, 2, 1, 129, 200, 192), False),
    ],
    ids=[
        "causal-gqa",
        "d64-mqa",
        "d96-causal",
        "d32",
        "d64-causal-gqa",
        "d32-causal-mqa",
        "d256-causal-gqa",
        "d256-mqa",
        "d192-causal-gqa",
        "d192-mqa",
    ],
)
def test_every_program_form_runs_through_autograd_once_in_autograd(
    shape, causal, dtype, monkeypatch
):
    # Every (main program, dtype, head dim) form in IN_AUTOGRAD: autograd sends these
    # backwards to the programs, not the torch-ops backward, and they match
    # float64 with FlashAttention's criterion.
    from test_gpu_flex import CACHE

    from tiledattn import backward, backward_kernels

    def refuse(*args, **kwargs):
        raise AssertionError("the torch-ops backward ran")

    monkeypatch.setattr(backward, "sdpa_backward", refuse)
    # The forward's kernels of head dims 96 and 32 (scripts/flex_cache.py)
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", str(CACHE))
    every_form = {
        (p, t, d)
        for p in backward_kernels.MAIN_PROGRAMS
        for t in backward_kernels.DTYPES
        for d in backward_kernels.HEAD_DIMS
    }
    monkeypatch.setattr(backward_kernels, "IN_AUTOGRAD", frozenset(every_form))
    b, hq, hkv, sq, sk, d = shape
    torch.manual_seed(sum(shape))
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype) for _ in "kv")
    grad_out = torch.randn(b, hq, sq, d, device="cuda")

    def sdpa(fn):
        return lambda q, k, v: fn(q, k, v, is_causal=causal, enable_gqa=True)

    got = _grads(sdpa(tiledattn.scaled_dot_product_attention), q, k, v, grad_out)
    want = _grads(sdpa(F.scaled_dot_product_attention), *(t.double() for t in (q, k, v)), grad_out)
    low = _grads(sdpa(F.scaled_dot_product_attention), q, k, v, grad_out)
    for name, g, lo, ref in zip("qkv", got, low, want):
        error = (g.double() - ref).abs().max().item()
        floor = (lo.double() - ref).abs().max().item()
        assert error <= 2 * floor + 1e-3, f"d{name}: {error:.3g} > 2 x {floor:.3g} + 1e-3"
