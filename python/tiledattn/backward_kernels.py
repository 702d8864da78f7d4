"""The backward as tile programs (issue 23), first form: the preprocess and
main programs of python/tiledattn/schedules/backward/, run on given buffers
by torch.ops.tiledattn.run_bundle.

    dq, dk, dv = backward_kernels.attention_backward(q, k, v, out, lse, grad_out, scale)

What they cover today: bf16, head dim 128, no mask, one length for q and k
and one number of heads (self-attention without GQA). Anything else raises
UnsupportedInputError naming what it got; `tiledattn.backward` (torch ops)
stays the autograd path until these cover what the forward does.
"""

from pathlib import Path

import torch

from . import attention, compiler
from .errors import UnsupportedInputError

PROGRAMS = Path(__file__).parent / "schedules" / "backward"
_OP = "tiledattn.backward_kernels.attention_backward"


def _kernels(cache):
    return (
        compiler.compile(PROGRAMS / "preprocess_bf16_d128.mlir", cache=cache),
        compiler.compile(PROGRAMS / "main_bf16_d128.mlir", cache=cache),
    )


def _check(q, k, v, out, lse, grad_out):
    for name, t in (("q", q), ("k", k), ("v", v), ("out", out), ("grad_out", grad_out)):
        if t.dim() != 4 or t.dtype != torch.bfloat16 or t.shape[-1] != 128:
            raise UnsupportedInputError(
                f"{_OP}: expected '{name}' to be a [B, H, S, 128] bfloat16 tensor (the "
                f"programs' only form yet) but got {t.dtype} of shape {tuple(t.shape)}",
                name,
            )
    if k.shape != q.shape or v.shape != q.shape or out.shape != q.shape:
        raise UnsupportedInputError(
            f"{_OP}: expected q, k, v and out of one shape (one length and one number of "
            f"heads: no GQA or cross-attention yet) but got q {tuple(q.shape)}, k "
            f"{tuple(k.shape)}, v {tuple(v.shape)}, out {tuple(out.shape)}",
            "shape",
        )
    if grad_out.shape != q.shape:
        raise UnsupportedInputError(
            f"{_OP}: expected 'grad_out' of out's shape {tuple(q.shape)} but got "
            f"{tuple(grad_out.shape)}",
            "grad_out",
        )
    if lse.shape != q.shape[:-1] or lse.dtype != torch.float32:
        raise UnsupportedInputError(
            f"{_OP}: expected 'lse' to be a float32 tensor of shape {tuple(q.shape[:-1])} "
            f"but got {lse.dtype} of shape {tuple(lse.shape)}",
            "lse",
        )


def attention_backward(q, k, v, out, lse, grad_out, scale, *, cache=None):
    """dq, dk, dv (bfloat16) of softmax(scale q k^T) v, from the forward's
    output and log-sum-exp (natural log, float32) and the output's gradient.
    `cache`: where the programs' bundles are (default: the compile cache)."""
    _check(q, k, v, out, lse, grad_out)
    if not scale > 0:
        raise UnsupportedInputError(f"{_OP}: expected a positive 'scale' but got {scale}", "scale")
    attention._ensure_runtime()
    preprocess, main = _kernels(cache)
    q, k, v, out, grad_out = (t.contiguous() for t in (q, k, v, out, grad_out))
    lse = lse.contiguous()
    run = torch.ops.tiledattn.run_bundle
    # D = rowsum(dO * O): the preprocess reads O as q and dO as k, writes D
    # as its lse (its o is not written).
    delta = torch.empty_like(lse)
    run(out, grad_out, grad_out, out, delta, 1.0, str(preprocess.path))
    dq, dk, dv = (torch.zeros(q.shape, dtype=torch.float32, device=q.device) for _ in "qkv")
    run(q, k, v, grad_out, lse, float(scale), str(main.path), [delta, dq, dk, dv])
    return (dq * scale).to(q.dtype), (dk * scale).to(q.dtype), dv.to(q.dtype)
