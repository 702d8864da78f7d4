"""Argument validation of tiledattn.scaled_dot_product_attention.

Runs on CPU: every check happens before CUDA is touched, on meta tensors
(shapes only) or CPU tensors (where a data pointer is needed). Each message
must name the argument, what was expected and what was given.
"""

import math
import re
import types
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import tiledattn
from tiledattn import attention, registry
from tiledattn.errors import InvalidInputError, UnsupportedInputError

sdpa = tiledattn.scaled_dot_product_attention


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def qkv(b=2, h=4, s=128, d=64, dtype=torch.float16, device="meta"):
    return tuple(torch.empty(b, h, s, d, dtype=dtype, device=device) for _ in range(3))


@pytest.fixture(autouse=True)
def kernels(fake_kernel_dir):
    attention._warned.clear()
    return fake_kernel_dir


def raises(kind, pattern):
    return pytest.raises(kind, match=re.compile(pattern, re.DOTALL))


def test_dropout_is_unsupported():
    with raises(UnsupportedInputError, r"'dropout_p' to be 0\.0 .* but got 0\.1"):
        sdpa(*qkv(), dropout_p=0.1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8])
def test_other_dtypes_are_unsupported(dtype):
    with raises(
        UnsupportedInputError,
        rf"dtype torch\.float16 or torch\.bfloat16 but got {re.escape(str(dtype))}",
    ):
        sdpa(*qkv(dtype=dtype))


def test_head_dim_without_bundle():
    with raises(
        UnsupportedInputError,
        r"no kernel bundle for dtype=f16 head_dim=72 .* \(available: .*f16/d64",
    ):
        sdpa(*qkv(d=72))


def test_value_head_dim_without_bundle():
    q, k, _ = qkv(d=64)
    with raises(UnsupportedInputError, r"head_dim=64 head_dim_v=128"):
        sdpa(q, k, meta(2, 4, 128, 128))


def test_cpu_tensors_are_unsupported():
    with raises(UnsupportedInputError, r"to be CUDA tensors but got tensors on cpu"):
        sdpa(*qkv(device="cpu"))


def test_mixed_devices():
    q, k, v = qkv()
    with raises(InvalidInputError, r"on one device but got meta, cpu and meta"):
        sdpa(q, torch.empty(k.shape, dtype=k.dtype), v)


def test_mixed_dtypes():
    q, k, v = qkv()
    with raises(
        InvalidInputError,
        r"same dtype but got torch\.float16, torch\.float16 and torch\.bfloat16",
    ):
        sdpa(q, k, meta(*v.shape, dtype=torch.bfloat16))


def test_last_dim_stride():
    q, k, v = qkv()
    k = meta(2, 4, 64, 128).transpose(-1, -2)
    with raises(
        UnsupportedInputError,
        r"'key' to have stride 1 in its last dimension but got strides "
        r"\(32768, 8192, 1, 128\)",
    ):
        sdpa(q, k, v)


def test_mismatched_batch():
    q, _, _ = qkv(b=2)
    _, k, v = qkv(b=3)
    with raises(
        InvalidInputError,
        r"batch dimensions of 'query' \(2,\), 'key' \(3,\) and 'value' \(3,\)",
    ):
        sdpa(q, k, v)


def test_mismatched_heads_without_gqa():
    q, _, _ = qkv(h=8)
    _, k, v = qkv(h=2)
    with raises(
        InvalidInputError,
        r"'key' and 'value' to have 8 heads .* but got 2; pass enable_gqa=True",
    ):
        sdpa(q, k, v)


def test_gqa_heads_not_a_multiple():
    q, _, _ = qkv(h=8)
    _, k, v = qkv(h=3)
    with raises(InvalidInputError, r"heads of 'query' \(8, dim -3\) to be a multiple .* \(3\)"):
        sdpa(q, k, v, enable_gqa=True)


def test_key_value_heads_differ():
    q, k, _ = qkv(h=4)
    with raises(InvalidInputError, r"'value' to have 4 heads .* shape \(2, 2, 128, 64\)"):
        sdpa(q, k, meta(2, 2, 128, 64), enable_gqa=True)


def test_mismatched_head_dim():
    q, _, v = qkv(d=64)
    with raises(InvalidInputError, r"'key' to have head dim 64 .* shape \(2, 4, 128, 128\)"):
        sdpa(q, meta(2, 4, 128, 128), v)


def test_mismatched_key_value_length():
    q, k, _ = qkv()
    with raises(InvalidInputError, r"'value' to have sequence length 128 .* \(2, 4, 100, 64\)"):
        sdpa(q, k, meta(2, 4, 100, 64))


def test_too_few_dims():
    with raises(InvalidInputError, r"'query' to have at least 3 dimensions .* \(128, 64\)"):
        sdpa(meta(128, 64), meta(128, 64), meta(128, 64))


def test_not_a_tensor():
    _, k, v = qkv()
    with raises(TypeError, r"'query' to be a torch\.Tensor but got list"):
        sdpa([1.0], k, v)


# Zero-size dimensions: torch's result, without a kernel. (torch's own SDPA
# dies with SIGFPE on CPU for zero heads, so the shapes come from its meta
# kernel; the values of the no-keys case from its CPU math kernel.)
ZERO_SIZE = [
    # (query shape, key/value shape, enable_gqa)
    ((0, 4, 128, 64), (0, 4, 128, 64), False),  # B = 0
    ((2, 0, 128, 64), (2, 0, 128, 64), False),  # H = 0
    ((2, 0, 128, 64), (2, 2, 128, 64), True),  # Hq = 0 with GQA
    ((2, 4, 0, 64), (2, 4, 128, 64), False),  # Sq = 0
    ((2, 4, 128, 64), (2, 4, 0, 64), False),  # Sk = 0: zero rows
    ((2, 8, 128, 64), (2, 2, 0, 64), True),  # Sk = 0, GQA
    ((2, 4, 0, 64), (2, 4, 0, 64), False),  # both
    ((0, 128, 64), (0, 128, 64), False),  # 3-D, N = 0
    ((3, 0, 2, 17, 64), (1, 0, 2, 9, 64), False),  # 5-D, broadcast batch, 0
]


@pytest.mark.parametrize("q_shape, kv_shape, gqa", ZERO_SIZE, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_zero_size_dims_give_torchs_result(launches, q_shape, kv_shape, gqa, causal):
    q, k = meta(*q_shape), meta(*kv_shape)
    out = sdpa(q, k, k, is_causal=causal, enable_gqa=gqa)
    expected = F.scaled_dot_product_attention(q, k, k, is_causal=causal, enable_gqa=gqa)
    assert (out.shape, out.dtype, out.device) == (expected.shape, expected.dtype, q.device)
    assert not launches  # no kernel


@pytest.mark.parametrize("causal", [False, True])
def test_no_keys_gives_zero_rows_like_torch(causal):
    # What torch computes (on CPU; CUDA takes the same math path, since its
    # fused kernels refuse a zero length), and what tiledattn returns.
    q, k = torch.randn(2, 4, 5, 64, dtype=torch.float16), torch.empty(2, 4, 0, 64)
    expected = F.scaled_dot_product_attention(q, k.half(), k.half(), is_causal=causal)
    assert torch.equal(expected, torch.zeros_like(q))
    k = k.half()
    launch = attention._prepare(q.to("meta"), k.to("meta"), k.to("meta"), *_prepare_args(causal))
    assert isinstance(launch, attention._Empty) and launch.shape == expected.shape
    # What it computes, on the CPU tensors.
    assert torch.equal(attention._Empty(launch.shape, False, (q, k, k)).run(), expected)


# _prepare's arguments after (query, key, value, attn_mask, dropout_p,
# is_causal): scale, enable_gqa, fallback, entry.
def _prepare_args(is_causal):
    return (None, 0.0, is_causal, None, False, False, None)


def test_zero_size_keeps_the_autograd_graph():
    q = torch.randn(2, 4, 5, 64, dtype=torch.float16, device="meta", requires_grad=True)
    k = torch.empty(2, 4, 0, 64, dtype=torch.float16, device="meta", requires_grad=True)
    out = sdpa(q, k, k)
    assert out.requires_grad
    out.sum().backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape
    with torch.no_grad():
        assert not sdpa(q, k, k).requires_grad


def test_zero_size_on_cpu_is_still_unsupported():
    with raises(UnsupportedInputError, r"to be CUDA tensors but got tensors on cpu"):
        sdpa(*qkv(b=0, device="cpu"))


def test_zero_key_heads_with_gqa_is_invalid():
    # torch's own SDPA dies with SIGFPE here (a division by zero heads).
    q, k = meta(2, 4, 8, 64), meta(2, 0, 8, 64)
    with raises(InvalidInputError, r"heads of 'query' \(4, dim -3\) to be a multiple .* \(0\)"):
        sdpa(q, k, k, enable_gqa=True)


def test_zero_head_dim_with_keys_is_unsupported():
    # E = 0 with keys is not empty: every score is 0, so torch averages v.
    q, k = meta(2, 4, 8, 0), meta(2, 4, 8, 0)
    with raises(UnsupportedInputError, r"head_dim=0"):
        sdpa(q, k, meta(2, 4, 8, 64))


# Nested jagged tensors (torch's variable-length input) and sparse tensors.


def jagged(*lengths, heads=2, d=64, dtype=torch.float16):
    """An NJT [B, H, j, D], as torch's SDPA takes it (transposed from [B, j, H, D])."""
    parts = [torch.randn(n, heads, d, dtype=dtype) for n in lengths]
    return torch.nested.nested_tensor(parts, layout=torch.jagged).transpose(1, 2)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_nested_jagged_tensors_mixed_with_dense_are_refused_by_name(which):
    tensors = list(qkv(b=2, h=2, s=7, d=64, device="cpu"))
    tensors[which] = jagged(3, 7)
    if which == 0:  # a nested query wants nested key and value
        message = r"expected 'key' to be a nested jagged tensor like 'query' but got a dense"
    else:
        name = ("query", "key", "value")[which]
        message = (
            rf"expected '{name}' to be a dense tensor \(layout torch\.strided\) but got a "
            r"nested tensor with layout torch\.jagged; tiledattn takes nested jagged inputs "
            r"only as query, key and value together"
        )
    with raises(UnsupportedInputError, message):
        sdpa(*tensors)


def test_nested_jagged_inputs_it_cannot_run_are_refused_by_name():
    q, k = jagged(3, 7), jagged(5, 2)
    with raises(UnsupportedInputError, r"is_causal with nested jagged query and key of other"):
        sdpa(q, k, k, is_causal=True)
    with raises(UnsupportedInputError, r"take no attn_mask or dropout here but got dropout_p"):
        sdpa(q, q, q, dropout_p=0.1)
    with raises(InvalidInputError, r"expected 'key' with 2 heads \(the query's; enable_gqa"):
        one_head = jagged(3, 7, heads=1)
        sdpa(q, one_head, one_head)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
@pytest.mark.parametrize("causal", [False, True])
def test_nested_jagged_inputs_run_as_varlen(monkeypatch, causal):
    # What tiledattn does with nested inputs, up to the kernel: varlen on
    # their values and offsets, the result nested as the query. Here the
    # kernel is the float64 per-sequence reference (the GPU test runs the
    # real one); the result must be torch's own SDPA on the nested inputs.
    from test_varlen import per_sequence

    import tiledattn.varlen as varlen

    def reference(q, k, v, cu_q, cu_k, causal, scale):
        out, _ = per_sequence(q, k, v, cu_q.tolist(), cu_k.tolist(), causal, scale or 0.125)
        return out.to(q.dtype)

    monkeypatch.setattr(varlen, "varlen_attention", reference)
    q, k, v = (jagged(3, 7, 12, dtype=torch.float32) for _ in range(3))
    k = torch.nested.nested_tensor_from_jagged(k.transpose(1, 2).values(), offsets=q.offsets())
    v = torch.nested.nested_tensor_from_jagged(v.transpose(1, 2).values(), offsets=q.offsets())
    k, v = k.transpose(1, 2), v.transpose(1, 2)
    out = sdpa(q, k, v, is_causal=causal)
    assert out.is_nested and out.shape[0] == 3 and out._ragged_idx == 2
    # torch's SDPA per sequence (its nested causal path wants CUDA here).
    for got, qs, ks, vs in zip(out.unbind(), q.unbind(), k.unbind(), v.unbind()):
        expected = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_nested_jagged_fallback_is_torchs():
    q, k, v = jagged(3, 7), jagged(5, 2), jagged(5, 2)
    with pytest.warns(UserWarning, match=r"falling back"):
        out = sdpa(q, k, v, fallback=True)
    expected = F.scaled_dot_product_attention(q, k, v)
    assert out.is_nested and torch.equal(out.values(), expected.values())


def test_sparse_tensors_are_refused_by_name():
    q, k, v = qkv(device="cpu")
    with raises(UnsupportedInputError, r"'key' to be a dense tensor .* sparse tensor"):
        sdpa(q, k.to_sparse(), v)


def test_misaligned_data_pointer():
    q, k, v = qkv(device="cpu")
    flat = torch.empty(2 * 4 * 128 * 64 + 1, dtype=torch.float16)
    q = flat[1:].view(2, 4, 128, 64)  # 2-byte offset, the bundles need 4
    with raises(
        UnsupportedInputError,
        r"'query' to be 4-byte aligned but its data pointer is 0x[0-9a-f]+ \(storage offset 1\)",
    ):
        sdpa(q, k, v)


def test_misaligned_strides():
    q, k, v = qkv()
    v = meta(2, 4, 128, 65)[..., :64]
    with raises(
        UnsupportedInputError,
        r"strides of 'value' to be multiples of 2 elements \(4-byte alignment\) "
        r"but got \(33280, 8320, 65, 1\)",
    ):
        sdpa(q, k, v)


# Non-contiguous views. Those whose strides the kernels take run without a
# copy (the launch sees the caller's strides); the others are refused by name,
# or go to torch with fallback=True.


def bshd(b=2, s=128, h=4, d=64, device="meta"):
    return torch.empty(b, s, h, d, dtype=torch.float16, device=device).transpose(1, 2)


KERNEL_VIEWS = {
    "bshd_transpose": lambda: bshd(),
    "fused_qkv_slice": lambda: meta(2, 4, 128, 3 * 64)[..., 64:128],
    "seqlen_slice": lambda: meta(2, 4, 131, 64)[:, :, 3:],
    "every_other_head": lambda: meta(2, 8, 128, 64)[:, ::2],
    "every_other_row": lambda: meta(2, 4, 256, 64)[:, :, ::2],
    "batch_slice": lambda: meta(4, 4, 128, 64)[1:3],
    "expanded_batch_and_heads": lambda: meta(1, 1, 128, 64).expand(2, 4, 128, 64),
    "odd_stride_on_a_size_1_dim": lambda: meta(2, 1, 128, 64).as_strided(
        (2, 1, 128, 64), (8192, 3, 64, 1)
    ),
    # channels_last makes dim 1 the innermost; with one head that is a view
    # whose last stride is still 1.
    "channels_last_one_head": lambda: meta(2, 1, 128, 64).contiguous(
        memory_format=torch.channels_last
    ),
}


@pytest.mark.parametrize("view", list(KERNEL_VIEWS))
def test_views_the_kernel_takes(launches, view):
    q = KERNEL_VIEWS[view]()
    heads = q.shape[1]
    k = v = meta(2, heads, 128, 64)
    out = sdpa(q, k, v)
    assert out.shape == (2, heads, q.shape[2], 64)
    ((q_seen, *_),) = launches
    # No copy: the kernel gets the caller's strides, but for a misaligned
    # stride of a size-1 dimension (never used), which becomes 0 (the
    # stand-in f16 bundles need 4-byte alignment: 2 elements).
    strides = tuple(0 if n == 1 and s % 2 else s for n, s in zip(q.shape, q.stride()))
    assert q_seen.stride() == strides and q_seen.storage_offset() == q.storage_offset()


REFUSED_VIEWS = {
    "last_dim_step_2": lambda d: d(2, 4, 128, 128)[..., ::2],
    "transposed_last_dims": lambda d: d(2, 4, 64, 128).transpose(-1, -2),
    "expanded_last_dim": lambda d: d(2, 4, 128, 1).expand(2, 4, 128, 64),
    "channels_last": lambda d: d(2, 4, 128, 64).contiguous(memory_format=torch.channels_last),
}


@pytest.mark.parametrize("view", list(REFUSED_VIEWS))
def test_views_the_kernel_refuses(view):
    q = REFUSED_VIEWS[view](meta)
    k = v = meta(2, 4, 128, 64)
    with raises(
        UnsupportedInputError,
        rf"expected 'query' to have stride 1 in its last dimension but got strides "
        rf"{re.escape(str(q.stride()))}",
    ):
        sdpa(q, k, v)


@pytest.mark.parametrize("view", list(REFUSED_VIEWS))
def test_views_the_kernel_refuses_fall_back(view):
    def cpu(*shape):
        return torch.randn(*shape, dtype=torch.float16)

    q = REFUSED_VIEWS[view](cpu)
    k, v = cpu(2, 4, 128, 64), cpu(2, 4, 128, 64)
    with pytest.warns(UserWarning, match=r"stride 1 in its last dimension.*falling back"):
        out = sdpa(q, k, v, fallback=True)
    assert torch.equal(out, F.scaled_dot_product_attention(q, k, v))


def test_torch_has_no_negative_strides():
    # So there is no such view to take or refuse: flip() copies.
    with pytest.raises(RuntimeError, match=r"Negative strides are not supported"):
        torch.empty(4, 4).as_strided((4, 4), (-4, 1), 12)


@pytest.fixture
def launches(monkeypatch):
    """Records what the public call hands tiledattn::sdpa_fwd (or
    sdpa_fwd_no_grad: the same but for autograd), on meta tensors
    and without the runtime library: (q, k, v, is_causal, scale, bundle)."""
    calls = []

    def sdpa_fwd(q, k, v, is_causal, scale, bundle):
        calls.append((q, k, v, is_causal, scale, bundle))
        out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        return out, torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)

    monkeypatch.setattr(attention, "_ensure_runtime", lambda: True)
    ops = types.SimpleNamespace(sdpa_fwd=sdpa_fwd, sdpa_fwd_no_grad=sdpa_fwd)
    monkeypatch.setattr(torch.ops, "tiledattn", ops)
    return calls


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype, d", [(torch.float16, 64), (torch.bfloat16, 128)])
def test_is_causal_selects_the_causal_bundle(kernels, launches, causal, dtype, d):
    q, k, v = qkv(d=d, dtype=dtype)
    out = sdpa(q, k, v, is_causal=causal)
    assert out.shape == q.shape and out.dtype == dtype
    ((_, _, _, flag, scale, bundle),) = launches
    name = f"sdpa_fwd_{registry.dtype_name(dtype)}_d{d}" + ("_causal" if causal else "")
    assert Path(bundle) == (kernels / name).resolve()
    assert flag is causal
    assert scale == pytest.approx(d**-0.5)


def test_compiled_kernel_passes_its_mask(kernels, launches):
    kernel = tiledattn.compile(kernels / "sdpa_fwd_f16_d64_causal")
    kernel(*qkv())  # is_causal defaults to the bundle's mask
    kernel(*qkv(), is_causal=True, scale=0.5)
    assert [(c[3], c[4], Path(c[5])) for c in launches] == [
        (True, pytest.approx(1 / 8), kernel.path),
        (True, 0.5, kernel.path),
    ]
    with raises(UnsupportedInputError, r"bundle 'sdpa_fwd_f16_d64_causal' runs .* True\) but got"):
        kernel(*qkv(), is_causal=False)


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("fallback", [False, True])
def test_non_finite_scale_is_rejected(scale, fallback):
    with raises(
        InvalidInputError,
        rf"tiledattn\.scaled_dot_product_attention: expected 'scale' to be a finite "
        rf"number \(or None for 1/sqrt\(E\)\) but got {re.escape(str(scale))}$",
    ):
        sdpa(*qkv(device="cpu"), scale=scale, fallback=fallback)


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf])
def test_compiled_kernel_rejects_non_finite_scale(kernels, scale):
    kernel = tiledattn.compile(kernels / "sdpa_fwd_bf16_d128")
    with raises(InvalidInputError, rf"expected 'scale' to be a finite number .* but got {scale}"):
        kernel(*qkv(d=128, dtype=torch.bfloat16), scale=scale)


def test_finite_scales_pass(launches):
    for scale in (0.0, -0.25, 1e-30, 3):
        sdpa(*qkv(), scale=scale)
    assert [c[4] for c in launches] == [0.0, -0.25, 1e-30, 3.0]


def test_fallback_runs_torch_with_one_warning():
    q, k, v = (torch.randn(1, 2, 16, 64, dtype=torch.float32) for _ in range(3))
    with pytest.warns(UserWarning, match=r"dtype.*float32; falling back to torch"):
        out = sdpa(q, k, v, fallback=True)  # float32: unsupported
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdpa(q, k, v, fallback=True)  # the same reason warns once


def test_fallback_keeps_invalid_inputs_errors():
    q, k, v = qkv(device="cpu")
    with raises(InvalidInputError, r"same dtype"):
        sdpa(q, k, v.float(), fallback=True)


# Head dim 256: Hopper bundles with TMA tensor maps (16-byte alignment).


@pytest.fixture
def d256(hopper_kernel_dir):
    return hopper_kernel_dir


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_head_dim_256_is_supported(d256, dtype):
    # Shapes, dtype and bundle are fine, so only the device remains.
    with raises(UnsupportedInputError, r"to be CUDA tensors but got tensors on cpu"):
        sdpa(*qkv(d=256, dtype=dtype, device="cpu"), is_causal=True)


def test_head_dim_256_traces_on_meta(d256, runtime):
    q, k, v = qkv(d=256)
    assert sdpa(q, k, v).shape == (2, 4, 128, 256)


def test_head_dim_256_without_bundle():
    # The shipped set: 256 is listed only where a bundle exists.
    with raises(
        UnsupportedInputError,
        r"head_dim=256 .*supported head dims for dtype=f16 causal=False: 64, 128 \(",
    ):
        sdpa(*qkv(d=256))


def test_unsupported_head_dim_lists_256(d256):
    with raises(
        UnsupportedInputError,
        r"no kernel bundle for dtype=f16 head_dim=72 .*supported head dims for "
        r"dtype=f16 causal=False: 64, 128, 256",
    ):
        sdpa(*qkv(d=72))


def test_head_dim_256_needs_16_byte_strides(d256):
    # 4 elements (8 bytes) would do for the mma.sync bundles; TMA needs 8.
    q, k, _ = qkv(d=256)
    v = meta(2, 4, 128, 260)[..., :256]
    with raises(
        UnsupportedInputError,
        r"strides of 'value' to be multiples of 8 elements \(16-byte alignment\) "
        r"but got \(133120, 33280, 260, 1\)",
    ):
        sdpa(q, k, v)


def test_head_dim_256_needs_16_byte_pointers(d256):
    q, k, v = qkv(d=256, device="cpu")
    flat = torch.empty(2 * 4 * 128 * 256 + 8, dtype=torch.float16)
    offset = next(i for i in range(1, 8) if (flat.data_ptr() + 2 * i) % 16 == 8)
    q = flat[offset : offset + q.numel()].view(q.shape)  # 8 bytes off 16
    with raises(
        UnsupportedInputError,
        r"'query' to be 16-byte aligned but its data pointer is 0x[0-9a-f]+ \(storage offset ",
    ):
        sdpa(q, k, v)


def test_head_dim_256_fallback(d256):
    q, k, v = (torch.randn(1, 2, 16, 256, dtype=torch.float32) for _ in range(3))
    with pytest.warns(UserWarning, match=r"falling back"):
        out = sdpa(q, k, v, fallback=True)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
