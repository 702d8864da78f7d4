#!/usr/bin/env python3
"""One call of every kernel bundle, for compute-sanitizer to watch.

Usage: compute-sanitizer --tool TOOL [...] python3 scripts/sanitize_kernels.py
           [KERNEL_DIR | BUNDLE_DIR ...] [--lengths SHORT,LONG]
           [--filter SUBSTRING] [--no-check]

scripts/device-sanitize.sh runs it under each tool. Each bundle in each
KERNEL_DIR (default: the package's kernel dir), or each BUNDLE_DIR, runs once
per
key length (Sq = Sk; B = 1, 2 query heads on 1 K/V head so that GQA runs
too), through torch.ops.tiledattn.sdpa_fwd. A short and a long length make
every length variant of a schedule (peeled first block, split loops,
persistent tails) run. The outputs are then read on the GPU (a sum), so that
initcheck, run with PYTORCH_NO_CUDA_MEMORY_CACHING=1, reports any element the
kernel did not write. The result is also checked against float64, so that a
run under a tool that perturbs timing still has to be right (--no-check:
reported, not counted, for builds the tool cannot run faithfully).

Exit status: 0 when every call ran and was right, 1 otherwise (the tool's own
--error-exitcode reports what it found).
"""

import argparse
import json
import math
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import tiledattn  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def reference(q, k, v, causal, scale, dtype):
    """Output and lse computed in `dtype` (float64, or the inputs' own for
    the eager error that FlashAttention's criterion allows twice of)."""
    q, k, v = (t.to(dtype) for t in (q, k, v))
    k, v = (t.repeat_interleave(q.shape[1] // k.shape[1], dim=1) for t in (k, v))
    s = q @ k.transpose(-1, -2) * scale
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, -math.inf)
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s.double(), dim=-1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=pathlib.Path, metavar="DIR")
    parser.add_argument("--lengths", default="300,3000", help="key lengths (default 300,3000)")
    parser.add_argument("--filter", default="", help="only bundles whose name holds this")
    parser.add_argument("--no-check", action="store_true", help="report wrong results only")
    args = parser.parse_args(argv)
    lengths = [int(x) for x in args.lengths.split(",")]
    tiledattn.load_runtime()
    bundles = []
    for d in args.dirs or [tiledattn.kernel_dir()]:
        if (d / "manifest.json").is_file():
            bundles.append(d)
        else:
            bundles += sorted(
                p for p in d.iterdir() if (p / "manifest.json").is_file() and args.filter in p.name
            )
    if not bundles:
        print(f"error: no bundles in {args.dirs} match {args.filter!r}")
        return 1
    torch.manual_seed(0)
    failures = 0
    start = time.monotonic()
    for bundle in bundles:
        manifest = json.loads((bundle / "manifest.json").read_text())
        dtype, d, causal = DTYPES[manifest["dtype"]], manifest["head_dim"], manifest["causal"]
        dv = manifest.get("head_dim_v", d)
        scale = 1 / math.sqrt(d)
        for s in lengths:
            q = torch.randn(1, 2, s, d, dtype=dtype, device="cuda")
            k = torch.randn(1, 1, s, d, dtype=dtype, device="cuda")
            v = torch.randn(1, 1, s, dv, dtype=dtype, device="cuda")
            out, lse = torch.ops.tiledattn.sdpa_fwd(q, k, v, causal, scale, str(bundle))
            # Reads every element on the GPU: initcheck sees unwritten ones.
            total = out.float().sum().item() + lse.sum().item()
            ref, ref_lse = reference(q, k, v, causal, scale, torch.float64)
            low, _ = reference(q, k, v, causal, scale, dtype)
            err = (out.double() - ref).abs().max().item()
            err_low = (low.double() - ref).abs().max().item()
            lse_err = (lse.double() - ref_lse).abs().max().item()
            ok = math.isfinite(total) and err <= 2 * err_low + 1e-5 and lse_err < 1e-3
            failures += not ok
            print(
                f"{time.monotonic() - start:6.1f}s {'ok  ' if ok else 'FAIL'} {bundle.name:36s} S={s:5d} "
                f"max|out - ref| {err:.2e} (eager {err_low:.2e}) max|lse - ref| {lse_err:.2e}",
                flush=True,
            )
    print(f"{len(bundles)} bundles x {len(lengths)} lengths, {failures} wrong")
    return 1 if failures and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
