#!/usr/bin/env python3
"""Runs torch's SDPA with one backend a few times on one shape, for a
profiler to catch (what the fastest baseline launches: grid, cluster,
registers, shared memory, and where its time goes):
    ncu --section LaunchStats --section SpeedOfLight \\
        python3 scripts/profile_sdpa.py [SEQLEN] [HEAD_DIM] [BACKEND] [CAUSAL]
Shapes follow the paper preset: B x S = 16k tokens, H x D = 2048, bf16.
BACKEND: cudnn (default), flash, efficient.
"""

import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def main():
    seqlen = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    backend = sys.argv[3] if len(sys.argv) > 3 else "cudnn"
    causal = len(sys.argv) > 4 and sys.argv[4] == "1"
    b, h = 16384 // seqlen, 2048 // d
    q, k, v = (torch.randn(b, h, seqlen, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    torch.cuda.synchronize()
    with sdpa_kernel([BACKENDS[backend]]):
        for _ in range(4):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()
    print(f"ran {backend} SDPA 4 times at B={b} H={h} S={seqlen} D={d} causal={causal}")


if __name__ == "__main__":
    main()
