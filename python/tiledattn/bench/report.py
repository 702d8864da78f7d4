"""Results on disk and for people: JSON/CSV, the markdown table, plots and
the old-vs-new comparison. Needs no GPU, so it runs on recorded results
(--from-json, --compare) and in CI.
"""

import csv
import json
import math
from pathlib import Path

from tiledattn.bench.masks import MASKS

SCHEMA = 1
CASE_KEYS = ("dtype", "head_dim", "causal", "seqlen_q", "seqlen_k", "batch", "heads")
CSV_COLUMNS = (
    *CASE_KEYS,
    "heads_kv",
    "backend",
    "status",
    "metric",
    "direction",
    "tflops",
    "kv_tb_s",
    "tflops_p10",
    "tflops_p90",
    "ms_median",
    "ms_p10",
    "ms_p90",
    "ms_min",
    "runs",
    "flops",
    "max_err",
    "grad_err",
    "tol",
    "eager_err",
    "peak_mem_bytes",
    "compile_s",
    "block_mask_s",
    "chosen",
    "profiled",
    "kernel",
    "flags",
    "reason",
)
# Short cell text for rows that have no TFLOP/s.
_STATUS_CELL = {
    "WRONG": "WRONG",
    "UNSUPPORTED": "n/a",
    "OOM": "OOM",
    "SKIPPED": "skip",
    "ERROR": "ERR",
}


def case_key(row):
    """The case's fields; K/V heads last (0: as many as the queries'; absent
    from results recorded before grouped-query cases)."""
    return (*(row[k] for k in CASE_KEYS), row.get("heads_kv") or 0)


# The figure a case's cells show: TFLOP/s, or for a decode the K+V
# bandwidth (TB/s); each row names its own (absent: TFLOP/s).
METRICS = {
    "tflops": ("TFLOP/s", "TFLOP/s = 4·B·H·Sq·Sk·D (×0.5 causal) / median time."),
    "kv_tb_s": ("K+V TB/s", "K+V TB/s = the bytes of K and V (read once) / median time."),
}


_DIRECTIONS = {
    "bwd": "the backward of a forward run before the timing, 2.5 forward FLOPs, "
    "gradients checked against float64",
    "fwd+bwd": "forward and backward, 3.5 forward FLOPs",
}


def _value(row):
    return row.get(row.get("metric") or "tflops")


def write_json(path, data):
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=False, default=str))


def load_json(path):
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or "results" not in data:
        raise ValueError(f"{path}: not a tiledattn bench results file (no 'results')")
    return data


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in CSV_COLUMNS})


def backend_order(rows):
    """Backends in first-seen order (the sweep's order)."""
    return list(dict.fromkeys(row["backend"] for row in rows))


def group_cases(rows):
    """{case key: {backend: row}} in first-seen order."""
    cases = {}
    for row in rows:
        cases.setdefault(case_key(row), {})[row["backend"]] = row
    return cases


def _ok(row):
    return (
        row is not None
        and row.get("status") == "ok"
        and isinstance(_value(row), (int, float))
        and not math.isnan(_value(row))
    )


def is_tiledattn(name):
    return name == "tiledattn" or name.startswith("schedule:")


def best_baseline(by_backend):
    """(name, figure) of the fastest correct non-tiledattn backend, or None."""
    best = None
    for name, row in by_backend.items():
        faster = _ok(row) and (best is None or _value(row) > best[1])
        if faster and not is_tiledattn(name):
            best = (name, _value(row))
    return best


def _cell(row):
    if row is None:
        return ""
    if _ok(row):
        value = _value(row)
        text = f"{value:.0f}" if value >= 10 else f"{value:.3g}"
        return text + ("!" if row.get("flags") else "")
    return _STATUS_CELL.get(row.get("status"), row.get("status") or "?")


def _auto_cell(row):
    if row is None or not row.get("chosen"):
        return ""
    chosen = str(row["chosen"]).replace("_ATTENTION", "")
    profiled = str(row.get("profiled") or "").replace("_ATTENTION", "")
    if profiled and not profiled.startswith("unknown") and profiled != chosen:
        return f"{chosen} (ran {profiled})"
    return chosen


def _case_cells(key):
    """The leading cells of a case's row: dtype, D, causal, S (Sq x Sk when
    they differ)."""
    dtype, head_dim, causal, seqlen_q, seqlen_k = key[:5]
    seqlen = str(seqlen_q) if seqlen_q == seqlen_k else f"{seqlen_q}x{seqlen_k}"
    return [dtype, str(head_dim), str(int(bool(causal))), seqlen]


def _gpu_state_lines(rows, backends):
    """SM clock and power after each backend's last timed round, per case:
    a lower TFLOP/s at a lower clock is the power limit, not the kernel."""
    sampled = [b for b in backends if any("sm_clock_mhz" in r for r in rows if r["backend"] == b)]
    if not sampled:
        return []
    lines = [
        "",
        "## SM clock (MHz) and power (W) after each backend's timed runs",
        "",
        "| dtype | D | causal | S | " + " | ".join(sampled) + " |",
        "|" + "---|" * (4 + len(sampled)),
    ]
    for key, by_backend in group_cases(rows).items():
        cells = _case_cells(key)
        for b in sampled:
            row = by_backend.get(b) or {}
            state = row.get("sm_clock_mhz"), row.get("power_w")
            cells.append(f"{state[0]:.0f} / {state[1]:.0f}" if None not in state else "")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown_table(data):
    """The results as markdown: an environment header, one row per case with
    TFLOP/s per backend, the best baseline and tiledattn's ratio to it, then
    the reasons for every cell without a number."""
    rows = data["results"]
    backends = backend_order(rows)
    ours = [b for b in backends if is_tiledattn(b)]
    has_auto = "sdpa_auto" in backends
    env = data.get("env", {})
    smi = env.get("nvidia_smi") or {}
    lines = [
        "# tiledattn benchmark",
        "",
        (
            f"- GPU: {env.get('gpu')} (SM clock {smi.get('clocks.sm', '?')}, max "
            f"{smi.get('clocks.max.sm', '?')}; driver {smi.get('driver_version', '?')})"
        ),
        (
            f"- torch {env.get('torch')}, CUDA {env.get('cuda')}, cuDNN "
            f"{env.get('cudnn')}, triton {env.get('triton')}"
        ),
        f"- commit {env.get('git_commit')}, {env.get('date')}",
        f"- command: `{env.get('command')}`",
        *[
            f"- score_mod: `{mod}` (tiledattn.bench.score_mods; fused SDPA kernels cannot apply it)"
            for mod in sorted({r.get("score_mod", "none") for r in rows} - {"none"})
        ],
        *[
            f"- mask: `{name}` ({MASKS[name].doc}; tiledattn.bench.masks): TFLOP/s count "
            "the kept (query, key) pairs only"
            for name in sorted({r.get("mask", "none") for r in rows} - {"none"})
            if name in MASKS
        ],
        "",
        (
            " ".join(METRICS[m][1] for m in sorted({r.get("metric") or "tflops" for r in rows}))
            + "".join(
                f" Direction {d}: {_DIRECTIONS[d]}."
                for d in sorted({r.get("direction") or "fwd" for r in rows} - {"fwd"})
            )
            + " `n/a` unsupported, `WRONG` failed the check (not timed), `skip` "
            "skipped by budget, `OOM`, `ERR`; `!` flagged (see notes)."
        ),
        "",
    ]
    header = ["dtype", "D", "causal", "S", "B", "H", *backends]
    if has_auto:
        header.append("auto chose")
    header.append("best baseline")
    header += [f"{b} / best" for b in ours]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for key, by_backend in group_cases(rows).items():
        batch, heads, heads_kv = key[5:]
        cells = _case_cells(key) + [str(batch), f"{heads}/{heads_kv}" if heads_kv else str(heads)]
        cells += [_cell(by_backend.get(b)) for b in backends]
        if has_auto:
            cells.append(_auto_cell(by_backend.get("sdpa_auto")))
        best = best_baseline(by_backend)
        cells.append(f"{best[0]} {_cell(by_backend[best[0]])}" if best else "-")
        for b in ours:
            row = by_backend.get(b)
            cells.append(f"{_value(row) / best[1]:.2f}" if best and _ok(row) else "-")
        lines.append("| " + " | ".join(cells) + " |")

    compile_lines = []
    for b in backends:
        times = [
            r["compile_s"]
            for r in rows
            if r["backend"] == b and isinstance(r.get("compile_s"), (int, float))
        ]
        if times:
            compile_lines.append(
                f"- {b}: {len(times)} compiles, mean {sum(times) / len(times):.2f} s, "
                f"max {max(times):.2f} s"
            )
    if compile_lines:
        lines += ["", "## Compile times (not in the timings)", "", *compile_lines]

    lines += _gpu_state_lines(rows, backends)

    notes = {}
    for row in rows:
        if row.get("status") != "ok" or row.get("flags"):
            what = (row["backend"], row.get("status"), row.get("reason", ""))
            notes.setdefault(what, []).append(row)
    if notes:
        lines += ["", "## Notes", ""]
        for (backend, status, reason), hits in notes.items():
            where = ", ".join(
                f"{r['dtype']}/D{r['head_dim']}/c{int(bool(r['causal']))}/S{r['seqlen_q']}"
                for r in hits[:4]
            ) + (f" (+{len(hits) - 4} more)" if len(hits) > 4 else "")
            lines.append(f"- {backend} {status}: {reason} [{where}]")
    return "\n".join(lines) + "\n"


def plot(data, out_dir):
    """TFLOP/s vs sequence length, one panel per (head dim, dtype, causal),
    a line per backend with its p10-p90 band. Returns the PNG paths. Decode
    rows (a bandwidth, one query length) are left to the table."""
    import matplotlib

    matplotlib.use("Agg")  # no display on the GPU machine or in CI
    import matplotlib.pyplot as plt

    rows = [r for r in data["results"] if _ok(r) and (r.get("metric") or "tflops") == "tflops"]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    panels = sorted(
        {(r["head_dim"], r["dtype"], bool(r["causal"])) for r in rows},
    )
    backends = backend_order(data["results"])
    if not panels:
        return []
    colors = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    ncols = min(4, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    gpu = data.get("env", {}).get("gpu") or "GPU"
    for ax, (head_dim, dtype, causal) in zip(axes.flat, panels):
        for b in backends:
            points = sorted(
                (r["seqlen_q"], r["tflops"], r.get("tflops_p10"), r.get("tflops_p90"))
                for r in rows
                if r["backend"] == b
                and (r["head_dim"], r["dtype"], bool(r["causal"])) == (head_dim, dtype, causal)
            )
            if not points:
                continue
            xs = [p[0] for p in points]
            ax.plot(
                xs,
                [p[1] for p in points],
                marker="o",
                ms=3,
                label=b,
                color=colors[b],
                lw=2.2 if is_tiledattn(b) else 1.2,
            )
            if all(isinstance(p[2], (int, float)) for p in points):
                ax.fill_between(
                    xs,
                    [p[2] for p in points],
                    [p[3] for p in points],
                    color=colors[b],
                    alpha=0.15,
                    lw=0,
                )
        ax.set_xscale("log", base=2)
        ticks = sorted(
            {
                r["seqlen_q"]
                for r in rows
                if (r["head_dim"], r["dtype"], bool(r["causal"])) == (head_dim, dtype, causal)
            }
        )
        ax.set_xticks(ticks, [f"{t // 1024}k" if t >= 1024 else str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_title(f"D={head_dim} {dtype} {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("sequence length")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles, labels = [], []
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 9))
    fig.suptitle(f"attention forward, {gpu}")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    path = out_dir / "tflops_vs_seqlen.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def write_all(data, out_dir, plots=True):
    """results.json, results.csv, results.md and the plots into out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "results.json", data)
    write_csv(out_dir / "results.csv", data["results"])
    table = markdown_table(data)
    (out_dir / "results.md").write_text(table)
    paths = [out_dir / "results.json", out_dir / "results.csv", out_dir / "results.md"]
    if plots:
        try:
            paths += plot(data, out_dir)
        except ImportError as error:  # matplotlib missing: tables still count
            print(f"tiledattn.bench: no plots ({error})")
    return table, paths


def compare(old, new, threshold=0.05):
    """Per-row new/old TFLOP/s for rows in both files.

    A regression is a ratio below 1 - threshold, or a row that was correct
    and is not any more. Returns (report text, number of regressions).
    """
    old_rows = {(*case_key(r), r["backend"]): r for r in old["results"]}
    lines = [
        f"{'case':<34} {'backend':<18} {'old':>7} {'new':>7} {'ratio':>6}",
    ]
    regressions = 0
    matched = 0
    for row in new["results"]:
        key = (*case_key(row), row["backend"])
        before = old_rows.get(key)
        if before is None or before.get("status") != "ok":
            continue
        matched += 1
        label = (
            f"{row['dtype']} D{row['head_dim']} c{int(bool(row['causal']))} "
            f"S{row['seqlen_q']} B{row['batch']} H{row['heads']}"
        )
        if not _ok(row):
            regressions += 1
            lines.append(
                f"{label:<34} {row['backend']:<18} {before['tflops']:>7.1f} "
                f"{row.get('status', '?'):>7} {'':>6}  REGRESSION (was ok)"
            )
            continue
        ratio = row["tflops"] / before["tflops"]
        flag = ""
        if ratio < 1 - threshold:
            regressions += 1
            flag = "  REGRESSION"
        elif ratio > 1 + threshold:
            flag = "  faster"
        lines.append(
            f"{label:<34} {row['backend']:<18} {before['tflops']:>7.1f} "
            f"{row['tflops']:>7.1f} {ratio:>6.3f}{flag}"
        )
    lines.append(f"{matched} rows compared, {regressions} regressions beyond {threshold:.0%}")
    return "\n".join(lines), regressions
