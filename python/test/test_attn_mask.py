"""scaled_dot_product_attention's attn_mask on the CPU: what is refused and
how (torch's rules, clear errors), the kernel text each mask kind gets, and
meta tensors through the whole call (the GPU tests: test_gpu_masks.py)."""

import pytest
import torch

import tiledattn
from tiledattn.errors import InvalidInputError, UnsupportedInputError
from tiledattn.masks import compact_mask, mask_kernel_text, mask_score_mod

META = dict(device="meta", dtype=torch.bfloat16)


def qkv(b=2, h=4, lq=100, lk=120, d=64):
    return (
        torch.empty(b, h, lq, d, **META),
        torch.empty(b, h, lk, d, **META),
        torch.empty(b, h, lk, d, **META),
    )


@pytest.mark.parametrize(
    "mask, kwargs, error, message",
    [
        (
            [[True]],
            {},
            TypeError,
            r"expected 'attn_mask' to be a torch.Tensor or None but got list",
        ),
        (
            torch.empty(100, 120, dtype=torch.bool, device="meta"),
            {"is_causal": True},
            InvalidInputError,
            r"expected 'attn_mask' to be None when is_causal=True",
        ),
        (
            torch.empty(100, 120, dtype=torch.int32, device="meta"),
            {},
            InvalidInputError,
            r"to have dtype torch.bool \(True: keep\) or a float dtype .* but got torch.int32",
        ),
        (
            torch.empty(100, 120, dtype=torch.bool),
            {},
            InvalidInputError,
            r"expected 'attn_mask' on meta \(the device of 'query'\) but got cpu",
        ),
        (
            torch.empty(3, 1, 100, 120, dtype=torch.bool, device="meta"),
            {},
            InvalidInputError,
            r"to broadcast to the attention scores' shape \(B, H, L, S\) = \(2, 4, 100, 120\) "
            r"but got shape \(3, 1, 100, 120\)",
        ),
    ],
    ids=["list", "with-is-causal", "int32", "other-device", "shape"],
)
def test_bad_masks_are_named(mask, kwargs, error, message):
    with pytest.raises(error, match=message):
        tiledattn.scaled_dot_product_attention(*qkv(), attn_mask=mask, **kwargs)


def test_inputs_of_five_dimensions_with_a_mask_are_refused():
    q = torch.empty(2, 2, 4, 100, 64, **META)
    mask = torch.empty(100, 100, dtype=torch.bool, device="meta")
    with pytest.raises(UnsupportedInputError, match=r"inputs of 3 or 4 dimensions"):
        tiledattn.scaled_dot_product_attention(q, q, q, attn_mask=mask)


@pytest.mark.parametrize(
    "shape",
    [(2, 4, 100, 120), (2, 1, 100, 120), (1, 4, 1, 120), (100, 120), (120,)],
    ids=lambda s: "x".join(map(str, s)),
)
@pytest.mark.parametrize("dtype", [torch.bool, torch.bfloat16, torch.float32])
def test_every_broadcast_shape_runs_on_meta_tensors(shape, dtype):
    mask = torch.empty(shape, dtype=dtype, device="meta")
    out = tiledattn.scaled_dot_product_attention(*qkv(), attn_mask=mask)
    assert out.shape == (2, 4, 100, 64) and out.device.type == "meta"


def test_three_dimensional_inputs_take_a_batch_of_masks():
    q = torch.empty(3, 100, 64, **META)
    k = torch.empty(3, 140, 64, **META)
    mask = torch.empty(3, 100, 140, dtype=torch.bool, device="meta")
    assert tiledattn.scaled_dot_product_attention(q, k, k, attn_mask=mask).shape == (3, 100, 64)


def test_broadcast_dimensions_are_read_at_0_and_not_copied():
    keys = torch.rand(2, 1, 1, 120) > 0.5
    mask = keys.expand(2, 4, 100, 120)  # Hugging Face's expanded padding mask
    text, captures = mask_kernel_text(mask, (2, 4, 100, 120), False, torch.bfloat16, 64, 64)
    assert captures[0].shape == (2, 1, 1, 120)
    assert captures[0].data_ptr() == keys.data_ptr(), "the expanded mask was copied"
    load = next(line for line in text.splitlines() if "memref.load" in line)
    assert load.split("[")[1].startswith("%b, %v"), load  # batch, then constant 0s
    assert load.rstrip().endswith("%kv_idx] : memref<?x?x?x?xi8>"), load


def test_bool_masks_select_and_float_masks_add():
    keep = mask_score_mod(*compact_mask(torch.ones(4, 4, dtype=torch.bool), (1, 1, 4, 4), False))
    add = mask_score_mod(*compact_mask(torch.zeros(4, 4), (1, 1, 4, 4), False))
    assert keep.__name__ == "attn_mask_keep" and add.__name__ == "attn_mask_add"
    text_keep, _ = mask_kernel_text(
        torch.ones(4, 4, dtype=torch.bool), (1, 1, 4, 4), False, torch.float16, 64, 64
    )
    text_add, _ = mask_kernel_text(torch.zeros(4, 4), (1, 1, 4, 4), False, torch.float16, 64, 64)
    assert "arith.select" in text_keep and "0xFF800000" in text_keep
    assert "arith.addf %score" in text_add and "arith.select" not in text_add


def test_a_mask_falls_back_where_it_cannot_run(monkeypatch):
    # Without the compiler (and no cached kernel), the error says why;
    # fallback=True gives torch's SDPA (here also for the CPU tensors).
    monkeypatch.setenv("TILEDATTN_COMPILE", "/nonexistent/tiledattn-compile")
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", "/nonexistent-cache")
    meta = torch.empty(1, 2, 8, 64, **META)
    with pytest.raises(UnsupportedInputError, match=r"'attn_mask' runs on a kernel compiled"):
        tiledattn.scaled_dot_product_attention(
            meta, meta, meta, attn_mask=torch.empty(8, 8, dtype=torch.bool, device="meta")
        )
    q, k, v = (torch.randn(1, 2, 8, 64, dtype=torch.bfloat16) for _ in range(3))
    mask = torch.rand(8, 8) > 0.3
    mask[:, 0] = True
    with pytest.raises(UnsupportedInputError, match=r"to be CUDA tensors"):
        tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with pytest.warns(UserWarning, match=r"falling back"):
        out = tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=mask, fallback=True)
    torch.testing.assert_close(
        out, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    )
