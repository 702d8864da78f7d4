"""Decode bandwidth, issue 24's shapes (bf16, Hq 32 / Hkv 8, head dim 128):
tiledattn.decode_attention against torch's SDPA backends (enable_gqa) in
one process, as effective K+V bandwidth (the cache's bytes read once /
median time), with each result checked against SDPA's.

    GPU machine: TILEDATTN_CACHE_DIR=build/kernels-tile-ir/flex-cache \\
        PYTHONPATH=python python3 scripts/decode_speed.py [--runs N]
"""

import argparse
import functools
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import tiledattn  # noqa: E402
from tiledattn.bench.measure import time_runs  # noqa: E402
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


def median_ms(fn, runs):
    """The harness's timing (CUDA events per run), no L2 flush: the caches
    are larger than L2."""
    return statistics.median(time_runs(fn, runs, flush=lambda: None, warmup=3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| B | Sq | Sk | splits | tiledattn TB/s | " + " | ".join(BACKENDS) + " | max |diff| |")
    print("|---|---|---|---|---|" + "---|" * len(BACKENDS) + "---|")
    status = 0
    for batch, length_q, length_k in SHAPES:
        torch.manual_seed(0)
        q = torch.randn(batch, 32, length_q, 128, dtype=torch.bfloat16, device="cuda")
        k, v = (
            torch.randn(batch, 8, length_k, 128, dtype=torch.bfloat16, device="cuda")
            for _ in range(2)
        )
        causal = length_q > 1
        gigabytes = bandwidth_bytes(k, v) / 1e9
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        splits = tiledattn.decode.num_splits(batch * 8, -(-length_k // 128), sms)

        ours = functools.partial(tiledattn.decode_attention, q, k, v, causal=causal)

        # torch's is_causal is top-left; bottom-right for Sq > 1 as a mask
        mask = None
        if causal:
            i = torch.arange(length_q, device="cuda")[:, None] + length_k - length_q
            mask = torch.arange(length_k, device="cuda")[None, :] <= i

        theirs = functools.partial(
            F.scaled_dot_product_attention, q, k, v, attn_mask=mask, enable_gqa=True
        )

        try:
            got = ours()
            cells = [f"{gigabytes / median_ms(ours, args.runs):.2f}"]
        except tiledattn.TiledAttnError as error:
            print(f"tiledattn: {error}", file=sys.stderr)
            got, cells, status = None, ["ERR"], 1
        want = None
        for backend in BACKENDS.values():
            try:
                with sdpa_kernel([backend]):
                    want = theirs() if want is None else want
                    cells.append(f"{gigabytes / median_ms(theirs, args.runs):.2f}")
            except RuntimeError:
                cells.append("n/a")
        diff = "n/a"
        if got is not None and want is not None:
            diff = f"{(got.float() - want.float()).abs().max().item():.3g}"
        print(
            f"| {batch} | {length_q} | {length_k} | {splits} | "
            + " | ".join(cells)
            + f" | {diff} |",
            flush=True,
        )
    print("TB/s = K+V bytes of the cache / median time (GB/ms)")
    return status


if __name__ == "__main__":
    sys.exit(main())
