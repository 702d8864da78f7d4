"""CPU tests of tiledattn.tune: shape classes, candidates, the timing loop
(a stand-in timer and kernel), the file of winners, and decode_attention's
use of them. The GPU run: test_gpu_decode.py."""

import json

import pytest
import torch

from tiledattn import decode, tune
from tiledattn.errors import CompileError, InvalidInputError


def meta(*shape):
    return torch.empty(*shape, dtype=torch.bfloat16, device="meta")


def test_a_class_spans_lengths_and_batches_up_to_a_power_of_two():
    a = tune.decode_class(meta(4, 32, 1, 128), meta(4, 8, 3000, 128), meta(4, 8, 3000, 128), False)
    b = tune.decode_class(meta(3, 32, 1, 128), meta(3, 8, 4096, 128), meta(3, 8, 4096, 128), False)
    assert a == b == "decode|meta|bfloat16|d128v128|none|rows4|kv32|sk4096"
    longer = meta(4, 8, 4097, 128)
    assert tune.decode_class(meta(4, 32, 1, 128), longer, longer, False) != a
    assert tune.decode_class(meta(4, 32, 1, 128), longer, longer, True).split("|")[4] == "causal"
    # Sq is part of the rows: speculative decoding's 4 tokens are another class
    assert "rows16" in tune.decode_class(meta(4, 32, 4, 128), longer, longer, True)


def test_candidates_cover_schedules_and_splits_up_to_one_wave():
    k = meta(1, 8, 131072, 128)
    pairs = tune.decode_candidates(meta(1, 32, 1, 128), k, k, False)
    assert pairs == [(s, n) for s in decode.SCHEDULES for n in (1, 2, 4, 8, 16)]
    k = meta(64, 8, 4096, 128)  # 512 tiles: no split
    assert tune.decode_candidates(meta(64, 32, 1, 128), k, k, False) == [
        (s, 1) for s in decode.SCHEDULES
    ]


def test_tuning_keeps_the_fastest_and_decode_uses_it(tmp_path, monkeypatch):
    calls = []

    def kernel(query, key, value, *, causal, schedule, splits, cache):
        calls.append((schedule, splits))
        if schedule == "m64" and splits == 1:
            raise CompileError("not compiled here")
        return (schedule, splits)

    def timer(fn, runs):
        schedule, splits = fn()
        return [10.0 / splits + (schedule == "m64")] * runs  # more splits, faster

    monkeypatch.setattr(decode, "decode_attention", kernel)
    q, k = meta(1, 32, 1, 128), meta(1, 8, 131072, 128)
    path = tmp_path / "tuned.json"
    seen = []
    table = tune.tune_decode(q, k, k, path=path, timer=timer, runs=3, progress=seen.append)
    assert table[0] == {"schedule": "flex", "splits": 16, "ms": 10.0 / 16}
    assert table[-1] == {"schedule": "m64", "splits": 1, "ms": None}
    assert any("left out (not compiled here)" in line for line in seen)
    kept = json.loads(path.read_text())
    assert kept == {
        tune.decode_class(q, k, k, False): {"schedule": "flex", "splits": 16, "ms": 0.625}
    }
    assert (
        tune.lookup(tune.decode_class(q, k, k, False), path)
        == kept[tune.decode_class(q, k, k, False)]
    )


def test_nothing_to_time_is_an_error(tmp_path, monkeypatch):
    def kernel(*args, **kwargs):
        raise CompileError("no compiler")

    monkeypatch.setattr(decode, "decode_attention", kernel)
    q, k = meta(1, 32, 1, 128), meta(1, 8, 1024, 128)
    with pytest.raises(InvalidInputError, match="no candidate could run"):
        tune.tune_decode(q, k, k, path=tmp_path / "t.json", timer=lambda fn, runs: [fn()])


def test_a_kept_winner_is_held_to_the_call(monkeypatch):
    # A class spans up to twice the length and batch: the kept split count
    # is cut to the call's K/V blocks and one wave.
    monkeypatch.setattr(tune, "lookup", lambda key: {"schedule": "m64", "splits": 64})
    q, k = meta(2, 32, 1, 128), meta(2, 8, 3000, 128)  # 24 blocks, 16 tiles
    assert decode._tuned(q, k, k, False, 132) == ("m64", 8)
    monkeypatch.setattr(tune, "lookup", lambda key: {"schedule": "gone", "splits": 2})
    assert decode._tuned(q, k, k, False, 132) == (None, None)
    monkeypatch.setattr(tune, "lookup", lambda key: None)
    assert decode._tuned(q, k, k, False, 132) == (None, None)


def test_the_package_ships_winners_and_a_tuned_file_comes_first(tmp_path):
    # tuned_defaults.json: the winners measured for issue 24's shapes, on
    # the GPU each key names; a cache's own tuned.json overrides them.
    shipped = json.loads(tune.SHIPPED.read_text())
    key = "decode|NVIDIA H100 80GB HBM3|bfloat16|d128v128|none|rows4|kv64|sk32768"
    assert shipped[key]["schedule"] in decode.SCHEDULES and shipped[key]["splits"] == 1
    for class_key, winner in shipped.items():
        if class_key.startswith("decode|"):
            assert winner["schedule"] in decode.SCHEDULES and winner["splits"] >= 1, class_key
    empty = tmp_path / "tuned.json"
    assert tune.lookup(key, empty) == shipped[key]
    empty.write_text(json.dumps({key: {"schedule": "m64", "splits": 2}}))
    tune._loaded.pop(empty, None)
    assert tune.lookup(key, empty) == {"schedule": "m64", "splits": 2}
    assert (
        tune.lookup("decode|another GPU|bfloat16|d128v128|none|rows4|kv64|sk32768", empty) is None
    )
