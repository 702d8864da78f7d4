"""CPU tests of the benchmark harness (tiledattn.bench); GPU-only parts skip."""

import collections
import dataclasses
import io
import json
import math
import re
import sys
import types

import bundles
import pytest
import torch
import torch.nn.functional as F

from tiledattn import registry
from tiledattn.bench import cli, measure, report, sweep
from tiledattn.bench.backends import (
    Backend,
    Case,
    Prepared,
    Unsupported,
    classify_kernels,
    make_backends,
)
from tiledattn.bench.progress import SimpleBar, progress_bar

# --- arguments and presets ---------------------------------------------------


def test_paper_preset_is_the_fa_grid(fake_kernel_dir):  # no D=256 kernel there
    args = cli.parse_args(["--preset", "paper"])
    cases = cli.make_cases(args)
    assert args.seqlens == [512, 1024, 2048, 4096, 8192, 16384]
    assert args.head_dims == [64, 128]
    assert sorted(args.dtypes) == ["bf16", "fp16"]
    assert args.causal == [False, True]
    assert len(cases) == 6 * 2 * 2 * 2
    for case in cases:  # B*S = 16k tokens, H*D = 2048
        assert case.batch * case.seqlen_q == 16384
        assert case.heads * case.head_dim == 2048
        assert case.seqlen_q == case.seqlen_k


def test_help_prints(capsys):
    # argparse formats help with %: a literal % in a help text (the masks'
    # "25% of the keys") made --help raise TypeError instead of printing.
    with pytest.raises(SystemExit) as stop:
        cli.parse_args(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: python -m tiledattn.bench" in out
    assert "25% of the keys" in out


def test_quick_preset():
    cases = cli.make_cases(cli.parse_args([]))
    assert {(c.seqlen_q, c.head_dim, c.dtype) for c in cases} == {
        (s, d, "bf16") for s in (512, 2048) for d in (64, 128)
    }
    assert {c.causal for c in cases} == {False, True}


def test_axes_override_the_preset():
    args = cli.parse_args(
        [
            "--preset",
            "paper",
            "--seqlens",
            "1024,4096",
            "--head-dims",
            "64",
            "--dtypes",
            "float16",
            "--causal",
            "1",
            "--batch",
            "3",
            "--heads",
            "5",
        ]
    )
    cases = cli.make_cases(args)
    assert [(c.seqlen_q, c.head_dim, c.dtype, c.causal) for c in cases] == [
        (1024, 64, "fp16", True),
        (4096, 64, "fp16", True),
    ]
    assert {(c.batch, c.heads) for c in cases} == {(3, 5)}


def test_total_tokens_and_hidden():
    args = cli.parse_args(
        [
            "--seqlens",
            "32768",
            "--head-dims",
            "128",
            "--total-tokens",
            "8192",
            "--hidden",
            "1024",
        ]
    )
    case = cli.make_cases(args)[0]
    assert (case.batch, case.heads) == (1, 8)  # B never drops to 0


def test_backends_and_schedules():
    args = cli.parse_args(["--backends", "flash,cudnn", "tiledattn"])
    assert args.backends == ["flash", "cudnn", "tiledattn"]
    names = [b.name for b in make_backends(args.backends, ["dir/my.mlir"])]
    assert names == ["tiledattn", "flash", "cudnn", "schedule:my"]
    assert len(cli.parse_args([]).backends) == 8


@pytest.mark.parametrize(
    "argv, why",
    [
        (["--backends", "nope"], r"nope \(expected one of tiledattn, .*, all\)"),
        (["--dtypes", "fp8"], r"fp8 \(expected fp16 or bf16\)"),
        (["--causal", "2"], r"2 \(expected 0/1\)"),
    ],
    ids=["backends", "dtypes", "causal"],
)
def test_bad_arguments_exit(argv, why, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args(argv)
    assert exit_info.value.code == 2  # argparse's usage error
    flag, value = argv
    err = capsys.readouterr().err
    assert re.search(rf"error: argument {flag}: bad value in '{value}': {why}", err), err


@pytest.mark.parametrize("preset", ["paper", "full"])
def test_presets_add_d256_only_with_a_kernel(fake_kernel_dir, preset):
    assert 256 not in cli.parse_args(["--preset", preset]).head_dims
    bundles.make_bundle(fake_kernel_dir, "bf16", 256, False)
    registry.refresh()
    args = cli.parse_args(["--preset", preset])
    assert args.head_dims == [64, 128, 256]
    assert (32768 in args.seqlens) == (preset == "full")


def test_dry_run_lists_cases_without_a_gpu(capsys):
    assert cli.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "8 cases" in out and "bf16 D128 causal S2048 B8 H16" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_sweep_without_gpu_says_so(capsys, tmp_path):
    assert cli.main(["--out", str(tmp_path / "r")]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


# --- FLOPs and statistics ----------------------------------------------------


def test_flops_convention_and_causal_half():
    assert measure.flops(1, 1, 2, 2, 1, False) == 16
    assert measure.flops(1, 1, 2, 2, 1, True) == 8
    full = measure.flops(1, 16, 16384, 16384, 128, False)
    assert full == 4 * 16 * 16384 * 16384 * 128
    assert measure.flops(1, 16, 16384, 16384, 128, True) * 2 == full
    assert measure.tflops(2e12, 1000.0) == pytest.approx(2.0)
    assert math.isnan(measure.tflops(1e12, 0))


def test_summarize_median_and_spread():
    s = measure.summarize([float(x) for x in range(1, 101)])
    assert s["ms_median"] == pytest.approx(50.5)
    assert s["ms_p10"] == pytest.approx(10.9)
    assert s["ms_p90"] == pytest.approx(90.1)
    assert s["runs"] == 100


# --- reference and correctness check (CPU, small) ----------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_chunked_reference_matches_sdpa(causal, monkeypatch):
    monkeypatch.setattr(measure, "REF_CHUNK_BYTES", 8 * 37 * 5)  # force chunking
    q, k, v = (torch.randn(2, 3, 37, 8, dtype=torch.float64) for _ in range(3))
    ref = measure.attention_chunked(
        q, k, v, causal, 8**-0.5, torch.float64, torch.float64, torch.float64
    )
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(ref, expected)


def test_reference_check_passes_good_and_fails_bad():
    q, k, v = (torch.randn(1, 2, 64, 16, dtype=torch.bfloat16) for _ in range(3))
    ref = measure.Reference(q, k, v, True, 0.25)
    good = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert ref.check(good)[0]
    ok, err, why = ref.check(good + 0.5)
    assert not ok and err > ref.tol and "tol" in why
    nan = good.clone()
    nan[0, 0, 0, 0] = float("nan")
    assert not ref.check(nan)[0]
    assert not ref.check(good[:, :1])[0]


# --- one case end to end on the CPU -----------------------------------------


class _Fake(Backend):
    def __init__(self, name, fn=None, error=None, slow=False):
        self.name, self.fn, self.error, self.slow = name, fn, error, slow

    def prepare(self, case, q, k, v):
        if self.error:
            raise self.error
        return Prepared(lambda: self.fn(q, k, v))


def test_run_case_checks_before_timing_and_never_raises():
    def good(q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    def wrong(q, k, v):
        return torch.zeros_like(q)

    backends = [
        _Fake("good", good),
        _Fake("wrong", wrong),
        _Fake("unsupported", error=Unsupported("no kernel for D=16")),
        _Fake("oom", error=torch.OutOfMemoryError("CUDA out of memory.")),
        _Fake("broken", error=ValueError("bug")),
        _Fake("slow", good, slow=True),
        *make_backends(["sdpa_auto", "math", "eager"]),
    ]
    settings = sweep.Settings(runs=4, slow_runs=2, rounds=2, warmup=1)
    settings.slow_max_seqlen = 32
    case = Case("bf16", 16, False, 64, 64, 1, 2)
    rows = {r["backend"]: r for r in sweep.run_case(case, backends, settings, lambda: None, "cpu")}
    assert rows["good"]["status"] == "ok"
    assert rows["good"]["runs"] == 4 and rows["good"]["tflops"] > 0
    assert rows["wrong"]["status"] == "WRONG" and "runs" not in rows["wrong"]
    assert rows["unsupported"]["status"] == "UNSUPPORTED"
    assert "D=16" in rows["unsupported"]["reason"]
    assert rows["oom"]["status"] == "OOM"
    assert rows["broken"]["status"] == "ERROR"
    assert rows["slow"]["status"] == "SKIPPED" and "S=32" in rows["slow"]["reason"]
    assert rows["sdpa_auto"]["status"] == "ok"
    assert rows["sdpa_auto"]["chosen"] in ("FLASH_ATTENTION", "MATH")
    for name in ("math", "eager"):
        assert rows[name]["status"] == "SKIPPED"


def _sweep_argv(out):
    return (
        "--seqlens 48,64 --head-dims 16 --dtypes bf16 --causal 0 --batch 1 --heads 2 "
        "--runs 2 --rounds 1 --warmup 0 --slow-max-seqlen 32 --flush-mb 0 "
        f"--no-gpu-state --no-plots --no-tqdm --out {out}"
    ).split()


@pytest.mark.parametrize(
    "names, status",
    [
        (["good"], 0),
        (["good", "unsupported", "oom", "slow"], 0),
        (["good", "wrong"], 1),
        (["good", "broken"], 1),
        (["wrong", "broken", "unsupported"], 1),
    ],
    ids=["ok", "limits", "wrong", "error", "both"],
)
def test_sweep_exit_status_fails_on_wrong_or_error(monkeypatch, tmp_path, capsys, names, status):
    # The whole sweep (cli.main -> run_sweep -> sweep.run_case) on the CPU,
    # with stand-in backends: a WRONG or ERROR row must fail the run.
    from tiledattn.bench import backends, env

    def good(q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    fakes = {
        "good": _Fake("good", good),
        "wrong": _Fake("wrong", lambda q, k, v: good(q, k, v) + 0.5),
        "broken": _Fake("broken", error=ValueError("a bug")),
        "unsupported": _Fake("unsupported", error=Unsupported("no kernel for D=16")),
        "oom": _Fake("oom", error=torch.OutOfMemoryError("CUDA out of memory.")),
        "slow": _Fake("slow", good, slow=True),
    }
    real_run_case = sweep.run_case
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(backends, "make_backends", lambda *a: [fakes[n] for n in names])
    monkeypatch.setattr(env, "collect", lambda argv: {"command": " ".join(argv)})
    monkeypatch.setattr(sweep, "run_case", lambda *a, **kw: real_run_case(*a, **kw, device="cpu"))
    out = tmp_path / "sweep"
    assert cli.main(_sweep_argv(out)) == status
    data = json.loads((out / "results.json").read_text())
    assert data["complete"] and len(data["results"]) == 2 * len(names)
    expected = {
        "good": "ok",
        "wrong": "WRONG",
        "broken": "ERROR",
        "unsupported": "UNSUPPORTED",
        "oom": "OOM",
        "slow": "SKIPPED",
    }
    assert {(r["backend"], r["status"]) for r in data["results"]} == {
        (n, expected[n]) for n in names
    }
    err = capsys.readouterr().err
    for name in names:
        failing = expected[name] in ("WRONG", "ERROR")
        line = f"tiledattn.bench: {name} {expected[name]} on bf16 D16 full S64 B1 H2: "
        assert (line in err) == failing, err
    failed = sum(expected[n] in ("WRONG", "ERROR") for n in names)
    summary = f"tiledattn.bench: {2 * failed} of {2 * len(names)} rows WRONG or ERROR"
    assert (summary in err) == bool(status), err


def test_run_case_times_slow_backends_below_the_limit():
    settings = sweep.Settings(runs=6, slow_runs=2, rounds=3, warmup=0)
    case = Case("fp16", 16, True, 32, 32, 1, 1)
    rows = sweep.run_case(case, make_backends(["math", "eager"]), settings, lambda: None, "cpu")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert [r["runs"] for r in rows] == [3, 3]  # ceil(2 / 3) per round


def test_flag_slow_flex():
    rows = {
        "cudnn": {"status": "ok", "tflops": 400.0},
        "flex": {"status": "ok", "tflops": 17.0},
    }
    sweep.flag_slow_flex(rows)
    assert rows["flex"]["flags"] == "flex-slow"
    rows["flex"] = {"status": "ok", "tflops": 380.0}
    sweep.flag_slow_flex(rows)
    assert "flags" not in rows["flex"]


def test_classify_kernels():
    assert classify_kernels(["cudnn_generated_fort_native_sdpa_sm90"]) == ("CUDNN_ATTENTION")
    assert classify_kernels(["void pytorch_flash::flash_fwd_kernel<...>"]) == ("FLASH_ATTENTION")
    assert classify_kernels(["fmha_cutlassF_bf16_aligned_64x64"]) == ("EFFICIENT_ATTENTION")
    assert classify_kernels(["ampere_bf16_gemm", "softmax_warp_forward"]) == "MATH"


def test_tiledattn_backend_unsupported_without_kernel(fake_kernel_dir):
    (backend,) = make_backends(["tiledattn"])
    q = torch.empty(1, 1, 8, 256, dtype=torch.bfloat16)
    with pytest.raises(Unsupported, match="head_dim=256"):
        backend.prepare(Case("bf16", 256, False, 8, 8, 1, 1), q, q, q)
    prepared = backend.prepare(Case("fp16", 64, True, 8, 8, 1, 1), q, q, q)
    assert prepared.info["kernel"] == "sdpa_fwd_f16_d64_causal"


# --- reports from recorded results -------------------------------------------


def _row(dtype, d, causal, s, backend, tflops=None, status="ok", **extra):
    row = {
        "dtype": dtype,
        "head_dim": d,
        "causal": causal,
        "seqlen_q": s,
        "seqlen_k": s,
        "batch": 16384 // s,
        "heads": 2048 // d,
        "backend": backend,
        "status": status,
        "reason": extra.pop("reason", ""),
        **extra,
    }
    if tflops is not None:
        row.update(tflops=tflops, tflops_p10=tflops * 0.95, tflops_p90=tflops * 1.02)
        row["ms_median"] = 1.0
    return row


@pytest.fixture
def fake_results(tmp_path):
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            for s in (512, 2048, 8192):
                scale = s / 8192
                rows += [
                    _row("bf16", d, causal, s, "tiledattn", 500 * scale + 100),
                    _row("bf16", d, causal, s, "cudnn", 400 * scale + 100),
                    _row(
                        "bf16",
                        d,
                        causal,
                        s,
                        "sdpa_auto",
                        390 * scale + 100,
                        chosen="CUDNN_ATTENTION",
                        profiled="CUDNN_ATTENTION",
                    ),
                    _row("bf16", d, causal, s, "flash", 300 * scale),
                    _row(
                        "bf16",
                        d,
                        causal,
                        s,
                        "eager",
                        status="WRONG",
                        reason="max|out-ref| = 1 > tol 0.01",
                    ),
                    _row(
                        "bf16",
                        d,
                        causal,
                        s,
                        "flex",
                        status="UNSUPPORTED",
                        reason="no flex",
                        compile_s=2.5,
                    ),
                ]
    data = {
        "schema": 1,
        "env": {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "command": "x"},
        "results": rows,
    }
    path = tmp_path / "rec" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


def test_markdown_table_from_recorded_results(fake_results):
    table = report.markdown_table(report.load_json(fake_results))
    lines = [line for line in table.splitlines() if line.startswith("| bf16")]
    assert len(lines) == 12
    header = next(line for line in table.splitlines() if line.startswith("| dtype"))
    assert "tiledattn / best" in header and "auto chose" in header
    # S=8192 non-causal D64: tiledattn 600 vs best baseline cudnn 500 -> 1.20
    row = next(line for line in lines if "| 64 | 0 | 8192 |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-1] == "1.20"
    assert cells[-2] == "cudnn 500"
    assert "WRONG" in cells and "n/a" in cells and "CUDNN" in cells
    assert "eager WRONG: max|out-ref|" in table
    assert "flex: 12 compiles" in table


def test_plots_are_written(fake_results, tmp_path):
    pytest.importorskip("matplotlib")
    paths = report.plot(report.load_json(fake_results), tmp_path / "plots")
    assert paths
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_from_json_regenerates_everything(fake_results, tmp_path, capsys):
    out = tmp_path / "again"
    assert cli.main(["--from-json", str(fake_results), "--out", str(out)]) == 0
    for name in ("results.json", "results.csv", "results.md"):
        assert (out / name).is_file()
    assert (out / "results.csv").read_text().startswith("dtype,head_dim,causal")
    assert "| tiledattn |" in capsys.readouterr().out


def _scaled(path, tmp_path, name, factor, backend="tiledattn", status=None):
    data = json.loads(path.read_text())
    for row in data["results"]:
        if row["backend"] == backend and row["status"] == "ok":
            row["tflops"] *= factor
            if status:
                row["status"] = status
    out = tmp_path / name
    out.write_text(json.dumps(data))
    return str(out)


def test_compare_flags_a_regression(fake_results, tmp_path, capsys):
    new = _scaled(fake_results, tmp_path, "slower.json", 0.90)
    assert cli.main(["--compare", str(fake_results), new]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "12 regressions" in out


def test_compare_passes_noise_within_threshold(fake_results, tmp_path, capsys):
    new = _scaled(fake_results, tmp_path, "noise.json", 0.97)
    assert cli.main(["--compare", str(fake_results), new]) == 0
    assert "REGRESSION" not in capsys.readouterr().out
    faster = _scaled(fake_results, tmp_path, "faster.json", 1.2)
    assert cli.main(["--compare", str(fake_results), faster]) == 0


def test_compare_threshold_and_broken_rows(fake_results, tmp_path, capsys):
    new = _scaled(fake_results, tmp_path, "slower.json", 0.90)
    argv = ["--compare", str(fake_results), new, "--threshold", "0.15"]
    assert cli.main(argv) == 0
    wrong = _scaled(fake_results, tmp_path, "wrong.json", 1.0, status="WRONG")
    assert cli.main(["--compare", str(fake_results), wrong]) == 1
    assert "was ok" in capsys.readouterr().out


# --- progress bar ------------------------------------------------------------


def test_simple_progress_bar():
    stream = io.StringIO()
    bar = progress_bar(3, use_tqdm=False, stream=stream)
    assert isinstance(bar, SimpleBar)
    for i in range(3):
        bar.set_description(f"case {i}")
        bar.update()
    bar.close()
    text = stream.getvalue()
    assert "3/3" in text and "case 2" in text and "#" * 30 in text
    assert text.endswith("\n")


def test_progress_bar_prefers_tqdm_when_installed(monkeypatch):
    made = []

    class FakeTqdm:
        def __init__(self, **kwargs):
            made.append(kwargs)

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    stream = io.StringIO()
    bar = progress_bar(2, desc="cases", stream=stream)
    assert isinstance(bar, FakeTqdm)
    assert made == [{"total": 2, "desc": "cases", "file": stream}]
    assert isinstance(progress_bar(2, use_tqdm=False, stream=stream), SimpleBar)


def test_progress_bar_without_tqdm_is_the_plain_bar(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    stream = io.StringIO()
    bar = progress_bar(2, stream=stream)
    assert isinstance(bar, SimpleBar)
    bar.update(2)
    bar.close()
    assert "2/2" in stream.getvalue()


# --- GPU only ----------------------------------------------------------------


@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs a CUDA GPU: runs a tiny real sweep (torch SDPA, eager)",
)
def test_tiny_gpu_sweep(tmp_path):
    out = tmp_path / "gpu"
    argv = (
        "--seqlens 256 --head-dims 64 --dtypes bf16 --causal 0,1 --backends "
        "sdpa_auto flash eager tiledattn --runs 3 --rounds 1 --warmup 1 "
        f"--no-plots --out {out}"
    ).split()
    assert cli.main(argv) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["complete"] and data["env"]["gpu"]
    assert len(data["results"]) == 2 * 4
    for row in data["results"]:
        what = f"{row['backend']} causal={row['causal']}: {row['status']} {row['reason']}"
        if row["backend"] == "flash":  # torch's flash kernel may be absent from a build
            assert row["status"] in ("ok", "UNSUPPORTED"), what
        else:
            assert row["status"] == "ok", what
            assert row["max_err"] <= row["tol"] and row["tflops"] > 0, what
        assert row.get("peak_mem_bytes", 1) >= 0, what
    tiledattn_rows = [r for r in data["results"] if r["backend"] == "tiledattn"]
    assert [(r["causal"], r["kernel"]) for r in tiledattn_rows] == [
        (causal, registry.select(torch.bfloat16, 64, causal, seqlen_k=256).name)
        for causal in (False, True)
    ]


def test_git_commit_prefers_the_variable(monkeypatch):
    from tiledattn.bench import env

    monkeypatch.setenv("TILEDATTN_GIT_COMMIT", "abc1234")
    assert env.git_commit() == "abc1234"
    monkeypatch.delenv("TILEDATTN_GIT_COMMIT")
    assert env.git_commit() != "abc1234"


@pytest.mark.parametrize(
    "smi, expected",
    [
        ("1755, 690.12\n", {"sm_clock_mhz": 1755.0, "power_w": 690.12}),
        ("1980, [N/A]\n", {}),
        (None, {}),
    ],
)
def test_gpu_state_parses_nvidia_smi(monkeypatch, smi, expected):
    from tiledattn.bench import env

    calls = []
    monkeypatch.setattr(env, "_run", lambda args: calls.append(args) or smi)
    assert env.gpu_state() == expected
    assert "--query-gpu=clocks.sm,power.draw" in calls[0]


def test_run_case_records_gpu_state_after_the_last_round(monkeypatch):
    from tiledattn.bench import env

    samples = iter({"sm_clock_mhz": 1500.0 + i, "power_w": 600.0} for i in range(10))
    monkeypatch.setattr(env, "gpu_state", lambda: next(samples))
    good = _Fake("good", lambda q, k, v: F.scaled_dot_product_attention(q, k, v))
    case = Case("bf16", 16, False, 64, 64, 1, 2)
    settings = sweep.Settings(runs=4, rounds=2, warmup=0)
    (row,) = sweep.run_case(case, [good], settings, lambda: None, "cpu")
    assert row["sm_clock_mhz"] == 1500.0  # one sample: the last round's only
    settings.sample_gpu_state = False
    (row,) = sweep.run_case(case, [good], settings, lambda: None, "cpu")
    assert "sm_clock_mhz" not in row
    assert cli.parse_args(["--no-gpu-state"]).sample_gpu_state is False


def test_markdown_lists_gpu_state_when_sampled(fake_results):
    data = report.load_json(fake_results)
    assert "## SM clock" not in report.markdown_table(data)
    for row in data["results"]:
        if row["backend"] == "tiledattn" and row["seqlen_q"] == 8192:
            row.update(sm_clock_mhz=1605.0, power_w=699.6)
    table = report.markdown_table(data)
    assert "## SM clock (MHz) and power (W)" in table
    lines = [line for line in table.split("## SM clock")[1].splitlines() if "| 8192 |" in line]
    assert lines and all("1605 / 700" in line for line in lines)
    assert table.split("## SM clock")[1].splitlines()[2].endswith("| S | tiledattn |")


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 7])
def test_round_order_balances_positions_and_neighbours(count):
    names = [f"b{i}" for i in range(count)]
    cycle = count if count % 2 == 0 else 2 * count
    rounds = [sweep.round_order(names, r) for r in range(cycle)]
    assert all(sorted(order) == sorted(names) for order in rounds)
    positions = collections.Counter((n, i) for order in rounds for i, n in enumerate(order))
    assert len(positions) == count * count and len(set(positions.values())) == 1
    before = collections.Counter(
        (order[i - 1], order[i]) for order in rounds for i in range(1, count)
    )
    assert len(before) == count * (count - 1) and len(set(before.values())) == 1
    # From 3 backends no backend runs twice in a row, across rounds too.
    if count >= 3:
        sequence = [n for r in range(2 * cycle + 1) for n in sweep.round_order(names, r)]
        assert all(a != b for a, b in zip(sequence, sequence[1:]))


def test_round_order_of_nothing_is_empty():
    assert sweep.round_order([], 3) == []


def test_run_case_runs_one_full_balanced_cycle_by_default():
    calls = []

    def tagged(name):
        def fn(q, k, v):
            calls.append(name)
            return F.scaled_dot_product_attention(q, k, v)

        return _Fake(name, fn)

    backends = [tagged(n) for n in ("a", "b", "c")]
    settings = sweep.Settings(runs=6, warmup=0)
    assert settings.rounds == 0
    case = Case("bf16", 16, False, 64, 64, 1, 2)
    rows = sweep.run_case(case, backends, settings, lambda: None, "cpu")
    assert all(row["runs"] == 6 for row in rows)  # 6 rounds (3 is odd) of 1
    # Round 0 times each once; later rounds warm up once first.
    expected = [
        n
        for r in range(6)
        for n in sweep.round_order(["a", "b", "c"], r)
        for _ in range(1 + (r > 0))
    ]
    assert calls[len(calls) - len(expected) :] == expected


def test_score_mod_cases_apply_it_in_the_reference_and_refuse_fused_sdpa():
    # --score-mod: the float64 reference applies the score_mod (FlexAttention's
    # signature, batch and head from the flattened group), fused SDPA and the
    # eager backend report n/a, and the case's label names it.
    from tiledattn.bench.backends import Case, Eager, Sdpa, Unsupported
    from tiledattn.bench.cli import make_cases, parse_args
    from tiledattn.bench.measure import attention_chunked
    from tiledattn.bench.score_mods import alibi, softcap30

    args = parse_args(["--score-mod", "alibi", "--seqlens", "64", "--head-dims", "16"])
    cases = make_cases(args)
    assert {c.score_mod for c in cases} == {"alibi"} and "alibi" in cases[0].label()
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 40, 16, dtype=torch.float64) for _ in range(3))
    for score_mod in (alibi, softcap30):
        got = attention_chunked(
            q, k, v, True, 0.5, torch.float64, torch.float64, torch.float64, score_mod
        )
        scores = q @ k.transpose(-1, -2) * 0.5
        b = torch.arange(2)[:, None, None, None]
        h = torch.arange(3)[None, :, None, None]
        i = torch.arange(40)[:, None]
        j = torch.arange(40)[None, :]
        scores = score_mod(scores, b, h, i, j).masked_fill(j > i, float("-inf"))
        want = torch.softmax(scores, dim=-1) @ v
        assert torch.allclose(got, want, atol=1e-12), score_mod.__name__
    case = Case("bf16", 16, False, 64, 64, 1, 2, "softcap30")
    for backend in (Sdpa("cudnn", "CUDNN_ATTENTION"), Eager()):
        with pytest.raises(Unsupported, match="cannot apply score_mod softcap30"):
            backend.prepare(case, q, k, v)


@pytest.mark.parametrize("name", ["key_padding", "window1024", "documents4"])
def test_mask_cases_agree_on_what_they_keep(name):
    # --mask: the mask_mod FlexAttention takes, the dense mask SDPA takes and
    # the reference's masked score function keep the same pairs, and the
    # FLOPs count those pairs only.
    from torch.nn.attention.flex_attention import create_mask

    from tiledattn.bench.backends import Case
    from tiledattn.bench.masks import MASKS

    mask = MASKS[name]
    b, s = 2, 2048
    dense = mask.dense(b, s, "cpu").expand(b, 1, s, s)
    from_mod = create_mask(mask.mask_mod(b, s, "cpu"), b, 1, s, s, device="cpu")
    assert torch.equal(dense, from_mod)
    kept = int(dense.sum())
    assert mask.kept_pairs(b, s) == kept
    assert measure.flops(b, 16, s, s, 128, False, mask) == 4 * 16 * kept * 128
    share = kept / (b * s * s)
    expected = {"key_padding": 0.75, "window1024": 0.375, "documents4": 0.14}[name]
    assert share == pytest.approx(expected, abs=0.01), share
    case = Case("bf16", 16, False, 64, 64, 2, 3, mask=name)
    scores = torch.zeros(6, 64, 64, dtype=torch.float64)
    group = torch.arange(6)[:, None, None]
    masked = case.masked_score_mod("cpu")(
        scores, group // 3, group % 3, torch.arange(64)[None, :, None], torch.arange(64)
    )
    want = mask.dense(2, 64, "cpu").expand(2, 3, 64, 64).reshape(6, 64, 64)
    assert torch.equal(torch.isfinite(masked), want)


def test_mask_cases_are_not_causal_and_refused_where_no_mask_is_taken():
    from tiledattn.bench.backends import Case, Schedule, Sdpa, Unsupported
    from tiledattn.bench.cli import make_cases, parse_args

    args = parse_args(["--mask", "window1024", "--seqlens", "64", "--head-dims", "16"])
    cases = make_cases(args)
    assert {(c.mask, c.causal) for c in cases} == {("window1024", False)}
    assert "window1024" in cases[0].label()
    case = Case("bf16", 16, False, 64, 64, 1, 2, mask="documents4")
    q = torch.empty(1, 2, 64, 16)
    for backend in (Sdpa("flash", "FLASH_ATTENTION"), Schedule("x.mlir")):
        with pytest.raises(Unsupported, match="takes no mask"):
            backend.prepare(case, q, q, q)


def _flash_attention_semantics():
    """A float64 stand-in for flash_attn.cute.interface with FlashAttention's
    documented semantics (bottom-right causal, window_size, softcap, varlen
    by cu_seqlens), written from its docs, not from the harness's masks."""

    def one(q, k, v, causal, softcap, window):  # (S, H, D) of one sequence
        sq, sk = q.shape[0], k.shape[0]
        scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
        if softcap:
            scores = softcap * torch.tanh(scores / softcap)
        i = torch.arange(sq)[:, None] + sk - sq
        j = torch.arange(sk)[None, :]
        left, right = window
        right = 0 if causal else right
        keep = torch.ones(sq, sk, dtype=torch.bool)
        if right is not None:
            keep &= j <= i + right
        if left is not None:
            keep &= j >= i - left
        probs = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
        return torch.einsum("hqk,khd->qhd", probs, v)

    def flash_attn_func(q, k, v, causal=False, softcap=0.0, window_size=(None, None)):
        out = torch.stack([one(*t, causal, softcap, window_size) for t in zip(q, k, v)])
        return out, None

    def flash_attn_varlen_func(
        q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal=False, softcap=0.0
    ):
        cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
        parts = [
            one(q[a:b], k[c:d], v[c:d], causal, softcap, (None, None))
            for a, b, c, d in zip(cq, cq[1:], ck, ck[1:])
        ]
        return torch.cat(parts), None

    interface = types.SimpleNamespace(
        flash_attn_func=flash_attn_func, flash_attn_varlen_func=flash_attn_varlen_func
    )
    return types.SimpleNamespace(interface=interface)


@pytest.mark.parametrize(
    "causal, score_mod, mask",
    [
        (False, "none", "none"),
        (True, "none", "none"),
        (True, "softcap30", "none"),
        (False, "none", "window1024"),
        (False, "none", "key_padding"),
        (False, "none", "documents4"),
    ],
)
def test_fa4_backend_maps_each_case_to_flash_attentions_arguments(
    monkeypatch, causal, score_mod, mask
):
    # FA4 runs the harness's cases through its own arguments (causal,
    # softcap, window_size, varlen); with FlashAttention's semantics those
    # must compute the harness's float64 reference.
    from tiledattn.bench.backends import Case, make_backends
    from tiledattn.bench.measure import attention_chunked

    cute = _flash_attention_semantics()
    monkeypatch.setitem(sys.modules, "flash_attn", types.SimpleNamespace(cute=cute))
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    seqlen = 1280 if mask == "window1024" else 256
    case = Case("bf16", 16, causal, seqlen, seqlen, 2, 2, score_mod, mask)
    (fa4,) = make_backends(["fa4"])
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, seqlen, 16, dtype=torch.float64) for _ in range(3))
    got = fa4.prepare(case, q, k, v).fn()
    modded = case.masked_score_mod("cpu")
    want = attention_chunked(
        q, k, v, causal, 0.25, torch.float64, torch.float64, torch.float64, modded
    )
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)


def test_fa4_backward_is_taken_from_its_own_layout_and_checked_in_the_harnesss(monkeypatch):
    # FA4 runs on (B, S, H, D) copies; the backward mode differentiates with
    # respect to those (Prepared.bshd_leaves), with dO in that layout, so the
    # copies' transposes are not timed, and views the gradients back for the
    # float64 check.
    from tiledattn.bench.backends import Case, make_backends
    from tiledattn.bench.sweep import _Gradients

    cute = _flash_attention_semantics()
    monkeypatch.setitem(sys.modules, "flash_attn", types.SimpleNamespace(cute=cute))
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    case = Case("bf16", 16, True, 96, 96, 2, 2)
    (fa4,) = make_backends(["fa4"])
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 96, 16, dtype=torch.float64, requires_grad=True) for _ in range(3))
    prepared = fa4.prepare(case, q, k, v)
    assert [t.shape for t in prepared.bshd_leaves] == [(2, 96, 2, 16)] * 3
    assert all(t.is_leaf and t.requires_grad for t in prepared.bshd_leaves)
    ok, error, why, timed = _Gradients(case, q, k, v).check_and_time(prepared, prepared.fn(), "bwd")
    assert ok, why
    assert error < 1e-9
    assert [g.shape for g in timed.fn()] == [(2, 96, 2, 16)] * 3
    # A backend on the harness's own inputs differentiates those.
    plain = dataclasses.replace(prepared, bshd_leaves=())
    q2, k2, v2 = (t.detach().requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(q2, k2, v2, is_causal=True)
    ok, _, why, timed = _Gradients(case, q2, k2, v2).check_and_time(plain, out, "bwd")
    assert ok, why
    assert [g.shape for g in timed.fn()] == [(2, 2, 96, 16)] * 3


def test_fa4_backend_is_unsupported_where_not_installed_or_not_expressible(monkeypatch):
    from tiledattn.bench.backends import Case, Unsupported, make_backends

    (fa4,) = make_backends(["fa4"])
    q = torch.empty(1, 2, 64, 16)
    monkeypatch.setitem(sys.modules, "flash_attn", None)
    with pytest.raises(Unsupported, match="FlashAttention-4"):
        fa4.prepare(Case("bf16", 16, False, 64, 64, 1, 2), q, q, q)
    cute = _flash_attention_semantics()
    monkeypatch.setitem(sys.modules, "flash_attn", types.SimpleNamespace(cute=cute))
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    with pytest.raises(Unsupported, match="cannot apply score_mod alibi"):
        fa4.prepare(Case("bf16", 16, False, 64, 64, 1, 2, "alibi"), q, q, q)


def test_decode_preset_is_issue_24s_shapes_with_bandwidth():
    args = cli.parse_args(["--preset", "decode"])
    cases = cli.make_cases(args)
    assert [(c.batch, c.seqlen_q, c.seqlen_k) for c in cases] == [
        (64, 1, 4096),
        (8, 1, 32768),
        (1, 1, 131072),
        (64, 4, 4096),
    ]
    assert {(c.heads, c.kv_heads, c.head_dim, c.dtype, c.causal) for c in cases} == {
        (32, 8, 128, "bf16", False)
    }
    assert args.metric == "kv_tb_s"
    assert cases[0].kv_bytes == 2 * 64 * 8 * 4096 * 128 * 2
    assert cases[0].label() == "bf16 D128 full Sq1 Sk4096 B64 H32/8"
    # --seqlens replaces the preset's shapes with the usual grid
    args = cli.parse_args(["--preset", "decode", "--seqlens", "512"])
    assert [(c.seqlen_q, c.heads, c.kv_heads) for c in cli.make_cases(args)] == [(512, 32, 8)]


def test_grouped_query_cases_run_checked_and_report_bandwidth():
    # A decode-shaped GQA case on the CPU: the float64 reference repeats
    # K/V per group, the backends get fewer K/V heads, and the row carries
    # its K+V bandwidth, which a decode table shows.
    settings = sweep.Settings(runs=2, slow_runs=2, rounds=1, warmup=0, metric="kv_tb_s")
    case = Case("fp16", 16, False, 2, 64, 2, 4, heads_kv=2)
    rows = sweep.run_case(case, make_backends(["math", "eager"]), settings, lambda: None, "cpu")
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    for row in rows:
        assert row["metric"] == "kv_tb_s" and row["heads_kv"] == 2
        assert row["kv_tb_s"] == pytest.approx(case.kv_bytes / (row["ms_median"] * 1e-3) / 1e12)
    table = report.markdown_table({"results": rows, "env": {}})
    assert "K+V TB/s = the bytes of K and V" in table
    assert "| 2 | 4/2 |" in table


@pytest.mark.parametrize("direction", ["bwd", "fwd+bwd"])
def test_backward_directions_check_gradients_and_count_their_flops(direction):
    settings = sweep.Settings(runs=2, slow_runs=2, rounds=1, warmup=0, direction=direction)
    case = Case("fp16", 16, True, 24, 40, 1, 4, heads_kv=2)
    rows = sweep.run_case(case, make_backends(["math", "eager"]), settings, lambda: None, "cpu")
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    forward = measure.flops(1, 4, 24, 40, 16, True)
    factor = sweep.DIRECTION_FLOPS[direction]
    for row in rows:
        assert row["direction"] == direction and row["flops"] == int(forward * factor)
        assert row["grad_err"] < 2e-2
    table = report.markdown_table({"results": rows, "env": {}})
    assert f"Direction {direction}:" in table


def test_a_wrong_backward_is_never_timed(monkeypatch):
    # A backend whose gradients are off: WRONG, not timed.
    class Scaled(Backend):
        name = "scaled"

        def prepare(self, case, q, k, v):
            def fn():
                out = F.scaled_dot_product_attention(q, k, v, is_causal=case.causal)
                return out + 0.5 * (out - out.detach())  # the value right, the gradient 1.5x

            return Prepared(fn)

    settings = sweep.Settings(runs=2, slow_runs=2, rounds=1, warmup=0, direction="bwd")
    case = Case("fp16", 16, False, 24, 24, 1, 2)
    (row,) = sweep.run_case(case, [Scaled()], settings, lambda: None, "cpu")
    assert row["status"] == "WRONG" and row["reason"].startswith("dq: max|g - ref|"), row


def test_backward_mode_refuses_masks_and_score_mods():
    with pytest.raises(SystemExit, match="runs plain attention only"):
        cli.parse_args(["--direction", "bwd", "--mask", "key_padding"])


def test_median_ms_is_the_median_of_the_timed_runs_after_the_warmup():
    # The scripts' timing (scripts/*_speed.py, check_bundles.py): warm-up
    # calls untimed, then the median run (a wall clock on the CPU).
    calls = []
    ms = measure.median_ms(lambda: calls.append(1), runs=5, warmup=2, device="cpu")
    assert len(calls) == 7 and 0 <= ms < 50
