"""Schedule choice by measurement: decode_attention's schedule and split
count, timed on the GPU for a shape class and kept on disk.

    import tiledattn.tune
    table = tiledattn.tune.tune_decode(q, k, v)   # times every candidate
    out = tiledattn.decode_attention(q, k, v)     # now uses the winner

A shape class is (GPU, dtype, head dims, mask kind, packed rows, B x Hkv
band, Sk band); the bands are powers of two, so a KV cache that grows keeps
its choice until its length doubles. Winners go to tuned.json in
tiledattn.compiler.cache_dir() ($TILEDATTN_CACHE_DIR), read once per
process; a class with no entry there takes the package's own winners
(tuned_defaults.json, measured on the GPUs it names), else the defaults
(decode.DEFAULT_SCHEDULE, decode.num_splits). A candidate is timed as a
whole call (host work and combine included: with splits the host, not the
kernel, bounds a call; docs/perf-notes.md, twenty-eighth session), and
one whose kernel is not to be had (no compiler, not compiled) is left out.
"""

import functools
import json
import math
import os
import statistics
import tempfile
import threading
from pathlib import Path

import torch

from tiledattn.errors import CompileError, InvalidInputError, UnsupportedInputError

_lock = threading.Lock()
_loaded: "dict[Path, dict[str, dict]]" = {}  # file -> class key -> winner


def _band(n: int) -> int:
    """n rounded up to a power of two (the class boundary)."""
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def decode_class(query, key, value, causal: bool) -> str:
    """The shape class key of a decode_attention call."""
    batch, heads_q, length_q, head_dim = query.shape
    heads_kv, length_k = key.shape[1], key.shape[2]
    device = query.device
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    dtype = str(query.dtype).removeprefix("torch.")
    rows = heads_q // max(1, heads_kv) * length_q
    mask = "causal" if causal else "none"
    return (
        f"decode|{gpu}|{dtype}|d{head_dim}v{value.shape[-1]}|{mask}|rows{rows}"
        f"|kv{_band(batch * heads_kv)}|sk{_band(length_k)}"
    )


def tuned_file() -> Path:
    from tiledattn.compiler import cache_dir

    return _tuned_in(cache_dir())


@functools.lru_cache(maxsize=16)
def _tuned_in(directory: Path) -> Path:
    # Asked at every decode call: one Path per cache directory.
    return directory / "tuned.json"


def _winners(path: Path) -> "dict[str, dict]":
    key = path
    with _lock:
        if key not in _loaded:
            try:
                _loaded[key] = json.loads(path.read_text())
            except (OSError, ValueError):
                _loaded[key] = {}
        return _loaded[key]


# The winners the package ships (docs/Schedules.md, "Decode"), for the
# GPUs they were measured on: a class's entry in tuned.json comes first.
SHIPPED = Path(__file__).resolve().parent / "tuned_defaults.json"


def lookup(class_key: str, path: "Path | None" = None) -> "dict | None":
    """The winner kept for `class_key` ({"schedule": ..., "splits": ...})
    in `path` (default: the cache's tuned.json), else the shipped one, or
    None."""
    return _winners(path or tuned_file()).get(class_key) or _winners(SHIPPED).get(class_key)


def _keep(class_key: str, winner: dict, path: Path) -> None:
    """Adds the winner to `path` (rewritten whole, atomically)."""
    with _lock:
        try:
            kept = json.loads(path.read_text())
        except (OSError, ValueError):
            kept = {}
        kept[class_key] = winner
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as f:
            json.dump(kept, f, indent=1, sort_keys=True)
        os.replace(f.name, path)
        _loaded[path] = kept


def decode_candidates(query, key, value, causal) -> "list[tuple[str, int]]":
    """(schedule, splits) pairs: every decode.SCHEDULES entry with 1, 2, 4,
    ... splits up to one wave of thread blocks and up to half the K/V
    blocks, and the default count."""
    from tiledattn import decode

    sms = decode.multiprocessors(query.device)
    kv_rows = query.shape[0] * key.shape[1]
    pairs = []
    for schedule in decode.SCHEDULES:
        block = decode._block_sizes(schedule, query.shape[-1], value.shape[-1])[1]
        key_blocks = -(-key.shape[2] // block)
        counts = {decode.num_splits(kv_rows, key_blocks, sms)}
        splits = 1
        while splits <= max(1, key_blocks // 2) and kv_rows * splits <= sms:
            counts.add(splits)
            splits *= 2
        pairs += [(schedule, s) for s in sorted(counts)]
    return pairs


def tune_decode(
    query,
    key,
    value,
    *,
    causal: bool = False,
    runs: int = 20,
    candidates: "list[tuple[str, int]] | None" = None,
    cache=None,
    path: "Path | None" = None,
    timer=None,
    progress=None,
) -> "list[dict]":
    """Times decode_attention(query, key, value, causal=causal) with each
    (schedule, splits) candidate (default decode_candidates) for `runs`
    calls, keeps the fastest median for the call's shape class in `path`
    (default tuned_file()) and returns one row per candidate: schedule,
    splits, milliseconds (None where its kernel is not to be had), the
    winner first. `timer(fn, runs)` returns per-run milliseconds (default
    CUDA events, bench.measure.time_runs); `progress(text)` hears each."""
    from tiledattn import decode

    if timer is None:
        from tiledattn.bench.measure import time_runs

        def timer(fn, runs):
            return time_runs(fn, runs, flush=lambda: None, warmup=3)

    pairs = candidates or decode_candidates(query, key, value, causal)
    rows = []
    for schedule, splits in pairs:

        def call(schedule=schedule, splits=splits):
            return decode.decode_attention(
                query, key, value, causal=causal, schedule=schedule, splits=splits, cache=cache
            )

        try:
            ms = statistics.median(timer(call, runs))
        except (CompileError, UnsupportedInputError) as error:
            ms = None
            if progress:
                progress(f"{schedule} splits={splits}: left out ({error})")
        else:
            if progress:
                progress(f"{schedule} splits={splits}: {ms:.3f} ms")
        rows.append({"schedule": schedule, "splits": splits, "ms": ms})
    timed = [row for row in rows if row["ms"] is not None]
    if not timed:
        raise InvalidInputError(
            "tiledattn.tune.tune_decode: no candidate could run (no decode kernel for "
            f"{query.dtype}, head dims {query.shape[-1]}/{value.shape[-1]})"
        )
    timed.sort(key=lambda row: row["ms"])
    best = timed[0]
    winner = {"schedule": best["schedule"], "splits": best["splits"], "ms": best["ms"]}
    _keep(decode_class(query, key, value, causal), winner, path or tuned_file())
    decode._chosen.clear()  # calls chosen before the winner choose again
    return timed + [row for row in rows if row["ms"] is None]
