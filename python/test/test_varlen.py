"""tiledattn.varlen_attention on the CPU: the packed mask (each token's
sequence and position), its block map against a float64 model of the
kernel and a per-sequence reference, the errors, and meta tensors through
the whole call (the GPU test: test_gpu_varlen.py)."""

import math

import pytest
import torch
from test_attn_mask import _attention_by_map, needs_compiler

import tiledattn
from tiledattn.errors import InvalidInputError
from tiledattn.varlen import _kernel_text, block_map, positions

CU_Q = [0, 3, 3, 8]  # three sequences, the second without queries
CU_K = [0, 4, 6, 9]


def cu(values, device="cpu"):
    return torch.tensor(values, dtype=torch.int32, device=device)


def test_positions_keep_each_sequence_bottom_right_causal():
    ids_q, ids_k, pos_q, pos_k = positions(cu(CU_Q), cu(CU_K), 8, 9, causal=True)
    assert ids_q.tolist() == [0, 0, 0, 2, 2, 2, 2, 2]
    assert ids_k.tolist() == [0, 0, 0, 0, 1, 1, 2, 2, 2]
    # Sequence 0: 3 queries, 4 keys: query i sees keys up to i + 1.
    assert pos_q.tolist()[:3] == [1, 2, 3] and pos_k.tolist()[:4] == [0, 1, 2, 3]
    # Sequence 2: 5 queries, 3 keys: the first two see none.
    assert pos_q.tolist()[3:] == [-2, -1, 0, 1, 2]
    _, _, pos_q, _ = positions(cu(CU_Q), cu(CU_K), 8, 9, causal=False)
    assert pos_q.tolist() == [4, 4, 4, 3, 3, 3, 3, 3]  # every key of the sequence


def per_sequence(q, k, v, cu_q, cu_k, causal, scale, dtype=torch.float64):
    """Each sequence's attention computed apart, in `dtype` (softmax in at
    least float32), and its lse (Hq, total_q); rows without keys give 0 and
    lse -inf."""
    out = torch.zeros(q.shape[0], q.shape[1], v.shape[-1], dtype=dtype, device=q.device)
    lse = torch.full((q.shape[1], q.shape[0]), -math.inf, dtype=torch.float64, device=q.device)
    group = q.shape[1] // k.shape[1]
    soft = torch.promote_types(dtype, torch.float32)
    for s in range(len(cu_q) - 1):
        rows, keys = slice(cu_q[s], cu_q[s + 1]), slice(cu_k[s], cu_k[s + 1])
        qs, ks, vs = (t.to(dtype).transpose(0, 1) for t in (q[rows], k[keys], v[keys]))
        ks, vs = ks.repeat_interleave(group, 0), vs.repeat_interleave(group, 0)
        scores = (qs @ ks.transpose(-1, -2)).to(soft) * scale
        if causal:
            lq, lk = qs.shape[1], ks.shape[1]
            i = torch.arange(lq, device=q.device)[:, None]
            above = torch.arange(lk, device=q.device)[None, :] > i + lk - lq
            scores = scores.masked_fill(above, -math.inf)
        probs = torch.softmax(scores, -1).nan_to_num(0.0).to(dtype)
        out[rows] = (probs @ vs).transpose(0, 1)
        lse[:, rows] = torch.logsumexp(scores.double(), -1)
    return out, lse


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(
    "cu_q, cu_k",
    [
        ([0, 3, 3, 8], [0, 4, 6, 9]),
        ([0, 40, 41, 90, 150], [0, 40, 41, 90, 150]),
        ([0, 17, 60, 61, 130], [0, 70, 71, 140, 200]),
    ],
    ids=["short", "equal", "longer-keys"],
)
def test_the_block_map_computes_each_sequence_on_its_own(cu_q, cu_k, causal):
    # A float64 model of the kernel (listed blocks only, the mask on partial
    # ones) against each sequence's attention computed apart, with tiles
    # small enough for full, partial and skipped blocks.
    gen = torch.Generator().manual_seed(len(cu_q) + causal)
    tq, tk = cu_q[-1], cu_k[-1]
    q = torch.randn(tq, 4, 8, generator=gen, dtype=torch.float64)
    k, v = (torch.randn(tk, 2, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    tensors = positions(cu(cu_q), cu(cu_k), tq, tk, causal)
    ids_q, ids_k, pos_q, pos_k = tensors
    keep = (ids_q[:, None] == ids_k[None, :]) & (pos_q[:, None] >= pos_k[None, :])
    for block_m, block_n in [(16, 8), (8, 16), (128, 128)]:
        bmap = block_map(tensors, tq, tk, block_m, block_n)
        q4, k4, v4 = (t.transpose(0, 1)[None] for t in (q, k, v))
        k4, v4 = k4.repeat_interleave(2, 1), v4.repeat_interleave(2, 1)  # GQA
        got = _attention_by_map(q4, k4, v4, keep[None, None], None, bmap, block_m, block_n, 0.5)
        want, _ = per_sequence(q, k, v, cu_q, cu_k, causal, 0.5)
        torch.testing.assert_close(got[0].transpose(0, 1), want, rtol=1e-12, atol=1e-12)


def test_one_kernel_serves_both_masks():
    text, order = _kernel_text(torch.bfloat16, 128, 128)
    assert "mask_mod {" in text and "block_map(%blocks" in text and "score_mod {" not in text
    assert order == (0, 1, 2, 3)
    assert text.count("memref<?xi32>") >= 4


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"cu_seqlens_q": cu([0, 3, 8]).long()}, InvalidInputError, r"1-D int32 tensor"),
        ({"cu_seqlens_q": cu([1, 3, 3, 8])}, InvalidInputError, r"start at 0, never decrease"),
        ({"cu_seqlens_q": cu([0, 5, 3, 8])}, InvalidInputError, r"start at 0, never decrease"),
        ({"cu_seqlens_k": cu([0, 4, 9])}, InvalidInputError, r"as many sequences but got 3 and 2"),
        ({"cu_seqlens_k": cu([0, 4, 6, 10])}, InvalidInputError, r"end at the tokens' count 9"),
        ({"query": torch.empty(1, 8, 4, 64)}, InvalidInputError, r"'query' of shape \(total"),
        ({"value": torch.empty(8, 2, 64)}, InvalidInputError, r"as many tokens but got 9 and 8"),
        ({"cu_seqlens_q": [0, 3, 3, 8]}, TypeError, r"'cu_seqlens_q' to be a torch.Tensor"),
    ],
    ids=[
        "int64",
        "not-from-0",
        "decreasing",
        "other-count",
        "wrong-end",
        "4-D",
        "kv-tokens",
        "list",
    ],
)
def test_bad_arguments_are_named(change, error, message):
    args = {
        "query": torch.empty(8, 4, 64),
        "key": torch.empty(9, 2, 64),
        "value": torch.empty(9, 2, 64),
        "cu_seqlens_q": cu(CU_Q),
        "cu_seqlens_k": cu(CU_K),
    }
    args.update(change)
    with pytest.raises(error, match=message):
        tiledattn.varlen_attention(**args)


@needs_compiler
def test_meta_tensors_run_the_whole_call():
    q = torch.empty(300, 4, 128, dtype=torch.bfloat16, device="meta")
    k = torch.empty(500, 2, 128, dtype=torch.bfloat16, device="meta")
    cq, ck = cu([0, 100, 300], "meta"), cu([0, 200, 500], "meta")
    out = tiledattn.varlen_attention(q, k, k, cq, ck, causal=True)
    assert out.shape == (300, 4, 128) and out.device.type == "meta"
    out, lse = tiledattn.varlen_attention(q, k, k, cq, ck, return_lse=True)
    assert lse.shape == (4, 300)


def test_the_kernels_tensors_cover_whole_tiles():
    # The kernel computes the last query tile's rows past the tokens and
    # the last K/V block's keys past them too: the tensors its mask_mod
    # reads are padded to whole tiles (with their last value) so that it
    # never reads past them.
    from tiledattn.varlen import _padded

    tensors = positions(cu([0, 3, 3, 8]), cu([0, 4, 6, 9]), 8, 9, True)
    padded = _padded(tensors, 128, 112)
    assert [t.numel() for t in padded] == [128, 112, 128, 112]
    for t, p in zip(tensors, padded):
        assert torch.equal(p[: t.numel()], t) and bool((p[t.numel() :] == t[-1]).all())
    exact = positions(cu([0, 128]), cu([0, 112]), 128, 112, False)
    assert all(p is t for p, t in zip(_padded(exact, 128, 112), exact))
