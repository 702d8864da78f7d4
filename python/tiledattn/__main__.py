"""`python -m tiledattn`: the main job on a built-in default.

Lists every compiled kernel bundle with the resources ptxas reported. Where a
CUDA GPU is present it also runs each kernel on a default shape, checks it
against a float64 reference and times it beside torch's SDPA.
"""

import argparse
import sys

import tiledattn
from tiledattn import registry


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def _resources():
    rows = []
    for k in registry.kernels():
        m, res = k.manifest, k.manifest.get("resources", {})
        rows.append(
            (
                k.name,
                k.dtype,
                k.head_dim,
                "causal" if k.causal else "-",
                f"{m['block_m']}x{m['block_n']}",
                m["threads"],
                res.get("registers", "?"),
                f"{res.get('spill_stores', '?')}/{res.get('spill_loads', '?')}",
                res.get("static_smem_bytes", 0) + m.get("dynamic_smem_bytes", 0),
            )
        )
    return rows


def _run_on_gpu(batch, heads, seqlen):
    import torch
    import torch.nn.functional as F

    rows = []
    torch.manual_seed(0)
    for k in registry.kernels():
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[k.dtype]
        shape = (batch, heads, seqlen, k.head_dim)
        q, kk, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
        out = tiledattn.scaled_dot_product_attention(q, kk, v, is_causal=k.causal)
        ref = F.scaled_dot_product_attention(
            q.double(), kk.double(), v.double(), is_causal=k.causal
        )
        low = F.scaled_dot_product_attention(q, kk, v, is_causal=k.causal)
        err = (out.double() - ref).abs().max().item()
        bound = 2 * (low.double() - ref).abs().max().item() + 1e-5

        def bench(fn, *args, **kwargs):
            for _ in range(3):
                fn(*args, **kwargs)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(20):
                start.record()
                fn(*args, **kwargs)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            return sorted(times)[len(times) // 2]

        ours = bench(tiledattn.scaled_dot_product_attention, q, kk, v, is_causal=k.causal)
        theirs = bench(F.scaled_dot_product_attention, q, kk, v, is_causal=k.causal)
        flops = 4 * batch * heads * seqlen * seqlen * k.head_dim * (0.5 if k.causal else 1)
        rows.append(
            (
                k.name,
                "ok" if err <= bound else "WRONG",
                f"{err:.1e} <= {bound:.1e}",
                f"{flops / ours / 1e9:.0f}",
                f"{flops / theirs / 1e9:.0f}",
                f"{theirs / ours:.2f}x",
            )
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tiledattn", description=__doc__)
    parser.add_argument("--batch", type=int, default=4, help="batch size (default 4)")
    parser.add_argument("--heads", type=int, default=16, help="heads (default 16)")
    parser.add_argument("--seqlen", type=int, default=2048, help="sequence length (default 2048)")
    args = parser.parse_args(argv)

    print(f"tiledattn {tiledattn.__version__}: kernels in {tiledattn.kernel_dir()}")
    rows = _resources()
    if not rows:
        print("no kernel bundles found; build them with ./scripts/setup.sh", file=sys.stderr)
        return 1
    _table(
        rows, ("kernel", "dtype", "D", "mask", "tile", "threads", "regs", "spills st/ld", "smem B")
    )

    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        print("\nno CUDA GPU here: kernels compiled and assembled, not run")
        return 0
    name = torch.cuda.get_device_name()
    print(f"\nrunning on {name}: B={args.batch} H={args.heads} S={args.seqlen}")
    results = _run_on_gpu(args.batch, args.heads, args.seqlen)
    _table(results, ("kernel", "check", "max err vs f64", "TFLOP/s", "torch SDPA", "speed-up"))
    return 0 if all(r[1] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
