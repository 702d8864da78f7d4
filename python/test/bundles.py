"""Stand-in kernel bundles for tests that run without a GPU."""

import json
import struct
from pathlib import Path


def manifest(dtype="f16", head_dim=64, causal=False, **overrides) -> dict:
    """A manifest as the compiler writes it (format_version 1)."""
    name = f"sdpa_fwd_{dtype}_d{head_dim}" + ("_causal" if causal else "")

    def memref(n, rank, dt):
        return {"name": n, "kind": "memref", "rank": rank, "dtype": dt}

    m = {
        "format_version": 1,
        "name": name,
        "kernel": name,
        "target": "sm_90a",
        "dtype": dtype,
        "head_dim": head_dim,
        "head_dim_v": head_dim,
        "causal": causal,
        "mask": "causal_top_left" if causal else "none",
        "block_m": 64,
        "block_n": 64,
        "threads": 128,
        "dynamic_smem_bytes": 0,
        "alignment_bytes": 4,
        "grid": {"x": "ceil_div(seqlen_q, block_m)", "y": "heads_q", "z": "batch"},
        "params": [memref(n, 4, dtype) for n in "qkvo"]
        + [memref("lse", 3, "f32"), {"name": "scale", "kind": "f32"}],
        "schedule": "#tiledattn.schedule<...>",
        "compiler": "tiledattn 0.1.0 (test stand-in)",
        "cubin": "kernel.cubin",
        "ptx": "kernel.ptx",
        "resources": {"registers": 128, "spill_stores": 0, "spill_loads": 0},
    }
    m.update(overrides)
    return m


def tma_manifest(dtype="bf16", head_dim=128, causal=False, **overrides) -> dict:
    """A manifest of a Hopper kernel taking TMA tensor maps of q, k and v
    (3 warpgroups, ~200 KiB of dynamic shared memory)."""
    fields = {
        "block_m": 128,
        "block_n": 176 if head_dim <= 128 else 80,
        "threads": 384,
        "dynamic_smem_bytes": 204800,
        "alignment_bytes": 16,
        "tensor_maps": [
            {"operand": "q", "box": [64, 128], "swizzle": 128},
            {"operand": "k", "box": [64, 176 if head_dim <= 128 else 80], "swizzle": 128},
            {"operand": "v", "box": [64, 176 if head_dim <= 128 else 80], "swizzle": 128},
        ],
    }
    fields.update(overrides)
    return manifest(dtype, head_dim, causal, **fields)


def fake_cubin(kernel: str) -> bytes:
    """A 64-bit little-endian EM_CUDA ELF header and a string table naming
    `kernel`: passes the runtime's header check, holds no code."""
    strtab = b"\0.text." + kernel.encode() + b"\0" + kernel.encode() + b"\0"
    header = bytearray(64)
    header[0:4] = b"\x7fELF"
    header[4] = 2  # ELFCLASS64
    header[5] = 1  # little-endian
    header[6] = 1  # EV_CURRENT
    struct.pack_into("<HHI", header, 16, 2, 190, 1)  # ET_EXEC, EM_CUDA
    struct.pack_into("<H", header, 52, 64)  # e_ehsize
    return bytes(header) + strtab


def make_bundle(
    directory: Path,
    dtype="f16",
    head_dim=64,
    causal=False,
    *,
    cubin: "bytes | None" = None,
    manifest_text: "str | None" = None,
    tma: bool = False,
    **overrides,
) -> Path:
    """Writes a bundle under `directory` and returns its path; `tma` writes a
    Hopper kernel's manifest (tma_manifest)."""
    m = (tma_manifest if tma else manifest)(dtype, head_dim, causal, **overrides)
    bundle = Path(directory) / m["name"]
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / "manifest.json").write_text(
        manifest_text if manifest_text is not None else json.dumps(m, indent=1)
    )
    (bundle / "kernel.cubin").write_bytes(cubin if cubin is not None else fake_cubin(m["kernel"]))
    (bundle / "kernel.ptx").write_text(
        f".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry {m['kernel']}()\n{{\n ret;\n}}\n"
    )
    return bundle
