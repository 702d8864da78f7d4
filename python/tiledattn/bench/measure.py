"""FLOP counting, reference outputs, the correctness check and the timer.

Kept free of backend knowledge so the method is in one place (see
docs/Performance.md, "Method"). Only the GPU paths touch CUDA; flops() and
the statistics are plain Python so CI can test them.
"""

import math
import statistics
import time

import torch

# Criterion of flash-attention's tests: a backend may be at most RTOL times
# as wrong as torch's low-precision eager attention, plus a small floor.
RTOL = 2.0
ATOL = 1e-5

# Bytes one reference chunk of scores may take; chunking keeps the float64
# reference affordable at 16k x 16k (2 GiB per head in float64).
REF_CHUNK_BYTES = 1 << 31


def flops(batch, heads, seqlen_q, seqlen_k, head_dim, causal, mask=None):
    """Forward FLOPs, the FA/Triton convention: 4*B*H*Sq*Sk*D, half if causal;
    with a bench.masks.Mask, 4*H*D per kept (query, key) pair.

    (Two matmuls of 2*Sq*Sk*D each; causal skips about half the tiles.)
    """
    if mask is not None:
        return 4 * heads * mask.kept_pairs(batch, seqlen_k) * head_dim
    total = 4 * batch * heads * seqlen_q * seqlen_k * head_dim
    return total // 2 if causal else total


def tflops(flop_count, ms):
    """TFLOP/s for `flop_count` FLOPs in `ms` milliseconds (nan if no time)."""
    if not ms or ms <= 0 or math.isnan(ms):
        return float("nan")
    return flop_count / (ms * 1e-3) / 1e12


def percentile(values, q):
    """Linear-interpolated percentile (q in [0, 100]) of a non-empty list."""
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summarize(times_ms):
    """Median and p10/p90 of the timed runs: the median resists the outliers
    that clock changes and preemption produce; p10/p90 show the spread."""
    return {
        "ms_median": statistics.median(times_ms),
        "ms_p10": percentile(times_ms, 10),
        "ms_p90": percentile(times_ms, 90),
        "ms_min": min(times_ms),
        "runs": len(times_ms),
    }


def attention_chunked(
    q, k, v, causal, scale, matmul_dtype, softmax_dtype, out_dtype, score_mod=None
):
    """Unfused attention over (B, H, S, D) tensors, computed in chunks.

    matmul_dtype float64 gives the golden reference; the input dtype with
    float32 softmax gives "eager low precision", the yardstick of the error
    criterion. Causal is top-left aligned, as in torch's SDPA. `score_mod`
    (FlexAttention's signature) maps the scaled scores before the mask. K
    and V may have fewer heads (grouped-query attention).
    """
    batch, heads, seqlen_q, head_dim = q.shape
    seqlen_k, head_dim_v = k.shape[-2], v.shape[-1]
    if k.shape[1] != heads:  # grouped-query: each K/V head serves heads / Hkv
        k, v = (t.repeat_interleave(heads // k.shape[1], dim=1) for t in (k, v))
    qf = q.reshape(batch * heads, seqlen_q, head_dim).to(matmul_dtype)
    kf = k.reshape(batch * heads, seqlen_k, head_dim).to(matmul_dtype)
    vf = v.reshape(batch * heads, seqlen_k, head_dim_v).to(matmul_dtype)
    out = torch.empty(batch * heads, seqlen_q, head_dim_v, dtype=out_dtype, device=q.device)
    per_row = seqlen_k * 8  # float64 scores dominate either way
    per_head = seqlen_q * per_row
    if per_head <= REF_CHUNK_BYTES:
        groups, rows = max(1, REF_CHUNK_BYTES // per_head), seqlen_q
    else:
        groups, rows = 1, max(1, REF_CHUNK_BYTES // per_row)
    cols = torch.arange(seqlen_k, device=q.device)
    for g0 in range(0, batch * heads, groups):
        g1 = min(g0 + groups, batch * heads)
        for r0 in range(0, seqlen_q, rows):
            r1 = min(r0 + rows, seqlen_q)
            scores = torch.matmul(qf[g0:g1, r0:r1], kf[g0:g1].transpose(-2, -1))
            scores = scores.to(softmax_dtype) * scale
            if score_mod is not None:
                group = torch.arange(g0, g1, device=q.device)[:, None, None]
                rows_idx = torch.arange(r0, r1, device=q.device)[None, :, None]
                scores = score_mod(
                    scores, group // heads, group % heads, rows_idx, cols[None, None, :]
                ).to(softmax_dtype)
            if causal:
                row_ids = torch.arange(r0, r1, device=q.device)[:, None]
                scores.masked_fill_(cols[None, :] > row_ids, float("-inf"))
            probs = torch.softmax(scores, dim=-1).to(matmul_dtype)
            del scores
            out[g0:g1, r0:r1] = torch.matmul(probs, vf[g0:g1]).to(out_dtype)
            del probs
    return out.reshape(batch, heads, seqlen_q, head_dim_v)


class Reference:
    """The float64 golden output and the low-precision eager error for one case.

    Computed once per case and shared by all backends, on the same inputs.
    """

    def __init__(self, q, k, v, causal, scale, rtol=RTOL, atol=ATOL, score_mod=None):
        self.golden = attention_chunked(
            q, k, v, causal, scale, torch.float64, torch.float64, torch.float64, score_mod
        )
        eager = attention_chunked(
            q, k, v, causal, scale, q.dtype, torch.float32, q.dtype, score_mod
        )
        self.eager_err = max_abs_diff(eager, self.golden)
        del eager
        self.tol = rtol * self.eager_err + atol

    def check(self, out):
        """(ok, max error, reason): NaN/Inf or a wrong shape fail outright."""
        if tuple(out.shape) != tuple(self.golden.shape):
            return (
                False,
                float("nan"),
                f"shape {tuple(out.shape)} != {tuple(self.golden.shape)}",
            )
        if not bool(torch.isfinite(out).all()):
            return False, float("nan"), "output has NaN or Inf"
        err = max_abs_diff(out, self.golden)
        if err > self.tol:
            return (
                False,
                err,
                (
                    f"max|out-ref| = {err:.3g} > tol {self.tol:.3g} "
                    f"(= rtol x eager error {self.eager_err:.3g} + atol)"
                ),
            )
        return True, err, ""


def max_abs_diff(a, b):
    """max|a - b| in float64, chunked along dim 0 to bound the temporary."""
    worst = 0.0
    for i in range(a.shape[0]):
        worst = max(worst, (a[i].double() - b[i].double()).abs().max().item())
    return worst


class L2Flusher:
    """Writes a buffer larger than L2 (H200: 50 MB) before each timed run, so
    no run finds its inputs in cache left by the previous one."""

    def __init__(self, mbytes, device):
        self.buffer = (
            torch.empty(mbytes << 20, dtype=torch.uint8, device=device) if mbytes > 0 else None
        )

    def __call__(self):
        if self.buffer is not None:
            self.buffer.zero_()


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_runs(fn, runs, flush, warmup=0, device="cuda"):
    """Per-run milliseconds of fn(), with CUDA events on a GPU.

    The flush sits outside each start/end pair, so it is not timed; one
    synchronize at the end keeps the host from pacing the GPU. On a CPU
    (tests only) a wall clock stands in for the events.
    """
    for _ in range(warmup):
        flush()
        fn()
    if torch.device(device).type != "cuda":
        times = []
        for _ in range(runs):
            flush()
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return times
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for start, end in zip(starts, ends):
        flush()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in zip(starts, ends)]


def median_ms(fn, runs=20, warmup=3, device="cuda"):
    """The median of time_runs without a flush: the scripts' timing of
    one call where its inputs are in L2 anyway (scripts/*_speed.py,
    check_bundles.py)."""
    return statistics.median(time_runs(fn, runs, flush=lambda: None, warmup=warmup, device=device))


def peak_memory(fn, device="cuda"):
    """Bytes fn() allocates above what was allocated before it (one run,
    output included); None off the GPU."""
    if torch.device(device).type != "cuda":
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return peak
