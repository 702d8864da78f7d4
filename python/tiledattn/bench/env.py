"""What machine and software a result came from, recorded with every run.

An absolute TFLOP/s is a fact about one machine on one day (DESIGN.md), so
the clocks, driver and library versions go into the JSON next to it.
"""

import datetime
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

_SMI_FIELDS = (
    "name",
    "driver_version",
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "clocks.max.mem",
    "clocks.applications.graphics",
    "power.limit",
    "temperature.gpu",
    "persistence_mode",
)


def _run(args):
    try:
        done = subprocess.run(args, check=False, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def nvidia_smi():
    """The first GPU's clocks etc. from nvidia-smi (empty if unavailable)."""
    out = _run(
        [
            "nvidia-smi",
            "--query-gpu=" + ",".join(_SMI_FIELDS),
            "--format=csv,noheader",
        ]
    )
    if not out:
        return {}
    values = [v.strip() for v in out.splitlines()[0].split(",")]
    return dict(zip(_SMI_FIELDS, values))


def gpu_state():
    """The first GPU's SM clock (MHz) and power draw (W) now, from nvidia-smi;
    empty if unavailable. Sampled right after a backend's timed runs, it
    tells a slower kernel from a lower clock (a kernel that draws more power
    can be held to a lower clock than the baseline timed next to it)."""
    out = _run(
        [
            "nvidia-smi",
            "--query-gpu=clocks.sm,power.draw",
            "--format=csv,noheader,nounits",
        ]
    )
    if not out:
        return {}
    try:
        clock, power = (float(v) for v in out.splitlines()[0].split(","))
    except ValueError:  # "[N/A]" or a format we do not know
        return {}
    return {"sm_clock_mhz": clock, "power_w": power}


def git_commit():
    """$TILEDATTN_GIT_COMMIT when set, else HEAD of this checkout (with
    -dirty). The variable wins: the GPU machine gets a copy of the tree whose
    .git, if any, is not the commit being measured."""
    if os.environ.get("TILEDATTN_GIT_COMMIT"):
        return os.environ["TILEDATTN_GIT_COMMIT"]
    repo = Path(__file__).resolve().parents[3]
    head = _run(["git", "-C", str(repo), "rev-parse", "HEAD"])
    if head:
        dirty = _run(["git", "-C", str(repo), "status", "--porcelain"])
        return head + ("-dirty" if dirty else "")
    return "unknown"


def command_line(argv=None):
    """The exact command, as one would type it again."""
    argv = sys.argv[1:] if argv is None else argv
    return shlex.join([sys.executable, "-m", "tiledattn.bench", *argv])


def collect(argv=None):
    """Environment record for results.json; never raises."""
    import torch

    info = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": command_line(argv),
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "gpu": None,
        "nvidia_smi": nvidia_smi(),
        "env_vars": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("TORCH_CUDNN", "TILEDATTN", "CUDA_VISIBLE"))
        },
    }
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except RuntimeError as error:
        info["cudnn"] = f"unknown ({error})"
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        info["triton"] = None
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["gpu"] = props.name
        info["sm_count"] = props.multi_processor_count
        info["capability"] = f"{props.major}.{props.minor}"
        info["gpu_memory_bytes"] = props.total_memory
    try:
        import tiledattn
        from tiledattn import _runtime

        info["tiledattn"] = tiledattn.__version__
        info["kernel_dir"] = str(_runtime.kernel_dir())
        info["kernels"] = tiledattn.available_kernels()
        info["runtime_lib"] = str(_runtime.library_path())
    except Exception as error:  # noqa: BLE001 -- a record, never a crash
        info["tiledattn_error"] = str(error)
    return info
