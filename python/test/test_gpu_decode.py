"""GPU tests of tiledattn.decode_attention (split-KV, GQA packing, causal
bottom-right) against float64 with FlashAttention's criterion, lse
included. The kernels come from the flex cache (scripts/flex_cache.py).
They skip, saying why, without a Hopper GPU."""

import math

import pytest
import torch
from test_gpu import _skip_reason, check_lse, check_out, make, reference
from test_gpu_flex import CACHE

import tiledattn

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

# (B, Hq, Sq, Hkv, Sk, D): one token and four (speculative decoding), GQA 4
# and 8, MHA, a ragged last block, one K/V block, head dim 64.
DECODE_SHAPES = [
    (2, 8, 1, 2, 3000, 128),
    (1, 32, 4, 8, 9000, 128),
    (3, 4, 2, 4, 1000, 128),
    (2, 16, 1, 2, 100, 128),
    (1, 8, 16, 1, 2050, 64),
]


def bottom_right(length_q, length_k):
    def score_fn(s, b, h, i, j):
        return torch.where(j <= i + length_k - length_q, s, -math.inf)

    return score_fn


@pytest.mark.parametrize("schedule", sorted(tiledattn.decode.SCHEDULES))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", DECODE_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_decode_matches_float64(shape, causal, dtype, schedule):
    b, hq, sq, hkv, sk, d = shape
    torch.manual_seed(sk + causal)
    q, k, v = make(b, hq, sq, d, dtype), make(b, hkv, sk, d, dtype), make(b, hkv, sk, d, dtype)
    scale = 1 / math.sqrt(d)
    score = bottom_right(sq, sk) if causal else None
    ref, ref_lse, low = reference(q, k, v, False, scale, score_mod=score)
    what = f"decode {shape} causal={causal} {dtype} {schedule}"
    out, lse = tiledattn.decode_attention(
        q, k, v, causal=causal, schedule=schedule, return_lse=True, cache=CACHE
    )
    check_out(out, ref, low, what, dtype=dtype)
    check_lse(lse, ref_lse, what)


def test_split_counts_agree():
    # The same result (within the criterion) for 1, 3 and 7 splits and the
    # default, and the combine's lse is the one-split lse.
    torch.manual_seed(0)
    q = make(1, 8, 1, 128, torch.bfloat16)
    k, v = make(1, 2, 5000, 128, torch.bfloat16), make(1, 2, 5000, 128, torch.bfloat16)
    ref, ref_lse, low = reference(q, k, v, False, 1 / math.sqrt(128))
    for splits in (1, 3, 7, None):
        out, lse = tiledattn.decode_attention(q, k, v, splits=splits, return_lse=True, cache=CACHE)
        check_out(out, ref, low, f"decode splits={splits}", dtype=torch.bfloat16)
        check_lse(lse, ref_lse, f"decode splits={splits}")


@pytest.mark.parametrize(
    "shape",
    [(4, 32, 1, 8, 3000, 128), (2, 8, 3, 8, 700, 64), (1, 16, 2, 1, 5000, 128)],
    ids=["gqa4-sq1", "mha-sq3", "mqa-sq2"],
)
def test_sdpa_routes_decodes_and_matches_float64(shape, monkeypatch):
    # scaled_dot_product_attention sends a non-causal Sq <= 16 to
    # decode_attention (the package's own compiled kernels: no cache given),
    # 3-D inputs and batch shapes included.
    b, hq, sq, hkv, sk, d = shape
    torch.manual_seed(sk)
    q, k, v = (
        make(b, hq, sq, d, torch.bfloat16),
        make(b, hkv, sk, d, torch.bfloat16),
        make(b, hkv, sk, d, torch.bfloat16),
    )
    calls = []
    decode_attention = tiledattn.decode.decode_attention

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return decode_attention(*args, **kwargs)

    monkeypatch.setattr(tiledattn.decode, "decode_attention", counted)
    ref, _, low = reference(q, k, v, False, 1 / math.sqrt(d))
    out = tiledattn.scaled_dot_product_attention(q, k, v, enable_gqa=hq != hkv)
    assert calls, "scaled_dot_product_attention did not take the decode route"
    check_out(out, ref, low, f"sdpa decode {shape}", dtype=torch.bfloat16)
    if b == 1:
        out3 = tiledattn.scaled_dot_product_attention(q[0], k[0], v[0], enable_gqa=hq != hkv)
        check_out(out3[None], ref, low, f"sdpa decode 3-D {shape}", dtype=torch.bfloat16)


def test_tuning_keeps_a_winner_that_decode_attention_uses(tmp_path, monkeypatch):
    torch.manual_seed(1)
    q = make(1, 8, 1, 128, torch.bfloat16)
    k, v = make(1, 2, 5000, 128, torch.bfloat16), make(1, 2, 5000, 128, torch.bfloat16)
    path = tmp_path / "tuned.json"
    table = tiledattn.tune.tune_decode(q, k, v, runs=3, cache=CACHE, path=path)
    assert all(row["ms"] is not None and row["ms"] > 0 for row in table), table
    assert [row["ms"] for row in table] == sorted(row["ms"] for row in table)
    monkeypatch.setattr(tiledattn.tune, "tuned_file", lambda: path)
    used = []
    plan = tiledattn.decode._plan

    def spy(query, key, value, causal, splits, multiprocessors, schedule):
        used.append((schedule, splits))
        return plan(query, key, value, causal, splits, multiprocessors, schedule)

    monkeypatch.setattr(tiledattn.decode, "_plan", spy)
    out = tiledattn.decode_attention(q, k, v, cache=CACHE)
    assert used == [(table[0]["schedule"], table[0]["splits"])]
    ref, _, low = reference(q, k, v, False, 1 / math.sqrt(128))
    check_out(out, ref, low, "decode with the tuned choice", dtype=torch.bfloat16)


def test_a_repeated_decode_launches_from_its_plan(monkeypatch):
    # The second call of a layout skips the launch's checks (attention._plans)
    # and gives the same result; the block map comes with each call.
    from tiledattn import attention

    torch.manual_seed(2)
    q = make(2, 8, 1, 128, torch.bfloat16)
    k, v = make(2, 2, 3000, 128, torch.bfloat16), make(2, 2, 3000, 128, torch.bfloat16)
    before = len(attention._plans)
    first = tiledattn.decode_attention(q, k, v, splits=3, cache=CACHE)
    assert len(attention._plans) == before + 1
    again = tiledattn.decode_attention(q, k, v, splits=3, cache=CACHE)
    assert torch.equal(first, again)

    # After the first call, the plan and the launch's plan come from
    # decode._chosen: neither _plan nor _launch runs.
    def refuse(*args, **kwargs):
        raise AssertionError("planned again")

    monkeypatch.setattr(tiledattn.decode, "_plan", refuse)
    monkeypatch.setattr(tiledattn.decode, "_launch", refuse)
    assert torch.equal(tiledattn.decode_attention(q, k, v, splits=3, cache=CACHE), first)
    ref, _, low = reference(q, k, v, False, 1 / math.sqrt(128))
    check_out(again, ref, low, "decode from its plan", dtype=torch.bfloat16)
