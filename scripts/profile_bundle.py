#!/usr/bin/env python3
"""Launches one bundle a few times on one shape, for a profiler to catch:
    ncu --kernel-name regex:sdpa_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        python3 scripts/profile_bundle.py BUNDLE_DIR [SEQLEN]
Shapes follow the paper preset: B x S = 16k tokens, H x D = 2048.
"""

import math
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_bundles import launch, load  # noqa: E402


def main():
    bundle = pathlib.Path(sys.argv[1])
    seqlen = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
    torch.zeros(1, device="cuda")
    manifest, func = load(bundle)
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[manifest["dtype"]]
    d = manifest["head_dim"]
    b, h = 16384 // seqlen, 2048 // d
    q, k, v = (torch.randn(b, h, seqlen, d, device="cuda", dtype=dtype) for _ in range(3))
    for _ in range(4):
        launch(manifest, func, q, k, v, 1.0 / math.sqrt(d))
    print(f"ran {bundle.name} 4 times at B={b} H={h} S={seqlen} D={d}")


if __name__ == "__main__":
    main()
