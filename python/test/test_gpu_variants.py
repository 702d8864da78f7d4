"""GPU tests of tiledattn.attention: FlashAttention's variants (bottom-right
causal, sliding windows, softcap, ALiBi per head or per batch and head)
against float64 attention with FlashAttention's definitions, lse included.
The kernels come from the flex cache scripts/flex_cache.py fills on the
build machine. They skip, saying why, without a Hopper GPU."""

import math

import pytest
import torch
from flex_examples import VARIANT_CASES
from test_gpu import _skip_reason, check_lse, check_out, make, reference
from test_gpu_flex import CACHE
from test_variants import flash_keep

import tiledattn

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def flash_score(
    length_q, length_k, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None
):
    """FlashAttention's variant as a score function of the scaled score."""
    keep = flash_keep(length_q, length_k, causal, *window_size).cuda()
    offset = length_k - length_q

    def score_fn(s, b, h, i, j):
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        if alibi_slopes is not None:
            slope = alibi_slopes[b, h] if alibi_slopes.dim() == 2 else alibi_slopes[h]
            distance = i + offset - j
            s = s - slope * (distance if causal else distance.abs())
        return torch.where(keep[i, j], s, -math.inf)

    return score_fn


@pytest.mark.parametrize("case", VARIANT_CASES, ids=lambda c: c[0])
def test_variants_match_float64(case):
    name, (b, h, sq, sk, d), make_variant = case
    torch.manual_seed(0)
    variant = make_variant(b, h, "cuda")
    q, k, v = (
        make(b, h, sq, d, torch.bfloat16),
        make(b, h, sk, d, torch.bfloat16),
        make(b, h, sk, d, torch.bfloat16),
    )
    scale = 1 / math.sqrt(d)
    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=flash_score(sq, sk, **variant))
    out, lse = tiledattn.variant_attention(
        q, k, v, scale=scale, return_lse=True, cache=CACHE, **variant
    )
    check_out(out, ref, low, f"attention {name}", dtype=torch.bfloat16)
    seen = torch.isfinite(ref_lse)
    check_lse(lse[seen], ref_lse[seen], f"attention {name}")


def test_the_repo_window_schedule_runs_with_its_block_map():
    # python/tiledattn/schedules/variants/window_causal_fwd_bf16_d128.mlir,
    # compiled from the file and called with a map built from the dense
    # mask: FlashAttention's causal window of 1024 keys, against float64.
    from pathlib import Path

    from tiledattn.masks import block_map

    path = Path(tiledattn.__file__).parent / "schedules/variants/window_causal_fwd_bf16_d128.mlir"
    kernel = tiledattn.compile(path, cache=CACHE)
    torch.manual_seed(0)
    b, h, s, d = 2, 4, 1500, 128
    q, k, v = (make(b, h, s, d, torch.bfloat16) for _ in range(3))
    keep = flash_keep(s, s, True, 1023, 0).cuda()
    blocks = block_map(keep[None, None], (b, h, s, s), 128, 128)
    scale = 1 / math.sqrt(d)
    ref, _, low = reference(q, k, v, False, scale, score_mod=flash_score(s, s, True, (1023, 0)))
    offsets = torch.zeros(h, dtype=torch.int32, device="cuda")  # Sk - Sq per head
    out = kernel(q, k, v, scale=scale, captures=[offsets, blocks])
    check_out(out, ref, low, "window schedule file", dtype=torch.bfloat16)
