"""The sweep: for each case, check every backend on the same inputs, then
time the correct ones in interleaved rounds.

Interleaving (round r times every backend before round r+1) spreads clock
and thermal drift over all backends alike: the same cuDNN kernel measured
twice in one run differed by up to 12% on our H200 (ANCHORS section 7).
"""

import dataclasses
import functools
import math
import warnings

import torch

from tiledattn.bench import env, measure
from tiledattn.bench.backends import FLEX_SLOW_FRACTION, FUSED_BASELINES, Prepared, Unsupported


@dataclasses.dataclass
class Settings:
    runs: int = 30  # timed runs per backend and case, over all rounds
    slow_runs: int = 10  # for the unfused backends (math, eager)
    # Interleaved rounds the runs are split into; 0: one full cycle of
    # round_order (the number of backends timed, twice that if odd).
    rounds: int = 0
    warmup: int = 5
    slow_max_seqlen: int = 8192
    flush_mb: int = 256
    rtol: float = measure.RTOL
    atol: float = measure.ATOL
    seed: int = 0
    # Sample the SM clock and power after each backend's last timed round
    # (one nvidia-smi call per backend and case).
    sample_gpu_state: bool = True
    # The figure the table shows: report.METRICS ("kv_tb_s" for decodes).
    metric: str = "tflops"
    # What is timed: the forward ("fwd"), the backward of a forward done
    # before the timing ("bwd"), or both ("fwd+bwd"); see DIRECTION_FLOPS.
    direction: str = "fwd"


# FLOPs of a direction in forward FLOPs: the backward's five matmuls are
# counted as 2.5 forwards (FlashAttention's convention).
DIRECTION_FLOPS = {"fwd": 1.0, "bwd": 2.5, "fwd+bwd": 3.5}
# A backward run's gradients against float64: within this fraction of the
# largest reference gradient (the strict criterion: test_gpu_backward.py).
BACKWARD_RTOL = 2e-2


def _is_oom(error):
    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error)


def _first_lines(text, limit=400):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _failure(row, error, caught):
    """Fills status/reason for an exception: OOM, UNSUPPORTED or ERROR."""
    from tiledattn.errors import UnsupportedInputError

    notes = [str(w.message) for w in caught or ()]
    if _is_oom(error):
        row["status"] = "OOM"
    elif isinstance(error, (Unsupported, UnsupportedInputError)) or any(
        text in str(error) for text in ("No available kernel", "No viable backend")
    ):
        row["status"] = "UNSUPPORTED"
    else:
        row["status"] = "ERROR"
    reason = f"{type(error).__name__}: {error}"
    if notes:  # SDPA explains its refusals only in warnings
        reason += " | " + " | ".join(dict.fromkeys(notes))
    row["reason"] = _first_lines(reason)


def _empty_cache(device):
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()


def _poison(shape, dtype, device):
    """Leaves a NaN-filled block of the output's size in the caching
    allocator, so a kernel that skips writing its output shows NaN instead
    of a previous backend's correct answer."""
    junk = torch.full(shape, float("nan"), dtype=dtype, device=device)
    del junk


@functools.cache
def _balanced_orders(n):
    """A Williams design for n backends: orders (as index lists) in which
    every backend takes every position equally often and runs right after
    every other one equally often (n orders for even n, 2n for odd n, where
    the second half are the first's mirrors). For odd n the mirrors' order
    is picked so no backend runs twice in a row across an order's end."""
    base, low, high = [0], 1, n - 1
    while len(base) < n:
        if len(base) % 2:
            base.append(low)
            low += 1
        else:
            base.append(high)
            high -= 1
    rows = [[(b + r) % n for b in base] for r in range(n)]
    if n % 2 == 0 or n == 1:
        return rows

    def mirrors(step):
        return [[(b + step * m) % n for b in base][::-1] for m in range(n)]

    def no_repeat(step):
        sequence = [x for row in rows + mirrors(step) + rows[:1] for x in row]
        return all(a != b for a, b in zip(sequence, sequence[1:]))

    return rows + mirrors(next((s for s in range(1, n) if no_repeat(s)), 1))


def round_order(names, r):
    """The order the backends run in round r, from a Williams design: over a
    full cycle (len(names) rounds, twice that for an odd count) every
    backend runs at every position and right after every other one equally
    often. At the power limit a run right after a lighter kernel is faster,
    so a plain rotation, which kept each backend behind the same one in
    every round, favoured some: an identical copy of a D=256 kernel timed
    1-4% faster than the shipped one, and running one backend twice in a
    row cost cuDNN 7% at D=128 16k (docs/perf-notes.md, fourteenth
    session)."""
    if not names:
        return []
    orders = _balanced_orders(len(names))
    return [names[i] for i in orders[r % len(orders)]]


class _Gradients:
    """A backward run's check against float64 gradients (computed once per
    case, on the first backend that gets there), and its timed step."""

    def __init__(self, case, q, k, v):
        self.case, self.inputs = case, (q, k, v)
        self.grad_out = None
        self.want = None

    def check_and_time(self, prepared, out, direction):
        """(ok, error, reason, the Prepared whose fn is the timed step)."""
        from tiledattn import backward

        if self.case.score_mod != "none" or self.case.mask != "none":
            raise Unsupported("the backward mode runs plain attention only")
        if not out.requires_grad:
            raise Unsupported("its output has no gradient (no backward)")
        if self.grad_out is None:
            self.grad_out = torch.randn_like(out)
            scale = 1.0 / math.sqrt(self.case.head_dim)
            with torch.no_grad():
                detached = [t.detach() for t in self.inputs]
                ref_out, ref_lse = backward.forward_with_lse(*detached, self.case.causal, scale)
                self.want = backward.sdpa_backward(
                    self.grad_out.double(),
                    None,
                    *(t.double() for t in detached),
                    ref_out,
                    ref_lse,
                    self.case.causal,
                    scale,
                    compute=torch.float64,
                )
        # Backends on (B, S, H, D) copies: their own leaves and dO in their
        # layout (Prepared.bshd_leaves), the gradients viewed back.
        bshd = bool(prepared.bshd_leaves)

        def native(t):
            return t.transpose(1, 2) if bshd else t

        inputs = prepared.bshd_leaves or self.inputs
        grad_out = native(self.grad_out).contiguous() if bshd else self.grad_out
        got = [
            native(g) for g in torch.autograd.grad(native(out), inputs, grad_out, retain_graph=True)
        ]
        worst, why = 0.0, ""
        for name, g, ref in zip("qkv", got, self.want):
            error = (g.double() - ref).abs().max().item()
            limit = BACKWARD_RTOL * ref.abs().max().item() + 1e-3
            worst = max(worst, error)
            if not error <= limit:
                why = f"d{name}: max|g - ref| = {error:.3g} > {limit:.3g}"
                break
        forward = prepared.fn
        if direction == "bwd":

            def step():
                return torch.autograd.grad(native(out), inputs, grad_out, retain_graph=True)
        else:

            def step():
                return torch.autograd.grad(native(forward()), inputs, grad_out)

        timed = Prepared(step, prepared.info, prepared.context)
        return not why, worst, why, timed


def run_case(case, backends, settings, flusher, device="cuda"):
    """Result rows (dicts) for one case, one per backend, never raising."""
    forward_flops = measure.flops(
        case.batch,
        case.heads,
        case.seqlen_q,
        case.seqlen_k,
        case.head_dim,
        case.causal,
        case.mask_spec,
    )
    base = {
        **case.fields(),
        "metric": settings.metric,
        "direction": settings.direction,
        "flops": int(forward_flops * DIRECTION_FLOPS[settings.direction]),
    }
    backward = settings.direction != "fwd"
    rows = {b.name: {**base, "backend": b.name, "status": "", "reason": ""} for b in backends}
    torch.manual_seed(settings.seed)
    shape_q = (case.batch, case.heads, case.seqlen_q, case.head_dim)
    shape_k = (case.batch, case.kv_heads, case.seqlen_k, case.head_dim)
    try:
        q = torch.randn(shape_q, dtype=case.torch_dtype, device=device, requires_grad=backward)
        k = torch.randn(shape_k, dtype=case.torch_dtype, device=device, requires_grad=backward)
        v = torch.randn(shape_k, dtype=case.torch_dtype, device=device, requires_grad=backward)
        grads = _Gradients(case, q, k, v) if backward else None
        ref = measure.Reference(
            q,
            k,
            v,
            case.causal,
            1.0 / math.sqrt(case.head_dim),
            settings.rtol,
            settings.atol,
            case.masked_score_mod(device),
        )
    except Exception as error:  # noqa: BLE001 -- the case cannot run: say so per backend
        for row in rows.values():
            _failure(row, error, None)
            row["reason"] = "reference: " + row["reason"]
        _empty_cache(device)
        return list(rows.values())

    ready = {}
    for backend in backends:
        row = rows[backend.name]
        if backend.slow and case.seqlen_q > settings.slow_max_seqlen:
            row["status"] = "SKIPPED"
            row["reason"] = (
                f"unfused backend skipped beyond S={settings.slow_max_seqlen} "
                "(--slow-max-seqlen) to bound the sweep's time and memory"
            )
            continue
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                prepared = backend.prepare(case, q, k, v)
                row.update(prepared.info)
                _poison(shape_q, case.torch_dtype, device)
                with prepared.context():
                    out = prepared.fn()
                    measure.synchronize(device)
            with torch.no_grad():
                ok, err, why = ref.check(out)
            row.update(max_err=err, tol=ref.tol, eager_err=ref.eager_err)
            if ok and backward:
                ok, err, why, prepared = grads.check_and_time(prepared, out, settings.direction)
                row.update(grad_err=err)
            del out
            if not ok:
                # A wrong answer is never timed: its speed means nothing.
                row["status"], row["reason"] = "WRONG", why
                continue
            with prepared.context():
                row["peak_mem_bytes"] = measure.peak_memory(prepared.fn, device)
            ready[backend.name] = (backend, prepared)
        except Exception as error:  # noqa: BLE001 -- record it, never stop the sweep
            _failure(row, error, caught)
            _empty_cache(device)

    times = {name: [] for name in ready}
    rounds = settings.rounds or len(_balanced_orders(max(1, len(ready))))
    for r in range(rounds):
        for name in round_order(list(ready), r):
            if name not in times:
                continue  # failed in an earlier round
            backend, prepared = ready[name]
            total = settings.slow_runs if backend.slow else settings.runs
            per_round = max(1, math.ceil(total / rounds))
            try:
                with prepared.context():
                    times[name] += measure.time_runs(
                        prepared.fn,
                        per_round,
                        flusher,
                        warmup=settings.warmup if r == 0 else 1,
                        device=device,
                    )
                if settings.sample_gpu_state and r == rounds - 1:
                    rows[name].update(env.gpu_state())
            except Exception as error:  # noqa: BLE001 -- e.g. OOM: record, go on
                _failure(rows[name], error, None)
                del times[name]
                _empty_cache(device)

    for name, samples in times.items():
        row = rows[name]
        row.update(measure.summarize(samples))
        row["status"] = "ok"
        row["tflops"] = measure.tflops(base["flops"], row["ms_median"])
        # Slower runs (p90 time) give the low end of the TFLOP/s spread.
        row["tflops_p10"] = measure.tflops(base["flops"], row["ms_p90"])
        row["tflops_p90"] = measure.tflops(base["flops"], row["ms_p10"])
        # K+V bytes read once per median time: a decode's figure (TB/s).
        row["kv_tb_s"] = case.kv_bytes / (row["ms_median"] * 1e-3) / 1e12
    flag_slow_flex(rows)
    del q, k, v, ref, ready
    _empty_cache(device)
    return list(rows.values())


def flag_slow_flex(rows):
    """Flags a FlexAttention result far below the fused SDPA kernels: the sign
    of a run that fell back to unfused attention."""
    flex = rows.get("flex")
    if not flex or flex.get("status") != "ok":
        return
    fused = [
        rows[n]["tflops"] for n in FUSED_BASELINES if n in rows and rows[n].get("status") == "ok"
    ]
    if fused and flex["tflops"] < FLEX_SLOW_FRACTION * max(fused):
        flex["flags"] = "flex-slow"
        flex["reason"] = (
            f"{flex['tflops']:.0f} TFLOP/s < {FLEX_SLOW_FRACTION:g} x best fused "
            f"SDPA ({max(fused):.0f}): probably not running the compiled kernel"
        )
