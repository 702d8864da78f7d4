"""GPU tests of tiledattn.varlen_attention: packed sequences of random
lengths (empty ones, ones longer than a tile, more keys than queries),
causal (bottom-right) or not, GQA, against each sequence's float64
attention with FlashAttention's criterion, lse included. The kernels come
from the flex cache scripts/flex_cache.py fills on the build machine. They
skip, saying why, without a Hopper GPU."""

import math

import pytest
import torch
from test_gpu import _skip_reason, check_close
from test_gpu_flex import CACHE
from test_varlen import per_sequence

import tiledattn

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

# (query lengths, key lengths or None for the same, heads q/kv, head dim).
VARLEN_CASES = [
    ([100, 0, 300, 1, 129], None, (4, 4), 128),
    ([64, 500, 200], [300, 700, 200], (8, 2), 128),
    ([1000, 24, 333], None, (4, 1), 64),
]


def _cu(lengths):
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("case", VARLEN_CASES, ids=["ragged", "more-keys", "gqa-d64"])
def test_varlen_matches_each_sequence(case, causal):
    lengths_q, lengths_k, (hq, hkv), d = case
    lengths_k = lengths_k or lengths_q
    cu_q, cu_k = _cu(lengths_q), _cu(lengths_k)
    torch.manual_seed(0)
    q = torch.randn(sum(lengths_q), hq, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(sum(lengths_k), hkv, d, device="cuda", dtype=torch.bfloat16) for _ in "kv")
    scale = 1 / math.sqrt(d)
    cq, ck = cu_q.tolist(), cu_k.tolist()
    ref, ref_lse = per_sequence(q, k, v, cq, ck, causal, scale)
    low, _ = per_sequence(q, k, v, cq, ck, causal, scale, dtype=torch.bfloat16)
    out, lse = tiledattn.varlen_attention(
        q, k, v, cu_q.cuda(), cu_k.cuda(), causal=causal, scale=scale, return_lse=True, cache=CACHE
    )
    what = f"varlen {lengths_q}/{lengths_k} causal={causal}"
    assert out.shape == (q.shape[0], hq, d) and out.dtype == torch.bfloat16, what
    check_close(out, ref, low, what)
    seen = torch.isfinite(ref_lse)
    torch.testing.assert_close(lse[seen].double(), ref_lse[seen], atol=1e-3, rtol=1e-4)
    # A query with no key (causal, more queries than keys) gives 0.
    assert torch.equal(out[~seen.T.any(-1)].float().abs().sum(), torch.tensor(0.0, device="cuda"))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_nested_jagged_tensors_run_as_varlen(monkeypatch, causal):
    # torch's variable-length input: scaled_dot_product_attention on nested
    # jagged [B, H, j, D] tensors gives a nested result like torch's.
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", str(CACHE))
    lengths = (37, 300, 129)
    parts = [torch.randn(n, 4, 64, dtype=torch.bfloat16, device="cuda") for n in lengths]
    q = torch.nested.nested_tensor(parts, layout=torch.jagged).transpose(1, 2)
    out = tiledattn.scaled_dot_product_attention(q, q, q, is_causal=causal)
    assert out.is_nested and out._ragged_idx == 2
    values = q.transpose(1, 2).values()
    cu = [0, *torch.tensor(lengths).cumsum(0).tolist()]
    ref, _ = per_sequence(values, values, values, cu, cu, causal, 64**-0.5)
    low, _ = per_sequence(values, values, values, cu, cu, causal, 64**-0.5, dtype=torch.bfloat16)
    check_close(out.transpose(1, 2).values(), ref, low, f"nested jagged causal={causal}")
