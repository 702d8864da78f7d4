#!/usr/bin/env python3
"""The loops of a kernel's SASS and what is in them, to compare two builds.

    python3 scripts/sass_loops.py build/kernels/sdpa_fwd_bf16_d128_causal
    python3 scripts/sass_loops.py OLD_BUNDLE NEW_BUNDLE      # side by side

A bundle directory (its kernel.cubin), a .cubin or a text file that
`cuobjdump -sass` wrote. A loop is a backward branch: its body runs from the
branch's target to the branch. For each loop with a wgmma in it (the K/V
block loops; `--all` lists every loop) it prints the address range, the
instruction count and the counts of HGMMA, MUFU and barrier/mbarrier
instructions, innermost (shortest) first. In an overlapped block loop
(a wgmma wait for 1 group, the S, then one for 0, the previous P.V) it adds
`waits D/E`: the P.V wait comes D instructions after the S wait, with E
MUFU.EX2 between them, i.e. how much of the softmax ptxas left under the
P.V (docs/perf-notes.md, twelfth and thirteenth sessions).

Why: ptxas decides how a block loop is compiled from the whole kernel, so a
change outside the loop can still grow it (docs/Hopper.md, "Less work on the
causal diagonal": 470 -> 536 instructions from a branch after the loop).
Compare the loops before timing anything. cuobjdump comes from the CUDA
toolkit or from triton's wheel (found on PATH, then there).
"""

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys

_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\b(?:\.\w+)*\s+(?:`?\(?)0x([0-9a-f]+)")
_S_WAIT = "WARPGROUP.DEPBAR.LE gsb0, 0x1"
_PV_WAIT = "WARPGROUP.DEPBAR.LE gsb0, 0x0"
_COUNTED = {
    "HGMMA": ("HGMMA",),
    "MUFU": ("MUFU",),
    "bar": ("BAR.", "SYNCS."),
}


def cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        import triton  # noqa: PLC0415 -- optional, only for its bundled tool

        path = pathlib.Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    sys.exit("sass_loops: no cuobjdump on PATH or in triton's wheel; pass `cuobjdump -sass` text")


def sass_text(path):
    """SASS text for a bundle directory, a cubin, or a cuobjdump text file."""
    p = pathlib.Path(path)
    if p.is_dir():
        p = p / "kernel.cubin"
    if not p.exists():
        sys.exit(f"sass_loops: {path}: expected a bundle directory, a .cubin or SASS text")
    if p.suffix != ".cubin":
        return p.read_text()
    out = subprocess.run([cuobjdump(), "-sass", str(p)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"sass_loops: cuobjdump failed on {p}: {out.stderr.strip()}")
    return out.stdout


def instructions(text):
    """(address, instruction text) in address order."""
    return [
        (int(m.group(1), 16), m.group(2)) for m in map(_INSTRUCTION.match, text.splitlines()) if m
    ]


def loops(text):
    """One dict per backward branch: start, end, count and the counted kinds.

    Branches after the kernel's last EXIT are left out: ptxas puts the retry
    paths of mbarrier waits there, out of line, and their jumps back would
    read as loops spanning most of the kernel."""
    code = instructions(text)
    index = {address: i for i, (address, _) in enumerate(code)}
    exits = [address for address, ins in code if re.search(r"\bEXIT\b", ins)]
    last_exit = exits[-1] if exits else float("inf")
    found = []
    for i, (address, instruction) in enumerate(code):
        branch = _BRANCH.search(instruction)
        if not branch or address > last_exit:
            continue
        target = int(branch.group(1), 16)
        if target >= address or target not in index:
            continue
        body = [ins for _, ins in code[index[target] : i + 1]]
        loop = {"start": target, "end": address, "count": len(body)}
        for name, prefixes in _COUNTED.items():
            loop[name] = sum(any(p in ins for p in prefixes) for ins in body)
        loop["waits"] = wait_distance(body)
        found.append(loop)
    return sorted(found, key=lambda loop: (loop["count"], loop["start"]))


def wait_distance(body):
    """(instructions, MUFU.EX2) from the first S wait (`gsb0, 0x1`) to the
    P.V wait (`gsb0, 0x0`) after it, or None when the loop has no such
    pair."""
    s_wait = next((i for i, ins in enumerate(body) if _S_WAIT in ins), None)
    if s_wait is None:
        return None
    pv_wait = next((i for i in range(s_wait, len(body)) if _PV_WAIT in body[i]), None)
    if pv_wait is None:
        return None
    between = body[s_wait:pv_wait]
    return pv_wait - s_wait, sum("MUFU.EX2" in ins for ins in between)


def describe(loop):
    text = (
        f"{loop['start']:#07x}-{loop['end']:#07x}  {loop['count']:5d} instr"
        f"  HGMMA {loop['HGMMA']:3d}  MUFU {loop['MUFU']:3d}  bar {loop['bar']:3d}"
    )
    if loop.get("waits"):
        text += "  waits {}/{}".format(*loop["waits"])
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "kernels", nargs="+", help="bundle directories, .cubin files or cuobjdump -sass text"
    )
    ap.add_argument("--all", action="store_true", help="every loop, not only those with a wgmma")
    args = ap.parse_args(argv)
    columns = []
    for path in args.kernels:
        found = loops(sass_text(path))
        if not args.all:
            found = [loop for loop in found if loop["HGMMA"]]
        columns.append([os.fspath(path)] + [describe(loop) for loop in found])
    width = max(len(line) for column in columns for line in column) + 2
    for row in range(max(len(column) for column in columns)):
        cells = [column[row] if row < len(column) else "" for column in columns]
        print("".join(cell.ljust(width) for cell in cells).rstrip())


if __name__ == "__main__":
    main()
