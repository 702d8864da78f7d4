"""tiledattn.attention (FlashAttention's variants) on the CPU: the mask and
score functions against FlashAttention's definitions on dense grids, the
kernel each variant gets, the errors (the GPU test: test_gpu_variants.py)."""

import pytest
import torch
from flex_examples import VARIANT_CASES
from test_attn_mask import needs_compiler
from test_gpu import per_score
from torch.nn.attention.flex_attention import create_mask

import tiledattn
from tiledattn import variants
from tiledattn.errors import InvalidInputError, UnsupportedInputError


def flash_keep(length_q, length_k, causal, left, right):
    """FlashAttention's rule: query i sees key j when
    i + Sk - Sq - left <= j <= i + Sk - Sq + right (causal: right = 0)."""
    i = torch.arange(length_q)[:, None] + length_k - length_q
    j = torch.arange(length_k)[None, :]
    keep = torch.ones(length_q, length_k, dtype=torch.bool)
    if causal or right >= 0:
        keep &= j <= i + (0 if causal else right)
    if left >= 0:
        keep &= j >= i - left
    return keep


@pytest.mark.parametrize("lengths", [(40, 40), (30, 70)], ids=["square", "more-keys"])
@pytest.mark.parametrize(
    "causal, window", [(True, (-1, -1)), (True, (9, -1)), (False, (9, 4)), (False, (-1, 3))]
)
def test_masks_are_flash_attentions(lengths, causal, window):
    length_q, length_k = lengths
    offsets = variants._offsets(length_k - length_q, 1, "cpu")
    mask_mod = variants._mask_mod(offsets, *window, causal)
    if causal and window == (-1, -1) and length_q == length_k:
        mask_mod = variants._causal
    got = create_mask(mask_mod, 1, 1, length_q, length_k, device="cpu")[0, 0]
    assert torch.equal(got, flash_keep(length_q, length_k, causal, *window))


@pytest.mark.parametrize("per_batch", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_softcap_and_alibi_are_flash_attentions(per_batch, causal):
    slopes = torch.rand(2, 3) if per_batch else torch.rand(3)
    score_mod = variants._score_mod(20.0, slopes, torch.full((3,), 5, dtype=torch.int32), causal)
    scores = torch.randn(2, 3, 6, 11, dtype=torch.float64) * 40
    got = per_score(score_mod, scores)
    i = torch.arange(6)[:, None] + 5
    j = torch.arange(11)[None, :]
    distance = (i - j) if causal else (i - j).abs()
    s = slopes[:, :, None, None] if per_batch else slopes[None, :, None, None]
    want = 20.0 * torch.tanh(scores / 20.0) - s * distance
    torch.testing.assert_close(got, want.to(got.dtype))


def test_each_variant_gets_its_kernel():
    q = torch.empty(2, 4, 300, 128, dtype=torch.bfloat16)
    k = torch.empty(2, 4, 500, 128, dtype=torch.bfloat16)
    # Bottom-right causal with more keys than queries: a mask_mod and the
    # block map; square: the causal kernel (no text: plain attention).
    text = variants.kernel_text(q, k, k, causal=True)
    assert "mask_mod {" in text and "block_map(%blocks" in text and " causal" not in text
    assert variants.kernel_text(q, q, q, causal=True) is None
    # A window: its bounds in the mask_mod.
    text = variants.kernel_text(q, q, q, window_size=(100, 0))
    assert "arith.constant 100 : index" in text and "block_map(%blocks" in text
    # softcap and ALiBi: a score_mod reading the slopes, causal square:
    # the causal kernel.
    text = variants.kernel_text(q, q, q, causal=True, softcap=30.0, alibi_slopes=torch.rand(4))
    assert "math.tanh" in text and "%cap0: memref<?xf32>" in text and " causal" in text
    # The callables are kept: one trace per variant.
    a = variants._callables(q, k, False, (8, 8), 0.0, None)
    assert a == variants._callables(q, k, False, (8, 8), 0.0, None)
    # One kernel for every offset Sk - Sq (a KV cache's grows at each step):
    # the regions read it per head (an int32 capture), bottom-right causal
    # and ALiBi alike.
    for variant in ({"causal": True}, {"window_size": (64, 0)}, {"alibi_slopes": torch.rand(4)}):
        keys = [torch.empty(2, 4, sk, 128, dtype=torch.bfloat16) for sk in (400, 500, 777)]
        texts = {variants.kernel_text(q, k, k, **variant) for k in keys}
        assert len(texts) == 1 and "memref<?xi32>" in texts.pop(), variant


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window_size": (5,)}, r"'window_size' to be \(left, right\), integers >= -1"),
        ({"window_size": (-2, 0)}, r"'window_size' to be \(left, right\)"),
        ({"softcap": -1.0}, r"'softcap' to be a finite float >= 0"),
        ({"alibi_slopes": torch.rand(5)}, r"'alibi_slopes' to be a float32 tensor of shape \(4,\)"),
        (
            {"alibi_slopes": torch.rand(4, dtype=torch.float64)},
            r"of shape \(4,\) or \(2, 4\) but got torch.float64",
        ),
    ],
    ids=["window-len", "window-neg", "softcap", "slopes-shape", "slopes-dtype"],
)
def test_bad_arguments_are_named(kwargs, message):
    q = torch.empty(2, 4, 64, 64, dtype=torch.bfloat16)
    with pytest.raises(InvalidInputError, match=message):
        tiledattn.variant_attention(q, q, q, **kwargs)


@needs_compiler
@pytest.mark.parametrize("case", VARIANT_CASES, ids=lambda c: c[0])
def test_the_whole_call_runs_up_to_the_launch(case):
    # On CPU tensors everything but the launch runs (trace, BlockMask,
    # compile); the launch refuses the device.
    name, (b, h, sq, sk, d), variant = case
    q = torch.randn(b, h, sq, d, dtype=torch.bfloat16)
    k = torch.randn(b, h, sk, d, dtype=torch.bfloat16)
    with pytest.raises(UnsupportedInputError, match=r"to be CUDA tensors"):
        tiledattn.variant_attention(q, k, k, **variant(b, h, "cpu"))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window", [(-1, -1), (0, 0), (5, -1), (200, 3), (-1, 300), (1023, 0)])
def test_band_block_masks_are_create_block_masks(causal, window):
    # variant_attention builds its BlockMasks from each block's extreme
    # kv - q (no mask_mod per score, and flex_attention's check spared):
    # they must be exactly create_block_mask's, ragged ends included.
    from torch.nn.attention.flex_attention import create_block_mask

    for length_q, length_k in [
        (1, 700),
        (100, 100),
        (128, 384),
        (300, 777),
        (777, 300),
        (512, 1280),
    ]:
        if not causal and window == (-1, -1):
            continue  # no mask: variant_attention makes no BlockMask
        offset = length_k - length_q
        offsets = variants._offsets(offset, 2, "cpu")
        mask_mod = variants._mask_mod(offsets, *window, causal)
        got = variants._band_block_mask(
            mask_mod, offset, *window, causal, length_q, length_k, "cpu"
        )
        want = create_block_mask(mask_mod, None, None, length_q, length_k, device="cpu")
        what = (length_q, length_k, window, causal)
        assert torch.equal(got.to_dense(), want.to_dense()), what
        assert torch.equal(got.kv_num_blocks, want.kv_num_blocks), what
        assert torch.equal(got.full_kv_num_blocks, want.full_kv_num_blocks), what
        assert got.seq_lengths == want.seq_lengths
