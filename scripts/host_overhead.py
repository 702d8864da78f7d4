#!/usr/bin/env python3
"""Host-side cost of one call: the per-call time of many back-to-back calls
on a tiny problem (the GPU work is a few microseconds, so the CPU path --
Python checks, the dispatcher, tensor-map encoding, the launch -- is what is
timed), for tiledattn and for torch's SDPA backends on the same inputs.
    python3 scripts/host_overhead.py [CALLS]
"""

import functools
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "python")
import tiledattn  # noqa: E402


def per_call_us(fn, args, calls):
    for _ in range(20):
        fn(*args)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for d in (64, 128, 256):
        q, k, v = (torch.randn(1, 1, 128, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        with torch.inference_mode():
            ours = per_call_us(tiledattn.scaled_dot_product_attention, (q, k, v), calls)
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                cudnn = per_call_us(sdpa, (q, k, v), calls)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                flash = per_call_us(sdpa, (q, k, v), calls)
        print(
            f"D={d}: per call tiledattn {ours:.1f} us, cudnn {cudnn:.1f} us, flash {flash:.1f} us"
        )
    # A decode step (one token, GQA 4, a short cache): the decode route.
    q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, 256, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    ours_fn = functools.partial(tiledattn.scaled_dot_product_attention, enable_gqa=True)
    sdpa_fn = functools.partial(torch.nn.functional.scaled_dot_product_attention, enable_gqa=True)
    with torch.inference_mode():
        ours = per_call_us(ours_fn, (q, k, v), calls)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            cudnn = per_call_us(sdpa_fn, (q, k, v), calls)
    print(f"decode Sq=1 Hq32/Hkv8 Sk256: per call tiledattn {ours:.1f} us, cudnn {cudnn:.1f} us")


if __name__ == "__main__":
    main()
