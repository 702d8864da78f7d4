#!/usr/bin/env python3
"""Where a backward's GPU time goes, kernel by kernel: tiledattn's
attention_backward (the preprocess, dQ's zeroing, the main program, dQ's
reordering and rounding) beside cuDNN's SDPA backward, on the paper preset's
shapes (bf16, B x S = 16k, H = 2048 // D), from torch.profiler's kernel
times (the mean of --repeat calls, in microseconds, and each kernel's share):

    PYTHONPATH=python python3 scripts/backward_phases.py --lengths 1024,4096 [--causal]

Why: at 1k tokens the main program is a few hundred microseconds, so the
memory-bound kernels around it (two passes over an f32 dQ of B x H x S x D)
can be a tenth of the backward; the speed script's totals do not say which.
"""

import argparse
import collections

import torch
from backward_programs_speed import paper_inputs, torch_backward
from torch.nn.attention import SDPBackend
from torch.profiler import ProfilerActivity, profile

from tiledattn.backward_kernels import attention_backward


def kernel_times(fn, repeat):
    """{kernel name: mean microseconds a call} of fn's GPU kernels."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeat):
            fn()
        torch.cuda.synchronize()
    totals = collections.Counter()
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] += event.device_time / repeat
    return totals


def show(title, totals):
    whole = sum(totals.values())
    print(f"{title}: {whole:.0f} us of kernels a call")
    for name, us in totals.most_common():
        print(f"  {us:9.1f} us {100 * us / whole:5.1f}%  {name[:100]}")


def length(s, d, causal, repeat):
    """The two breakdowns at length s."""
    b, h, q, k, v, grad, out, lse = paper_inputs(s, d, causal)
    print(f"\n## S {s}, B {b}, H {h}, D {d}{', causal' if causal else ''}")
    ours = kernel_times(
        lambda: attention_backward(q, k, v, out, lse, grad, d**-0.5, causal=causal), repeat
    )
    show("tiledattn", ours)
    cudnn = torch_backward(q, k, v, grad, causal, SDPBackend.CUDNN_ATTENTION)
    show("cuDNN", kernel_times(cudnn, repeat))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="1024,4096,16384")
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}")
    for s in (int(x) for x in args.lengths.split(",")):
        length(s, args.head_dim, args.causal, args.repeat)


if __name__ == "__main__":
    main()
