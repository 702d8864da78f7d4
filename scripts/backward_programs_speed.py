#!/usr/bin/env python3
"""Speed of the backward's tile programs (tiledattn.backward_kernels) beside
torch's SDPA backward (cuDNN and FlashAttention-2 backends), same run, on
the paper preset's shapes (bf16, D = 128 and 16 heads, or --head-dim 64 and 32
heads, or 256 and 8, B x S = 16k; --causal: torch's is_causal, with the causal
row form). TFLOP/s = 2.5 x the forward's 4 B H S^2 D (x 0.5 causal) / time,
FA's convention.

    GPU machine: PYTHONPATH=python python3 scripts/backward_programs_speed.py \\
        [--cache DIR] [--main BUNDLE ...] [--lengths 1024,4096] [--causal]
        [--deterministic] [--deterministic-pair DKDV,DQ ...]

--cache: where the programs' bundles are (default: the compile cache, then
the package's, build/kernels/by-text, as autograd finds them).
Every main program (backward_kernels.MAIN_PROGRAMS) has a column, the
default first; each other one, and each candidate bundle, is timed after
a check that its gradients equal the default's within bf16 rounding (one
that disagrees is noted with its error: a probe may leave work out on
purpose, to see what that work costs). --main: candidate bundles that add
dQ as the default program of the head dim does (the row forms: two 64-column
halves a query block at D = 128, whole 64 x 64 blocks at D = 64);
--main-blocks: as one 64 x 128 block (as main_bf16_d128.mlir);
--main-row-order: in row order (tiledattn.reduce_add's atomics).
"""

import argparse
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tiledattn
import tiledattn.attention
from tiledattn.backward_kernels import (
    _DEFAULTS,
    CAUSAL_MAIN,
    DEFAULT_MAIN,
    DETERMINISTIC_PROGRAMS,
    MAIN_PROGRAMS,
    attention_backward,
)
from tiledattn.bench.measure import median_ms


def paper_inputs(s, d, causal):
    """The paper preset's backward inputs at length s and head dim d (bf16,
    B x S = 16k, H = 2048 // D): (b, h, q, k, v, dO, O, lse), O and lse from
    tiledattn's forward."""
    b, h = 16384 // s, 2048 // d
    q, k, v, grad = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    launch = tiledattn.attention._prepare(q, k, v, None, 0.0, causal, None, False, False, None)
    out, lse = launch.run_with_lse()
    return b, h, q, k, v, grad, out, lse


def torch_backward(q, k, v, grad, causal, backend):
    """A call of torch's SDPA backward on that backend (its forward done once)."""
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(backend):
        o = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    return lambda: torch.autograd.grad(o, leaves, grad, retain_graph=True)


def case(s, cache, candidates, causal=False, d=128):
    """One row: the programs, the candidates, cuDNN's and FA2's backward at length s."""
    b, h, q, k, v, grad, out, lse = paper_inputs(s, d, causal)
    scale = d**-0.5
    flops = 2.5 * 4 * b * h * s * s * d * (0.5 if causal else 1)

    def ours(**kwargs):
        return attention_backward(
            q, k, v, out, lse, grad, scale, causal=causal, cache=cache, **kwargs
        )

    times = [median_ms(ours)]
    shipped = ours()
    notes = []
    for name, kwargs in candidates:
        got = ours(**kwargs)
        error = max((a.float() - b.float()).abs().max().item() for a, b in zip(got, shipped))
        bound = 2e-2 * max(b.float().abs().max().item() for b in shipped)
        if not error <= bound:  # still timed: a probe may leave work out on purpose
            notes.append(f"{name} differs by {error:.3g}")
        times.append(median_ms(lambda kwargs=kwargs: ours(**kwargs)))

    times += [median_ms(torch_backward(q, k, v, grad, causal, SDPBackend.CUDNN_ATTENTION))]
    times += [median_ms(torch_backward(q, k, v, grad, causal, SDPBackend.FLASH_ATTENTION))]
    tf = [flops / t / 1e9 for t in times]
    cells = " | ".join(f"{x:.0f}" for x in tf)
    return f"| {s} | {b} | {cells} | {tf[0] / tf[-2]:.2f} |" + "".join(f" {n}" for n in notes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument(
        "--main",
        action="append",
        default=[],
        help="a candidate main bundle that adds dQ as the default program does",
    )
    parser.add_argument(
        "--main-row-order", action="append", default=[], help="one that adds dQ in row order"
    )
    parser.add_argument(
        "--main-blocks", action="append", default=[], help="one that adds dQ in whole blocks"
    )
    parser.add_argument("--lengths", default="1024,4096")
    parser.add_argument(
        "--causal", action="store_true", help="causal attention (the causal row form)"
    )
    parser.add_argument(
        "--head-dim", type=int, default=128, help="64, 128, 192 or 256 (H = 2048 // D)"
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="a column for attention_backward(deterministic=True) (its two programs)",
    )
    parser.add_argument(
        "--deterministic-pair",
        action="append",
        default=[],
        metavar="DKDV,DQ",
        help="a column for a candidate pair of deterministic bundles (an A/B)",
    )
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}")
    # The other main programs (backward_kernels.MAIN_PROGRAMS), then the bundles.
    first = _DEFAULTS[(args.head_dim, args.causal)]
    candidates = [
        (Path(p).stem, dict(main_program=p))
        for p, m in MAIN_PROGRAMS.items()
        if p not in (DEFAULT_MAIN, CAUSAL_MAIN)
        and not m.causal
        and not args.causal
        and m.head_dim == args.head_dim == 128
    ] + [
        (Path(m).name, dict(main_bundle=m, dq_layout=layout))
        for layout, bundles in (
            (MAIN_PROGRAMS[first].dq_layout, args.main),
            ("blocks", args.main_blocks),
            ("rows", args.main_row_order),
        )
        for m in bundles
    ]
    if args.deterministic and (args.head_dim, args.causal) not in DETERMINISTIC_PROGRAMS:
        print(f"(no deterministic column: the mode has no programs at head dim {args.head_dim})")
    elif args.deterministic:
        candidates.append(("deterministic", dict(deterministic=True)))
    for pair in args.deterministic_pair:
        bundles = pair.split(",")
        name = "+".join(Path(b).name for b in bundles)
        candidates.append((name, dict(deterministic=True, deterministic_bundles=bundles)))
    names = [Path(first).stem] + [n for n, _ in candidates] + ["cuDNN", "FA2"]
    print("| S | B | " + " | ".join(names) + " | programs / cuDNN |")
    print("|---" * (len(names) + 3) + "|")
    for s in (int(x) for x in args.lengths.split(",")):
        print(case(s, args.cache, candidates, args.causal, args.head_dim), flush=True)


if __name__ == "__main__":
    main()
