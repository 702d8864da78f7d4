#!/usr/bin/env python3
"""Writes schedule files for the warp-specialized Hopper kernel
(producer = tma, mma = wgmma), one per dtype x head dim x mask, with the
schedule fields given on the command line. The shipped defaults in
python/tiledattn/schedules/ were written by this script with the values the
sweep picked (docs/Schedules.md); a sweep writes its candidates elsewhere.

Usage: gen-hopper-schedules.py OUT_DIR [--head-dims 64,128,256]
           [--block-n 128] [--stages 2] [--consumers 2] [--prefix sdpa_fwd]
           [--dtypes bf16] [--causal 0,1] [--extra 'pingpong = true']
           [--suffix _long] [--min-seqlen-k 2048] [--max-seqlen-k N]

--min-seqlen-k / --max-seqlen-k put tiledattn.min_seqlen_k / max_seqlen_k on
the function: the package runs the bundle only for key/value lengths in that
range, in preference to a bundle for any length (docs/Schedules.md).
The shipped float16 kernels have no files: the build derives each from its
bf16 schedule (tiledattn-derive-program{element-type=f16}), so the default
writes bf16 only; --dtypes bf16,f16 writes both, for schedules compiled by
hand.
"""

import argparse
import pathlib

TEMPLATE = """\
// {what}
// Copy, edit the schedule fields and compile with
//   tiledattn-compile {name}.mlir -o {name}
// docs/Schedules.md describes every field.
!head = memref<?x?x?x{d}x{dtype}, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

func.func @{name}(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                 %scale: f32){attributes} {{
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse{causal}
      schedule(#tiledattn.schedule<block_m = {block_m}, block_n = {block_n}, num_stages = {stages},
                                   warps = {warps}, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = {consumers}{extra}>)
      : !head, !head, !head, !head, !lse
  return
}}
"""


def wrap_fields(extra, indent=35, width=96):
    """', field = value, ...' continued on lines of at most `width` columns."""
    if not extra:
        return ""
    lines, line = [], ""
    for field in (f.strip() for f in extra.split(",")):
        if line and indent + len(line) + len(field) + 2 > width:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {field}" if line else field
    lines.append(line)
    return ",\n" + "\n".join(" " * indent + text for text in lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--block-n", default="", help="per head dim, e.g. 64:128,128:128,256:64")
    ap.add_argument("--stages", default="", help="per head dim, e.g. 64:3,128:2,256:2")
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--prefix", default="sdpa_fwd")
    ap.add_argument("--extra", default="", help="more schedule fields, e.g. 'pingpong = true'")
    ap.add_argument("--shipped", action="store_true", help="say 'shipped default' in the header")
    ap.add_argument("--suffix", default="", help="appended to each kernel's name, e.g. _long")
    ap.add_argument("--min-seqlen-k", type=int, help="shortest key/value length to run it for")
    ap.add_argument("--max-seqlen-k", type=int, help="longest key/value length to run it for")
    args = ap.parse_args()

    def per_dim(spec, default):
        table = dict(default)
        for item in filter(None, spec.split(",")):
            d, value = item.split(":")
            table[int(d)] = int(value)
        return table

    block_n = per_dim(args.block_n, {64: 128, 128: 128, 256: 64})
    stages = per_dim(args.stages, {64: 2, 128: 2, 256: 2})
    args.out.mkdir(parents=True, exist_ok=True)
    for dtype in args.dtypes.split(","):
        for d in map(int, args.head_dims.split(",")):
            for causal in map(int, args.causal.split(",")):
                name = f"{args.prefix}_{dtype}_d{d}" + ("_causal" if causal else "") + args.suffix
                kind = "Shipped default schedule" if args.shipped else "Hopper schedule"
                mask = "causal (top-left)." if causal else "no mask."
                what = f"{kind}: {dtype}, head dim {d}, {mask} Warp-specialized TMA + wgmma."
                lengths = [
                    f"tiledattn.{key} = {value} : i64"
                    for key, value in (
                        ("min_seqlen_k", args.min_seqlen_k),
                        ("max_seqlen_k", args.max_seqlen_k),
                    )
                    if value is not None
                ]
                if lengths:
                    what += (
                        "\n// Run for key/value lengths "
                        + (
                            f">= {args.min_seqlen_k}"
                            if args.max_seqlen_k is None
                            else f"{args.min_seqlen_k or 1}..{args.max_seqlen_k}"
                        )
                        + "; the bundle without a range covers the rest."
                    )
                text = TEMPLATE.format(
                    what=what,
                    name=name,
                    d=d,
                    dtype=dtype,
                    causal=" causal" if causal else "",
                    block_m=64 * args.consumers,
                    block_n=block_n[d],
                    stages=stages[d],
                    warps=4 * (args.consumers + 1),
                    consumers=args.consumers,
                    extra=wrap_fields(args.extra),
                    attributes=f"\n    attributes {{{', '.join(lengths)}}}" if lengths else "",
                )
                (args.out / f"{name}.mlir").write_text(text)


if __name__ == "__main__":
    main()
