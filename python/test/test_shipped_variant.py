"""scripts/shipped_variant.py: the schedule rewrite on the real shipped files,
and the command line with a stand-in compiler. CPU only."""

import importlib.util
import pathlib
import stat

import pytest

_ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "shipped_variant", _ROOT / "scripts" / "shipped_variant.py"
)
shipped_variant = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shipped_variant)

_SHORT = (_ROOT / "python/tiledattn/schedules/sdpa_fwd_bf16_d256_short.mlir").read_text()


def test_fields_go_into_the_schedule_and_the_range_goes():
    assert "tiledattn.max_seqlen_k = 512" in _SHORT
    text = shipped_variant.add_fields(_SHORT, "hold_packed = true, exp2_on_fma = 8")
    schedule = text[text.index("#tiledattn.schedule<") : text.index(">)")]
    assert schedule.endswith("consumer_regs = 232, hold_packed = true, exp2_on_fma = 8")
    assert "seqlen_k" not in text
    # Everything else is untouched.
    assert text.replace(", hold_packed = true, exp2_on_fma = 8", "") == _SHORT.replace(
        "\n    attributes {tiledattn.max_seqlen_k = 512 : i64}", ""
    )


def test_no_fields_give_the_shipped_schedule_without_its_range():
    text = shipped_variant.add_fields(_SHORT, " ")
    assert text == _SHORT.replace("\n    attributes {tiledattn.max_seqlen_k = 512 : i64}", "")
    assert "seqlen_k" not in text


def test_a_range_alone_goes_with_its_attributes():
    text = "func.func @f()\n    attributes {tiledattn.min_seqlen_k = 2048 : i64} {\n}\n"
    assert shipped_variant._drop_range(text) == "func.func @f() {\n}\n"


def test_a_field_the_schedule_sets_is_refused():
    with pytest.raises(ValueError, match="field persistent: the shipped schedule already sets it"):
        shipped_variant.add_fields(_SHORT, "persistent = false")


def test_a_malformed_field_is_refused():
    with pytest.raises(ValueError, match="expected NAME = VALUE"):
        shipped_variant.add_fields(_SHORT, "hold_packed")


def test_the_command_line_compiles_each_bundle(tmp_path, monkeypatch, capsys):
    seen = tmp_path / "seen"
    tool = tmp_path / "tiledattn-compile"
    tool.write_text(f'#!/bin/sh\ncat "$1" >> {seen}\nmkdir -p "$3"\necho "compiled -> $3"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("TILEDATTN_COMPILE", str(tool))
    out = tmp_path / "out"
    argv = ["wait_free = 1", "bf16_d256_short", "f16_d128", "--tag", "t", "--out", str(out)]
    assert shipped_variant.main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == ["t_bf16_d256_short", "t_f16_d128"]
    assert seen.read_text().count("wait_free = 1>") == 2
    assert "[2/2] t_f16_d128: compiled" in capsys.readouterr().out


def test_an_unknown_bundle_names_the_shipped_ones(tmp_path, capsys):
    assert shipped_variant.main(["a = 1", "bf16_d96", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no shipped bundle 'bf16_d96'" in err and "bf16_d256_short" in err
