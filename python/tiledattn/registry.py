"""The kernel registry: which bundle runs a given (dtype, head dim, causal).

Bundles live in the kernel directory ($TILEDATTN_KERNEL_DIR, else
<repo>/build/kernels), one directory per bundle with manifest.json,
kernel.cubin and kernel.ptx. The registry reads only the manifest fields it
selects on; the runtime validates the whole bundle before launching it.
"""

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import torch

from tiledattn import _runtime
from tiledattn.errors import InvalidInputError, UnsupportedInputError

FORMAT_VERSION = 1
# TMA (cuTensorMapEncodeTiled) needs 16-byte aligned addresses and strides.
TMA_ALIGNMENT_BYTES = 16

_DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16"}
_DTYPE_NAMES = {"f16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16"}


def dtype_name(dtype: "torch.dtype | str") -> str:
    """'f16' or 'bf16' for a torch dtype or a name; raises for others."""
    if isinstance(dtype, torch.dtype):
        if dtype in _DTYPES:
            return _DTYPES[dtype]
    elif isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    raise UnsupportedInputError(
        f"tiledattn: expected dtype float16 or bfloat16 but got {dtype}", "dtype"
    )


@dataclass(frozen=True)
class KernelEntry:
    """One bundle, as far as selection needs it."""

    name: str
    path: Path
    dtype: str
    head_dim: int
    head_dim_v: int
    causal: bool
    alignment_bytes: int
    manifest: dict = field(compare=False, repr=False)

    @property
    def tensor_maps(self) -> list:
        """The TMA tensor maps the kernel takes ([] for most kernels)."""
        maps = self.manifest.get("tensor_maps")
        return maps if isinstance(maps, list) else []

    @property
    def required_alignment(self) -> int:
        """The alignment in bytes the inputs' data pointers and strides need:
        alignment_bytes, and at least 16 bytes when the kernel uses TMA."""
        if self.tensor_maps:
            return max(self.alignment_bytes, TMA_ALIGNMENT_BYTES)
        return self.alignment_bytes

    def describe(self) -> str:
        m = self.manifest
        tma = ",".join(str(t.get("operand")) for t in self.tensor_maps if isinstance(t, dict))
        return (
            f"{self.name} ({self.path}): dtype={self.dtype} head_dim={self.head_dim} "
            f"head_dim_v={self.head_dim_v} causal={self.causal} "
            f"block_m={m.get('block_m')} block_n={m.get('block_n')} "
            f"threads={m.get('threads')}" + (f" tma={tma}" if tma else "")
        )


def read_bundle(path: "str | os.PathLike[str]") -> KernelEntry:
    """Reads the selection fields of `path`/manifest.json.

    Raises InvalidInputError naming the file and field on a bad manifest.
    """
    path = Path(path).resolve()
    manifest_path = path / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except OSError as error:
        raise InvalidInputError(
            f"tiledattn: cannot read bundle manifest {manifest_path}: {error}"
        ) from error
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"tiledattn: {manifest_path}: not valid JSON: {error}") from error
    if not isinstance(manifest, dict):
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: expected a JSON object at the top level"
        )

    def get(name, kind, what):
        if name not in manifest:
            raise InvalidInputError(f"tiledattn: {manifest_path}: missing required field '{name}'")
        value = manifest[name]
        # bool is an int in Python; the manifest keeps them apart.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise InvalidInputError(
                f"tiledattn: {manifest_path}: field '{name}': expected {what} "
                f"but found {json.dumps(value)}"
            )
        return value

    version = get("format_version", int, "an integer")
    if version != FORMAT_VERSION:
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: field 'format_version': expected "
            f"{FORMAT_VERSION} but found {version}"
        )
    dtype = get("dtype", str, "a string")
    if dtype not in ("f16", "bf16"):
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: field 'dtype': expected \"f16\" or "
            f'"bf16" but found {json.dumps(dtype)}'
        )
    return KernelEntry(
        name=get("name", str, "a string"),
        path=path,
        dtype=dtype,
        head_dim=get("head_dim", int, "an integer"),
        head_dim_v=get("head_dim_v", int, "an integer"),
        causal=get("causal", bool, "true or false"),
        alignment_bytes=get("alignment_bytes", int, "an integer"),
        manifest=manifest,
    )


@dataclass
class _Scan:
    entries: "list[KernelEntry]"
    skipped: "list[str]"  # bundles with bad manifests, and why


_scans: "dict[Path, _Scan]" = {}
_scan_lock = threading.Lock()
# select()'s answers by (kernel dir as given, dtype, head dims, causal): a
# call runs per attention call, and resolving the directory alone costs
# system calls.
_selected: "dict[tuple, KernelEntry]" = {}


def _scan(directory: "Path | None" = None) -> _Scan:
    directory = Path(directory or _runtime.kernel_dir()).resolve()
    with _scan_lock:
        if directory not in _scans:
            entries, skipped = [], []
            if directory.is_dir():
                for sub in sorted(directory.iterdir()):
                    if not (sub / "manifest.json").is_file():
                        continue
                    try:
                        entries.append(read_bundle(sub))
                    except InvalidInputError as error:
                        skipped.append(str(error))
            _scans[directory] = _Scan(entries, skipped)
        return _scans[directory]


def refresh() -> None:
    """Forgets every scanned kernel directory (after adding bundles)."""
    with _scan_lock:
        _scans.clear()
        _selected.clear()


def kernels(kernel_dir: "str | os.PathLike[str] | None" = None) -> "list[KernelEntry]":
    """Every usable bundle in the kernel directory."""
    return list(_scan(kernel_dir).entries)


def available_kernels(
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> "list[str]":
    """The names of the usable bundles in the kernel directory."""
    return [entry.name for entry in kernels(kernel_dir)]


def _canonical_name(dtype: str, head_dim: int, causal: bool) -> str:
    return f"sdpa_fwd_{dtype}_d{head_dim}" + ("_causal" if causal else "")


def _candidates(dtype, head_dim, causal, head_dim_v, kernel_dir):
    dtype = dtype_name(dtype)
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    scan = _scan(kernel_dir)
    matches = [
        e
        for e in scan.entries
        if (e.dtype, e.head_dim, e.head_dim_v, e.causal)
        == (dtype, head_dim, head_dim_v, bool(causal))
    ]
    # Several bundles may fit; the shipped name wins, then the name order.
    canonical = _canonical_name(dtype, head_dim, bool(causal))
    matches.sort(key=lambda e: (e.name != canonical, e.name))
    return dtype, head_dim_v, scan, matches


def select(
    dtype: "torch.dtype | str",
    head_dim: int,
    causal: bool,
    *,
    head_dim_v: "int | None" = None,
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> KernelEntry:
    """The bundle for these inputs; UnsupportedInputError if there is none."""
    key = (str(kernel_dir or _runtime.kernel_dir()), dtype, head_dim, head_dim_v, bool(causal))
    entry = _selected.get(key)
    if entry is not None:
        return entry
    dtype, head_dim_v, scan, matches = _candidates(dtype, head_dim, causal, head_dim_v, kernel_dir)
    if matches:
        with _scan_lock:
            _selected[key] = matches[0]
        return matches[0]
    directory = Path(kernel_dir or _runtime.kernel_dir())
    have = ", ".join(
        f"{e.dtype}/d{e.head_dim}{'/causal' if e.causal else ''}" for e in scan.entries
    )
    # Head dims are whatever the kernel dir has bundles for (64, 128, 256
    # ship); say which, for this dtype and mask.
    dims = supported_head_dims(dtype, causal, kernel_dir=kernel_dir)
    if dims:
        listed = ", ".join(str(d) for d in dims)
        supported = f"supported head dims for dtype={dtype} causal={bool(causal)}: {listed}"
    else:
        supported = f"no bundle for dtype={dtype} causal={bool(causal)} at all"
    raise UnsupportedInputError(
        f"tiledattn: no kernel bundle for dtype={dtype} head_dim={head_dim} "
        f"head_dim_v={head_dim_v} causal={bool(causal)} in {directory}; "
        f"{supported} (available: {have or 'none'}; set TILEDATTN_KERNEL_DIR or "
        "build the kernels)",
        "head_dim",
    )


def supported_head_dims(
    dtype: "torch.dtype | str",
    causal: bool,
    *,
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> "list[int]":
    """The head dims with a bundle for this dtype and mask, ascending (those
    whose value head dim equals the query/key head dim)."""
    dtype = dtype_name(dtype)
    return sorted(
        {
            e.head_dim
            for e in _scan(kernel_dir).entries
            if e.dtype == dtype and e.causal == bool(causal) and e.head_dim_v == e.head_dim
        }
    )


def explain(
    dtype: "torch.dtype | str",
    head_dim: int,
    causal: bool,
    *,
    head_dim_v: "int | None" = None,
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> str:
    """Says which bundle select() picks for these inputs, and why."""
    try:
        dtype, head_dim_v, scan, matches = _candidates(
            dtype, head_dim, causal, head_dim_v, kernel_dir
        )
    except UnsupportedInputError as error:
        return str(error)
    directory = Path(kernel_dir or _runtime.kernel_dir()).resolve()
    lines = [
        (
            f"inputs: dtype={dtype} head_dim={head_dim} head_dim_v={head_dim_v} "
            f"causal={bool(causal)}"
        ),
        f"kernel dir: {directory} ({len(scan.entries)} bundles)",
    ]
    if matches:
        lines.append("selected: " + matches[0].describe())
        lines += ["also matching: " + e.describe() for e in matches[1:]]
    else:
        lines.append("selected: none (no bundle matches)")
    lines += ["skipped: " + reason for reason in scan.skipped]
    return "\n".join(lines)
