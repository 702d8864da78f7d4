"""Locating and loading the runtime library, libtiledattn_runtime.so.

The library registers torch.ops.tiledattn with TORCH_LIBRARY, so it is loaded
with torch.ops.load_library and does not depend on the Python version. It is
loaded only when a kernel is needed: argument validation and the registry
work without it.
"""

import functools
import os
import threading
from pathlib import Path

import torch

from tiledattn.errors import RuntimeLibraryError

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parents[1]
# An installed wheel carries the library and the kernel bundles in the
# package (pyproject.toml); a checkout has them under build/.
WHEEL_KERNEL_DIR = PACKAGE_DIR / "kernels"
WHEEL_LIBRARY = PACKAGE_DIR / "lib" / "libtiledattn_runtime.so"

_lock = threading.Lock()
_loaded_from: "Path | None" = None


def kernel_dir() -> Path:
    """$TILEDATTN_KERNEL_DIR, else the wheel's tiledattn/kernels, else
    <repo>/build/kernels."""
    return _kernel_dir_for(os.environ.get("TILEDATTN_KERNEL_DIR"))


@functools.lru_cache(maxsize=16)
def _kernel_dir_for(env: "str | None") -> Path:
    # Every call asks for it: building the Path was a third of the Python
    # time of a call.
    if env:
        return Path(env)
    if WHEEL_KERNEL_DIR.is_dir():
        return WHEEL_KERNEL_DIR
    return REPO_ROOT / "build" / "kernels"


def library_path() -> Path:
    """$TILEDATTN_RUNTIME_LIB, else the wheel's tiledattn/lib, else
    <repo>/build/runtime/libtiledattn_runtime.so."""
    env = os.environ.get("TILEDATTN_RUNTIME_LIB")
    if env:
        return Path(env)
    if WHEEL_LIBRARY.is_file():
        return WHEEL_LIBRARY
    return REPO_ROOT / "build" / "runtime" / "libtiledattn_runtime.so"


def _ops_registered() -> bool:
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key("tiledattn::sdpa_fwd", "Meta")
    except RuntimeError:  # no such operator yet
        return False


def load_runtime() -> Path:
    """Loads the runtime library once per process and returns its path."""
    global _loaded_from
    if _loaded_from is not None:
        return _loaded_from
    with _lock:
        if _loaded_from is not None:
            return _loaded_from
        path = library_path()
        # Loading a second copy would register the namespace twice.
        if not _ops_registered():
            if not path.is_file():
                raise RuntimeLibraryError(
                    f"tiledattn: the runtime library {path} does not exist; "
                    "build it with `cmake -G Ninja -S . -B build "
                    "-DTILEDATTN_ENABLE_COMPILER=OFF && ninja -C build "
                    "TiledAttnRuntime` (or standalone: `cmake -G Ninja -S "
                    "lib/Runtime -B build/runtime-standalone && ninja -C "
                    "build/runtime-standalone`), or point TILEDATTN_RUNTIME_LIB "
                    "at a built copy"
                )
            try:
                torch.ops.load_library(str(path))
            except OSError as error:
                raise RuntimeLibraryError(
                    f"tiledattn: cannot load the runtime library {path}: {error}; "
                    f"it must be built against this torch ({torch.__version__}); "
                    "rebuild it (see docs/Runtime.md)"
                ) from error
        from tiledattn import backward

        backward.register()
        _loaded_from = path
        return path


def bundle_info(bundle_dir: "str | os.PathLike[str]") -> str:
    """The runtime's validated view of a bundle, as JSON text.

    Checks the manifest and the cubin header; needs the runtime library but
    no GPU.
    """
    load_runtime()
    return torch.ops.tiledattn.bundle_info(str(Path(bundle_dir).resolve()))
