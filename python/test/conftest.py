"""pytest configuration: import tiledattn from this checkout's python/, or,
with TILEDATTN_TEST_INSTALLED=1, the installed package (a wheel), which
brings its own runtime library and kernels."""

import os
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
if os.environ.get("TILEDATTN_TEST_INSTALLED") != "1" and str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

import bundles

import tiledattn
from tiledattn import _runtime, registry


@pytest.fixture
def fake_kernel_dir(tmp_path, monkeypatch):
    """A kernel dir with the 8 shipped bundle names, with stand-in cubins.

    The cubins pass the runtime's header check but hold no code: enough for
    selection, validation and fake tensors, never for a launch.
    """
    directory = tmp_path / "kernels"
    for dtype in ("f16", "bf16"):
        for head_dim in (64, 128):
            for causal in (False, True):
                bundles.make_bundle(directory, dtype, head_dim, causal)
    monkeypatch.setenv("TILEDATTN_KERNEL_DIR", str(directory))
    registry.refresh()
    yield directory
    registry.refresh()


@pytest.fixture
def hopper_kernel_dir(fake_kernel_dir):
    """fake_kernel_dir plus head dim 256 Hopper bundles (TMA tensor maps,
    384 threads, 200 KiB of shared memory, 16-byte alignment)."""
    for dtype in ("f16", "bf16"):
        for causal in (False, True):
            bundles.make_bundle(fake_kernel_dir, dtype, 256, causal, tma=True)
    registry.refresh()
    return fake_kernel_dir


@pytest.fixture
def runtime():
    """The runtime library, loaded; skips when it has not been built."""
    path = _runtime.library_path()
    if not path.is_file() and not _runtime._ops_registered():
        pytest.skip(
            f"runtime library {path} is not built (ninja -C build TiledAttnRuntime); "
            "these tests need it but no GPU"
        )
    return tiledattn.load_runtime()


def pytest_report_header(config):
    import torch

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "none"
    return [
        f"tiledattn {tiledattn.__version__} from {Path(tiledattn.__file__).parent}, "
        f"torch {torch.__version__}, GPU: {gpu}",
        f"runtime library: {_runtime.library_path()}",
        f"kernel dir: {_runtime.kernel_dir()}",
    ]
