#!/usr/bin/env python3
"""Where a kernel's warps wait, from ncu's per-instruction stall samples.

On the GPU machine (one launch of one bundle):
    ncu --kernel-name regex:sdpa_fwd --launch-skip 2 --launch-count 1 \\
        --section SourceCounters --section WarpStateStats \\
        --page source --csv --print-source sass \\
        python3 scripts/profile_bundle.py build/kernels/BUNDLE 512 > src.csv
Here:
    python3 scripts/ncu_source_summary.py src.csv [--top N]

Prints the stall reasons over the whole kernel, then the samples grouped by
how often each instruction ran: in a tiledattn kernel that count tells the
code apart (once per tile per consumer warp, once per K/V block, the
producer's loop), so "how much of the time is per-tile overhead" is one
line. Then contiguous runs of instructions with the same count, in address
order, each with its share of the samples and the notable instructions in it
(wgmma, barriers, MUFU, TMA), and the top single instructions.
"""

import argparse
import collections
import csv
import io
import sys

_SAMPLES = "Warp Stall Sampling (All Samples)"
_EXECUTED = "Instructions Executed"
_NOTABLE = (
    "HGMMA",
    "WARPGROUP",
    "SYNCS",
    "BAR",
    "MUFU",
    "UTMALDG",
    "UTMASTG",
    "STSM",
    "REDUX",
    "VOTE",
    "FENCE",
    "STG",
    "SHFL",
    "ATOMG",
)


def _number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return 0.0


def read_rows(text):
    """The per-instruction rows of ncu's `--page source --csv` output (the
    lines before the header, the kernel name and the program's own output,
    are skipped)."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    except StopIteration:
        raise SystemExit(
            "no '\"Address\",...' header: expected ncu --page source --csv output"
        ) from None
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


def _opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def summarize(rows, top=15):
    """The report as a list of lines."""
    total = sum(_number(r.get(_SAMPLES)) for r in rows) or 1.0
    reasons = [k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    by_reason = collections.Counter()
    for r in rows:
        for k in reasons:
            by_reason[k] += _number(r[k])
    out = [
        f"{len(rows)} instructions, {total:.0f} samples",
        "by reason: "
        + ", ".join(f"{k[len('stall_') :]} {v / total:.1%}" for k, v in by_reason.most_common(8)),
        "",
        "by execution count (instructions that ran equally often):",
    ]
    groups = collections.defaultdict(lambda: [0.0, 0])
    for r in rows:
        group = groups[int(_number(r.get(_EXECUTED)))]
        group[0] += _number(r.get(_SAMPLES))
        group[1] += 1
    for count, (samples, n) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:top]:
        out.append(f"  ran {count:>8}x  {n:5d} instructions  {samples / total:6.1%} of samples")
    out += ["", "runs of equal execution count, in address order (>= 0.2% of samples):"]
    run = None
    runs = []
    for r in rows:
        count = int(_number(r.get(_EXECUTED)))
        if run is None or count != run["count"]:
            run = {"first": r["Address"], "count": count, "n": 0, "samples": 0.0, "ops": []}
            runs.append(run)
        run["last"] = r["Address"]
        run["n"] += 1
        run["samples"] += _number(r.get(_SAMPLES))
        op = _opcode(r.get("Source", ""))
        if op.split(".")[0] in _NOTABLE and op not in run["ops"]:
            run["ops"].append(op)
    for run in runs:
        if run["samples"] / total >= 0.002:
            out.append(
                f"  {run['first']}..{run['last']} ran {run['count']:>8}x  {run['n']:4d} instr "
                f"{run['samples'] / total:6.1%}  {', '.join(run['ops'][:6])}"
            )
    out += ["", f"top {top} instructions:"]
    for r in sorted(rows, key=lambda r: -_number(r.get(_SAMPLES)))[:top]:
        samples = _number(r.get(_SAMPLES))
        main = sorted(((_number(r[k]), k[len("stall_") :]) for k in reasons), reverse=True)[:2]
        why = " ".join(f"{name} {value / max(samples, 1):.0%}" for value, name in main if value)
        out.append(
            f"  {r['Address']} {samples / total:6.1%}  {r.get('Source', '').strip()[:56]:56s} {why}"
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    with open(args.csv, encoding="utf-8", errors="replace") as f:
        rows = read_rows(f.read())
    if not rows:
        sys.exit(f"{args.csv}: no instruction rows")
    print("\n".join(summarize(rows, args.top)))


if __name__ == "__main__":
    main()
