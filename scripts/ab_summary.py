#!/usr/bin/env python3
"""Same-run A/B rounds of the harness, side by side: each candidate against
the shipped kernel (and cuDNN) in every run, and how the runs agree.

    python3 scripts/ab_summary.py RUN_DIR_OR_JSON ...

Each argument is a harness output (results.json, or the directory holding
it), one per repetition of the same sweep (scripts/device-ab.sh writes
them). For every case (dtype, D, causal, S, B, H) it prints each backend's
median TFLOP/s per run and, for every backend but `tiledattn`, its ratio to
`tiledattn` per run: the shipped kernel, and whether it is faster or
slower in every run, even (within --even of 1) or mixed, and the median of
its ratios. A change is worth shipping when it is faster in every run, not
when one run says so: on the H200 long rows are bimodal and whole runs move
by 5-10% (docs/perf-notes.md, ninth session). Give the runs of two sweeps
or more (minutes apart) to judge a gate of a few percent by the median: two
sweeps of three runs on one H100 differed by 3-7% (thirty-ninth session).
"""

import argparse
import json
import pathlib
import statistics
import sys

BASELINE = "tiledattn"


def load(path):
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "results.json"
    return json.loads(path.read_text())


def case_key(row):
    return (
        row["dtype"],
        row["head_dim"],
        int(bool(row["causal"])),
        row["seqlen_q"],
        row["batch"],
        row["heads"],
    )


def short(name):
    """A schedule column's name without the prefix and dtype suffix the
    sweep adds (schedule:d128_..._bf16_d128 -> d128_...)."""
    name = name.removeprefix("schedule:")
    for dtype in ("_bf16_", "_f16_"):
        if dtype in name:
            name = name[: name.index(dtype)]
    return name


def display_names(backends):
    """{backend: column name}: short() where no other backend shortens to
    the same (x_bf16_d128 and x_bf16_d128_long would), else the name
    without its `schedule:` prefix."""
    shorts = [short(b) for b in backends]
    return {
        b: s if shorts.count(s) == 1 else b.removeprefix("schedule:")
        for b, s in zip(backends, shorts, strict=True)
    }


def collect(runs):
    """{case: {backend: [tflops or None per run]}} in first-seen order."""
    backends = list(dict.fromkeys(row["backend"] for run in runs for row in run["results"]))
    names = display_names(backends)
    table = {}
    for i, run in enumerate(runs):
        for row in run["results"]:
            cell = table.setdefault(case_key(row), {})
            values = cell.setdefault(names[row["backend"]], [None] * len(runs))
            if row.get("status") == "ok" and row.get("tflops"):
                values[i] = row["tflops"]
    return table


def ratios(values, base):
    return [v / b if v and b else None for v, b in zip(values, base, strict=True)]


def verdict(rs, even=0.005):
    known = [r for r in rs if r is not None]
    if not known:
        return "n/a"
    if all(abs(r - 1) <= even for r in known):
        return "even"
    if all(r > 1 for r in known):
        return "faster in every run"
    if all(r < 1 for r in known):
        return "slower in every run"
    return "mixed"


def median(rs):
    """The median of the known ratios (None if there is none)."""
    known = [r for r in rs if r is not None]
    return statistics.median(known) if known else None


def render(table, runs, even=0.005):
    lines = []
    for (dtype, d, causal, s, b, h), cell in table.items():
        if all(v is None for values in cell.values() for v in values):
            continue
        lines.append(f"{dtype} D={d} causal={causal} S={s} B={b} H={h}")
        base = cell.get(BASELINE, [None] * runs)
        width = max(len(name) for name in cell)
        for name, values in cell.items():
            if all(v is None for v in values):
                continue
            tflops = " ".join(f"{v:6.0f}" if v else "   n/a" for v in values)
            line = f"  {name:<{width}}  {tflops}"
            if name != BASELINE:
                rs = ratios(values, base)
                shown = " ".join(f"{r:5.3f}" if r else "  n/a" for r in rs)
                middle = median(rs)
                line += f"   / {BASELINE}: {shown}  ({verdict(rs, even)}"
                line += f"; median {middle:5.3f})" if middle else ")"
            lines.append(line)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="results.json files or their directories")
    parser.add_argument(
        "--even", type=float, default=0.005, help="ratios within 1 +- this are even (0.005)"
    )
    args = parser.parse_args(argv)
    runs = []
    for path in args.runs:
        try:
            runs.append(load(path))
        except (OSError, ValueError) as error:
            sys.exit(f"ab_summary: {path}: expected a harness results.json, but {error}")
    print(render(collect(runs), len(runs), args.even))


if __name__ == "__main__":
    main()
