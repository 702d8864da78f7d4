"""The kernel registry: which bundle runs a given (dtype, head dim, causal)
and key/value length.

Bundles live in the kernel directory ($TILEDATTN_KERNEL_DIR, else an
installed wheel's tiledattn/kernels, else <repo>/build/kernels), one
directory per bundle with manifest.json,
kernel.cubin and kernel.ptx. The registry reads only the manifest fields it
selects on; the runtime validates the whole bundle before launching it.

A bundle may say which key/value lengths it is meant for (min_seqlen_k,
max_seqlen_k in its manifest, from the schedule function's attributes).
Among the bundles for the same inputs, one whose range holds seqlen_k wins
over one without a range; a bundle without a range runs any length.
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


def in_length_range(seqlen_k, low: "int | None", high: "int | None") -> bool:
    """Whether seqlen_k lies in [low, high] (None: open on that side).
    Plain comparisons, so that torch.compile guards on them when traced."""
    return (low is None or seqlen_k >= low) and (high is None or seqlen_k <= high)


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
    min_seqlen_k: "int | None" = None
    max_seqlen_k: "int | None" = None
    # What the kernel does to the scores beyond attention (the manifest's
    # "score_mod", MLIR text), or None: such a kernel is never picked for a
    # plain attention call.
    score_mod: "str | None" = None

    @property
    def is_plain_attention(self) -> bool:
        return self.score_mod is None

    @property
    def has_length_range(self) -> bool:
        return self.min_seqlen_k is not None or self.max_seqlen_k is not None

    def covers(self, seqlen_k: int) -> bool:
        """Whether the bundle is meant for this key/value length."""
        return in_length_range(seqlen_k, self.min_seqlen_k, self.max_seqlen_k)

    def length_range(self) -> str:
        """'any seqlen_k', or the range, e.g. 'seqlen_k >= 2048'."""
        lo, hi = self.min_seqlen_k, self.max_seqlen_k
        if lo is None and hi is None:
            return "any seqlen_k"
        if hi is None:
            return f"seqlen_k >= {lo}"
        if lo is None:
            return f"seqlen_k <= {hi}"
        return f"{lo} <= seqlen_k <= {hi}"

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
            f"threads={m.get('threads')}"
            + (f" tma={tma}" if tma else "")
            + (f" for {self.length_range()}" if self.has_length_range else "")
        )


# What LLVM 22 printed for the dynamic shared memory before
# tiledattn-extern-dynamic-shared-memory (1e2ce23): a one-byte static that
# ptxas put beside the mbarriers, under the kernel's first tile (NaN rows and
# launch failures under load; docs/Design.md, Stage 3). NVPTX writes its
# "has been demoted" notes in the module's header, before the kernel, so
# only the PTX's first bytes are read (the scan reads every bundle).
_OVERLAPPING_SHARED_MEMORY = b"// __dynamic_shmem__0 has been demoted"
_PTX_HEADER_BYTES = 4096


def _refuse_overlapping_shared_memory(path, manifest, manifest_path):
    """A bundle compiled before the fix computes wrong rows under load:
    refused, naming what to do, rather than run."""
    ptx = path / str(manifest.get("ptx", "kernel.ptx"))
    try:
        with ptx.open("rb") as f:
            text = f.read(_PTX_HEADER_BYTES)
    except OSError:
        return  # the runtime names a missing PTX or cubin itself
    if _OVERLAPPING_SHARED_MEMORY in text:
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: expected a bundle whose dynamic shared memory is "
            f"declared extern, but {ptx.name} has it as a static beside the mbarriers (a "
            "tiledattn-compile from before tiledattn-extern-dynamic-shared-memory; its "
            "tiles overlap its mbarriers): compile the schedule again"
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

    _refuse_overlapping_shared_memory(path, manifest, manifest_path)

    def optional_length(name):
        if name not in manifest:
            return None
        value = manifest[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidInputError(
                f"tiledattn: {manifest_path}: field '{name}': expected a positive "
                f"integer (a key/value length) but found {json.dumps(value)}"
            )
        return value

    min_seqlen_k = optional_length("min_seqlen_k")
    max_seqlen_k = optional_length("max_seqlen_k")
    if min_seqlen_k is not None and max_seqlen_k is not None and min_seqlen_k > max_seqlen_k:
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: fields 'min_seqlen_k', 'max_seqlen_k': "
            f"expected min <= max but found {min_seqlen_k} and {max_seqlen_k}"
        )
    score_mod = manifest.get("score_mod")
    if score_mod is not None and not isinstance(score_mod, str):
        raise InvalidInputError(
            f"tiledattn: {manifest_path}: field 'score_mod': expected a string "
            f"(MLIR text) but found {json.dumps(score_mod)}"
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
        min_seqlen_k=min_seqlen_k,
        max_seqlen_k=max_seqlen_k,
        score_mod=score_mod or None,
    )


@dataclass
class _Scan:
    entries: "list[KernelEntry]"
    skipped: "list[str]"  # bundles with bad manifests, and why


_scans: "dict[Path, _Scan]" = {}
_scan_lock = threading.Lock()
# candidates() by (kernel dir as given, dtype, head dims, causal): it runs
# per attention call, and resolving the directory alone costs system calls.
_matching: "dict[tuple, list[KernelEntry]]" = {}


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
        _matching.clear()


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
        if e.is_plain_attention
        and (e.dtype, e.head_dim, e.head_dim_v, e.causal)
        == (dtype, head_dim, head_dim_v, bool(causal))
    ]
    # In the order select() tries them: bundles for a range of lengths
    # first (they are there to beat the others on it), then the shipped
    # name, then the name order.
    canonical = _canonical_name(dtype, head_dim, bool(causal))
    matches.sort(key=lambda e: (not e.has_length_range, e.name != canonical, e.name))
    return dtype, head_dim_v, scan, matches


def _no_bundle(dtype, head_dim, head_dim_v, causal, kernel_dir, scan) -> UnsupportedInputError:
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
    return UnsupportedInputError(
        f"tiledattn: no kernel bundle for dtype={dtype} head_dim={head_dim} "
        f"head_dim_v={head_dim_v} causal={bool(causal)} in {directory}; "
        f"{supported} (available: {have or 'none'}; set TILEDATTN_KERNEL_DIR or "
        "build the kernels)",
        "head_dim",
    )


def candidates(
    dtype: "torch.dtype | str",
    head_dim: int,
    causal: bool,
    *,
    head_dim_v: "int | None" = None,
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> "list[KernelEntry]":
    """The bundles for these inputs in the order select() tries them (those
    for a range of key/value lengths first); UnsupportedInputError if none."""
    key = (str(kernel_dir or _runtime.kernel_dir()), dtype, head_dim, head_dim_v, bool(causal))
    found = _matching.get(key)
    if found is not None:
        return found
    dtype, head_dim_v, scan, matches = _candidates(dtype, head_dim, causal, head_dim_v, kernel_dir)
    if not matches:
        raise _no_bundle(dtype, head_dim, head_dim_v, causal, kernel_dir, scan)
    with _scan_lock:
        _matching[key] = matches
    return matches


def pick(entries: "list[KernelEntry]", seqlen_k: "int | None") -> "KernelEntry | None":
    """The first of candidates() meant for seqlen_k; without a length, the
    first without a range (else the first). None if no range holds it."""
    if seqlen_k is None:
        return next((e for e in entries if not e.has_length_range), entries[0])
    return next((e for e in entries if e.covers(seqlen_k)), None)


def select(
    dtype: "torch.dtype | str",
    head_dim: int,
    causal: bool,
    *,
    head_dim_v: "int | None" = None,
    seqlen_k: "int | None" = None,
    kernel_dir: "str | os.PathLike[str] | None" = None,
) -> KernelEntry:
    """The bundle for these inputs (and key/value length, when given);
    UnsupportedInputError if there is none."""
    entries = candidates(dtype, head_dim, causal, head_dim_v=head_dim_v, kernel_dir=kernel_dir)
    entry = pick(entries, seqlen_k)
    if entry is None:
        ranges = "; ".join(f"{e.name}: {e.length_range()}" for e in entries)
        raise UnsupportedInputError(
            f"tiledattn: no kernel bundle for seqlen_k={seqlen_k} among those for "
            f"dtype={dtype_name(dtype)} head_dim={head_dim} causal={bool(causal)} "
            f"({ranges}); add a bundle without a length range",
            "seqlen_k",
        )
    return entry


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
            if e.is_plain_attention
            and e.dtype == dtype
            and e.causal == bool(causal)
            and e.head_dim_v == e.head_dim
        }
    )


def explain(
    dtype: "torch.dtype | str",
    head_dim: int,
    causal: bool,
    *,
    head_dim_v: "int | None" = None,
    seqlen_k: "int | None" = None,
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
            f"causal={bool(causal)}" + (f" seqlen_k={seqlen_k}" if seqlen_k is not None else "")
        ),
        f"kernel dir: {directory} ({len(scan.entries)} bundles)",
    ]
    chosen = pick(matches, seqlen_k) if matches else None
    if chosen is not None:
        lines.append("selected: " + chosen.describe())
        lines += ["also matching: " + e.describe() for e in matches if e is not chosen]
    elif matches:
        lines.append(f"selected: none (no bundle's length range holds seqlen_k={seqlen_k})")
        lines += ["also matching: " + e.describe() for e in matches]
    else:
        lines.append("selected: none (no bundle matches)")
    lines += ["skipped: " + reason for reason in scan.skipped]
    return "\n".join(lines)
