"""CPU tests of tiledattn.kvcache_attention: the whole plan (GQA packing,
splits, the bounds and block map built from the lengths, the pages' rows
through the block table, the combine) run through a float64 model of the
kernel against dense attention over each sequence's own keys; the append;
argument errors. The kernel itself: test_gpu_kvcache.py."""

import math

import pytest
import torch

import tiledattn
from tiledattn import kvcache
from tiledattn.decode import _finish
from tiledattn.errors import InvalidInputError, UnsupportedInputError


def _kernel_model(plan, keys, values, page, scale):
    """The kernel in float64 from its captures: per batch and packed head
    the map's blocks (full: every key; partial: keys up to each row's
    bound), K/V rows at the block table's pages (kv_rows) or in place."""
    bounds, bmap = plan.captures[0], plan.captures[-1]
    table = plan.captures[1] if page else None
    batch, heads, rows, _ = plan.packed.shape
    group = heads // keys.shape[1]
    out = torch.zeros(batch, heads, rows, values.shape[-1], dtype=torch.float64)
    lse = torch.full((batch, heads, rows), -math.inf, dtype=torch.float64)
    for b in range(batch):
        for h in range(heads):
            full, listed = bmap[b, h, 0, :2].tolist()
            cols, keep = [], []
            for n, block in enumerate(bmap[b, h, 0, 2 : 2 + listed].tolist()):
                for key in range(block * 128, block * 128 + 128):
                    row = int(table[b, key // page]) * page + key % page if page else key
                    if row >= keys.shape[2]:
                        continue  # past k's end: TMA reads zeros, and the mask drops it
                    cols.append(row)
                    keep.append(
                        torch.ones(rows, dtype=torch.bool)
                        if n < full
                        else key <= bounds[b, h, :rows].to(torch.int64)
                    )
            k = keys[b, h // group, cols]
            s = scale * plan.packed[b, h] @ k.T
            s = s.masked_fill(~torch.stack(keep, 1), -math.inf)
            lse[b, h] = torch.logsumexp(s, -1)
            out[b, h] = torch.softmax(s, -1).nan_to_num(0.0) @ values[b, h // group, cols]
    return out, lse


def _dense(q, k_seqs, v_seqs, causal, scale):
    """Per sequence: q [Sq, Hq, D] against its keys [L, Hkv, D]."""
    outs = []
    for b, (k, v) in enumerate(zip(k_seqs, v_seqs)):
        group = q.shape[2] // k.shape[1]
        kk, vv = (t.repeat_interleave(group, 1).transpose(0, 1) for t in (k, v))
        s = scale * q[b].transpose(0, 1) @ kk.transpose(-1, -2)  # [Hq, Sq, L]
        if causal:
            sq, sk = s.shape[-2:]
            s = s.masked_fill(
                torch.arange(sk)[None, :] > torch.arange(sq)[:, None] + sk - sq, -math.inf
            )
        outs.append((torch.softmax(s, -1) @ vv).transpose(0, 1))
    return torch.stack(outs)


def _cache(gen, lengths, heads_kv, d, page, capacity):
    """A cache holding `lengths` keys per sequence: paged (pages shuffled,
    a table per sequence) or [B, capacity, Hkv, D]; slots past the
    lengths hold large finite values (the mask must drop them)."""
    batch = len(lengths)
    if page:
        per_seq = -(-capacity // page)
        pages = torch.randperm(batch * per_seq + 3, generator=gen)[: batch * per_seq]
        table = pages.view(batch, per_seq).to(torch.int32)
        shape = (batch * per_seq + 3, page, heads_kv, d)
    else:
        table = None
        shape = (batch, capacity, heads_kv, d)
    k_cache = torch.full(shape, 1e4, dtype=torch.float64)
    v_cache = torch.full(shape, -1e4, dtype=torch.float64)
    k_seqs, v_seqs = [], []
    for b, n in enumerate(lengths):
        k, v = (torch.randn(n, heads_kv, d, generator=gen, dtype=torch.float64) for _ in "kv")
        k_seqs.append(k)
        v_seqs.append(v)
        for t in range(n):
            where = (int(table[b, t // page]), t % page) if page else (b, t)
            k_cache[where] = k[t]
            v_cache[where] = v[t]
    return k_cache, v_cache, table, k_seqs, v_seqs


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(
    "page", [0, 256, 128, 64, 16], ids=["contiguous", "pages256", "pages128", "pages64", "pages16"]
)
@pytest.mark.parametrize(
    "lengths, heads, length_q, splits",
    [
        ([700, 129, 1000], (8, 2), 1, 3),
        ([300, 5], (4, 4), 4, 4),  # a 5-key sequence: splits without blocks
        ([1024], (16, 2), 2, 1),
    ],
    ids=["gqa4-splits", "empty-splits", "one-split"],
)
def test_the_plan_computes_each_sequences_attention(lengths, heads, length_q, splits, page, causal):
    gen = torch.Generator().manual_seed(sum(lengths) + page + causal)
    heads_q, heads_kv = heads
    k_cache, v_cache, table, k_seqs, v_seqs = _cache(gen, lengths, heads_kv, 64, page, 1024)
    q = torch.randn(len(lengths), length_q, heads_q, 64, generator=gen, dtype=torch.float64)
    seqlens = torch.tensor(lengths)
    plan, keys, values = kvcache._plan(
        q, k_cache, v_cache, seqlens, table, page, causal, splits, 132
    )
    assert plan.splits == splits
    out, lse = _kernel_model(plan, keys, values, page, 0.125)
    got = _finish(plan, out, lse, False).transpose(1, 2)
    want = _dense(q, k_seqs, v_seqs, causal, 0.125)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_the_map_lists_full_blocks_first_and_marks_ends_and_empty_splits():
    bounds, bmap = kvcache._bounds_and_map(torch.tensor([300, 5]), 2, True, 1, 3, 8)
    assert bmap.shape == (2, 3, 1, 2 + 3) and bounds.shape == (2, 3, 128)
    # sequence 0: 3 blocks, one per split; rows' least bound 298 -> block 2 partial
    assert bmap[0, :, 0, :3].tolist() == [[1, 1, 0], [1, 1, 1], [0, 1, 2]]
    assert bounds[0, 0, :4].tolist() == [298, 299, 298, 299]  # row j * Sq + i: i = row % 2
    # sequence 1: one partial block (keys up to 3, 4) in split 2; splits 0, 1 empty
    assert bmap[1, :, 0, :3].tolist() == [[0, 1, 0], [0, 1, 0], [0, 1, 0]]
    assert bounds[1, 0].eq(-1).all() and bounds[1, 1].eq(-1).all()
    assert bounds[1, 2, :2].tolist() == [3, 4]


def _reference_bounds_and_map(lengths, length_q, causal, heads_kv, splits, key_blocks):
    """kvcache's first prologue (about thirty ops), kept as the reference."""
    block, batch = 128, lengths.shape[0]
    blocks = (lengths + block - 1) // block  # [B]
    s = torch.arange(splits)
    first = s[None, :] * blocks[:, None] // splits  # [B, S]
    count = (s[None, :] + 1) * blocks[:, None] // splits - first
    least = lengths - length_q if causal else lengths - 1  # row 0's last key
    full_end = torch.div(least + 1, block, rounding_mode="floor")  # blocks before are full
    full = torch.minimum((full_end[:, None] - first).clamp(min=0), count)
    empty = count == 0
    listed = torch.where(empty, 1, count)
    full = torch.where(empty, 0, full)
    width = -(-key_blocks // splits)
    entry = torch.arange(width)
    ids = torch.where(entry < count[..., None], first[..., None] + entry, 0)  # [B, S, W]
    rows = torch.cat([full[..., None], listed[..., None], ids], dim=-1)
    bmap = rows[:, None].expand(batch, heads_kv, splits, 2 + width)
    bmap = bmap.reshape(batch, heads_kv * splits, 1, 2 + width).to(torch.int32)
    position = torch.arange(128) % length_q  # i of row j * Sq + i
    last = lengths[:, None] - (length_q - position if causal else 1)  # [B, 128]
    bounds = torch.where(
        empty[:, None, :, None], -1, last[:, None, None, :].expand(batch, heads_kv, splits, 128)
    )
    return bounds.reshape(batch, heads_kv * splits, 128).to(torch.int32), bmap


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("length_q", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "heads_kv, splits, key_blocks",
    [(1, 1, 1), (2, 1, 9), (8, 3, 8), (2, 16, 20), (1, 5, 37), (4, 7, 7)],
    ids=["one-block", "one-split", "splits3", "splits-gt-blocks", "splits5", "splits-eq-blocks"],
)
def test_the_prologue_matches_its_thirty_op_formulation(
    heads_kv, splits, key_blocks, length_q, causal
):
    # Ragged lengths around block edges, short sequences with fewer blocks
    # than splits (empty splits), full caches and past them.
    gen = torch.Generator().manual_seed(key_blocks * 10 + splits)
    capacity = key_blocks * 128
    edges = [length_q, length_q + 1, 127, 128, 129, 255, 256, 257, capacity - 1, capacity]
    random = torch.randint(length_q, capacity + 300, (6,), generator=gen).tolist()
    lengths = torch.tensor([n for n in edges + random if n >= length_q] + [0] * (not causal))
    got = kvcache._bounds_and_map(lengths, length_q, causal, heads_kv, splits, key_blocks)
    want = _reference_bounds_and_map(lengths, length_q, causal, heads_kv, splits, key_blocks)
    for g, w in zip(got, want):
        assert g.dtype == torch.int32 and g.is_contiguous()
        assert torch.equal(g, w)


def test_new_keys_are_appended_at_each_sequences_end():
    k_cache = torch.zeros(4, 256, 1, 8)
    v_cache = torch.zeros(4, 256, 1, 8)
    table = torch.tensor([[2, 0], [1, 3]], dtype=torch.int32)
    k_new = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 1, 8)
    kvcache._append(k_cache, v_cache, k_new, -k_new, torch.tensor([254, 10]), table, 256)
    assert torch.equal(k_cache[2, 254:256, 0], k_new[0, :2, 0])  # page 2's last slots
    assert torch.equal(k_cache[0, 0, 0], k_new[0, 2, 0])  # then page 0
    assert torch.equal(v_cache[1, 10:13, 0], -k_new[1, :, 0])


def test_one_kernel_per_page_size():
    plain = kvcache.kernel_text(torch.bfloat16, 128, 128, 0)
    paged = kvcache.kernel_text(torch.bfloat16, 128, 128, 256)
    assert "kv_rows" not in plain and "%cap1: memref<?x?xi32>" not in plain
    assert "kv_rows {" in paged and "memref.load %cap1[%b, %n] : memref<?x?xi32>" in paged
    assert "arith.constant 256 : index" in paged and "kv_span" not in paged
    # Pages shorter than a block: the region runs per page (kv_span).
    short = kvcache.kernel_text(torch.bfloat16, 128, 128, 16)
    assert "kv_span(16) kv_rows {" in short and "arith.constant 16 : index" in short


def _args(**change):
    args = {
        "q": torch.empty(2, 1, 8, 64, device="meta"),
        "k_cache": torch.empty(6, 256, 2, 64, device="meta"),
        "v_cache": torch.empty(6, 256, 2, 64, device="meta"),
        "cache_seqlens": 100,
        "block_table": torch.zeros(2, 3, dtype=torch.int32),
    }
    args.update(change)
    return args


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"q": torch.empty(2, 8, 64)}, InvalidInputError, r"'q' to be a 4-D tensor"),
        (
            {"k_cache": torch.empty(6, 256, 3, 64)},
            InvalidInputError,
            r"Hkv dividing the query's 8 heads",
        ),
        (
            {"k_cache": torch.empty(6, 48, 2, 64), "v_cache": torch.empty(6, 48, 2, 64)},
            UnsupportedInputError,
            r"pages of 8, 16, 32, 64 or a multiple of 128 keys .* pages of 48",
        ),
        (
            {"block_table": torch.zeros(3, 3, dtype=torch.int32)},
            InvalidInputError,
            r"'block_table' \[B = 2, pages >= 1\] but got \(3, 3\)",
        ),
        (
            {"block_table": torch.zeros(2, 3)},
            InvalidInputError,
            r"'block_table' of dtype int32 or int64 but got torch.float32",
        ),
        (
            {"cache_seqlens": torch.zeros(3, dtype=torch.int32)},
            InvalidInputError,
            r"'cache_seqlens' to be an int or an int32/int64 tensor \[2\]",
        ),
        ({"k": torch.empty(2, 1, 2, 64)}, InvalidInputError, r"'k' and 'v' together"),
        (
            {
                "block_table": None,
                "k_cache": torch.empty(3, 256, 2, 64),
                "v_cache": torch.empty(3, 256, 2, 64),
            },
            InvalidInputError,
            r"'k_cache' \[B = 2, Sk_max, Hkv, D\] without a block_table",
        ),
    ],
    ids=["rank", "heads", "page", "table-rows", "table-dtype", "seqlens", "k-alone", "batch"],
)
def test_bad_arguments_are_named(change, error, message):
    with pytest.raises(error, match=message):
        tiledattn.kvcache_attention(**_args(**change))


def test_cpu_tensors_are_refused_before_the_cache_is_written():
    k_cache = torch.zeros(2, 256, 2, 64, dtype=torch.bfloat16)
    q = torch.zeros(2, 1, 8, 64, dtype=torch.bfloat16)
    k_new = torch.ones(2, 1, 2, 64, dtype=torch.bfloat16)
    with pytest.raises(UnsupportedInputError, match="CUDA tensors"):
        tiledattn.kvcache_attention(q, k_cache, k_cache, 5, k=k_new, v=k_new)
    assert k_cache.eq(0).all()
