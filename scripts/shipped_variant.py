#!/usr/bin/env python3
"""Shipped schedules with schedule fields added, compiled as A/B candidates.

Here (after a build):
    python3 scripts/shipped_variant.py "q_by_atom = true, k0_by_atom = true" \\
        bf16_d256_short bf16_d256 --tag qak --out build/sweep_qak
There (carry build/sweep_qak, build/kernels, build/runtime):
    SWEEP=build/sweep_qak scripts/device-ab.sh 512,1024,2048 256 0 3

With no fields ("") the candidate is the shipped kernel itself: a control
to run next to the others, since how far a candidate starts behind the
shipped column depends on the kernel (docs/Hopper.md).

Each candidate is the shipped schedule of a bundle
(python/tiledattn/schedules/sdpa_fwd_<NAME>.mlir) with the fields appended to
its #tiledattn.schedule<...>, compiled into OUT/<TAG>_<NAME>. The bundle's
key-length range (tiledattn.min_seqlen_k / max_seqlen_k) is dropped (its
other function attributes stay), so the
harness runs the candidate at every length: read its ratios at the lengths
the shipped bundle covers (docs/Schedules.md lists them).
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCHEDULES = ROOT / "python" / "tiledattn" / "schedules"

_SCHEDULE = re.compile(r"#tiledattn\.schedule<([^>]*)>")
_ATTRIBUTES = re.compile(r"\s*attributes\s*\{([^}]*)\}")


def _drop_range(text):
    """`text` without the function's tiledattn.min/max_seqlen_k; its other
    attributes stay."""
    m = _ATTRIBUTES.search(text)
    if not m:
        return text
    kept = [a.strip() for a in m.group(1).split(",") if "seqlen_k" not in a]
    rest = "\n    attributes {" + ", ".join(kept) + "}" if kept else ""
    return text[: m.start()] + rest + text[m.end() :]


def add_fields(text, fields):
    """`text` (a shipped schedule file) with `fields` ("a = 1, b = true")
    appended to its one #tiledattn.schedule<...> and its key-length range
    attributes removed. Raises ValueError for a field the schedule already
    sets or a text without exactly one schedule."""
    matches = list(_SCHEDULE.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"expected one #tiledattn.schedule<...>, found {len(matches)}")
    body = matches[0].group(1)
    present = {m.group(1) for m in re.finditer(r"(\w+)\s*=", body)}
    added = [f.strip() for f in fields.split(",") if f.strip()]
    for field in added:
        key = field.split("=")[0].strip()
        if not re.fullmatch(r"\w+\s*=\s*\w+", field):
            raise ValueError(f"field {field!r}: expected NAME = VALUE")
        if key in present:
            raise ValueError(f"field {key}: the shipped schedule already sets it")
    start, end = matches[0].span(1)
    if added:  # none: a control, the shipped kernel itself as a candidate
        text = text[:end] + ", " + ", ".join(added) + text[end:]
    return _drop_range(text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "fields", help='schedule fields to add, e.g. "q_by_atom = true" ("" for a control)'
    )
    p.add_argument("bundles", nargs="+", help="shipped bundle names, e.g. bf16_d256_short")
    p.add_argument("--tag", default="variant", help="prefix of the candidates' names")
    p.add_argument("--out", default=str(ROOT / "build" / "sweep"), help="output directory")
    args = p.parse_args(argv)
    compiler = os.environ.get(
        "TILEDATTN_COMPILE", str(ROOT / "build" / "bin" / "tiledattn-compile")
    )
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for i, name in enumerate(args.bundles, 1):
        # A float16 bundle is its bf16 schedule's derived form (the build's).
        f16 = name.startswith("f16_")
        source = SCHEDULES / f"sdpa_fwd_{'bf16_' + name[4:] if f16 else name}.mlir"
        derive = ["--derive=tiledattn-derive-program{element-type=f16}"] if f16 else []
        if not source.is_file():
            stems = sorted(f.stem.removeprefix("sdpa_fwd_") for f in SCHEDULES.glob("*.mlir"))
            known = stems + [s.replace("bf16_", "f16_", 1) for s in stems if s.startswith("bf16_")]
            print(
                f"error: no shipped bundle {name!r}; shipped: {', '.join(known)}", file=sys.stderr
            )
            return 2
        text = add_fields(source.read_text(), args.fields)
        target = out / f"{args.tag}_{name}"
        with tempfile.TemporaryDirectory() as tmp:
            mlir = pathlib.Path(tmp) / source.name
            mlir.write_text(text)
            run = subprocess.run(
                [compiler, str(mlir), "-o", str(target), *derive],
                capture_output=True,
                text=True,
            )
        last = (run.stdout.strip().splitlines() or [""])[-1]
        print(f"[{i}/{len(args.bundles)}] {target.name}: {last or run.stderr.strip()}", flush=True)
        failed += run.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
