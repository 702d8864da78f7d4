#!/usr/bin/env python3
"""Forward bundles at shapes of many blocks, several launches each, against
torch's SDPA: counts rows that are not finite and the largest error. Faults
that need several resident blocks per multiprocessor, or a multiprocessor's
shared memory reused by the next block, show at these shapes and not at
scripts/check_bundles.py's small ones (the thirty-seventh session's causal
ctas_per_sm = 2 kernels: up to 7723 NaN rows in 5 launches, while every
small shape passed).

    GPU machine: PYTHONPATH=python python3 scripts/check_many_blocks.py BUNDLE... [--runs 5]
"""

import argparse

import torch
import torch.nn.functional as F

from tiledattn.compiler import compile

SHAPES = [(16, 32, 1024), (4, 32, 4096), (2, 32, 8192), (1, 32, 16384)]  # B, H, S


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundles", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    failed = 0
    for path in args.bundles:
        kernel = compile(path)
        manifest = kernel.manifest
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[manifest["dtype"]]
        causal, d = manifest["causal"], manifest["head_dim"]
        for b, h, s in SHAPES:
            torch.manual_seed(s)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
            want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            bad, worst = 0, 0.0
            for _ in range(args.runs):
                o = kernel(q, k, v, is_causal=causal)
                torch.cuda.synchronize()
                bad += int((~torch.isfinite(o)).any(-1).sum())
                worst = max(worst, (o.float() - want.float()).nan_to_num(1e9).abs().max().item())
            failed += bad > 0 or worst > 0.05
            print(
                f"{path} B{b} H{h} S{s}: {bad} rows not finite in {args.runs} runs, "
                f"largest error {worst:.3g}",
                flush=True,
            )
    print(f"{failed} shapes failed")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
