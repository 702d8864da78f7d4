"""GPU tests of the backward's tile programs (issue 23), from the
package's bundles (scripts/package_kernels.py compiles every dtype and head
dim into build/kernels/by-text, where tiledattn.compile finds them: the GPU
machine has no compiler). They skip, saying why, without a Hopper GPU."""

import pytest
import torch
from test_gpu import _skip_reason, make
from test_gpu_flex import CACHE

import tiledattn
from tiledattn.attention import _prepare
from tiledattn.backward_kernels import MAIN_PROGRAMS, _kernel, attention_backward

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("shape", [(2, 3, 300), (1, 2, 128), (1, 1, 1)], ids=str)
def test_preprocess_gives_the_rows_dot_products(shape, d, dtype):
    # D = rowsum(dO * O) per query row, in f32 from 16-bit inputs, against
    # float64: odd lengths leave a partial last tile, whose rows past S the
    # program must not write (the lse buffer's tail stays as allocated).
    kernel = _kernel(CACHE, f"preprocess_bf16_d{d}.mlir", dtype)
    torch.manual_seed(0)
    b, h, s = shape
    o, do = (make(b, h, s, d, dtype) for _ in range(2))
    launch = _prepare(o, do, do, None, 0.0, False, None, False, False, kernel.entry)
    _, delta = launch.run_with_lse()
    ref = (do.double() * o.double()).sum(-1)
    assert delta.shape == (b, h, s) and delta.dtype == torch.float32
    # 128 products of bf16 values, summed in f32 (pairwise, then over four
    # threads): a few f32 ulps of the terms' magnitude.
    scale = (do.double().abs() * o.double().abs()).sum(-1)
    err = (delta.double() - ref).abs()
    assert (err <= 1e-6 * scale + 1e-6).all(), f"max error {err.max().item()}"


def _form_id(form):
    """A backward form's test id: its head dim, deterministic, causal and
    float16 where it has them, else "rows"."""
    parts = [f"d{form['d']}"] if "d" in form else []
    parts += ["deterministic"] * form.get("deterministic", False)
    parts += ["causal"] * form["causal"] + ["fp16"] * (form.get("dtype") == torch.float16)
    return "-".join(parts) or "rows"


def _softmax_attention(q, k, v, scale, causal=False):
    scores = scale * q @ k.transpose(-1, -2)
    if causal:  # top-left, as torch's is_causal
        sq, sk = q.shape[-2], k.shape[-2]
        scores = scores.masked_fill(
            torch.ones(sq, sk, dtype=torch.bool).triu(1).to(q.device), -torch.inf
        )
    lse = torch.logsumexp(scores, -1)
    return torch.softmax(scores, -1) @ v, lse


# The row form's 128-key tiles, consumer c on keys 64c .. 64c + 63: 64
# leaves the second consumer no key, 129 a tile of one key, 300 a last
# tile of 44 (the one-consumer program's 64-key tiles: 36, 1, 44).
@pytest.mark.parametrize(
    "shape", [(1, 1, 1), (1, 2, 64), (2, 3, 100), (1, 1, 129), (1, 2, 300), (1, 1, 1000)], ids=str
)
@pytest.mark.parametrize("program", [p for p, m in MAIN_PROGRAMS.items() if not m.causal])
def test_main_program_gradients_match_float64(shape, program):
    # Odd lengths leave partial key and query tiles.
    d = MAIN_PROGRAMS[program].head_dim
    _check_against_float64(shape, False, d=d, main_program=program)


# GQA and cross-attention (B, Hq, Hkv, Sq, Sk): the row form's. A block
# walks its group's query heads (2, 4 and 8 of them), dK and dV summed in
# registers; q shorter and longer than k.
@pytest.mark.parametrize(
    "shape",
    [
        (1, 4, 2, 300, 300),
        (2, 8, 1, 129, 129),
        (1, 4, 4, 100, 300),
        (1, 2, 2, 300, 65),
        (1, 8, 2, 1, 1000),
        (2, 6, 3, 1000, 77),
    ],
    ids=str,
)
@pytest.mark.parametrize(
    "program",
    [
        "main_bf16_d128_rows.mlir",
        "main_bf16_d64_rows.mlir",
        "main_bf16_d192_rows.mlir",
        "main_bf16_d256_rows.mlir",
    ],
)
def test_row_form_gradients_match_float64_with_gqa_and_other_lengths(shape, program):
    d = MAIN_PROGRAMS[program].head_dim
    _check_against_float64(shape, False, d=d, main_program=program)


def _check_against_float64(shape, causal, d=128, dtype=torch.bfloat16, **programs):
    """dQ, dK, dV of the preprocess and main programs (attention_backward
    with `programs`, its main_program or main_bundle arguments) against
    float64 autograd, with FlashAttention's criterion: each at most twice
    torch's error in `dtype` (its SDPA backward) plus a noise floor. The
    forward's O and lse come from float64 (O rounded to `dtype`), so only
    the backward is under test. `shape`: (B, H, S), or (B, Hq, Hkv, Sq, Sk)."""
    b, hq, hkv, sq, sk = shape if len(shape) == 5 else (*shape[:2], *shape[1:], shape[2])
    torch.manual_seed(sq + 7 * sk)
    q, grad = (make(b, hq, sq, d, dtype) for _ in range(2))
    k, v = (make(b, hkv, sk, d, dtype) for _ in range(2))
    scale = d**-0.5
    group = hq // hkv
    leaves64 = [t.double().requires_grad_() for t in (q, k, v)]
    q64, k64, v64 = leaves64
    out64, lse64 = _softmax_attention(
        q64, k64.repeat_interleave(group, 1), v64.repeat_interleave(group, 1), scale, causal
    )
    out64.backward(grad.double())
    want = [t.grad for t in leaves64]
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.nn.functional.scaled_dot_product_attention(
        *leaves, is_causal=causal, enable_gqa=group > 1
    ).backward(grad)
    low = [t.grad for t in leaves]
    got = attention_backward(
        q,
        k,
        v,
        out64.detach().to(dtype),
        lse64.detach().float(),
        grad,
        scale,
        causal=causal,
        cache=CACHE,
        **programs,
    )
    for name, g, lo, ref in zip("qkv", got, low, want):
        assert g.dtype == dtype and g.shape == ref.shape, name
        assert torch.isfinite(g).all(), f"d{name} has NaN/Inf"
        error = (g.double() - ref).abs().max().item()
        floor = (lo.double() - ref).abs().max().item()
        assert error <= 2 * floor + 1e-3, f"d{name}: {error:.3g} > 2 x {floor:.3g} + 1e-3"
    return got


def test_main_program_refuses_what_it_does_not_cover():
    q = torch.zeros(1, 2, 64, 128, dtype=torch.bfloat16, device="cuda")
    k = torch.zeros(1, 1, 64, 128, dtype=torch.bfloat16, device="cuda")
    lse = torch.zeros(1, 2, 64, device="cuda")
    with pytest.raises(tiledattn.UnsupportedInputError, match="no GQA"):
        attention_backward(q, k, k, q, lse, q, 0.1, cache=CACHE, main_program="main_bf16_d128.mlir")


# Lengths that end inside the diagonal's blocks, a second consumer with no
# key, GQA / MQA, and q shorter (key tiles past the last query: zero dK, dV)
# and longer than k.
@pytest.mark.parametrize(
    "shape",
    [
        (1, 1, 1),
        (1, 2, 64),
        (2, 3, 100),
        (1, 1, 129),
        (1, 2, 300),
        (1, 1, 1000),
        (1, 4, 2, 300, 300),
        (2, 8, 1, 129, 129),
        (1, 2, 2, 100, 300),
        (1, 6, 3, 1000, 77),
    ],
    ids=str,
)
@pytest.mark.parametrize("d", [128, 64, 192, 256])
def test_causal_row_form_gradients_match_float64(shape, d):
    _check_against_float64(shape, True, d=d)


@pytest.mark.parametrize(
    "shape",
    [
        (1, 1, 1),
        (2, 3, 100),
        (1, 2, 300),
        (1, 1, 1000),
        (1, 4, 2, 300, 300),
        (1, 2, 2, 100, 1000),
        (1, 6, 3, 1000, 77),
    ],
    ids=str,
)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [128, 64])
def test_deterministic_programs_match_float64_and_themselves(shape, d, causal):
    # dkdv_bf16_d<d>.mlir then dq_bf16_d<d>.mlir (or their derived _causal
    # forms): against float64 with FlashAttention's criterion, and bitwise
    # the same on a second run.
    got = _check_against_float64(shape, causal, deterministic=True, d=d)
    again = _check_against_float64(shape, causal, deterministic=True, d=d)
    assert all(torch.equal(a, b) for a, b in zip(got, again))


# float16: each program with its element type edited (backward_kernels.
# derivation), every form at a partial tile, GQA and cross-lengths.
@pytest.mark.parametrize("shape", [(2, 3, 100), (1, 4, 2, 300, 129)], ids=str)
@pytest.mark.parametrize(
    "form",
    [
        dict(causal=False),
        dict(causal=True),
        dict(causal=False, d=64),
        dict(causal=True, d=64),
        dict(causal=False, deterministic=True),
        dict(causal=True, deterministic=True),
        dict(causal=True, d=64, deterministic=True),
        dict(causal=False, d=256),
        dict(causal=True, d=256),
        dict(causal=False, d=192),
        dict(causal=True, d=192),
    ],
    ids=_form_id,
)
def test_float16_forms_match_float64(shape, form):
    _check_against_float64(shape, dtype=torch.float16, **form)


# Head dims below the programs' (backward_kernels.derivation): 80, 96
# and 112 on the D = 128 programs' tiles, 16, 32 and 48 on the D = 64 one's;
# each form.
@pytest.mark.parametrize("shape", [(2, 3, 100), (1, 4, 2, 129, 300)], ids=str)
@pytest.mark.parametrize(
    "form",
    [
        dict(causal=False, d=96),
        dict(causal=True, d=80),
        dict(causal=False, d=32),
        dict(causal=False, d=96, deterministic=True),
        dict(causal=True, d=96, dtype=torch.float16),
        dict(causal=False, d=16),
        dict(causal=False, d=48, dtype=torch.float16),
        dict(causal=True, d=112),
        dict(causal=False, d=112, deterministic=True),
        dict(causal=False, d=32, deterministic=True),
        dict(causal=True, d=48),
        dict(causal=True, d=16, dtype=torch.float16),
        dict(causal=True, d=96, deterministic=True),
        dict(causal=True, d=48, deterministic=True),
        dict(causal=False, d=224),
        dict(causal=True, d=208, dtype=torch.float16),
        dict(causal=False, d=144),
        dict(causal=True, d=176),
    ],
    ids=_form_id,
)
def test_smaller_head_dims_match_float64(shape, form):
    _check_against_float64(shape, **form)


@pytest.mark.parametrize(
    "form",
    [
        dict(causal=False),
        dict(causal=True),
        dict(causal=False, deterministic=True),
        dict(causal=True, deterministic=True),
        dict(causal=False, d=64),
        dict(causal=True, d=64),
        dict(causal=False, d=256),
        dict(causal=True, d=256),
        dict(causal=False, d=192),
        dict(causal=True, d=192),
    ],
    ids=_form_id,
)
def test_back_to_back_launches_at_the_speed_shape(form):
    # Thirty backwards in a row at the speed script's shape (B x S = 16k,
    # H x D = 2048, S = 1024): there the head dim 64 backward gave NaN rows,
    # then "unspecified launch failure", while every kernel's tiles
    # overlapped its mbarriers (thirty-seventh session; one launch at B 2,
    # H 2 showed nothing).
    d = form.pop("d", 128)
    b, h, s = 16, 2048 // d, 1024
    torch.manual_seed(5)
    q, k, v, grad = (make(b, h, s, d, torch.bfloat16) for _ in range(4))
    out, lse = _prepare(q, k, v, None, 0.0, form["causal"], None, False, False, None).run_with_lse()
    first = attention_backward(q, k, v, out, lse, grad, d**-0.5, cache=CACHE, **form)
    for _ in range(29):
        last = attention_backward(q, k, v, out, lse, grad, d**-0.5, cache=CACHE, **form)
    torch.cuda.synchronize()
    for g in (*first, *last):
        assert torch.isfinite(g).all(), "a gradient has NaN or inf elements"
    for a, z in zip(first, last):  # dQ's atomic order may change its last bits
        torch.testing.assert_close(a, z, rtol=1e-2, atol=1e-2)
