"""scripts/ab_summary.py on two made-up harness runs."""

import importlib.util
import json
import pathlib

import pytest

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ab_summary.py"
_spec = importlib.util.spec_from_file_location("ab_summary", _SCRIPT)
ab_summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ab_summary)


def _row(backend, tflops, status="ok", seqlen=8192):
    return {
        "dtype": "bf16",
        "head_dim": 128,
        "causal": False,
        "seqlen_q": seqlen,
        "batch": 2,
        "heads": 16,
        "backend": backend,
        "status": status,
        "tflops": tflops,
    }


def _run(shipped, candidate, other, cudnn=600.0):
    return {
        "results": [
            _row("tiledattn", shipped),
            _row("cudnn", cudnn),
            _row("schedule:d128_n128_split_tail_bf16_d128", candidate),
            _row("schedule:d128_n128_other_bf16_d128", other),
            _row("tiledattn", None, status="n/a", seqlen=512),
        ]
    }


def test_ratios_per_run_and_verdicts(tmp_path):
    paths = []
    for i, run in enumerate([_run(700.0, 721.0, 699.0), _run(680.0, 690.0, 681.0)]):
        path = tmp_path / f"ab{i}"
        path.mkdir()
        (path / "results.json").write_text(json.dumps(run))
        paths.append(path)
    table = ab_summary.collect([ab_summary.load(p) for p in paths])
    cell = table[("bf16", 128, 0, 8192, 2, 16)]
    assert cell["d128_n128_split_tail"] == [721.0, 690.0]
    text = ab_summary.render(table, 2)
    lines = text.splitlines()
    assert lines[0] == "bf16 D=128 causal=0 S=8192 B=2 H=16"
    split = next(line for line in lines if "split_tail" in line)
    assert "1.030 1.015" in split and "faster in every run" in split
    assert "median 1.022" in split  # of 721 / 700 and 690 / 680
    assert "even" in next(line for line in lines if "other" in line)
    assert "slower in every run" in next(line for line in lines if "cudnn" in line)
    # A case with no numbers (all n/a) is left out.
    assert "S=512" not in text


def test_candidates_with_one_short_name_stay_apart():
    # new_bf16_d128 and new_bf16_d128_long both shorten to "new": merged,
    # one would overwrite the other's numbers.
    run = {
        "results": [
            _row("tiledattn", 700.0),
            _row("schedule:new_bf16_d128", 680.0),
            _row("schedule:new_bf16_d128_long", 710.0),
        ]
    }
    cell = ab_summary.collect([run])[("bf16", 128, 0, 8192, 2, 16)]
    assert cell["new_bf16_d128"] == [680.0]
    assert cell["new_bf16_d128_long"] == [710.0]
    assert "new" not in cell


def test_mixed_and_missing():
    assert ab_summary.verdict([1.02, 0.97]) == "mixed"
    assert ab_summary.median([1.02, None, 0.97, 1.00]) == 1.00
    assert ab_summary.median([None]) is None
    assert ab_summary.verdict([None, None]) == "n/a"
    assert ab_summary.ratios([700.0, None], [700.0, 650.0]) == [1.0, None]


def test_bad_input_names_the_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ab_summary.main([str(tmp_path / "missing")])
    assert "missing" in str(exit_info.value) and "results.json" in str(exit_info.value)
