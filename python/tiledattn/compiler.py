"""tiledattn.compile: a schedule (MLIR) or a bundle directory -> a callable.

MLIR is compiled by the `tiledattn-compile` tool into a bundle in a cache
directory keyed by the text and the tool, so a schedule is compiled once per
compiler build. The returned CompiledKernel has torch's SDPA signature.
"""

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch

from tiledattn import _runtime, registry
from tiledattn.attention import _attention, _prepare
from tiledattn.errors import CompileError, InvalidInputError


def cache_dir() -> Path:
    """$TILEDATTN_CACHE_DIR, else $XDG_CACHE_HOME/tiledattn or ~/.cache/tiledattn."""
    environ = os.environ
    return _cache_dir_for(
        environ.get("TILEDATTN_CACHE_DIR"), environ.get("XDG_CACHE_HOME"), environ.get("HOME")
    )


@functools.lru_cache(maxsize=16)
def _cache_dir_for(env: "str | None", xdg: "str | None", home: "str | None") -> Path:
    # Decode calls ask for it each time (tuned.json): building the Paths
    # was a third of decode_attention's Python time.
    if env:
        return Path(env)
    base = xdg or Path.home() / ".cache"
    return Path(base) / "tiledattn"


def compiler_path() -> Path:
    """$TILEDATTN_COMPILE, else tiledattn-compile on PATH, else
    <repo>/build/bin/tiledattn-compile."""
    env = os.environ.get("TILEDATTN_COMPILE")
    if env:
        return Path(env)
    found = shutil.which("tiledattn-compile")
    if found:
        return Path(found)
    built = _runtime.REPO_ROOT / "build" / "bin" / "tiledattn-compile"
    if built.is_file():
        return built
    raise CompileError(
        "tiledattn.compile: cannot find tiledattn-compile (looked at "
        "$TILEDATTN_COMPILE, PATH and build/bin); build the compiler with "
        "`cmake -G Ninja -S . -B build && ninja -C build tiledattn-compile` or "
        "pass a bundle directory instead of MLIR"
    )


class CompiledKernel:
    """A bundle, callable like torch.nn.functional.scaled_dot_product_attention.

    is_causal defaults to the bundle's mask; passing the other value raises.
    """

    def __init__(self, bundle_dir: "str | os.PathLike[str]"):
        self.entry = registry.read_bundle(bundle_dir)
        self.path = self.entry.path
        self.name = self.entry.name

    @property
    def manifest(self) -> dict:
        return self.entry.manifest

    def __call__(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attn_mask: "torch.Tensor | None" = None,
        dropout_p: float = 0.0,
        is_causal: "bool | None" = None,
        scale: "float | None" = None,
        enable_gqa: bool = False,
        *,
        fallback: bool = False,
        captures: "Sequence[torch.Tensor]" = (),
    ) -> torch.Tensor:
        """scaled_dot_product_attention on this kernel. `captures`: the
        tensors the kernel's regions read and its block map, in the order
        of its arguments after %scale (a kernel that takes some is never
        chosen by the registry, so this is the way to call it)."""
        if is_causal is None:
            is_causal = self.entry.causal
        wanted = [p["name"] for p in self.manifest["params"][6:]]
        wanted = [n for n in wanted if n.startswith("capture")]
        if len(captures) != len(wanted):
            raise InvalidInputError(
                f"tiledattn.compile: kernel {self.name} reads {len(wanted)} captured "
                f"tensor(s) after scale, so 'captures' must hold {len(wanted)} but got "
                f"{len(captures)}"
            )
        if captures:
            if attn_mask is not None or fallback:
                raise InvalidInputError(
                    "tiledattn.compile: a kernel called with 'captures' takes no attn_mask "
                    "and no fallback (torch cannot run its regions)"
                )
            launch = _prepare(
                query, key, value, None, dropout_p, is_causal, scale, enable_gqa, False, self.entry
            )
            launch.captures = list(captures)
            return launch.run()
        return _attention(
            query,
            key,
            value,
            attn_mask,
            dropout_p,
            is_causal,
            scale,
            enable_gqa,
            fallback,
            self.entry,
        )

    def __repr__(self) -> str:
        return f"CompiledKernel({self.entry.describe()})"


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and "{" not in text and len(text) < 4096


def _keyed(text: str, derive: str) -> str:
    """What both cache keys hash of a compile's input: the text, and the
    derivation when there is one (so a plain text keeps the key it had
    before derivations existed)."""
    return f"{text}\0{derive}" if derive else text


def _by_text(text: str, cache: Path, derive: str = "") -> Path:
    """Where a bundle compiled from `text` (and `derive`, the passes that
    derive a form of it) is also kept, under a key of those alone: a machine
    without the compiler (a GPU machine has no MLIR) finds there what
    another machine compiled into the same cache."""
    return cache / "by-text" / hashlib.sha256(_keyed(text, derive).encode()).hexdigest()[:24]


def _compile_mlir(text: str, source: str, cache: Path, derive: str = "") -> Path:
    portable = _by_text(text, cache, derive)
    try:
        tool = compiler_path()
        if not tool.is_file():
            raise CompileError(f"tiledattn.compile: {tool} does not exist")
    except CompileError as error:
        # The cache, then the kernels the package carries compiled
        # (scripts/package_kernels.py: decode_attention's).
        packaged = _by_text(text, _runtime.kernel_dir(), derive)
        for found in (portable, packaged):
            if (found / "manifest.json").is_file():
                return found
        raise CompileError(
            f"{error}; nor is there a bundle compiled elsewhere from this text in "
            f"{portable} or {packaged} (compile it where the compiler is, into the "
            "same cache directory, and carry the directory)"
        ) from None
    stat = tool.stat()
    # A rebuilt compiler gets a new key, so its output is never stale.
    key = hashlib.sha256(
        f"{tool.resolve()}\0{stat.st_mtime_ns}\0{stat.st_size}\0{_keyed(text, derive)}".encode()
    ).hexdigest()[:24]
    bundle = cache / key
    if (bundle / "manifest.json").is_file():
        _keep_by_text(bundle, portable)
        return bundle
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".compile-") as work:
        work = Path(work)
        mlir = work / "input.mlir"
        mlir.write_text(text)
        out = work / "bundle"
        result = subprocess.run(
            [str(tool), str(mlir), "-o", str(out), *([f"--derive={derive}"] if derive else [])],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            diagnostics = (result.stderr or result.stdout).strip()
            diagnostics = diagnostics.replace(str(mlir), source)
            raise CompileError(
                f"tiledattn.compile: tiledattn-compile failed on {source} "
                f"(exit {result.returncode}):\n{diagnostics}"
            )
        if not (out / "manifest.json").is_file():
            raise CompileError(
                f"tiledattn.compile: tiledattn-compile succeeded on {source} but "
                f"wrote no {out}/manifest.json"
            )
        try:
            # Atomic: a concurrent compile of the same text wins or loses whole.
            out.rename(bundle)
        except OSError:
            if not (bundle / "manifest.json").is_file():
                raise
    _keep_by_text(bundle, portable)
    return bundle


def _keep_by_text(bundle: Path, portable: Path) -> None:
    """Copies `bundle` to its by-text place (found there without the
    compiler), replacing a copy another compiler made: the text is the same
    but its PTX may not be (the key has no compiler in it)."""
    if (portable / "manifest.json").is_file():
        if _same_file(portable / "kernel.ptx", bundle / "kernel.ptx"):
            return
    portable.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=portable.parent, prefix=".copy-") as work:
        copy = Path(work) / "bundle"
        shutil.copytree(bundle, copy)
        if portable.exists():  # out of the way, then replaced
            try:
                portable.rename(Path(work) / "stale")
            except OSError:
                pass  # another process moved it first
        try:
            copy.rename(portable)
        except OSError:
            if not (portable / "manifest.json").is_file():
                raise


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def compile(
    schedule: "str | os.PathLike[str]",
    *,
    cache: "str | os.PathLike[str] | None" = None,
    derive: str = "",
) -> CompiledKernel:
    """Compiles `schedule` and returns a callable with SDPA's signature.

    `schedule` is a bundle directory (used as is), a path to a .mlir file, or
    MLIR text. MLIR goes through `tiledattn-compile INPUT.mlir -o OUTDIR` into
    `cache` (default: cache_dir()); its diagnostics are raised as CompileError.
    `derive`: passes run on the program first (`--derive`), to compile a form
    of it, e.g. "tiledattn-derive-program{element-type=f16 head-dim=96}".
    """
    cache = Path(cache) if cache is not None else cache_dir()
    if isinstance(schedule, os.PathLike) or (
        isinstance(schedule, str) and _looks_like_path(schedule)
    ):
        path = Path(schedule)
        if path.is_dir():
            if derive:
                raise CompileError(
                    f"tiledattn.compile: expected MLIR to derive a form of with '{derive}' "
                    f"but got the bundle directory '{schedule}'"
                )
            return CompiledKernel(path)
        if path.is_file():
            return CompiledKernel(_compile_mlir(path.read_text(), str(path), cache, derive))
        raise CompileError(
            f"tiledattn.compile: expected a bundle directory, a .mlir file or "
            f"MLIR text but '{schedule}' does not exist"
        )
    if not isinstance(schedule, str):
        raise TypeError(
            "tiledattn.compile: expected 'schedule' to be a path or MLIR text but "
            f"got {type(schedule).__name__}"
        )
    return CompiledKernel(_compile_mlir(schedule, "<mlir text>", cache, derive))


def kernel_entry(text: str, cache: "str | os.PathLike[str] | None" = None):
    """The registry entry of compile(text, cache=cache), kept in memory by
    (text, cache directory): a call whose kernel was seen before costs a
    dict lookup, not a hash of the text and a look on disk."""
    key = (text, str(Path(cache)) if cache is not None else str(cache_dir()))
    entry = _entries.get(key)
    if entry is None:
        entry = compile(text, cache=cache).entry
        _entries[key] = entry
    return entry


# The kernels compiled or found so far, by (text, cache directory).
_entries: dict = {}
