"""GPU tests of tiledattn.flex_attention: score_mod callables traced into
tile IR and compiled, checked against float64 attention with the same
callable applied to the float64 scores (FlashAttention's criterion), lse
included. They skip, saying why, without a Hopper GPU or the compiler."""

import math
from pathlib import Path

import pytest
import torch
from flex_examples import (
    BLOCK_MASK_CASES,
    CAPTURE_MODS,
    CAPTURE_SHAPES,
    DOCUMENT_BLOCK_MASK_SHAPE,
    GPU_SHAPES,
    SCORE_MODS,
    document_mask_mod,
)
from test_gpu import _skip_reason, check_lse, check_out, make, reference

import tiledattn
from tiledattn.errors import UnsupportedInputError
from tiledattn.flex import schedule_text, trace_score_mod

# Where scripts/flex_cache.py compiled these tests' kernels on the build
# machine (the GPU machine has no compiler); flex_attention finds them by
# their text.
CACHE = Path(__file__).resolve().parents[2] / "build" / "kernels-tile-ir" / "flex-cache"

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.mark.parametrize("score_mod", SCORE_MODS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: "b{}h{}kv{}q{}k{}d{}dv{}".format(*s))
def test_flex_attention_matches_float64(score_mod, shape):
    q, k, v = _inputs(shape)
    _check_flex(
        q, k, v, score_mod, f"flex {score_mod.__name__} q{tuple(q.shape)} k{tuple(k.shape)}"
    )


def _inputs(shape):
    b, hq, hkv, sq, sk, d, dv = shape
    q = make(b, hq, sq, d, torch.bfloat16)
    return q, make(b, hkv, sk, d, torch.bfloat16), make(b, hkv, sk, dv, torch.bfloat16)


def _check_flex(q, k, v, score_mod, what):
    """flex_attention with `score_mod` against float64, lse included."""
    scale = 1 / math.sqrt(q.shape[-1])
    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=score_mod)
    out, lse = tiledattn.flex_attention(
        q,
        k,
        v,
        score_mod=score_mod,
        scale=scale,
        enable_gqa=k.shape[1] != q.shape[1],
        return_lse=True,
        cache=CACHE,
    )
    check_out(out, ref, low, what, dtype=q.dtype)
    # Rows that see no key (a window past them) have lse -inf on both sides.
    seen = torch.isfinite(ref_lse)
    check_lse(lse[seen], ref_lse[seen], what)


@pytest.mark.parametrize(
    "score_mod, mask_mod, shape",
    BLOCK_MASK_CASES,
    ids=lambda x: (
        "none"
        if x is None
        else getattr(x, "__name__", None) or "b{}h{}kv{}q{}k{}d{}dv{}".format(*x)
    ),
)
def test_flex_attention_with_a_block_mask_matches_float64(score_mod, mask_mod, shape):
    _check_block_mask(score_mod, mask_mod, shape)


def test_a_document_block_mask_skips_blocks_and_matches_float64():
    # Packed documents: the BlockMask's full blocks run without the
    # mask_mod, its partial ones with it, the others not at all (its block
    # map); two sets of documents on one compiled kernel.
    for seed in (1, 2):
        torch.manual_seed(seed)
        b, hq, _, sq, _, _, _ = DOCUMENT_BLOCK_MASK_SHAPE
        mask_mod = document_mask_mod("cuda", b, hq, sq)
        _check_block_mask(None, mask_mod, DOCUMENT_BLOCK_MASK_SHAPE, batch=b)


def _check_block_mask(score_mod, mask_mod, shape, batch=None):
    """flex_attention with a BlockMask of `mask_mod` (per batch if
    `batch`) against float64, lse included."""
    from torch.nn.attention.flex_attention import create_block_mask

    b, hq, hkv, sq, sk, d, dv = shape
    q = make(b, hq, sq, d, torch.bfloat16)
    k, v = make(b, hkv, sk, d, torch.bfloat16), make(b, hkv, sk, dv, torch.bfloat16)
    scale = 1 / math.sqrt(d)

    def masked(s, bb, h, i, j):
        kept = score_mod(s, bb, h, i, j) if score_mod is not None else s
        return torch.where(mask_mod(bb, h, i, j), kept, -math.inf)

    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=masked)
    enable_gqa = hkv != hq
    block_mask = create_block_mask(mask_mod, batch, None, sq, sk, device="cuda")
    out, lse = tiledattn.flex_attention(
        q,
        k,
        v,
        score_mod=score_mod,
        block_mask=block_mask,
        scale=scale,
        enable_gqa=enable_gqa,
        return_lse=True,
        cache=CACHE,
    )
    what = f"flex {getattr(score_mod, '__name__', None)} + block_mask {mask_mod.__name__}"
    check_out(out, ref, low, what, dtype=q.dtype)
    check_lse(lse, ref_lse, what)


@pytest.mark.parametrize("make_mod", CAPTURE_MODS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "shape", CAPTURE_SHAPES, ids=lambda s: "b{}h{}kv{}q{}k{}d{}dv{}".format(*s)
)
def test_flex_attention_reads_captured_tensors(make_mod, shape):
    # The tensors a score_mod closes over (ALiBi slopes, document ids, a bf16
    # bias, a bool padding mask, a 0-D temperature) are the kernel's
    # arguments: right against float64 for two sets of values, which one
    # compiled kernel serves.
    b, hq, hkv, sq, sk, d, dv = shape
    q, k, v = _inputs(shape)
    paths = set()
    for seed in (1, 2):
        torch.manual_seed(seed)
        score_mod = make_mod("cuda", b, hq, max(sq, sk))
        what = f"flex {make_mod.__name__} (values {seed}) q{tuple(q.shape)} k{tuple(k.shape)}"
        _check_flex(q, k, v, score_mod, what)
        region = trace_score_mod(score_mod)
        paths.add(
            tiledattn.compile(
                schedule_text(region, q.dtype, d, "flex_score_mod", dv), cache=CACHE
            ).path
        )
    assert len(paths) == 1, f"{make_mod.__name__}: new values compiled a new kernel: {paths}"


def test_captured_tensors_are_checked_at_the_call():
    slopes = torch.rand(4, device="cuda")

    def alibi_from_slopes(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    region = trace_score_mod(alibi_from_slopes)
    bundle = str(
        tiledattn.compile(
            schedule_text(region, torch.bfloat16, 64, "flex_score_mod"), cache=CACHE
        ).path
    )
    q, k, v = (make(1, 4, 100, 64, torch.bfloat16) for _ in range(3))
    op = torch.ops.tiledattn.sdpa_fwd
    with pytest.raises(
        RuntimeError,
        match=r"expected 1 captured tensors \(bundle '.*' reads capture0: f32 rank 1\) but got 0",
    ):
        op(q, k, v, False, 0.125, bundle)
    with pytest.raises(
        RuntimeError, match=r"expected 'captures\[0\]' to have dtype f32 .* but got Half"
    ):
        op(q, k, v, False, 0.125, bundle, [slopes.half()])
    with pytest.raises(
        RuntimeError, match=r"expected 'captures\[0\]' to be a 1-D tensor .* but got a 2-D tensor"
    ):
        op(q, k, v, False, 0.125, bundle, [slopes[None]])
    with pytest.raises(RuntimeError, match=r"expected 'captures\[0\]' to be contiguous"):
        op(q, k, v, False, 0.125, bundle, [torch.rand(8, device="cuda")[::2]])
    with pytest.raises(
        RuntimeError, match=r"expected 'captures\[0\]' to be a CUDA tensor but got a tensor on cpu"
    ):
        op(q, k, v, False, 0.125, bundle, [slopes.cpu()])
    on_cpu = slopes.cpu()

    def reads_a_cpu_tensor(score, b, h, q_idx, kv_idx):
        return score + on_cpu[h] * (kv_idx - q_idx)

    with pytest.raises(
        UnsupportedInputError, match=r"reads a tensor on cpu .* expected it on cuda:0"
    ):
        tiledattn.flex_attention(q, k, v, score_mod=reads_a_cpu_tensor, cache=CACHE)
