"""Decode bandwidth, issue 24's shapes (bf16, Hq 32 / Hkv 8, head dim 128):
tiledattn.decode_attention against torch's SDPA backends (enable_gqa) in
one process, as effective K+V bandwidth (the cache's bytes read once /
median time), with each result checked against SDPA's.

    GPU machine: TILEDATTN_CACHE_DIR=build/kernels-tile-ir/flex-cache \\
        PYTHONPATH=python python3 scripts/decode_speed.py [--runs N]
"""

import argparse
import functools
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import tiledattn  # noqa: E402
from tiledattn.bench.measure import median_ms  # noqa: E402
from tiledattn.decode import bandwidth_bytes  # noqa: E402

SHAPES = [  # (B, Sq, Sk)
    (64, 1, 4096),
    (8, 1, 32768),
    (1, 1, 131072),
    (64, 4, 4096),
]
BACKENDS = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def timed(fn, want, gigabytes, runs) -> "tuple[str, float]":
    """fn's bandwidth cell and its result's largest difference from
    `want`; ("ERR", inf) where tiledattn refuses."""
    try:
        got = fn()
    except tiledattn.TiledAttnError as error:
        print(f"tiledattn: {error}", file=sys.stderr)
        return "ERR", float("inf")
    diff = (got.float() - want.float()).abs().max().item() if want is not None else 0.0
    return f"{gigabytes / median_ms(fn, runs):.2f}", diff


def _kvcache_call(q, k, v, page, causal):
    """kvcache_attention on k and v in FlashAttention's layout, every
    sequence full: contiguous (page 0) or in pages of `page` keys in
    shuffled order; returns [B, H, Sq, D] like decode_attention."""
    batch, heads_kv, length_k, d = k.shape
    k_cache, v_cache = (t.transpose(1, 2).contiguous() for t in (k, v))  # [B, Sk, H, D]
    table = None
    if page:
        per_seq = length_k // page
        order = torch.randperm(batch * per_seq, device=k.device)
        table = order.view(batch, per_seq).to(torch.int32)
        pools = []
        for cache in (k_cache, v_cache):
            pool = torch.empty(batch * per_seq, page, heads_kv, d, dtype=k.dtype, device=k.device)
            pool[order] = cache.reshape(batch * per_seq, page, heads_kv, d)
            pools.append(pool)
        k_cache, v_cache = pools
    query = q.transpose(1, 2)

    def call():
        out = tiledattn.kvcache_attention(query, k_cache, v_cache, length_k, table, causal=causal)
        return out.transpose(1, 2)

    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--schedules",
        default="default",
        help="comma-separated decode.SCHEDULES names, each a column "
        f"(of {', '.join(tiledattn.decode.SCHEDULES)}; 'default': decode_attention's "
        "own choice, tuned or not)",
    )
    parser.add_argument(
        "--splits",
        default="auto",
        help="comma-separated split counts, each a column ('auto': decode.num_splits)",
    )
    parser.add_argument(
        "--tune",
        action="store_true",
        help="tune each shape first (tiledattn.tune.tune_decode; the 'default' "
        "column then takes its winner) and print its table",
    )
    parser.add_argument(
        "--pages",
        default="",
        help="comma-separated page sizes, each a kvcache_attention column on the same "
        "cache (0: contiguous; P: pages of P keys in shuffled order)",
    )
    parser.add_argument(
        "--bshd",
        action="store_true",
        help="a decode_attention column on K/V in FlashAttention's [B, S, H, D] layout "
        "(transposed views), apart from kvcache_attention's per-call work",
    )
    args = parser.parse_args()
    pages = [int(p) for p in args.pages.split(",") if p]
    schedules = args.schedules.split(",")
    split_counts = [None if s == "auto" else int(s) for s in args.splits.split(",")]
    ours_columns = [
        (name, splits, f"{name} S={'auto' if splits is None else splits}")
        for name in schedules
        for splits in split_counts
    ]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    headers = [c[2] for c in ours_columns] + ["decode BSHD"] * args.bshd
    headers += [f"kvcache P={p}" for p in pages]
    headers += ["sdpa routed", "prefill"] + list(BACKENDS)
    print("| B | Sq | Sk | default choice | " + " | ".join(headers) + " | max |diff| |")
    print("|---|---|---|---|" + "---|" * len(headers) + "---|")
    status = False
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for batch, length_q, length_k in SHAPES:
        torch.manual_seed(0)
        q = torch.randn(batch, 32, length_q, 128, dtype=torch.bfloat16, device="cuda")
        k, v = (
            torch.randn(batch, 8, length_k, 128, dtype=torch.bfloat16, device="cuda")
            for _ in range(2)
        )
        causal = length_q > 1
        gigabytes = bandwidth_bytes(k, v) / 1e9
        splits = tiledattn.decode.num_splits(batch * 8, -(-length_k // 128), sms)
        auto = f"{tiledattn.decode.DEFAULT_SCHEDULE}/{splits}"
        if args.tune:
            table = tiledattn.tune.tune_decode(q, k, v, causal=causal, runs=args.runs)
            cells = ", ".join(
                f"{row['schedule']}/{row['splits']} "
                + (f"{gigabytes / row['ms']:.2f}" if row["ms"] else "n/a")
                for row in table
            )
            print(f"tuned B{batch} Sq{length_q} Sk{length_k} (TB/s, best first): {cells}")
            auto = f"{table[0]['schedule']}/{table[0]['splits']}"

        # torch's is_causal is top-left; bottom-right for Sq > 1 as a mask
        mask = None
        if causal:
            i = torch.arange(length_q, device="cuda")[:, None] + length_k - length_q
            mask = torch.arange(length_k, device="cuda")[None, :] <= i
        theirs = functools.partial(
            F.scaled_dot_product_attention, q, k, v, attn_mask=mask, enable_gqa=True
        )
        want = None
        cells = []
        for backend in BACKENDS.values():
            try:
                with sdpa_kernel([backend]):
                    want = theirs() if want is None else want
                    cells.append(f"{gigabytes / median_ms(theirs, args.runs):.2f}")
            except RuntimeError:
                cells.append("n/a")

        ours, diffs = [], []
        for name, splits, _ in ours_columns:
            cell, diff = timed(
                functools.partial(
                    tiledattn.decode_attention,
                    q,
                    k,
                    v,
                    causal=causal,
                    splits=splits,
                    schedule=None if name == "default" else name,
                ),
                want,
                gigabytes,
                args.runs,
            )
            ours.append(cell)
            diffs.append(diff)
        if args.bshd:
            k_bshd, v_bshd = (t.transpose(1, 2).contiguous().transpose(1, 2) for t in (k, v))
            cell, diff = timed(
                functools.partial(tiledattn.decode_attention, q, k_bshd, v_bshd, causal=causal),
                want,
                gigabytes,
                args.runs,
            )
            ours.append(cell)
            diffs.append(diff)
            del k_bshd, v_bshd
        for page in pages:
            cell, diff = timed(
                _kvcache_call(q, k, v, page, causal),
                want,
                gigabytes,
                args.runs,
            )
            ours.append(cell)
            diffs.append(diff)
        # scaled_dot_product_attention's own choice (the decode route for a
        # non-causal Sq <= 16; torch's top-left causal is not a KV cache's)
        # and its prefill kernels with the route turned off.
        if causal:
            ours += ["n/a", "n/a"]
        else:
            sdpa = functools.partial(
                tiledattn.scaled_dot_product_attention, q, k, v, enable_gqa=True
            )
            cell, diff = timed(sdpa, want, gigabytes, args.runs)
            ours.append(cell)
            diffs.append(diff)
            route = tiledattn.decode.routed
            tiledattn.decode.routed = lambda launch: None
            try:
                cell, diff = timed(sdpa, want, gigabytes, args.runs)
            finally:
                tiledattn.decode.routed = route
            ours.append(cell)
            diffs.append(diff)
        status |= any(d == float("inf") for d in diffs)
        print(
            f"| {batch} | {length_q} | {length_k} | {auto} | "
            + " | ".join(ours + cells)
            + f" | {max(diffs, default=0.0):.3g} |",
            flush=True,
        )
    print("TB/s = K+V bytes of the cache / median time (GB/ms)")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
