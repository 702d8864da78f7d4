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


def test_attn_mask_is_unsupported():
    q, k, v = qkv()
    with raises(UnsupportedInputError, r"'attn_mask' to be None .* but got a Tensor"):
        sdpa(q, k, v, attn_mask=meta(128, 128))


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
        r"no kernel bundle for dtype=f16 head_dim=96 .* \(available: .*f16/d64",
    ):
        sdpa(*qkv(d=96))


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


@pytest.mark.parametrize("which", [0, 1, 2])
def test_empty_tensors(which):
    tensors = list(qkv())
    tensors[which] = meta(2, 4, 0, 64)
    if which == 0:
        name = "query"
    else:  # key and value must agree on their length
        tensors[1] = tensors[2] = meta(2, 4, 0, 64)
        name = "key"
    with raises(
        UnsupportedInputError,
        rf"'{name}' to be non-empty but got shape \(2, 4, 0, 64\)",
    ):
        sdpa(*tensors)


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


@pytest.fixture
def launches(monkeypatch):
    """Records what the public call hands tiledattn::sdpa_fwd, on meta tensors
    and without the runtime library: (q, k, v, is_causal, scale, bundle)."""
    calls = []

    def sdpa_fwd(q, k, v, is_causal, scale, bundle):
        calls.append((q, k, v, is_causal, scale, bundle))
        out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        return out, torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)

    monkeypatch.setattr(attention, "_ensure_runtime", lambda: True)
    monkeypatch.setattr(torch.ops, "tiledattn", types.SimpleNamespace(sdpa_fwd=sdpa_fwd))
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
        r"no kernel bundle for dtype=f16 head_dim=96 .*supported head dims for "
        r"dtype=f16 causal=False: 64, 128, 256",
    ):
        sdpa(*qkv(d=96))


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
