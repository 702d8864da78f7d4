"""Every built bundle's kernel takes exactly the parameters the runtime
passes for its manifest (lib/Runtime/TorchOps.cpp, KernelArgs), checked on
the CPU against the PTX entry: each memref as its descriptor (allocated and
aligned pointers, offset, sizes, strides), scale as an f32, the captured
tensors after it, a tile counter or workspace pointer, then the tensor maps
by value. A manifest that described other parameters would launch the
kernel on garbage; cuLaunchKernel checks nothing."""

import json
import re
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parents[2] / "build"
BUNDLES = sorted(
    p.parent
    for d in ("kernels", "kernels-tile-ir", "kernels-mma_sync")
    for p in (BUILD / d).rglob("manifest.json")
)


def passed_sizes(manifest: dict) -> "list[int]":
    """The byte size of each kernel parameter the runtime passes."""
    sizes = []
    for param in manifest["params"]:
        if param["kind"] == "memref":
            sizes += [8, 8, 8] + [8] * (2 * param["rank"])
        elif param["kind"] == "f32":
            sizes.append(4)
        else:  # zeroed_i32 / zeroed_bytes_per_block: a pointer
            sizes.append(8)
    return sizes + [128] * len(manifest.get("tensor_maps", []))


def entry_sizes(ptx: str, kernel: str) -> "list[int]":
    """The byte size of each parameter of `kernel`'s .entry in `ptx`."""
    match = re.search(rf"\.entry {re.escape(kernel)}\((.*?)\)", ptx, re.S)
    assert match, f"no .entry {kernel} in the PTX"
    sizes = []
    for line in match.group(1).split(","):
        line = line.strip()
        array = re.search(r"\.b8 \S+\[(\d+)\]$", line)
        if array:
            sizes.append(int(array.group(1)))
        else:
            width = re.search(r"\.param \.[busf](\d+)", line)
            assert width, f"unexpected parameter {line!r}"
            sizes.append(int(width.group(1)) // 8)
    return sizes


@pytest.mark.skipif(not BUNDLES, reason=f"no bundles built under {BUILD}")
@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_kernel_takes_what_the_runtime_passes(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    ptx = (bundle / manifest["ptx"]).read_text()
    assert entry_sizes(ptx, manifest["kernel"]) == passed_sizes(manifest), bundle
