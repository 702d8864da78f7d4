"""Exceptions raised by tiledattn.

Every message names the argument, what was expected and what was given, in
the voice of the MLIR verifiers and the runtime's TORCH_CHECKs.
"""


class TiledAttnError(Exception):
    """Base class of tiledattn's own errors."""


class UnsupportedInputError(TiledAttnError, NotImplementedError):
    """Valid for torch's SDPA but not (yet) for tiledattn's kernels.

    ``fallback=True`` sends these inputs to torch's SDPA instead.
    """

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class InvalidInputError(TiledAttnError, ValueError):
    """Inputs that no SDPA implementation accepts (mismatched shapes, ...)."""


class RuntimeLibraryError(TiledAttnError, RuntimeError):
    """The runtime library (libtiledattn_runtime.so) is missing or broken."""


class CompileError(TiledAttnError, RuntimeError):
    """tiledattn-compile is missing or rejected a schedule."""


def require_kernel_device(op: str, device) -> None:
    """Refuses tensors a kernel cannot run on: CUDA runs them, meta tensors
    (fake tensors, meta-device models) the shape-only path."""
    if device.type not in ("cuda", "meta"):
        raise UnsupportedInputError(
            f"{op}: expected 'query', 'key' and 'value' to be CUDA tensors but got "
            f"tensors on {device}",
            "device",
        )


def require_4d(op: str, layout: str, **tensors) -> None:
    """Refuses any of `tensors` (by argument name) that is not a 4-D
    tensor, naming the `layout` expected."""
    for name, t in tensors.items():
        if not hasattr(t, "dim") or t.dim() != 4:
            got = tuple(t.shape) if hasattr(t, "shape") else type(t).__name__
            raise InvalidInputError(
                f"{op}: expected '{name}' to be a 4-D tensor {layout}but got {got}"
            )
