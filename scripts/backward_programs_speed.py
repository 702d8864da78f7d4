#!/usr/bin/env python3
"""Speed of the backward's tile programs (tiledattn.backward_kernels) beside
torch's SDPA backward (cuDNN and FlashAttention-2 backends), same run, on
the paper preset's shapes (bf16, D = 128, 16 heads, B x S = 16k, not
causal). TFLOP/s = 2.5 x the forward's 4 B H S^2 D / time, FA's convention.

    GPU machine: PYTHONPATH=python python3 scripts/backward_programs_speed.py [CACHE]

CACHE: where the programs' bundles are (default build/kernels-tile-ir/flex-cache).
"""

import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tiledattn
import tiledattn.attention
from tiledattn.backward_kernels import attention_backward

ROOT = Path(__file__).resolve().parents[1]


def timed(fn, runs=20):
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def case(s, cache):
    """One row: the programs, cuDNN's and FA2's backward at length s."""
    b, h, d = 16384 // s, 16, 128
    q, k, v, grad = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    scale = d**-0.5
    launch = tiledattn.attention._prepare(q, k, v, None, 0.0, False, None, False, False, None)
    out, lse = launch.run_with_lse()
    flops = 2.5 * 4 * b * h * s * s * d
    ours = timed(lambda: attention_backward(q, k, v, out, lse, grad, scale, cache=cache))

    def torch_backward(backend):
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(*leaves)
        return lambda: torch.autograd.grad(o, leaves, grad, retain_graph=True)

    cudnn = timed(torch_backward(SDPBackend.CUDNN_ATTENTION))
    fa2 = timed(torch_backward(SDPBackend.FLASH_ATTENTION))
    tf = [flops / t / 1e9 for t in (ours, cudnn, fa2)]
    return f"| {s} | {b} | {tf[0]:.0f} | {tf[1]:.0f} | {tf[2]:.0f} | {tf[0] / tf[1]:.2f} |"


def main():
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build/kernels-tile-ir/flex-cache"
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}")
    print("| S | B | tile programs | cuDNN | FA2 | programs / cuDNN |")
    print("|---|---|---|---|---|---|")
    for s in (1024, 4096):
        print(case(s, cache), flush=True)


if __name__ == "__main__":
    main()
