#!/usr/bin/env python3
"""Where a call's host time goes, layer by layer (what host_overhead.py
gives as one number): per-call microseconds of many back-to-back calls on
a tiny problem, for
  - the whole call (tiledattn.scaled_dot_product_attention),
  - the registered op alone (torch.ops.tiledattn.sdpa_fwd on the bundle
    the call picked: the C++ checks, tensor maps and launch),
  - the op under torch.no_grad and under inference_mode (the autograd
    kernel's part),
  - torch's cuDNN SDPA, same inputs;
then a torch.profiler table (CPU activities) of decode calls with and
without key splits, to find what the split path spends its host time on.
    python3 scripts/host_profile.py [CALLS]
"""

import functools
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "python")
import tiledattn  # noqa: E402
from tiledattn import attention, decode  # noqa: E402


def per_call_us(fn, calls):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def layers(calls):
    tiledattn._runtime.load_runtime()
    q, k, v = (torch.randn(1, 1, 128, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    launch = attention._launch(q, k, v, None, 0.0, False, None, False, False, None)
    op = torch.ops.tiledattn.sdpa_fwd
    args = (q, k, v, False, launch.scale, launch.bundle)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    rows = {
        "whole call": lambda: tiledattn.scaled_dot_product_attention(q, k, v),
        "_launch (Python plan only)": lambda: attention._launch(
            q, k, v, None, 0.0, False, None, False, False, None
        ),
        "op": lambda: op(*args),
        "op.default": lambda: op.default(*args),
    }
    for name, fn in rows.items():
        print(f"  {name:34s} {per_call_us(fn, calls):6.1f} us")
    with torch.no_grad():
        print(f"  {'op under no_grad':34s} {per_call_us(lambda: op(*args), calls):6.1f} us")
        print(
            f"  {'whole call under no_grad':34s} "
            f"{per_call_us(lambda: tiledattn.scaled_dot_product_attention(q, k, v), calls):6.1f} us"
        )
    with torch.inference_mode():
        print(f"  {'op under inference_mode':34s} {per_call_us(lambda: op(*args), calls):6.1f} us")
        print(
            f"  {'whole call, inference_mode':34s} "
            f"{per_call_us(lambda: tiledattn.scaled_dot_product_attention(q, k, v), calls):6.1f} us"
        )
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            print(
                f"  {'cuDNN SDPA, inference_mode':34s} {per_call_us(lambda: sdpa(q, k, v), calls):6.1f} us"
            )
    empty = functools.partial(torch.empty, (1, 1, 128, 128), device="cuda", dtype=torch.bfloat16)
    print(f"  {'torch.empty (reference)':34s} {per_call_us(empty, calls):6.1f} us")


def decode_profile(length_k, splits, calls=50):
    q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, length_k, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    call = functools.partial(decode.decode_attention, q, k, v, splits=splits)
    with torch.inference_mode():
        host = per_call_us(call, calls)
        torch.cuda.synchronize()
        # Host time alone: calls issued without waiting, the GPU far behind.
        start = time.perf_counter()
        for _ in range(calls):
            call()
        issued = (time.perf_counter() - start) / calls * 1e6
        torch.cuda.synchronize()
        print(
            f"\n== decode Sk={length_k} splits={splits}: {host:.1f} us a call, {issued:.1f} us to issue"
        )
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(20):
                call()
            torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print("== host layers, B1 H1 S128 D128 bf16")
    layers(calls)
    for splits in (1, 16):
        decode_profile(131072, splits)


if __name__ == "__main__":
    main()
