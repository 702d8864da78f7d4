"""Command line of `python -m tiledattn.bench`: presets, axes, backends, and
the GPU-free modes (--from-json, --compare, --dry-run)."""

import argparse
import dataclasses
import datetime
import sys
import time
from pathlib import Path

from tiledattn.bench import report
from tiledattn.bench.backends import ALL_BACKENDS, DTYPES, Case
from tiledattn.bench.masks import MASKS
from tiledattn.bench.score_mods import SCORE_MODS
from tiledattn.bench.sweep import Settings

# The TiledAttention paper / FlashAttention grid; B*S and H*D held fixed.
PRESETS = {
    "quick": {
        "seqlens": [512, 2048],
        "head_dims": [64, 128],
        "dtypes": ["bf16"],
        "causal": [False, True],
    },
    "paper": {
        "seqlens": [512, 1024, 2048, 4096, 8192, 16384],
        "head_dims": [64, 128],  # + 256 when a tiledattn kernel exists
        "dtypes": ["bf16", "fp16"],  # bf16 first: it matters most
        "causal": [False, True],
    },
    "full": {
        "seqlens": [256, 512, 1024, 2048, 4096, 8192, 16384, 32768],
        "head_dims": [64, 128],  # + 256 when a tiledattn kernel exists
        "dtypes": ["bf16", "fp16"],
        "causal": [False, True],
    },
    # Issue 24's decode shapes (B, Sq, Sk), Llama-3-8B's heads (32 / 8),
    # K+V bandwidth in the table.
    "decode": {
        "shapes": [(64, 1, 4096), (8, 1, 32768), (1, 1, 131072), (64, 4, 4096)],
        "heads": 32,
        "heads_kv": 8,
        "seqlens": [],
        "head_dims": [128],
        "dtypes": ["bf16"],
        "causal": [False],
        "metric": "kv_tb_s",
    },
}
DEFAULT_TOTAL_TOKENS = 16384  # B*S, as in the FA papers
DEFAULT_HIDDEN = 2048  # H*D


def _list_of(kind):
    """argparse type: '512,1024' -> [512, 1024]; use with nargs='+'."""

    def parse(text):
        items = [t for t in text.replace(",", " ").split() if t]
        try:
            return [kind(t) for t in items]
        except (ValueError, KeyError) as error:
            raise argparse.ArgumentTypeError(f"bad value in {text!r}: {error}") from None

    return parse


def _bool(text):
    value = {"0": False, "1": True, "false": False, "true": True}.get(text.lower())
    if value is None:
        raise ValueError(f"{text} (expected 0/1)")
    return value


def _dtype(text):
    name = {"float16": "fp16", "f16": "fp16", "half": "fp16"}.get(text, text)
    name = {"bfloat16": "bf16"}.get(name, name)
    if name not in DTYPES:
        raise ValueError(f"{text} (expected fp16 or bf16)")
    return name


def _backend(text):
    if text != "all" and text not in ALL_BACKENDS:
        raise ValueError(f"{text} (expected one of {', '.join(ALL_BACKENDS)}, all)")
    return text


def _flatten(value):
    if value is None:
        return None
    out = []
    for item in value:
        out += item if isinstance(item, list) else [item]
    return out


def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m tiledattn.bench",
        description="Attention forward benchmark: tiledattn vs torch SDPA "
        "backends, eager and FlexAttention, checked then timed on the same "
        "inputs. See docs/Performance.md.",
    )
    p.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    axes = p.add_argument_group("sweep axes (override the preset)")
    axes.add_argument("--seqlens", nargs="+", type=_list_of(int))
    axes.add_argument("--head-dims", nargs="+", type=_list_of(int))
    axes.add_argument("--dtypes", nargs="+", type=_list_of(_dtype))
    axes.add_argument("--causal", nargs="+", type=_list_of(_bool), help="0 and/or 1")
    axes.add_argument(
        "--score-mod",
        default="none",
        choices=sorted(SCORE_MODS),
        help="a FlexAttention score_mod for every case (bench/score_mods.py); "
        "backends that cannot apply it report n/a",
    )
    axes.add_argument(
        "--mask",
        default="none",
        choices=["none", *MASKS],
        help="a mask for every case (bench/masks.py: "
        + "; ".join(f"{m.name}: {m.doc}" for m in MASKS.values()).replace("%", "%%")
        + "); TFLOP/s count kept pairs; the cases are not causal (a mask says "
        "what is kept); backends that take no mask report n/a",
    )
    axes.add_argument("--batch", type=int, help="fixed B (default total-tokens // S)")
    axes.add_argument("--heads", type=int, help="fixed H (default hidden // D)")
    axes.add_argument(
        "--heads-kv", type=int, help="K/V heads, dividing H (grouped-query; default H)"
    )
    p.add_argument(
        "--direction",
        choices=["fwd", "bwd", "fwd+bwd"],
        default="fwd",
        help="time the forward, the backward (after a forward; 2.5 forward FLOPs), or both "
        "(3.5); backward runs are checked against float64 gradients",
    )
    axes.add_argument("--total-tokens", type=int, default=DEFAULT_TOTAL_TOKENS)
    axes.add_argument("--hidden", type=int, default=DEFAULT_HIDDEN, help="H*D")
    b = p.add_argument_group("backends")
    b.add_argument(
        "--backends",
        nargs="+",
        type=_list_of(_backend),
        help=f"subset of: {', '.join(ALL_BACKENDS)} (default all)",
    )
    b.add_argument(
        "--schedule",
        action="append",
        default=[],
        metavar="MLIR",
        help="also time this schedule (tiledattn.compile); repeatable",
    )
    m = p.add_argument_group("method")
    d = Settings()
    m.add_argument("--runs", type=int, default=d.runs, help="timed runs per backend")
    m.add_argument("--slow-runs", type=int, default=d.slow_runs, help="for math/eager")
    m.add_argument(
        "--rounds",
        type=int,
        default=d.rounds,
        help="interleaved rounds (default 0: one full cycle of the balanced order, "
        "as many rounds as backends, twice that for an odd count)",
    )
    m.add_argument("--warmup", type=int, default=d.warmup)
    m.add_argument("--slow-max-seqlen", type=int, default=d.slow_max_seqlen)
    m.add_argument("--flush-mb", type=int, default=d.flush_mb, help="0: no flush")
    m.add_argument("--rtol", type=float, default=d.rtol)
    m.add_argument("--atol", type=float, default=d.atol)
    m.add_argument("--seed", type=int, default=d.seed)
    m.add_argument(
        "--no-gpu-state",
        dest="sample_gpu_state",
        action="store_false",
        help="do not record the SM clock and power after each timing",
    )
    m.add_argument(
        "--time-limit",
        type=float,
        default=0,
        help="seconds; cases left when it is spent are recorded as SKIPPED",
    )
    o = p.add_argument_group("output")
    o.add_argument("--out", help="directory (default bench-results/<timestamp>)")
    o.add_argument("--no-plots", action="store_true")
    o.add_argument("--no-tqdm", action="store_true", help="use the plain bar")
    o.add_argument("--dry-run", action="store_true", help="list cases and exit")
    o.add_argument("--from-json", metavar="RESULTS", help="re-render recorded results")
    o.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    o.add_argument("--threshold", type=float, default=0.05, help="for --compare")
    return p


def parse_args(argv=None):
    args = build_parser().parse_args(argv)
    preset = PRESETS[args.preset]
    for axis in ("seqlens", "head_dims", "dtypes", "causal", "backends"):
        setattr(args, axis, _flatten(getattr(args, axis)))
    args.seqlens_given = bool(args.seqlens)
    args.seqlens = args.seqlens or list(preset["seqlens"])
    args.dtypes = args.dtypes or list(preset["dtypes"])
    args.causal = args.causal if args.causal is not None else list(preset["causal"])
    if args.head_dims is None:
        args.head_dims = list(preset["head_dims"])
        if args.preset in ("paper", "full") and _has_kernel_for(256):
            args.head_dims.append(256)
    # A preset of explicit (B, Sq, Sk) shapes (decode; --seqlens makes it
    # the usual grid) and of fixed heads.
    args.shapes = list(preset.get("shapes", [])) if not args.seqlens_given else []
    args.heads = args.heads or preset.get("heads")
    args.heads_kv = args.heads_kv or preset.get("heads_kv")
    args.metric = preset.get("metric", "tflops")
    if args.direction != "fwd" and (args.mask != "none" or args.score_mod != "none"):
        raise SystemExit(
            f"tiledattn.bench: --direction {args.direction} runs plain attention only "
            f"(got --mask {args.mask}, --score-mod {args.score_mod})"
        )
    if not args.backends or "all" in args.backends:
        # FA4 only where it is installed (else a column of n/a); --backends
        # fa4 asks for it anyway, and the row says why it is missing.
        args.backends = [b for b in ALL_BACKENDS if b != "fa4" or _has_fa4()]
    return args


def _has_fa4() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("flash_attn.cute") is not None
    except (ImportError, ValueError):
        return False


def _has_kernel_for(head_dim):
    try:
        from tiledattn import registry

        return any(e.head_dim == head_dim for e in registry.kernels())
    except Exception:  # noqa: BLE001 -- no registry: no D=256 kernel to time
        return False


def _check_heads_kv(heads, heads_kv):
    if heads_kv and heads % heads_kv:
        raise SystemExit(
            f"tiledattn.bench: --heads-kv {heads_kv} must divide the query heads H = {heads}"
        )


def make_cases(args):
    """Cases in table order: dtype, D, causal, then S (a plot line's axis);
    a preset's explicit shapes (decode) in their order."""
    heads_kv = getattr(args, "heads_kv", None) or 0

    def case(dtype, head_dim, causal, seqlen_q, seqlen_k, batch):
        heads = args.heads or max(1, args.hidden // head_dim)
        _check_heads_kv(heads, heads_kv)
        return Case(
            dtype,
            head_dim,
            causal,
            seqlen_q,
            seqlen_k,
            batch,
            heads,
            args.score_mod,
            args.mask,
            heads_kv,
        )

    dtypes, head_dims = dict.fromkeys(args.dtypes), dict.fromkeys(args.head_dims)
    shapes = getattr(args, "shapes", [])
    if shapes:
        return [
            case(dtype, head_dim, False, seqlen_q, seqlen_k, args.batch or batch)
            for batch, seqlen_q, seqlen_k in shapes
            for dtype in dtypes
            for head_dim in head_dims
        ]
    # A mask says which pairs are kept, causality included.
    causals = args.causal if args.mask == "none" else [False]
    return [
        case(
            dtype,
            head_dim,
            causal,
            seqlen,
            seqlen,
            args.batch or max(1, args.total_tokens // seqlen),
        )
        for dtype in dtypes
        for head_dim in head_dims
        for causal in dict.fromkeys(causals)
        for seqlen in dict.fromkeys(args.seqlens)
    ]


def settings_from(args):
    fields = {f.name for f in dataclasses.fields(Settings)}
    return Settings(**{k: v for k, v in vars(args).items() if k in fields})


def default_out_dir():
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("bench-results") / stamp


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)

    if args.compare:
        old, new = (report.load_json(p) for p in args.compare)
        text, regressions = report.compare(old, new, args.threshold)
        print(text)
        return 1 if regressions else 0

    if args.from_json:
        data = report.load_json(args.from_json)
        out = Path(args.out) if args.out else Path(args.from_json).parent
        table, paths = report.write_all(data, out, plots=not args.no_plots)
        print(table)
        print("wrote " + ", ".join(str(p) for p in paths))
        return 0

    cases = make_cases(args)
    if args.dry_run:
        for case in cases:
            print(case.label())
        print(f"{len(cases)} cases x backends {', '.join(args.backends)}")
        for schedule in args.schedule:
            print(f"schedule: {schedule}")
        return 0

    import torch

    if not torch.cuda.is_available():
        print(
            "tiledattn.bench: no CUDA GPU; a sweep needs one (use --dry-run, "
            "--from-json or --compare without a GPU)",
            file=sys.stderr,
        )
        return 2
    return run_sweep(args, argv, cases)


def run_sweep(args, argv, cases):
    import torch

    from tiledattn.bench import env, measure, sweep
    from tiledattn.bench.backends import make_backends
    from tiledattn.bench.progress import progress_bar

    settings = settings_from(args)
    out = Path(args.out) if args.out else default_out_dir()
    out.mkdir(parents=True, exist_ok=True)
    backends = make_backends(args.backends, args.schedule)
    schedules = []
    for backend in backends:
        if hasattr(backend, "compile"):
            backend.compile()
            schedules.append(
                {
                    "path": backend.path,
                    "name": backend.name,
                    "compile_s": backend.compile_s,
                    "error": backend.error,
                }
            )
            print(
                f"{backend.name}: compiled in {backend.compile_s:.2f} s"
                + (f" ({backend.error})" if backend.error else ""),
                file=sys.stderr,
            )
    data = {
        "schema": report.SCHEMA,
        "complete": False,
        "env": env.collect(argv),
        "config": {
            **dataclasses.asdict(settings),
            "preset": args.preset,
            "backends": [b.name for b in backends],
            "schedules": schedules,
            "cases": len(cases),
        },
        "results": [],
    }
    start = time.monotonic()
    flusher = measure.L2Flusher(settings.flush_mb, "cuda")
    bar = progress_bar(len(cases), use_tqdm=not args.no_tqdm)
    with torch.no_grad():
        for case in cases:
            bar.set_description(case.label())
            if args.time_limit and time.monotonic() - start > args.time_limit:
                rows = [
                    {
                        **case.fields(),
                        "backend": b.name,
                        "status": "SKIPPED",
                        "reason": f"--time-limit {args.time_limit:g} s spent",
                    }
                    for b in backends
                ]
            else:
                rows = sweep.run_case(case, backends, settings, flusher)
            data["results"] += rows
            # Written after every case: a killed sweep still leaves results.
            report.write_json(out / "results.json", data)
            bar.update()
    bar.close()
    data["complete"] = True
    data["elapsed_s"] = time.monotonic() - start
    table, _ = report.write_all(data, out, plots=not args.no_plots)
    print(table)
    print(f"{len(cases)} cases in {data['elapsed_s']:.0f} s; wrote {out}/")
    return _exit_status(data["results"])


# A backend that computed a wrong answer (WRONG) or failed for a reason other
# than a known limit or memory (ERROR) fails the run; UNSUPPORTED, OOM and
# SKIPPED rows are results.
FAILING_STATUSES = ("WRONG", "ERROR")


def _exit_status(rows):
    """1 (after naming them on stderr) when any row is WRONG or ERROR, else 0."""
    failed = [r for r in rows if r.get("status") in FAILING_STATUSES]
    for row in failed:
        case = Case(**{f.name: row[f.name] for f in dataclasses.fields(Case) if f.name in row})
        print(
            f"tiledattn.bench: {row['backend']} {row['status']} on {case.label()}: "
            f"{row.get('reason', '')}",
            file=sys.stderr,
        )
    if failed:
        print(
            f"tiledattn.bench: {len(failed)} of {len(rows)} rows WRONG or ERROR; exit status 1",
            file=sys.stderr,
        )
    return 1 if failed else 0
