"""The backward as tile programs (issue 23), first form: the preprocess and
main programs of python/tiledattn/schedules/backward/, run on given buffers
by torch.ops.tiledattn.run_bundle.

    dq, dk, dv = backward_kernels.attention_backward(q, k, v, out, lse, grad_out, scale)

What they cover today: bf16 and float16 (the programs are written for
bf16; derivation names the passes that give the float16 form, the same
program with its element type changed), head dim 128 (and 64,
main_bf16_d64_rows.mlir, 192 and 256, main_bf16_d192_rows.mlir and
main_bf16_d256_rows.mlir; and every other multiple of 16 up to 256, on
those programs' tiles, the derivation changing their operands' head dim;
the deterministic mode up to 128), no mask, causal (torch's top-left: the
_causal forms, which the derivation makes of the programs, CAUSAL_FORMS)
or not; the row forms also GQA / MQA (dK and dV summed over a group's
query heads) and q and k of different lengths, the one-consumer program
one length and one number of heads and no causal. Anything else raises
UnsupportedInputError naming what it got.
Autograd uses the (program, dtype, head dim) forms in IN_AUTOGRAD, those
whose GPU tests have passed.

Autograd (tiledattn.backward) sends the backward of a forward these cover
here, through the functional op `tiledattn::backward_programs` (opaque to
torch.compile), unless deterministic algorithms are on
(torch.use_deterministic_algorithms): dQ's atomic adds make the main
programs' gradients differ run to run in the last bits, so that mode runs
DETERMINISTIC_PROGRAMS where IN_AUTOGRAD has them, and every input the
programs do not cover keeps the torch-ops backward.
"""

import functools
import os
import re
from pathlib import Path
from typing import NamedTuple

import torch

from . import attention, compiler, registry
from .errors import UnsupportedInputError

PROGRAMS = Path(__file__).parent / "schedules" / "backward"
_OP = "tiledattn.backward_kernels.attention_backward"
# The dQ layouts of 64-column blocks: how many a 64-query block has (block
# n i + c is query block i's columns 64c .. 64c + 63).
_COLUMN_BLOCKS = {"halves": 2, "thirds": 3, "quarters": 4}
_DQ_LAYOUTS = (*_COLUMN_BLOCKS, "blocks", "rows")
# The causal forms are not files: tiledattn-derive-program{mask=causal}
# derives each from its row program, which says where the mask goes
# (tiledattn.mask, the identity there; tiledattn.first_query_block, where
# its loops start). Form name -> the program's file.
# The deterministic dQ program says where its loops end instead
# (tiledattn.key_block_end).
CAUSAL_FORMS = {
    f"{name}_causal.mlir": f"{name}.mlir"
    for name in (
        "main_bf16_d128_rows",
        "main_bf16_d64_rows",
        "main_bf16_d256_rows",
        "main_bf16_d192_rows",
        "dkdv_bf16_d128",
        "dq_bf16_d128",
        "dkdv_bf16_d64",
        "dq_bf16_d64",
    )
}
# The element types the programs take, by the name their text uses.
DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
# The head dims they take: every multiple of 16 up to 256 (tile_head_dim).
HEAD_DIMS = tuple(range(16, 257, 16))


class MainProgram(NamedTuple):
    """How a main program adds dQ (attention_backward's dq_layout), whether
    it takes K/V of their own heads and length (GQA, cross-attention) or
    only q's shape, whether it is causal (top-left) attention's, and its
    head dim."""

    dq_layout: str
    any_kv_shape: bool
    causal: bool = False
    head_dim: int = 128


# The row form (FlashAttention-3's layout) is what autograd runs; the
# one-consumer program stays as the reference form and an A/B baseline.
MAIN_PROGRAMS = {
    "main_bf16_d128.mlir": MainProgram("blocks", any_kv_shape=False),
    "main_bf16_d128_rows.mlir": MainProgram("halves", any_kv_shape=True),
    "main_bf16_d128_rows_causal.mlir": MainProgram("halves", any_kv_shape=True, causal=True),
    "main_bf16_d64_rows.mlir": MainProgram("blocks", any_kv_shape=True, head_dim=64),
    "main_bf16_d64_rows_causal.mlir": MainProgram(
        "blocks", any_kv_shape=True, causal=True, head_dim=64
    ),
    "main_bf16_d192_rows.mlir": MainProgram("thirds", any_kv_shape=True, head_dim=192),
    "main_bf16_d192_rows_causal.mlir": MainProgram(
        "thirds", any_kv_shape=True, causal=True, head_dim=192
    ),
    "main_bf16_d256_rows.mlir": MainProgram("quarters", any_kv_shape=True, head_dim=256),
    "main_bf16_d256_rows_causal.mlir": MainProgram(
        "quarters", any_kv_shape=True, causal=True, head_dim=256
    ),
}
DEFAULT_MAIN = "main_bf16_d128_rows.mlir"
CAUSAL_MAIN = "main_bf16_d128_rows_causal.mlir"
# The deterministic mode's programs (attention_backward(deterministic=True)),
# by the head dim of their tiles and causality: dK and dV, then dQ in
# registers (the causal pairs derived, CAUSAL_FORMS).
DETERMINISTIC_PROGRAMS = {
    (d, causal): tuple(
        f"{name}_bf16_d{d}{'_causal' if causal else ''}.mlir" for name in ("dkdv", "dq")
    )
    for d in (128, 64)
    for causal in (False, True)
}
# The D = 128 pair's first program, which stands for the mode at head dims
# 80-128 (IN_AUTOGRAD; the D = 64 pair's for 16-64).
DETERMINISTIC = DETERMINISTIC_PROGRAMS[128, False][0]
# The program a call runs unless one is named: by (head dim, causal).
# $TILEDATTN_BACKWARD_MAIN names another for the calls it fits.
_DEFAULTS = {
    (128, False): DEFAULT_MAIN,
    (128, True): CAUSAL_MAIN,
    (64, False): "main_bf16_d64_rows.mlir",
    (64, True): "main_bf16_d64_rows_causal.mlir",
    (192, False): "main_bf16_d192_rows.mlir",
    (192, True): "main_bf16_d192_rows_causal.mlir",
    (256, False): "main_bf16_d256_rows.mlir",
    (256, True): "main_bf16_d256_rows_causal.mlir",
}


def tile_head_dim(head_dim):
    """The head dim of the programs that run head dim `head_dim`: 64, 128,
    192 or 256, the smallest that holds it (a multiple of 16: TMA fills the
    tiles' columns past it with zeros), else None."""
    if head_dim % 16 or not 0 < head_dim <= 256:
        return None
    return next(d for d in (64, 128, 192, 256) if head_dim <= d)


def source(program) -> Path:
    """The file a program (or one of CAUSAL_FORMS) is compiled from."""
    return PROGRAMS / CAUSAL_FORMS.get(program, program)


def derivation(program, dtype=torch.bfloat16, head_dim=None):
    """The passes that derive a program's form for `dtype` and `head_dim`
    (default: the program's own) from its file (source), which is written
    for bf16: tiledattn-compile's --derive (tiledattn-derive-program), ""
    for the file's own form. For float16 every bf16 type becomes f16 (the
    lowering takes either); for a smaller head dim the operands' head dim
    changes (the tiles keep the program's columns, TMA loads zeros past the
    operands' and the caller keeps the gradients' first `head_dim`
    columns); CAUSAL_FORMS get torch's causal mask."""
    own = _own_head_dim(program)
    options = ["mask=causal"] if program in CAUSAL_FORMS else []
    if dtype != torch.bfloat16:
        options.append(f"element-type={DTYPES[dtype]}")
    if head_dim is not None and head_dim != own:
        if tile_head_dim(head_dim) != own:
            raise ValueError(
                f"{_OP}: expected a head dim that {program} runs (a multiple of 16 whose "
                f"tiles are {own} columns) but got {head_dim}"
            )
        options.append(f"head-dim={head_dim}")
    return "tiledattn-derive-program{" + " ".join(options) + "}" if options else ""


def _own_head_dim(program):
    """The head dim a program's file is written for (its name's _d<N>)."""
    return int(re.search(r"_d(\d+)", program).group(1))


# What autograd runs: the (main program, dtype, head dim) forms whose GPU
# tests have passed, each deterministic pair's first program standing for
# the pair (the D = 64 pair's GPU tests first ran in the thirty-eighth
# session); every other backward keeps the torch-ops one (attention_backward
# runs any form when asked): the row forms, causal or not, with GQA and
# other lengths, the deterministic mode, float16, and every head dim on the
# programs' tiles (16-64 on the D = 64 program's, 80-128 on the D = 128
# ones'). The D = 64 forms came back after the thirty-seventh session found
# why their backward failed at B 16, H 32, S 1024 (NaN rows, then
# "unspecified launch failure"): every kernel's tiles overlapped its
# mbarriers (docs/perf-notes.md, tiledattn-extern-dynamic-shared-memory),
# which the preprocess of head dim 64, several blocks to a multiprocessor,
# showed first.
# The D = 256 forms joined in the forty-second session (GPU tests at c211089);
# the D = 192 ones (written then, their GPU tests and two autograd cases
# waiting for a device: the forty-third session had none) join once those pass.
IN_AUTOGRAD = frozenset(
    (program, dtype, d)
    for program in (*_DEFAULTS.values(), *(pair[0] for pair in DETERMINISTIC_PROGRAMS.values()))
    for dtype in DTYPES
    for d in HEAD_DIMS
    if tile_head_dim(d) == _own_head_dim(program) != 192
)


def program_forms(head_dims=()):
    """(program, dtype, head dim, derivation) of every program (a file's
    name, or one of CAUSAL_FORMS; compiled from source(program)) in every
    dtype, at its own head dim and at each of `head_dims` it runs: what the
    package (own head dims) and the GPU machine's cache (the tests' padded
    ones too) carry compiled."""
    for name in sorted([*(p.name for p in PROGRAMS.glob("*.mlir")), *CAUSAL_FORMS]):
        own = _own_head_dim(name)
        for d in (own, *(d for d in head_dims if d != own and tile_head_dim(d) == own)):
            for dtype in DTYPES:
                yield name, dtype, d, derivation(name, dtype, d)


@functools.lru_cache(maxsize=32)
def _kernel(cache, program, dtype=torch.bfloat16, head_dim=None):
    """A program's bundle, found (or compiled) once per cache directory:
    autograd calls this every backward, so a hash of the program's text and
    a look on disk per call would be host time spent twice
    (compiler.kernel_entry keeps the forward's kernels the same way)."""
    return compiler.compile(
        source(program), cache=cache, derive=derivation(program, dtype, head_dim)
    )


@functools.lru_cache(maxsize=64)
def _obtainable(program, dtype, head_dim):
    """Whether the bundle of a form is compiled or can be (a wheel without
    the compiler carries only the programs' own head dims): autograd sends
    a padded head dim to the programs only where it is."""
    try:
        _kernel(None, program, dtype, head_dim)
    except compiler.CompileError:
        return False
    return True


def _main_program(name, causal=False, head_dim=128):
    """`name`, else $TILEDATTN_BACKWARD_MAIN where it is a program for this
    head dim and causality, else the default one; one of MAIN_PROGRAMS,
    causal as `causal` is, whose tiles take head dim `head_dim`
    (tile_head_dim; or None: no program)."""
    head_dim = tile_head_dim(head_dim) if head_dim else None
    env = os.environ.get("TILEDATTN_BACKWARD_MAIN")
    for given, source in ((name, "'main_program'"), (env, "$TILEDATTN_BACKWARD_MAIN")):
        if not given:
            continue
        if given not in MAIN_PROGRAMS:
            raise ValueError(
                f"{_OP}: expected the main program ({source}) to be one of "
                f"{tuple(MAIN_PROGRAMS)} but got {given!r}"
            )
        program = MAIN_PROGRAMS[given]
        if (program.causal, program.head_dim) == (causal, head_dim):
            return given
        if given == name:
            kind = "causal" if causal else "non-causal"
            raise ValueError(
                f"{_OP}: expected a main program for {kind} attention (causal={causal}) "
                f"of head dim {head_dim} but got {name!r}, which is "
                f"{'causal' if program.causal else 'not causal'}, of head dim "
                f"{program.head_dim}"
            )
    return _DEFAULTS.get((head_dim, causal))


def _check(q, k, v, out, lse, grad_out, program):
    d = q.shape[-1]
    dtype = q.dtype if q.dtype in DTYPES else torch.bfloat16
    for name, t in (("q", q), ("k", k), ("v", v), ("out", out), ("grad_out", grad_out)):
        if t.dim() != 4 or t.dtype != dtype or t.shape[-1] != d:
            raise UnsupportedInputError(
                f"{_OP}: expected '{name}' to be a [B, H, S, {d}] {_dtype_name(dtype, q)} "
                f"tensor (the form {program} takes) but got {t.dtype} of shape "
                f"{tuple(t.shape)}",
                name,
            )
    if not _kv_shape_fits(q.shape, k.shape, v.shape, MAIN_PROGRAMS[program].any_kv_shape):
        what = (
            f"k and v of one shape [B, Hkv, Sk, {d}] with q's batch and Hkv dividing q's heads"
            if MAIN_PROGRAMS[program].any_kv_shape
            else f"k and v of q's shape (one length and one number of heads: {program} "
            "takes no GQA or cross-attention; main_bf16_d128_rows.mlir does)"
        )
        raise UnsupportedInputError(
            f"{_OP}: expected {what} but got q {tuple(q.shape)}, k {tuple(k.shape)}, "
            f"v {tuple(v.shape)}",
            "shape",
        )
    if out.shape != q.shape:
        raise UnsupportedInputError(
            f"{_OP}: expected 'out' of q's shape {tuple(q.shape)} but got {tuple(out.shape)}",
            "out",
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


def _dtype_name(dtype, q):
    """What _check asks for: bfloat16 or float16, q's dtype once q has one
    of them."""
    return str(dtype).removeprefix("torch.") if q.dtype in DTYPES else "bfloat16 or float16"


def _kv_shape_fits(q, k, v, any_kv_shape):
    """Whether K and V of shapes `k`, `v` go with Q of shape `q`: q's shape,
    or (a program with any_kv_shape) one shape with q's batch and a number
    of heads dividing q's."""
    if not any_kv_shape:
        return k == q and v == q
    return k == v and k[0] == q[0] and k[1] > 0 and q[1] % k[1] == 0


def covers(q, k, v, causal, main_program=None, deterministic=False) -> bool:
    """Whether the programs take the backward of this forward (on CUDA),
    with `main_program` (default: as attention_backward picks it), or
    `deterministic` (bitwise the same gradients run to run)."""
    if not all(t.dim() == 4 for t in (q, k, v)):
        return False
    head_dim = q.shape[-1]
    name = _main_program(main_program, causal, head_dim)
    if name is None:
        return False
    program = MAIN_PROGRAMS[name]
    runs = DETERMINISTIC_PROGRAMS.get((program.head_dim, causal)) if deterministic else (name,)
    if runs is None:  # no deterministic pair at this head dim
        return False
    if main_program is None and (runs[0], q.dtype, head_dim) not in IN_AUTOGRAD:
        return False
    fits = (
        q.is_cuda
        and q.dtype in DTYPES
        and all(t.dtype == q.dtype for t in (k, v))
        and k.shape[-1] == head_dim
        and v.shape[-1] == head_dim
        and _kv_shape_fits(q.shape, k.shape, v.shape, program.any_kv_shape)
        # an empty batch or key set: the torch-ops backward's zeros
        and q.shape.numel() > 0
        and k.shape.numel() > 0
    )
    if not fits or head_dim == program.head_dim:
        return fits
    preprocess = f"preprocess_bf16_d{program.head_dim}.mlir"
    return all(_obtainable(p, q.dtype, head_dim) for p in (preprocess, *runs))


def attention_backward(
    q,
    k,
    v,
    out,
    lse,
    grad_out,
    scale,
    *,
    grad_lse=None,
    causal=False,
    cache=None,
    main_program=None,
    main_bundle=None,
    dq_layout=None,
    deterministic=False,
    deterministic_bundles=None,
):
    """dq, dk, dv (q's dtype: bfloat16 or float16) of softmax(scale q k^T) v, from the forward's
    output and log-sum-exp (natural log, float32) and the output's gradient
    (and the lse's, `grad_lse`, when the lse was used); `causal`: torch's
    is_causal (top-left).
    `cache`: where the programs' bundles are (default: the compile cache,
    then the ones the package carries). `main_program`: one of
    MAIN_PROGRAMS (default $TILEDATTN_BACKWARD_MAIN, else DEFAULT_MAIN).
    `main_bundle`: a bundle directory to run instead (an A/B candidate,
    e.g. from scripts/backward_programs_speed.py), with the captures the
    main programs take; `dq_layout`: how it adds dQ (default: as the main
    program does): "halves" (each 64-query block as two fragment-ordered
    64-column halves, block 2i + c, the row form; "thirds" and "quarters":
    three and four, block 3i + c and 4i + c, the D = 192 and D = 256 row
    forms), "blocks" (one
    fragment-ordered 64 x 128 block per query block, the one-consumer
    program) or "rows" (a [B, H, S, 128] f32 accumulator in row order,
    tiledattn.reduce_add's atomics). `deterministic`: gradients bitwise the
    same run to run, from DETERMINISTIC_PROGRAMS (no atomics);
    `deterministic_bundles`: their (dK and dV, dQ) bundle directories to run
    instead (an A/B candidate)."""
    program = _main_program(main_program, causal, q.shape[-1] if q.dim() == 4 else None)
    if program is None:
        raise UnsupportedInputError(
            f"{_OP}: expected a head dim the programs take, a multiple of 16 up to 256 "
            f"({'causal' if causal else 'not causal'}; HEAD_DIMS) but got q of shape "
            f"{tuple(q.shape)}",
            "q",
        )
    dq_layout = dq_layout or MAIN_PROGRAMS[program].dq_layout
    if dq_layout not in _DQ_LAYOUTS:
        raise ValueError(f"{_OP}: expected 'dq_layout' in {_DQ_LAYOUTS} but got {dq_layout!r}")
    _check(q, k, v, out, lse, grad_out, program)
    if deterministic and (MAIN_PROGRAMS[program].head_dim, causal) not in DETERMINISTIC_PROGRAMS:
        raise UnsupportedInputError(
            f"{_OP}: expected a head dim up to 128 for deterministic=True (the deterministic "
            f"programs' tiles are 64 and 128 columns) but got q of shape {tuple(q.shape)}",
            "deterministic",
        )
    if not scale > 0:
        raise UnsupportedInputError(f"{_OP}: expected a positive 'scale' but got {scale}", "scale")
    attention._ensure_runtime()
    # The programs' tiles are d columns wide; a smaller head runs on them
    # (derivation), its gradients the first `head` columns of d-wide ones.
    head, d = q.shape[-1], MAIN_PROGRAMS[program].head_dim
    preprocess = _kernel(cache, f"preprocess_bf16_d{d}.mlir", q.dtype, head)
    q, k, v, out, grad_out = (t.contiguous() for t in (q, k, v, out, grad_out))
    lse = lse.contiguous()
    run = torch.ops.tiledattn.run_bundle
    # D = rowsum(dO * O): the preprocess reads O as q and dO as k, writes D
    # as its lse (its o is not written).
    delta = torch.empty_like(lse)
    run(out, grad_out, grad_out, out, delta, 1.0, str(preprocess.path))
    if grad_lse is not None:  # d lse / d s = P: dS = P (dP - D + dlse)
        delta -= grad_lse.float()
    if deterministic:
        pair = DETERMINISTIC_PROGRAMS[d, MAIN_PROGRAMS[program].causal]
        bundles = deterministic_bundles or [_kernel(cache, p, q.dtype, head).path for p in pair]
        return _deterministic(q, k, v, grad_out, lse, delta, scale, d, bundles)
    batch, heads, length, _ = q.shape
    blocks = -(-length // 64)
    if dq_layout in _COLUMN_BLOCKS:
        dq_shape = (batch, heads, _COLUMN_BLOCKS[dq_layout] * blocks, 64 * 64)
    else:
        dq_shape = {"blocks": (batch, heads, blocks, 64 * d), "rows": q.shape}[dq_layout]
    dq = torch.zeros(dq_shape, dtype=torch.float32, device=q.device)
    # A candidate bundle runs instead of the main program (not compiled).
    main = Path(main_bundle or _kernel(cache, program, q.dtype, head).path)
    writes = _writes_gradients(main)  # dK, dV written once, dS scaled in the loop
    kv_shape = (*k.shape[:-1], d)
    if writes:
        dk, dv = (torch.empty(kv_shape, dtype=k.dtype, device=k.device) for _ in "kv")
    else:  # f32 accumulators, added into
        dk, dv = (torch.zeros(kv_shape, dtype=torch.float32, device=q.device) for _ in "kv")
    run(q, k, v, grad_out, lse, float(scale), str(main), [delta, dq, dk, dv])
    # Each gradient scaled (unless the program did) and rounded in one pass
    # (torch.mul into a bf16 out): dQ from its fragment-ordered blocks
    # straight into rows.
    dq = _scaled(_in_row_order(dq, dq_layout), None if writes else scale, q.dtype, d)
    if not writes:
        dk, dv = _scaled(dk, scale, q.dtype, d), dv.to(q.dtype)
    return tuple(_head_columns(g, head) for g in (dq[:, :, :length], dk, dv))


def _head_columns(grad, head):
    """A gradient's first `head` columns (of its tiles' d), contiguous."""
    return (
        grad if grad.shape[-1] == head and grad.is_contiguous() else grad[..., :head].contiguous()
    )


def _deterministic(q, k, v, grad_out, lse, delta, scale, d, bundles):
    """dK and dV, each written once by the block that owns its keys, then dQ
    accumulated in registers over the key tiles in order: no atomics;
    `bundles`: the two programs' (DETERMINISTIC_PROGRAMS). The gradients are
    d columns wide (the tiles'), q's head dim kept."""
    head = q.shape[-1]
    dkdv, dq_program = (str(b) for b in bundles)
    run = torch.ops.tiledattn.run_bundle
    dq = torch.empty(*q.shape[:-1], d, dtype=q.dtype, device=q.device)
    dk, dv = (torch.empty(*k.shape[:-1], d, dtype=k.dtype, device=k.device) for _ in "kv")
    run(q, k, v, grad_out, lse, float(scale), dkdv, [delta, dk, dv])
    run(q, k, v, grad_out, lse, float(scale), dq_program, [delta, dq])
    return tuple(_head_columns(g, head) for g in (dq, dk, dv))


@functools.lru_cache(maxsize=32)
def _writes_gradients(bundle):
    """Whether a main bundle writes dK and dV itself (its dK capture is
    bf16, and it takes the softmax's scale into dS, so dQ comes out scaled
    too) rather than adding them into f32 accumulators for the caller to
    scale and round."""
    params = registry.read_bundle(bundle).manifest["params"]
    names = [p.get("name") for p in params]
    if names[6:] != [f"capture{i}" for i in range(4)]:
        raise UnsupportedInputError(
            f"{_OP}: expected main bundle {bundle} to take sdpa's six operands and four "
            f"captures (D, dQ, dK, dV) as the main programs do, but its parameters are {names}",
            "main_bundle",
        )
    return params[8]["dtype"] != "f32"


def _scaled(t, scale, dtype, cols):
    """t * scale (t if scale is None) as a contiguous `dtype` tensor,
    written once; `t` may be a permuted view of shape (B, H, row dims...,
    column dims...) whose rows and columns are the result's [B, H, rows,
    cols]."""
    batch, heads = t.shape[:2]
    result = torch.empty(
        batch, heads, t.numel() // (batch * heads * cols), cols, dtype=dtype, device=t.device
    )
    if scale is None:
        result.view(t.shape).copy_(t)
    else:
        torch.mul(t, scale, out=result.view(t.shape))
    return result


def _in_row_order(frags, layout):
    """dQ's accumulator as a view in row order: dims (B, H, row dims...,
    column dims...), see rows_of_fragments; a row-order accumulator as it is."""
    if layout == "rows":
        return frags
    batch, heads, blocks, _ = frags.shape
    halves = _COLUMN_BLOCKS.get(layout, 1)
    view = _fragment_view(frags.view(batch, heads, blocks // halves, halves, -1))
    return view.permute(0, 1, 2, 4, 5, 6, 3, 7, 8, 9)  # (i, rows, c, columns)


def _fragment_view(frags):
    """[B, H, blocks, halves, 64 * cols] fragment-ordered values as (B, H,
    blocks, halves, w, h, g, c8, q, e): row 16 w + 8 h + g and column 8 c8
    + 2 q + e of the block (value 2 (128 j + t) + e, j = 2 c8 + h, t = 32 w
    + 4 g + q)."""
    batch, heads, blocks, halves, values = frags.shape
    view = frags.view(batch, heads, blocks, halves, values // 512, 2, 4, 8, 4, 2)
    return view.permute(0, 1, 2, 3, 6, 5, 7, 4, 8, 9)


def rows_of_fragments(frags, cols):
    """[B, H, blocks, 64 * cols] f32 blocks in a warpgroup's register order
    (tiledattn.bulk_reduce_add's dest) as [B, H, 64 * blocks, cols] rows:
    value 2 (128 j + t) + e of a block is row 16 (t / 32) + 8 (j % 2) +
    (t % 32) / 4 and column 8 (j / 2) + 2 (t % 4) + e of its 64 rows."""
    batch, heads, blocks, _ = frags.shape
    return _in_row_order(frags, "blocks").reshape(batch, heads, blocks * 64, cols)


@torch.library.custom_op("tiledattn::backward_programs", mutates_args=())
def backward_programs(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    grad_out: torch.Tensor,
    grad_lse: "torch.Tensor | None",
    scale: float,
    causal: bool,
    deterministic: bool,
) -> "tuple[torch.Tensor, torch.Tensor, torch.Tensor]":
    """attention_backward as one functional op: what autograd calls, so that
    torch.compile sees one node with no mutation."""
    return attention_backward(
        q,
        k,
        v,
        out,
        lse,
        grad_out,
        scale,
        grad_lse=grad_lse,
        causal=causal,
        deterministic=deterministic,
    )


@backward_programs.register_fake
def _(q, k, v, out, lse, grad_out, grad_lse, scale, causal, deterministic):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def rows_of_column_halves(frags):
    """[B, H, 2 blocks, 4096] fragment-ordered 64 x 64 blocks, block 2i + c
    being rows 64i .. 64i + 63 and columns 64c .. 64c + 63, as
    [B, H, 64 blocks, 128] rows."""
    batch, heads, halves, _ = frags.shape
    return _in_row_order(frags, "halves").reshape(batch, heads, halves // 2 * 64, 128)
