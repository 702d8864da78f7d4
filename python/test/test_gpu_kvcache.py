"""GPU tests of tiledattn.kvcache_attention (per-sequence lengths, pages
through a block table, the append, bottom-right causal, splits) against
float64 with FlashAttention's criterion, sequence by sequence. The kernels
come from the flex cache (scripts/flex_cache.py). They skip, saying why,
without a Hopper GPU."""

import math

import pytest
import torch
from test_gpu import _skip_reason, check_lse, check_out, reference
from test_gpu_decode import bottom_right
from test_gpu_flex import CACHE

import tiledattn

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _cache(lengths, heads_kv, d, page, capacity, dtype):
    """Random K/V of `lengths` keys per sequence in a paged (pages shuffled)
    or contiguous cache; slots past the lengths hold 1000s (finite: the
    mask must drop them)."""
    batch = len(lengths)
    table = None
    if page:
        per_seq = -(-capacity // page)
        table = torch.randperm(batch * per_seq + 2, device="cuda")[: batch * per_seq]
        table = table.view(batch, per_seq).to(torch.int32)
        shape = (batch * per_seq + 2, page, heads_kv, d)
    else:
        shape = (batch, capacity, heads_kv, d)
    k_cache = torch.full(shape, 1000.0, dtype=dtype, device="cuda")
    v_cache = torch.full(shape, -1000.0, dtype=dtype, device="cuda")
    for b, n in enumerate(lengths):
        positions = torch.arange(n, device="cuda")
        where = (table[b, positions // page].long(), positions % page) if page else (b, positions)
        k_cache[where] = torch.randn(n, heads_kv, d, dtype=dtype, device="cuda")
        v_cache[where] = torch.randn(n, heads_kv, d, dtype=dtype, device="cuda")
    return k_cache, v_cache, table


def _keys_of(cache, table, page, b, n):
    positions = torch.arange(n, device="cuda")
    where = (table[b, positions // page].long(), positions % page) if page else (b, positions)
    return cache[where].transpose(0, 1)[None]  # [1, Hkv, n, D]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(
    "page", [0, 16, 64, 128, 256], ids=["contiguous", "pages16", "pages64", "pages128", "pages256"]
)
@pytest.mark.parametrize(
    "lengths, heads, length_q, d, splits",
    [
        ([3000, 129, 1000, 7], (32, 8), 1, 128, None),
        ([500, 2049], (8, 2), 4, 128, 5),
        ([4096], (16, 1), 2, 64, 8),
    ],
    ids=["gqa4-ragged", "sq4-splits", "mqa-d64"],
)
def test_kvcache_matches_float64(lengths, heads, length_q, d, splits, page, causal, dtype):
    torch.manual_seed(sum(lengths) + page)
    heads_q, heads_kv = heads
    k_cache, v_cache, table = _cache(lengths, heads_kv, d, page, 4096, dtype)
    q = torch.randn(len(lengths), length_q, heads_q, d, dtype=dtype, device="cuda")
    seqlens = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    out, lse = tiledattn.kvcache_attention(
        q,
        k_cache,
        v_cache,
        seqlens,
        table,
        causal=causal,
        splits=splits,
        return_lse=True,
        cache=CACHE,
    )
    assert out.shape == (len(lengths), length_q, heads_q, d)
    for b, n in enumerate(lengths):
        k, v = _keys_of(k_cache, table, page, b, n), _keys_of(v_cache, table, page, b, n)
        score = bottom_right(length_q, n) if causal else None
        ref, ref_lse, low = reference(
            q[b : b + 1].transpose(1, 2), k, v, False, 1 / math.sqrt(d), score_mod=score
        )
        what = f"kvcache seq {b} of {lengths} page={page} causal={causal} {dtype}"
        check_out(out[b : b + 1].transpose(1, 2), ref, low, what, dtype=dtype)
        check_lse(lse[b : b + 1], ref_lse, what)


def test_the_new_keys_are_appended_and_attended_to():
    torch.manual_seed(3)
    lengths, page, dtype = [300, 255], 256, torch.bfloat16
    k_cache, v_cache, table = _cache(lengths, 2, 128, page, 1024, dtype)
    q = torch.randn(2, 3, 8, 128, dtype=dtype, device="cuda")
    k_new, v_new = (torch.randn(2, 3, 2, 128, dtype=dtype, device="cuda") for _ in "kv")
    seqlens = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    out = tiledattn.kvcache_attention(
        q, k_cache, v_cache, seqlens, table, k=k_new, v=v_new, causal=True, cache=CACHE
    )
    for b, n in enumerate(lengths):
        k = _keys_of(k_cache, table, page, b, n + 3)
        assert torch.equal(k[0, :, n:], k_new[b].transpose(0, 1))  # written at the end
        v = _keys_of(v_cache, table, page, b, n + 3)
        ref, _, low = reference(
            q[b : b + 1].transpose(1, 2),
            k,
            v,
            False,
            1 / math.sqrt(128),
            score_mod=bottom_right(3, n + 3),
        )
        check_out(out[b : b + 1].transpose(1, 2), ref, low, f"append seq {b}", dtype=dtype)


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "cuda-graph"])
def test_the_decode_loop_example_matches_sdpa(graphs):
    # scripts/decode_loop.py (docs/Serving.md): a paged, Llama-shaped decode
    # loop, each step captured once and replayed as a CUDA graph too.
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import decode_loop

    worst = decode_loop.run(batch=2, layers=2, prompt=16, steps=4, graphs=graphs, cache=CACHE)
    assert worst < 5e-2, worst


def test_calls_of_one_shape_with_other_lengths_each_get_their_own():
    # The bounds and block map come from a CUDA graph replayed per call
    # (kvcache._prologue): back-to-back calls of one shape with different
    # lengths, on the default stream and on a second one, without a sync
    # in between, each see their own lengths.
    torch.manual_seed(5)
    dtype, page = torch.bfloat16, 64
    k_cache, v_cache, table = _cache([2048, 2048], 2, 128, page, 2048, dtype)
    q = torch.randn(2, 1, 8, 128, dtype=dtype, device="cuda")
    runs = [[2048, 7], [129, 1500], [1, 2048]]
    side = torch.cuda.Stream()
    outs = []
    for i, lengths in enumerate(runs):
        seqlens = torch.tensor(lengths, dtype=torch.int32, device="cuda")
        stream = side if i == 1 else torch.cuda.current_stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            outs.append(
                tiledattn.kvcache_attention(q, k_cache, v_cache, seqlens, table, cache=CACHE)
            )
        torch.cuda.current_stream().wait_stream(stream)
    for lengths, out in zip(runs, outs):
        for b, n in enumerate(lengths):
            k, v = _keys_of(k_cache, table, page, b, n), _keys_of(v_cache, table, page, b, n)
            ref, _, low = reference(q[b : b + 1].transpose(1, 2), k, v, False, 1 / math.sqrt(128))
            check_out(
                out[b : b + 1].transpose(1, 2), ref, low, f"lengths {lengths} seq {b}", dtype=dtype
            )
