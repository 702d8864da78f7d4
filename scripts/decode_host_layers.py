#!/usr/bin/env python3
"""Host microseconds per call of the decode routes, layer by layer (what
host_overhead.py gives as one number): where a call's time goes before the
GPU sees it.

(a) scaled_dot_product_attention's decode route (Sq 1, Hq 32 / Hkv 8, Sk
256, bf16, inference_mode): the whole call, decode_attention, _plan,
decode.run (with and without the _chosen record), the raw sdpa_fwd_no_grad
op with the plan's captures, _finish; (b) kvcache_attention, contiguous and
pages of 16 (B1 Sk256, B8 Sk4096): the whole call, _prologue, _plan, run;
cuDNN's SDPA on the same shapes for reference.

Each row: the median over --repeats of (a loop of --calls calls with no
sync inside, then one sync) / calls, and the same loop's time to issue
alone (before the sync). Where the GPU work is longer than the host's,
the first column is GPU time; the second stays host time while the
launch queue has room.

    GPU machine: PYTHONPATH=python TILEDATTN_CACHE_DIR=... \\
        python3 scripts/decode_host_layers.py [--calls N] [--repeats R]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import tiledattn  # noqa: E402
from tiledattn import decode, kvcache  # noqa: E402


def per_call_us(fn, calls, repeats):
    """(median per-call us with the final sync, median us to issue)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    synced, issued = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        mid = time.perf_counter()
        torch.cuda.synchronize()
        end = time.perf_counter()
        synced.append((end - start) / calls * 1e6)
        issued.append((mid - start) / calls * 1e6)
    return statistics.median(synced), statistics.median(issued)


def row(name, fn, args):
    try:
        synced, issued = per_call_us(fn, args.calls, args.repeats)
    except Exception as error:  # a layer that cannot run here: say so, go on
        print(f"  {name:44s} error: {type(error).__name__}: {str(error)[:80]}")
        return
    print(f"  {name:44s} {synced:8.1f} {issued:8.1f}")


def header(title):
    print(f"\n== {title}")
    print(f"  {'layer':44s} {'us/call':>8s} {'issue':>8s}")


def sdpa_layers(args):
    header("sdpa decode route: B1 Sq1 Hq32 Hkv8 Sk256 D128 bf16, inference_mode")
    q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, 256, 128, device="cuda", dtype=torch.bfloat16) for _ in "kv")
    sdpa = tiledattn.scaled_dot_product_attention
    tiledattn.decode_attention(q, k, v)  # the choice, kept in decode._chosen
    key = decode._plan_key(q, k, v, False, None, None, None, None)
    chosen = decode._chosen[key]
    plan = decode._plan(q, k, v, False, chosen.splits, chosen.sms, chosen.schedule)
    scale = 1.0 / 128**0.5
    launch = decode._launch(plan.packed, k, v, None, 0.0, False, scale, True, False, chosen.entry)
    op = torch.ops.tiledattn.sdpa_fwd_no_grad
    op_args = (plan.packed, k, v, False, scale, launch.bundle, plan.captures)
    out, lse = op(*op_args)
    print(
        f"  (splits {plan.splits}, schedule {chosen.schedule}, bundle {Path(launch.bundle).name})"
    )
    row("whole sdpa(enable_gqa=True)", lambda: sdpa(q, k, v, enable_gqa=True), args)
    row("decode_attention", lambda: tiledattn.decode_attention(q, k, v), args)
    row(
        "decode._plan",
        lambda: decode._plan(q, k, v, False, chosen.splits, chosen.sms, chosen.schedule),
        args,
    )
    row(
        "decode.run (chosen: launch plan kept)",
        lambda: decode.run(plan, k, v, None, chosen.entry, False, chosen),
        args,
    )
    row(
        "decode.run (no chosen: _launch)",
        lambda: decode.run(plan, k, v, None, chosen.entry, False),
        args,
    )
    row(
        "attention._launch of the decode kernel",
        lambda: decode._launch(
            plan.packed, k, v, None, 0.0, False, scale, True, False, chosen.entry
        ),
        args,
    )
    row("raw sdpa_fwd_no_grad with captures", lambda: op(*op_args), args)
    row("decode._finish", lambda: decode._finish(plan, out, lse, False), args)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        row(
            "cuDNN SDPA (enable_gqa=True)",
            lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
            args,
        )
    row("torch.empty (reference)", lambda: torch.empty(1, 32, 1, 128, device="cuda"), args)


def kvcache_layers(args, batch, length_k, page):
    kind = f"pages of {page}" if page else "contiguous"
    header(f"kvcache_attention {kind}: B{batch} Sq1 Hq32 Hkv8 Sk{length_k} D128 bf16")
    dtype, heads_kv = torch.bfloat16, 8
    q = torch.randn(batch, 1, 32, 128, device="cuda", dtype=dtype)
    table = None
    if page:
        per_seq = length_k // page
        order = torch.randperm(batch * per_seq, device="cuda")
        table = order.view(batch, per_seq).to(torch.int32)
        shape = (batch * per_seq, page, heads_kv, 128)
    else:
        shape = (batch, length_k, heads_kv, 128)
    k_cache, v_cache = (torch.randn(shape, device="cuda", dtype=dtype) for _ in "kv")
    seqlens = torch.full((batch,), length_k, dtype=torch.int32, device="cuda")
    lengths = kvcache._lengths(seqlens, batch, q.device)
    sms = decode.multiprocessors(q.device)
    from tiledattn.compiler import kernel_entry

    entry = kernel_entry(kvcache.kernel_text(dtype, 128, 128, page))
    plan, keys, values = kvcache._plan(q, k_cache, v_cache, lengths, table, page, False, None, sms)
    capacity = table.shape[1] * page if page else length_k
    blocks = -(-capacity // kvcache._BLOCK_KEYS)
    prologue = (lengths, 1, False, heads_kv, plan.splits, blocks)
    print(f"  (splits {plan.splits}, {blocks} key blocks)")

    def whole():
        return tiledattn.kvcache_attention(q, k_cache, v_cache, seqlens, table)

    row("whole kvcache_attention", whole, args)
    row("kvcache._prologue (graph replay)", lambda: kvcache._prologue(*prologue), args)
    row("kvcache._bounds_and_map (op by op)", lambda: kvcache._bounds_and_map(*prologue), args)
    row(
        "kvcache._plan",
        lambda: kvcache._plan(q, k_cache, v_cache, lengths, table, page, False, None, sms),
        args,
    )
    row("decode.run", lambda: decode.run(plan, keys, values, None, entry, False), args)
    if not page:
        qt, kt, vt = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            row(
                "cuDNN SDPA ([B, H, S, D] views, enable_gqa)",
                lambda: F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True),
                args,
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per timed loop")
    parser.add_argument("--repeats", type=int, default=7, help="timed loops per row (median)")
    parser.add_argument(
        "--only", choices=("sdpa", "kvcache"), help="one of the two sections (default both)"
    )
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("decode_host_layers: needs a CUDA GPU", file=sys.stderr)
        return 1
    start = time.perf_counter()
    with torch.inference_mode():
        if args.only in (None, "sdpa"):
            sdpa_layers(args)
        if args.only in (None, "kvcache"):
            for batch, length_k in ((1, 256), (8, 4096)):
                for page in (0, 16):
                    kvcache_layers(args, batch, length_k, page)
    print(f"\n({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
