#!/usr/bin/env python3
"""Back-to-back launches of the backward's programs at one shape, for a
fault that shows only when launches queue up (issue 23: the head dim 64
program at B 16, H 32, S 1024). One checked launch first, then --launches
more without a sync between them, then each launch's gradients against the
first's (they must be equal up to the atomics' order).

    GPU machine: PYTHONPATH=python python3 scripts/backward_repeat.py \\
        [--head-dim 64] [--batch 16] [--heads 32] [--length 1024] \\
        [--launches 30] [--main BUNDLE] [--sync-each]

Run it under compute-sanitizer with a sanitizer build as --main (built with
`tiledattn-compile --sanitizer-build`) and few launches.
"""

import argparse

import torch

import tiledattn.attention
from tiledattn.backward_kernels import _kernel, attention_backward


def compare_with_reference(q, k, v, out, lse, grad, scale, candidate):
    """Each gradient's largest error against torch's float32 math backward,
    for the default programs, `candidate` (a main bundle) and torch's bf16
    FLASH backward (the same-precision error a backward should be near)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def torch_grads(dtype, backend):
        leaves = [t.detach().to(dtype).requires_grad_() for t in (q, k, v)]
        with sdpa_kernel(backend):
            o = torch.nn.functional.scaled_dot_product_attention(*leaves, scale=scale)
        return torch.autograd.grad(o, leaves, grad.to(dtype))

    want = torch_grads(torch.float32, SDPBackend.MATH)
    runs = {"programs": attention_backward(q, k, v, out, lse, grad, scale)}
    if candidate:
        runs[candidate] = attention_backward(q, k, v, out, lse, grad, scale, main_bundle=candidate)
    runs["torch FLASH bf16"] = torch_grads(torch.bfloat16, SDPBackend.FLASH_ATTENTION)
    for name, got in runs.items():
        errors = [(g.float() - w).abs().max().item() for g, w in zip(got, want)]
        print(f"  {name}: largest error dq {errors[0]:.3g} dk {errors[1]:.3g} dv {errors[2]:.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--launches", type=int, default=30)
    parser.add_argument("--main", default=None, help="a main bundle to run instead")
    parser.add_argument("--preprocess", default=None, help="a preprocess bundle to check instead")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="compare the programs' gradients (and --main's) with float32 torch math's",
    )
    parser.add_argument("--sync-each", action="store_true", help="synchronize after each launch")
    args = parser.parse_args()
    shape = (args.batch, args.heads, args.length, args.head_dim)
    torch.manual_seed(0)
    q, k, v, grad = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    launch = tiledattn.attention._prepare(q, k, v, None, 0.0, False, None, False, False, None)
    out, lse = launch.run_with_lse()
    scale = args.head_dim**-0.5
    # Each stage's output checked first: the forward's O and lse, the
    # preprocess's D = rowsum(dO * O) against torch's.
    d = 64 if args.head_dim <= 64 else 128
    preprocess = _kernel(None, f"preprocess_bf16_d{d}.mlir", q.dtype, args.head_dim).path
    preprocess = args.preprocess or preprocess
    delta = torch.empty_like(lse)
    torch.ops.tiledattn.run_bundle(out, grad, grad, out, delta, 1.0, str(preprocess))
    torch.cuda.synchronize()
    want = (grad.float() * out.float()).sum(-1)
    for name, t in (("o", out), ("lse", lse), ("delta", delta)):
        bad = (~torch.isfinite(t)).nonzero()
        where = sorted({tuple(r[:3].tolist()) for r in bad[:4096]})[:8]
        print(f"  {name}: {len(bad)} not finite {where if len(bad) else ''}")
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    off = (out.float() - ref.float()).abs().amax(-1)
    print(
        f"  o: largest difference from torch's {off.max().item():.3g}, rows over 0.02: "
        f"{(off > 0.02).nonzero()[:8].tolist()}"
    )
    wrong = ((delta - want).abs() > 1e-2 * (1 + want.abs())).nonzero()
    print(f"  delta: {len(wrong)} rows differ from torch's, first {wrong[:8].tolist()}")

    def backward():
        return attention_backward(q, k, v, out, lse, grad, scale, main_bundle=args.main)

    if args.reference:
        compare_with_reference(q, k, v, out, lse, grad, scale, args.main)
    first = backward()
    torch.cuda.synchronize()
    print(f"shape {shape}: first launch done", flush=True)
    for name, g in zip(("dq", "dk", "dv"), first):
        bad = (~torch.isfinite(g)).nonzero()
        if len(bad):
            where = sorted({tuple(r[:3].tolist()) for r in bad[:4096]})[:8]
            print(f"  {name}: {len(bad)} not finite, (batch, head, row) first: {where}")
    results = []
    for n in range(args.launches):
        results.append(backward())
        if args.sync_each:
            torch.cuda.synchronize()
            print(f"launch {n + 1} done", flush=True)
    torch.cuda.synchronize()
    worst = 0.0
    for got in results:
        for a, b in zip(got, first):
            worst = max(worst, (a.float() - b.float()).abs().max().item())
    bound = 2e-2 * max(b.float().abs().max().item() for b in first)
    verdict = "ok" if worst <= bound else "DIFFERS"
    print(f"{args.launches} launches: largest difference from the first {worst:.3g} ({verdict})")


if __name__ == "__main__":
    main()
