#!/usr/bin/env python3
"""Runs the backward's tile programs (tiledattn.backward_kernels) a few times
on one paper-preset shape (bf16, D = 128, 16 heads, B x S = 16k), for a
profiler to catch the main program:

    ncu --kernel-name regex:bwd_main --launch-skip 1 --launch-count 1 \\
        --section SpeedOfLight --section WarpStateStats \\
        python3 scripts/profile_backward.py [SEQLEN] [--main BUNDLE [--dq-layout L]]

--program: one of backward_kernels.MAIN_PROGRAMS instead of the default;
--main: a candidate main bundle instead; --dq-layout: how it adds dQ
(backward_kernels.attention_backward's dq_layout).
"""

import argparse
from pathlib import Path

import torch

import tiledattn.attention
from tiledattn.backward_kernels import attention_backward

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seqlen", type=int, nargs="?", default=4096)
    parser.add_argument("--main", type=Path, help="a candidate main-program bundle")
    parser.add_argument(
        "--program", help="one of backward_kernels.MAIN_PROGRAMS (default: its default)"
    )
    parser.add_argument("--dq-layout", choices=("halves", "blocks", "rows"))
    parser.add_argument("--cache", type=Path, default=ROOT / "build/kernels-tile-ir/flex-cache")
    args = parser.parse_args()
    s, h, d = args.seqlen, 16, 128
    b = max(1, 16384 // s)
    q, k, v, grad = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    launch = tiledattn.attention._prepare(q, k, v, None, 0.0, False, None, False, False, None)
    out, lse = launch.run_with_lse()
    for _ in range(3):
        attention_backward(
            q,
            k,
            v,
            out,
            lse,
            grad,
            d**-0.5,
            cache=args.cache,
            main_program=args.program,
            main_bundle=args.main,
            dq_layout=args.dq_layout,
        )
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
