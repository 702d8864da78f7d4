"""CPU tests of tiledattn.decode_attention: the split count, the split
block maps, and the whole plan (GQA packing, splits, the kernel modelled in
float64 from its block map, the combine, the unpacking) against dense
attention; the kernel itself: test_gpu_decode.py."""

import math

import pytest
import torch

import tiledattn
from tiledattn import decode
from tiledattn.errors import InvalidInputError, UnsupportedInputError


def test_the_split_count_fills_the_gpu_once_in_one_wave():
    assert decode.num_splits(64 * 8, 32, 132) == 1  # B64 Hkv8: 512 tiles already
    assert decode.num_splits(100, 32, 132) == 1  # 200 thread blocks would be two waves
    assert decode.num_splits(8 * 8, 256, 132) == 2  # B8: 64 tiles, 128 thread blocks
    assert decode.num_splits(1 * 8, 1024, 132) == 16  # B1 Sk128k: 128, not 17 x 8 = 136
    assert decode.num_splits(1, 5, 132) == 2  # each split >= 2 blocks
    assert decode.num_splits(1, 3, 132) == 1


def test_sdpa_sends_decodes_and_only_decodes_to_decode_attention():
    assert decode.is_decode((64, 32, 1, 128), 8, False)  # GQA 4, one token
    assert decode.is_decode((8, 32, 4, 128), 8, False)  # 16 rows
    assert decode.is_decode((2, 8, 16, 64), 8, False)  # MHA, 16 tokens
    assert decode.is_decode((1, 128, 1, 128), 1, False)  # MQA, 128 rows
    assert not decode.is_decode((1, 128, 2, 128), 1, False)  # 256 rows: two tiles
    assert not decode.is_decode((1, 8, 17, 128), 8, False)  # a prefill chunk
    assert not decode.is_decode((1, 32, 1, 128), 8, True)  # top-left causal
    assert not decode.is_decode((1, 32, 0, 128), 8, False)


def test_sdpa_on_cpu_or_meta_tensors_does_not_route(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("decode_attention called")

    monkeypatch.setattr(decode, "decode_attention", refuse)
    q = torch.empty(4, 32, 1, 128, dtype=torch.bfloat16, device="meta")
    k = torch.empty(4, 8, 4096, 128, dtype=torch.bfloat16, device="meta")
    out = tiledattn.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    assert out.shape == (4, 32, 1, 128) and out.device.type == "meta"


def test_split_maps_give_each_copy_its_own_blocks():
    bmap = decode._split_map(2, 3, 128, 1000, 4, None, "cpu")  # 8 blocks, last ragged
    assert bmap.shape == (1, 6, 1, 10)
    for h in range(6):
        full, listed = bmap[0, h, 0, :2].tolist()
        blocks = bmap[0, h, 0, 2 : 2 + listed].tolist()
        split = h % 3
        assert sorted(blocks) == list(range(split * 8 // 3, (split + 1) * 8 // 3))
        # the ragged block (keys 896..999) is partial: the kernel masks past 1000
        assert full == listed - (7 in blocks)
    causal = decode._split_map(1, 2, 128, 1000, 4, 1000 - 4 + 1, "cpu")
    full, listed = causal[0, 1, 0, :2].tolist()
    assert (full, listed) == (3, 4)  # keys 997.. are some row's future: block 7 partial


def _kernel_model(packed, key, value, captures, scale, block_m=128):
    """What the kernel computes from its block map in float64: per head and
    tile of `block_m` rows only the listed blocks, on partial ones the keys'
    end and (causal) each row's bound; (out, lse) with -inf lse and zero
    rows where nothing is kept."""
    bmap = captures[-1]
    bounds = captures[0][: packed.shape[2]] if len(captures) == 2 else None
    batch, heads, rows, _ = packed.shape
    length_k = key.shape[2]
    group = heads // key.shape[1]
    out = torch.zeros(batch, heads, rows, value.shape[-1], dtype=torch.float64)
    lse = torch.full((batch, heads, rows), -math.inf, dtype=torch.float64)
    assert bmap.shape[2] == -(-rows // block_m)
    for b in range(batch):
        for h in range(heads):
            keep = torch.zeros(rows, length_k, dtype=torch.bool)
            for m in range(bmap.shape[2]):
                tile = slice(m * block_m, min(rows, (m + 1) * block_m))
                full, listed = bmap[0, h, m, :2].tolist()
                for n, block in enumerate(bmap[0, h, m, 2 : 2 + listed].tolist()):
                    keys = torch.arange(block * 128, min(length_k, block * 128 + 128))
                    if n < full:
                        keep[tile, keys] = True
                    else:
                        bound = bounds[tile, None] if bounds is not None else length_k
                        keep[tile, keys] = keys[None, :] <= torch.as_tensor(bound)
            s = scale * packed[b, h] @ key[b, h // group].T
            s = s.masked_fill(~keep, -math.inf)
            lse[b, h] = torch.logsumexp(s, -1)
            out[b, h] = torch.softmax(s, -1).nan_to_num(0.0) @ value[b, h // group]
    return out, lse


def _dense(query, key, value, causal, scale):
    group = query.shape[1] // key.shape[1]
    k, v = (t.repeat_interleave(group, 1) for t in (key, value))
    s = scale * query @ k.transpose(-1, -2)
    if causal:
        sq, sk = s.shape[-2:]
        s = s.masked_fill(
            torch.arange(sk)[None, :] > torch.arange(sq)[:, None] + sk - sq, -math.inf
        )
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


@pytest.mark.parametrize("schedule", sorted(decode.SCHEDULES))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "shape, splits",
    [
        ((2, 8, 1, 2, 700), 3),
        ((1, 4, 5, 4, 1000), 4),
        ((2, 6, 3, 2, 300), 1),
        ((1, 2, 16, 1, 129), 2),
        ((1, 8, 12, 1, 500), 2),
    ],
    ids=["gqa4-sq1", "mha-sq5", "one-split", "sq16-ragged", "96-rows"],
)
def test_the_plan_computes_attention(shape, splits, causal, schedule):
    batch, heads_q, length_q, heads_kv, length_k = shape
    gen = torch.Generator().manual_seed(length_k + causal)
    query = torch.randn(batch, heads_q, length_q, 64, generator=gen, dtype=torch.float64)
    key, value = (
        torch.randn(batch, heads_kv, length_k, 64, generator=gen, dtype=torch.float64)
        for _ in range(2)
    )
    plan = decode._plan(query, key, value, causal, splits, 132, schedule)
    assert plan.splits == splits and plan.packed.shape[1] == heads_kv * splits
    block_m = decode._block_sizes(schedule, 64, 64)[0]
    out, lse = _kernel_model(plan.packed, key, value, plan.captures, 0.125, block_m)
    got, got_lse = decode._finish(plan, out, lse, True)
    want, want_lse = _dense(query, key, value, causal, 0.125)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    # without the lse (scaled_dot_product_attention's route): the same output
    torch.testing.assert_close(decode._finish(plan, out, lse, False), got, rtol=0, atol=0)
    torch.testing.assert_close(got_lse, want_lse, rtol=1e-10, atol=1e-10)


def test_one_kernel_text_per_kind():
    plain = decode._kernel_text(torch.bfloat16, 128, 128, False)
    causal = decode._kernel_text(torch.bfloat16, 128, 128, True)
    assert "block_map(%blocks" in plain and "mask_mod" not in plain
    assert "mask_mod {" in causal and "%cap0: memref<?xi32>" in causal


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"query": torch.empty(1, 8, 64)}, InvalidInputError, r"'query' to be a 4-D tensor"),
        ({"key": torch.empty(1, 3, 100, 64)}, InvalidInputError, r"Hkv dividing the query's 8"),
        (
            {"query": torch.empty(1, 8, 40, 64)},
            UnsupportedInputError,
            r"1 to 128 packed query rows",
        ),
        ({"splits": 0}, InvalidInputError, r"'splits' from 1 to the 1 K/V blocks but got 0"),
        ({"schedule": "m32"}, InvalidInputError, r"'schedule' to be one of \['flex', 'm64'\]"),
    ],
    ids=["rank", "heads", "rows", "splits", "schedule"],
)
def test_bad_arguments_are_named(change, error, message):
    args = {
        "query": torch.empty(1, 8, 4, 64, device="meta"),
        "key": torch.empty(1, 2, 100, 64, device="meta"),
        "value": torch.empty(1, 2, 100, 64, device="meta"),
    }
    args.update(change)
    with pytest.raises(error, match=message):
        tiledattn.decode_attention(**args)


def test_cpu_tensors_are_refused_by_device():
    q = torch.empty(1, 8, 1, 64, dtype=torch.bfloat16)
    k = torch.empty(1, 2, 100, 64, dtype=torch.bfloat16)
    with pytest.raises(UnsupportedInputError, match="CUDA tensors"):
        tiledattn.decode_attention(q, k, k)


def test_the_host_layers_script_parses_its_arguments_without_a_gpu(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "decode_host_layers.py"
    spec = importlib.util.spec_from_file_location("decode_host_layers", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with pytest.raises(SystemExit) as done:
        script.main(["--help"])
    assert done.value.code == 0
    assert "--calls" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        script.main(["--only", "prefill"])
    assert done.value.code == 2
    if not torch.cuda.is_available():
        assert script.main(["--calls", "3"]) == 1
        assert "needs a CUDA GPU" in capsys.readouterr().err
