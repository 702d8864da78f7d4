"""GPU tests of tiledattn.flex_attention: score_mod callables traced into
tile IR and compiled, checked against float64 attention with the same
callable applied to the float64 scores (FlashAttention's criterion), lse
included. They skip, saying why, without a Hopper GPU or the compiler."""

import math
from pathlib import Path

import pytest
import torch
from flex_examples import BLOCK_MASK_CASES, GPU_SHAPES, SCORE_MODS
from test_gpu import _skip_reason, check_lse, check_out, make, reference

import tiledattn

# Where scripts/flex_cache.py compiled these tests' kernels on the build
# machine (the GPU machine has no compiler); flex_attention finds them by
# their text.
CACHE = Path(__file__).resolve().parents[2] / "build" / "kernels-tile-ir" / "flex-cache"

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.mark.parametrize("score_mod", SCORE_MODS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: "b{}h{}kv{}q{}k{}d{}dv{}".format(*s))
def test_flex_attention_matches_float64(score_mod, shape):
    b, hq, hkv, sq, sk, d, dv = shape
    q = make(b, hq, sq, d, torch.bfloat16)
    k, v = make(b, hkv, sk, d, torch.bfloat16), make(b, hkv, sk, dv, torch.bfloat16)
    scale = 1 / math.sqrt(d)
    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=score_mod)
    out, lse = tiledattn.flex_attention(
        q,
        k,
        v,
        score_mod=score_mod,
        scale=scale,
        enable_gqa=hkv != hq,
        return_lse=True,
        cache=CACHE,
    )
    what = f"flex {score_mod.__name__} q{tuple(q.shape)} k{tuple(k.shape)}"
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
    from torch.nn.attention.flex_attention import create_block_mask

    b, hq, hkv, sq, sk, d, dv = shape
    q = make(b, hq, sq, d, torch.bfloat16)
    k, v = make(b, hkv, sk, d, torch.bfloat16), make(b, hkv, sk, dv, torch.bfloat16)
    scale = 1 / math.sqrt(d)

    def masked(s, bb, h, i, j):
        kept = score_mod(s, bb, h, i, j) if score_mod is not None else s
        return torch.where(mask_mod(bb, h, i, j), kept, -math.inf)

    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=masked)
    block_mask = create_block_mask(mask_mod, None, None, sq, sk, device="cuda")
    out, lse = tiledattn.flex_attention(
        q,
        k,
        v,
        score_mod=score_mod,
        block_mask=block_mask,
        scale=scale,
        return_lse=True,
        cache=CACHE,
    )
    what = f"flex {getattr(score_mod, '__name__', None)} + block_mask {mask_mod.__name__}"
    check_out(out, ref, low, what, dtype=q.dtype)
    check_lse(lse, ref_lse, what)
