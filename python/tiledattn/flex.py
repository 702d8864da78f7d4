"""tiledattn.flex_attention: FlexAttention's score_mod as tile IR.

The score_mod callable that torch.nn.attention.flex_attention takes,
score_mod(score, b, h, q_idx, kv_idx) -> score, is traced with torch.fx into
the score_mod region of a tiledattn.sdpa op (arith and math ops on one
score), compiled by tiledattn-compile through the warp-specialized tile
program (about a second) and cached on disk by its MLIR text
(tiledattn.compile's cache). Tensors the callable reads (ALiBi slopes,
document ids: torch.fx records them as constants) become arguments of the
kernel after scale, indexed by memref.load; the kernel is compiled for
their dtypes and ranks and takes their values at each call. What cannot be
expressed (Python control flow on the arguments, an operation without a
lowering) raises UnsupportedInputError naming it. A BlockMask's mask_mod is
traced the same way, as torch.where(mask_mod(...), score, -inf).
"""

import math
import operator
import os
import typing
import weakref

import torch
import torch.fx

from tiledattn.errors import UnsupportedInputError

_OP = "tiledattn.flex_attention"
_ARGS = ("score", "b", "h", "q_idx", "kv_idx")

# Schedules of the tile program (schedules/tile_ir) by head dim: producer =
# tma with overlap_softmax, O stored by TMA and the epilogue's sums under the
# last P.V (tma_store, overlap_epilogue: +1-32% on the harness's masks and
# softcap at D = 128, never slower; persistent kernels won on some masks and
# lost up to 35% on causal ones; scripts/flex_schedule_ab.py, perf-notes).
_SCHEDULES = {
    # Two consumers of 64 rows at every head dim: the shipped D = 64 tiles
    # (three consumers of 160 registers) and D = 256 tiles (block_n = 80)
    # spilled on some score_mods (softcap, ALiBi) once the softmax overlaps.
    64: "block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, "
    "overlap_softmax = true, tma_store = true, overlap_epilogue = true",
    128: "block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, "
    "overlap_softmax = true, tma_store = true, overlap_epilogue = true",
    192: "block_m = 128, block_n = 112, num_stages = 2, warps = 12, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, "
    "overlap_softmax = true, tma_store = true, overlap_epilogue = true",
    # D = 256 without them: with tma_store alone some kernels spill 8-16 bytes.
    256: "block_m = 128, block_n = 64, num_stages = 2, warps = 12, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, "
    "overlap_softmax = true",
}

# BlockMask kernels whose query tiles keep few K/V blocks (sliding windows,
# short packed documents) spend much of each tile on its prologue and
# epilogue: a persistent block that takes its tiles one at a time, loads the
# next tile's Q into a second buffer and stores O under the next tile's
# first Q.K^T overlaps them. Same-run A/B (H100, bf16, D = 128,
# results/2026-12-06-session31): causal window 1024 (9 blocks a tile)
# +11-12%, 4 documents at 4k (5) +8%; with more blocks a tile it gains
# little or loses (key padding 24 blocks +4%, 96 -2%; documents at 16k,
# 18.5 blocks, -2%), so only at most _SHORT_TILE_BLOCKS on average. The
# persistent producer, which reads the block map, spilled 16 bytes at 24
# registers: 32, and 232 for the consumers (the block's 168 a thread). At
# 32 / 232 (results/2026-12-06-session32): window +11-12%, documents at 4k
# +9%, documents at 16k -1%, softcap +-1%.
_SHORT_TILE_SCHEDULES = {
    128: "block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 2, producer_regs = 32, "
    "consumer_regs = 232, pingpong = true, overlap_softmax = true, tma_store = true, "
    "persistent = true, dynamic_tiles = true, q_buffers = 2, defer_store = true",
}
_SHORT_TILE_BLOCKS = 12

_FLOAT_FUNCTIONS = {  # one f32 operand -> math/arith op
    "tanh": "math.tanh",
    "exp": "math.exp",
    "exp2": "math.exp2",
    "log": "math.log",
    "log2": "math.log2",
    "sqrt": "math.sqrt",
    "rsqrt": "math.rsqrt",
    "abs": "math.absf",
    "sin": "math.sin",
    "cos": "math.cos",
    "erf": "math.erf",
}
# Functions run on the GPU's approximate instruction (fastmath<afn>,
# tiledattn-approximate-math): tanh as tanh.approx.f32, relative error about
# 2^-11, far below bf16's rounding of P; FlashAttention's softcap does the
# same. libdevice's exact tanh costs the softcap kernel a third of its speed.
_APPROXIMATE = {"tanh"}
# Division as FlexAttention's Triton kernels divide (div.full.f32, 2 ulp):
# by a constant a multiply by its reciprocal, else div.approx.f32. The IEEE
# division torch's CUDA kernels do (div.rn.f32, a dozen instructions and a
# slow path) was most of the softcap's cost: 30 * tanh(score / 30).
_DIVISION = " fastmath<arcp,afn>"
_ARITH = {  # binary ops: (f32 op, index op)
    "add": ("arith.addf", "arith.addi"),
    "sub": ("arith.subf", "arith.subi"),
    "mul": ("arith.mulf", "arith.muli"),
    "maximum": ("arith.maximumf", "arith.maxsi"),
    "minimum": ("arith.minimumf", "arith.minsi"),
}
_COMPARE = {  # (cmpf predicate, cmpi predicate)
    "lt": ("olt", "slt"),
    "le": ("ole", "sle"),
    "gt": ("ogt", "sgt"),
    "ge": ("oge", "sge"),
    "eq": ("oeq", "eq"),
    "ne": ("une", "ne"),
}
_NAMED = {
    operator.add: "add",
    operator.sub: "sub",
    operator.mul: "mul",
    operator.truediv: "div",
    operator.pow: "pow",
    operator.neg: "neg",
    operator.lt: "lt",
    operator.le: "le",
    operator.gt: "gt",
    operator.ge: "ge",
    operator.eq: "eq",
    operator.ne: "ne",
    operator.and_: "and",
    operator.or_: "or",
    operator.invert: "not",
    torch.add: "add",
    torch.sub: "sub",
    torch.mul: "mul",
    torch.div: "div",
    torch.pow: "pow",
    torch.neg: "neg",
    torch.where: "where",
    torch.maximum: "maximum",
    torch.minimum: "minimum",
    torch.clamp: "clamp",
    torch.sigmoid: "sigmoid",
    torch.lt: "lt",
    torch.le: "le",
    torch.gt: "gt",
    torch.ge: "ge",
    torch.eq: "eq",
    torch.ne: "ne",
    torch.logical_and: "and",
    torch.logical_or: "or",
    torch.logical_not: "not",
}
_NAMED.update({getattr(torch, name): name for name in _FLOAT_FUNCTIONS})


# A captured tensor's element type in the kernel (the manifest's dtype), and
# how a loaded element becomes a score_mod value (f32, index or i1).
_CAPTURE_TYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int8: "i8",
    torch.uint8: "i8",
    torch.bool: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
}


class ScoreModRegion(str):
    """The score_mod region's MLIR text, with the tensors it reads
    (`captures`, in the order of the kernel's arguments %cap0, %cap1, ...
    after scale). A str, so that it prints and compares as its text."""

    captures: "tuple[torch.Tensor, ...]" = ()


def _capture_memref(tensor: torch.Tensor) -> str:
    """The kernel argument's type for a captured tensor, contiguous; a 0-D
    tensor is passed as [1]."""
    return f"memref<{'?x' * max(tensor.dim(), 1)}{_CAPTURE_TYPES[tensor.dtype]}>"


class _Captured:
    """A captured tensor in the trace, indexed by `prefix` so far."""

    def __init__(self, index: int, tensor: torch.Tensor, prefix=()):
        self.index, self.tensor, self.prefix = index, tensor, tuple(prefix)


def _unsupported(what: str) -> UnsupportedInputError:
    return UnsupportedInputError(f"{_OP}: score_mod {what}", reason=f"score_mod: {what}")


def _mlir_float(value: float) -> str:
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return f"{value!r}" if "." in repr(value) or "e" in repr(value) else f"{value}.0"


class _Emitter:
    """MLIR lines of the region body; each value is (name, type) with type
    f32, index or i1."""

    def __init__(self):
        self.lines = []
        self.count = 0

    def emit(self, text: str, type_: str) -> "tuple[str, str]":
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {text}")
        return name, type_

    def constant(self, value, type_: str) -> "tuple[str, str]":
        if type_ == "f32":
            return self.emit(f"arith.constant {_mlir_float(float(value))} : f32", "f32")
        if type_ == "i1":
            return self.emit(f"arith.constant {'true' if value else 'false'}", "i1")
        return self.emit(f"arith.constant {int(value)} : index", "index")

    def to_f32(self, value: "tuple[str, str]") -> "tuple[str, str]":
        name, type_ = value
        if type_ == "f32":
            return value
        if type_ == "i1":
            raise _unsupported("uses a comparison's result as a number; use torch.where")
        wide, _ = self.emit(f"arith.index_cast {name} : index to i64", "i64")
        return self.emit(f"arith.sitofp {wide} : i64 to f32", "f32")

    def operand(self, value, like: str) -> "tuple[str, str]":
        """A traced value, or a Python number typed like the other operand."""
        if isinstance(value, tuple):
            return value
        if isinstance(value, bool):
            return self.constant(value, "i1")
        if isinstance(value, int) and like == "index":
            return self.constant(value, "index")
        if isinstance(value, (int, float)):
            return self.constant(value, "f32")
        raise _unsupported(f"uses a {type(value).__name__} ({value!r}) as an operand")

    def binary(self, op: str, a, b) -> "tuple[str, str]":
        like = next((x[1] for x in (a, b) if isinstance(x, tuple)), "f32")
        a, b = self.operand(a, like), self.operand(b, like)
        if op in ("div", "pow"):  # true division and powers: always f32
            a, b = self.to_f32(a), self.to_f32(b)
            if op == "div":
                return self.emit(f"arith.divf {a[0]}, {b[0]}{_DIVISION} : f32", "f32")
            return self.emit(f"math.powf {a[0]}, {b[0]} : f32", "f32")
        if op in ("and", "or"):
            if a[1] != "i1" or b[1] != "i1":
                raise _unsupported(f"applies '{op}' to numbers; it takes comparisons")
            return self.emit(f"arith.{op}i {a[0]}, {b[0]} : i1", "i1")
        if "i1" in (a[1], b[1]):
            raise _unsupported(f"applies '{op}' to a comparison's result")
        if a[1] != b[1]:
            a, b = self.to_f32(a), self.to_f32(b)
        if op in _COMPARE:
            float_pred, int_pred = _COMPARE[op]
            if a[1] == "f32":
                return self.emit(f"arith.cmpf {float_pred}, {a[0]}, {b[0]} : f32", "i1")
            return self.emit(f"arith.cmpi {int_pred}, {a[0]}, {b[0]} : index", "i1")
        float_op, int_op = _ARITH[op]
        if a[1] == "f32":
            return self.emit(f"{float_op} {a[0]}, {b[0]} : f32", "f32")
        return self.emit(f"{int_op} {a[0]}, {b[0]} : index", "index")

    def select(self, cond, a, b) -> "tuple[str, str]":
        if not (isinstance(cond, tuple) and cond[1] == "i1"):
            raise _unsupported("calls torch.where with a condition that is not a comparison")
        like = next((x[1] for x in (a, b) if isinstance(x, tuple)), "f32")
        a, b = self.operand(a, like), self.operand(b, like)
        if a[1] != b[1]:
            a, b = self.to_f32(a), self.to_f32(b)
        return self.emit(f"arith.select {cond[0]}, {a[0]}, {b[0]} : {a[1]}", a[1])

    def load(self, captured: "_Captured") -> "tuple[str, str]":
        """An element of a captured tensor (every index given), as f32 for
        floats, index for integers, i1 for bools."""
        tensor = captured.tensor
        element = _CAPTURE_TYPES[tensor.dtype]
        memref = _capture_memref(tensor)
        indices = [self.operand(i, "index") for i in captured.prefix] or [self.constant(0, "index")]
        for i in indices:
            if i[1] != "index":
                raise _unsupported(
                    f"indexes a captured tensor (shape {list(tensor.shape)}) with a "
                    f"{'comparison' if i[1] == 'i1' else 'float'}; expected integers"
                )
        subscript = ", ".join(i[0] for i in indices)
        value = self.emit(f"memref.load %cap{captured.index}[{subscript}] : {memref}", element)
        if element == "f32":
            return value
        if element in ("f16", "bf16"):
            return self.emit(f"arith.extf {value[0]} : {element} to f32", "f32")
        if element == "f64":
            return self.emit(f"arith.truncf {value[0]} : f64 to f32", "f32")
        if tensor.dtype == torch.bool:
            zero = self.emit("arith.constant 0 : i8", "i8")
            return self.emit(f"arith.cmpi ne, {value[0]}, {zero[0]} : i8", "i1")
        cast = "arith.index_castui" if tensor.dtype == torch.uint8 else "arith.index_cast"
        return self.emit(f"{cast} {value[0]} : {element} to index", "index")

    def unary(self, op: str, a) -> "tuple[str, str]":
        a = self.operand(a, "f32")
        if op == "neg":
            if a[1] == "index":
                zero = self.constant(0, "index")
                return self.emit(f"arith.subi {zero[0]}, {a[0]} : index", "index")
            return self.emit(f"arith.negf {self.to_f32(a)[0]} : f32", "f32")
        if op == "not":
            if a[1] != "i1":
                raise _unsupported("applies 'not' to a number")
            true = self.constant(True, "i1")
            return self.emit(f"arith.xori {a[0]}, {true[0]} : i1", "i1")
        if op == "sigmoid":  # 1 / (1 + exp(-x))
            x = self.to_f32(a)
            neg = self.emit(f"arith.negf {x[0]} : f32", "f32")
            e = self.emit(f"math.exp {neg[0]} : f32", "f32")
            one = self.constant(1.0, "f32")
            den = self.emit(f"arith.addf {one[0]}, {e[0]} : f32", "f32")
            return self.emit(f"arith.divf {one[0]}, {den[0]}{_DIVISION} : f32", "f32")
        flags = " fastmath<afn>" if op in _APPROXIMATE else ""
        return self.emit(f"{_FLOAT_FUNCTIONS[op]} {self.to_f32(a)[0]}{flags} : f32", "f32")


def _op_name(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        name = node.target
        aliases = {
            "__add__": "add",
            "__sub__": "sub",
            "__mul__": "mul",
            "__truediv__": "div",
            "__pow__": "pow",
        }
        name = aliases.get(name, name)
        if name in _FLOAT_FUNCTIONS or name in _ARITH or name in _COMPARE:
            return name
        if name in ("div", "pow", "neg", "sigmoid", "clamp", "where", "maximum", "minimum"):
            return name
        raise _unsupported(f"calls Tensor.{node.target}, which tiledattn cannot lower yet")
    name = _NAMED.get(node.target)
    if name is None:
        target = getattr(node.target, "__name__", repr(node.target))
        raise _unsupported(f"calls {target}, which tiledattn cannot lower yet")
    return name


def _captured_operand(em: _Emitter, value):
    """A value an op takes: a 0-D captured tensor is its element; a captured
    tensor not indexed down to one element cannot be an operand."""
    if not isinstance(value, _Captured):
        return value
    if value.tensor.dim() == 0:
        return em.load(value)
    raise _unsupported(
        f"uses a captured tensor of shape {list(value.tensor.shape)} indexed by "
        f"{len(value.prefix)} of its {value.tensor.dim()} dimensions as a value; "
        "index it down to one element (slopes[h], doc_ids[b, q_idx])"
    )


def _capture(module: torch.fx.GraphModule, target: str) -> torch.Tensor:
    tensor = module
    for name in target.split("."):
        tensor = getattr(tensor, name)
    if not isinstance(tensor, torch.Tensor):
        raise _unsupported(f"reads {target} ({type(tensor).__name__}), which is not a tensor")
    if tensor.dtype not in _CAPTURE_TYPES:
        raise _unsupported(
            f"reads a captured tensor of dtype {tensor.dtype} (shape {list(tensor.shape)}); "
            f"expected one of {', '.join(str(t).removeprefix('torch.') for t in _CAPTURE_TYPES)}"
        )
    return tensor


def _index(em: _Emitter, base, items: tuple):
    """A captured tensor indexed by `items` (traced values, each a (name,
    type) pair, or ints): its element once every dimension is given."""
    if not isinstance(base, _Captured):
        raise _unsupported("indexes a value that is not a captured tensor")
    for item in items:
        if isinstance(item, bool) or not (
            isinstance(item, tuple) or (isinstance(item, int) and item >= 0)
        ):
            raise _unsupported(
                f"indexes a captured tensor (shape {list(base.tensor.shape)}) with "
                f"{item!r}; expected traced indices or non-negative ints, one per dimension"
            )
    indexed = _Captured(base.index, base.tensor, base.prefix + tuple(items))
    if len(indexed.prefix) > base.tensor.dim():
        raise _unsupported(
            f"indexes a captured tensor of shape {list(base.tensor.shape)} with "
            f"{len(indexed.prefix)} indices"
        )
    return em.load(indexed) if len(indexed.prefix) == base.tensor.dim() else indexed


def _is_getitem(node: torch.fx.Node) -> bool:
    return (node.op == "call_method" and node.target == "__getitem__") or (
        node.op == "call_function" and node.target is operator.getitem
    )


def trace_score_mod(score_mod, region: str = "score_mod", first_capture: int = 0) -> ScoreModRegion:
    """The score_mod region of a tiledattn.sdpa op (MLIR text) for a
    FlexAttention score_mod callable, with the tensors it reads
    (`.captures`, the kernel's arguments %cap<first_capture>, ...). With
    `region="mask_mod"` the same callable form becomes the sdpa's mask_mod
    region (run after the score_mod; with a block map on partial blocks
    only)."""
    try:
        module = torch.fx.symbolic_trace(score_mod)
    except torch.fx.proxy.TraceError as error:
        raise _unsupported(
            f"could not be traced ({error}); tiledattn traces score_mod with torch.fx, "
            "so it may not branch on its arguments (use torch.where)"
        ) from error
    graph = module.graph
    em = _Emitter()
    values: dict[torch.fx.Node, object] = {}
    captures: list[torch.Tensor] = []
    capture_index: dict[str, int] = {}
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 5:
        raise _unsupported(
            f"takes {len(placeholders)} arguments; expected 5 (score, b, h, q_idx, kv_idx)"
        )
    result = None
    for node in graph.nodes:
        if node.op == "placeholder":
            index = placeholders.index(node)
            values[node] = (f"%{_ARGS[index]}", "f32" if index == 0 else "index")
            continue
        if node.op == "get_attr":  # a tensor the callable closes over
            if node.target not in capture_index:
                capture_index[node.target] = len(captures)
                captures.append(_capture(module, node.target))
            index = capture_index[node.target]
            values[node] = _Captured(first_capture + index, captures[index])
            continue
        if node.op == "output":
            out = node.args[0]
            result = values[out] if isinstance(out, torch.fx.Node) else em.operand(out, "f32")
            result = _captured_operand(em, result)
            break
        if _is_getitem(node):
            index = node.args[1]
            items = index if isinstance(index, (tuple, list)) else (index,)
            items = tuple(values[i] if isinstance(i, torch.fx.Node) else i for i in items)
            values[node] = _index(em, values[node.args[0]], items)
            continue
        args = [
            _captured_operand(em, values[a]) if isinstance(a, torch.fx.Node) else a
            for a in node.args
        ]
        op = _op_name(node)
        if node.kwargs and op != "clamp":
            raise _unsupported(f"passes keyword arguments to {op}, which tiledattn does not read")
        if op == "where":
            values[node] = em.select(*args)
        elif op == "clamp":
            low = node.kwargs.get("min", args[1] if len(args) > 1 else None)
            high = node.kwargs.get("max", args[2] if len(args) > 2 else None)
            value = args[0]
            if low is not None:
                value = em.binary("maximum", value, low)
            if high is not None:
                value = em.binary("minimum", value, high)
            values[node] = value
        elif op in ("neg", "not", "sigmoid") or op in _FLOAT_FUNCTIONS:
            values[node] = em.unary(op, args[0])
        else:
            if len(args) != 2:
                raise _unsupported(f"calls {op} with {len(args)} arguments; expected 2")
            values[node] = em.binary(op, *args)
    if result[1] == "i1":
        raise _unsupported("returns a comparison; a score_mod returns a score")
    result = em.to_f32(result)
    body = "\n".join(em.lines)
    text = ScoreModRegion(
        f"{region} {{\n"
        "  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):\n"
        f"{body}\n"
        f"    tiledattn.yield {result[0]} : f32\n"
        "  }"
    )
    text.captures = tuple(captures)
    return text


def capture_arguments(captures) -> str:
    """The kernel function's arguments for `captures` (after scale)."""
    return "".join(f", %cap{i}: {_capture_memref(t)}" for i, t in enumerate(captures))


def _schedule(head_dim: int, head_dim_v: int, short_tiles: bool = False) -> str:
    """The schedule of the wider head's tiles (they fit both), of whole
    64-column atoms: head dims 32, 80 and 96 run on the tiles of 64, 128
    and 128 (the sdpa op's verifier: TMA reads the columns past the last
    as zeros). With `short_tiles` (a block map that keeps few K/V blocks a
    query tile) the persistent form where one is measured."""
    width = (max(head_dim, head_dim_v) + 63) // 64 * 64
    if short_tiles and width in _SHORT_TILE_SCHEDULES:
        return _SHORT_TILE_SCHEDULES[width]
    return _SCHEDULES[width]


def schedule_blocks(
    head_dim: int, head_dim_v: "int | None" = None, schedule: "str | None" = None
) -> "tuple[int, int]":
    """(block_m, block_n) of the schedule schedule_text writes for these
    head dims, or of `schedule` (its fields) where given."""
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    schedule = schedule or _schedule(head_dim, head_dim_v)
    fields = dict(field.split(" = ") for field in schedule.split(", "))
    return int(fields["block_m"]), int(fields["block_n"])


def schedule_text(
    score_mod_region: str,
    dtype: torch.dtype,
    head_dim: int,
    name: str,
    head_dim_v: "int | None" = None,
    causal: bool = False,
    block_map: bool = False,
    schedule: "str | None" = None,
) -> str:
    """The schedule file (MLIR) of a kernel that runs `score_mod_region`, for
    query/key head dim `head_dim` and value head dim `head_dim_v` (default
    the same; DeepSeek's 192 and 128, say), causal (top-left) or not. The
    tensors a traced region reads (its `captures`) are the function's
    arguments after scale; with `block_map` the map follows them (its blocks
    are schedule_blocks'). `schedule` (the fields of a
    #tiledattn.schedule) replaces the head dims' flex schedule."""
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    for what, dim in (("head dim", head_dim), ("value head dim", head_dim_v)):
        if dim % 16 or not 0 < dim <= 256:
            raise UnsupportedInputError(
                f"{_OP}: expected {what} a positive multiple of 16 up to 256 but got {dim}",
                reason=f"flex_attention {what} {dim}",
            )
    element = {torch.float16: "f16", torch.bfloat16: "bf16"}.get(dtype)
    if element is None:
        raise UnsupportedInputError(
            f"{_OP}: expected dtype float16 or bfloat16 but got {dtype}",
            reason=f"flex_attention dtype {dtype}",
        )
    qk = f"memref<?x?x?x{head_dim}x{element}, strided<[?, ?, ?, 1], offset: ?>>"
    vo = f"memref<?x?x?x{head_dim_v}x{element}, strided<[?, ?, ?, 1], offset: ?>>"
    lse = "memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>"
    schedule = schedule or _schedule(head_dim, head_dim_v)
    captures = capture_arguments(getattr(score_mod_region, "captures", ()))
    map_type = "memref<?x?x?x?xi32>"
    if block_map:
        captures += f", %blocks: {map_type}"
    return (
        f"func.func @{name}(%q: {qk}, %k: {qk}, %v: {vo}, %o: {vo},\n"
        f"    %lse: {lse}, %scale: f32{captures}) {{\n"
        f"  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse{' causal' if causal else ''}\n"
        f"      schedule(#tiledattn.schedule<{schedule}>)\n"
        + (f"      block_map(%blocks : {map_type})\n" if block_map else "")
        + f"      {score_mod_region} : {qk}, {qk}, {vo}, {vo}, {lse}\n"
        "  return\n"
        "}\n"
    )


def _is_causal_mask(mask_mod) -> bool:
    """Whether `mask_mod` traces to exactly `q_idx >= kv_idx` (or `kv_idx <=
    q_idx`): the top-left causal mask, which the kernels apply themselves and
    skip the blocks above the diagonal for."""

    def applied(mod):
        def masked(score, b, h, q_idx, kv_idx):
            return torch.where(mod(b, h, q_idx, kv_idx), score, -float("inf"))

        return masked

    try:
        region = trace_score_mod(applied(mask_mod))
    except UnsupportedInputError:
        return False
    return any(
        region == trace_score_mod(applied(causal))
        for causal in (lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: kv <= q)
    )


def trust_block_mask(block_mask):
    """Marks a BlockMask built from its mask_mod's definition (tiledattn's
    own, tested against create_block_mask) as checked, and returns it."""
    _remember_checked(block_mask)
    return block_mask


def _remember_checked(block_mask) -> None:
    if len(_checked_block_masks) >= 64:  # a few per model; drop the oldest
        del _checked_block_masks[next(iter(_checked_block_masks))]
    _checked_block_masks[id(block_mask)] = (block_mask, None, None)


def _check_block_mask(block_mask, query, key):
    """Refuses a BlockMask that is not one, is for other lengths, or keeps
    other blocks than its mask_mod implies (checked once per BlockMask):
    tiledattn applies the mask_mod per score on partial blocks, so blocks
    that drop scores the mask_mod keeps would compute something else."""
    try:
        from torch.nn.attention.flex_attention import BlockMask, create_block_mask
    except ImportError as error:  # pragma: no cover -- torch has it since 2.5
        raise UnsupportedInputError(
            f"{_OP}: no FlexAttention in this torch: {error}", "flex"
        ) from None
    if not isinstance(block_mask, BlockMask):
        raise TypeError(
            f"{_OP}: expected 'block_mask' to be a torch.nn.attention.flex_attention.BlockMask "
            f"but got {type(block_mask).__name__}"
        )
    lengths = (query.shape[-2], key.shape[-2])
    if tuple(block_mask.seq_lengths) != lengths:
        raise UnsupportedInputError(
            f"{_OP}: expected 'block_mask' for (query, key) lengths {lengths} but it was "
            f"made for {tuple(block_mask.seq_lengths)}",
            reason="flex_attention block_mask lengths",
        )
    if _checked_block_masks.get(id(block_mask), (None,))[0] is block_mask:
        return
    mask_mod = block_mask.mask_mod
    implied = create_block_mask(
        mask_mod,
        block_mask.shape[0],
        block_mask.shape[1],
        *lengths,
        device=block_mask.kv_num_blocks.device,
        BLOCK_SIZE=block_mask.BLOCK_SIZE,
    )
    if not torch.equal(implied.to_dense(), block_mask.to_dense()):
        raise UnsupportedInputError(
            f"{_OP}: 'block_mask' keeps other blocks than its mask_mod "
            f"({getattr(mask_mod, '__name__', mask_mod)}) implies; tiledattn applies "
            "the mask_mod per score on the blocks that need it",
            reason="flex_attention block_mask sparsity",
        )
    _remember_checked(block_mask)


def _block_mask_map(block_mask, query, key, blocks) -> torch.Tensor:
    """tiledattn's block map (masks.block_map) of a checked BlockMask whose
    blocks are the kernel's (`blocks`), kept with it."""
    held = _checked_block_masks[id(block_mask)]
    if held[1] is not None:
        return held[1]
    from tiledattn.masks import map_from_blocks

    num, indices = block_mask.kv_num_blocks, block_mask.kv_indices
    listed = indices.shape[-1]
    state = torch.zeros(*indices.shape[:-1], listed + 1, dtype=torch.int64, device=num.device)
    for count, where, kind in (
        (num, indices, 1),
        (block_mask.full_kv_num_blocks, block_mask.full_kv_indices, 2),
    ):
        if count is None:
            continue
        valid = torch.arange(listed, device=num.device) < count[..., None]
        state.scatter_(-1, torch.where(valid, where.long(), listed), kind)
    result = map_from_blocks(state[..., :listed], query.shape[-2], key.shape[-2], *blocks).to(
        query.device
    )
    _checked_block_masks[id(block_mask)] = (block_mask, result, held[2])
    return result


def _mean_blocks(block_mask) -> float:
    """The K/V blocks a query tile of a checked BlockMask keeps, on average
    (partial and full), kept with it: one read of its counts per BlockMask."""
    held = _checked_block_masks[id(block_mask)]
    if held[2] is not None:
        return held[2]
    kept = block_mask.kv_num_blocks.sum()
    if block_mask.full_kv_num_blocks is not None:
        kept = kept + block_mask.full_kv_num_blocks.sum()
    mean = kept.item() / block_mask.kv_num_blocks.numel()
    _checked_block_masks[id(block_mask)] = (block_mask, held[1], mean)
    return mean


def _traced(fn, what, trace):
    """`trace()`, kept per callable `fn` and `what` (a trace of it): a
    score_mod or mask_mod is traced once, not at every call (1-8 ms of
    Python each). A callable that cannot be weakly referenced is traced
    every time."""
    try:
        per = _traces.setdefault(fn, {})
    except TypeError:
        return trace()
    if what not in per:
        per[what] = trace()
    return per[what]


# The traces of the score_mods and mask_mods seen, per callable (weakly:
# they go with it). A closure whose cells are rebound keeps its first trace.
_traces: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _masked(mask_mod):
    """The mask_mod as a score function: masked scores -inf."""

    def masked(score, b, h, q_idx, kv_idx):
        return torch.where(mask_mod(b, h, q_idx, kv_idx), score, -float("inf"))

    return masked


# BlockMasks whose sparsity matched their mask_mod, by id, with their block
# maps once made (the BlockMask is kept alive here, so an id is never
# reused while cached); a few per model.
_checked_block_masks: "dict[int, tuple]" = {}


def flex_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    score_mod=None,
    block_mask=None,
    scale: "float | None" = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    *,
    cache: "str | os.PathLike[str] | None" = None,
):
    """torch.nn.attention.flex_attention on tiledattn kernels.

    `score_mod(score, b, h, q_idx, kv_idx)` is the callable FlexAttention
    takes; it is traced into tile IR and compiled once per distinct trace
    (tiledattn-compile, cached under tiledattn.compiler.cache_dir() or
    `cache`). Inputs are [B, H, S, D] float16/bfloat16 CUDA tensors with head
    dim 64, 128, 192 or 256 (value's may differ: 192 and 128, say). A
    block_mask's block sparsity must be what its mask_mod implies; the
    kernel skips its empty blocks and applies the mask_mod per score on its
    partial ones when its BLOCK_SIZE is the kernel's tiles (128 x 128 up to
    head dim 128, FlexAttention's default), else on every block; the causal
    mask_mod (`q_idx >= kv_idx`) runs as a causal kernel that skips the
    blocks above the diagonal. Without a score_mod
    or block_mask this is scaled_dot_product_attention. With
    return_lse, returns (out, lse) with lse of shape [B, H, S] in float32.
    torch.tanh in a score_mod runs as the GPU's tanh.approx.f32 (relative
    error about 2^-11, as in FlashAttention's softcap).
    """
    from tiledattn.attention import _attention, _prepare
    from tiledattn.compiler import kernel_entry

    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"{_OP}: expected '{name}' to be a torch.Tensor but got {type(t).__name__}"
            )
    plan = flex_kernel(query, key, value, score_mod, block_mask)
    if plan.text is None:  # plain attention, on the shipped kernels
        if not return_lse:
            return _attention(query, key, value, None, 0.0, plan.causal, scale, enable_gqa, False)
        launch = _prepare(query, key, value, None, 0.0, plan.causal, scale, enable_gqa, False, None)
        return launch.run_with_lse()
    entry = kernel_entry(plan.text, cache=cache)
    launch = _prepare(query, key, value, None, 0.0, plan.causal, scale, enable_gqa, False, entry)
    launch.captures = plan.captures
    return launch.run_with_lse() if return_lse else launch.run()


class FlexKernel(typing.NamedTuple):
    """What flex_attention runs: the kernel's schedule text (None: plain
    attention on the shipped kernels), the tensors it reads after scale,
    and whether it is causal."""

    text: "str | None"
    captures: "list[torch.Tensor]"
    causal: bool


def flex_kernel(
    query, key, value, score_mod=None, block_mask=None, short_tiles: "bool | None" = None
) -> FlexKernel:
    """The kernel flex_attention runs for these arguments. The causal
    mask_mod runs as a causal kernel (skipping the blocks above the
    diagonal); another becomes the sdpa's mask_mod, run on the partial
    blocks of the BlockMask's map when its blocks are the kernel's tiles,
    else on every block. A map that keeps at most _SHORT_TILE_BLOCKS blocks
    a query tile on average runs the persistent short-tile schedule;
    `short_tiles` decides that instead (scripts/flex_cache.py compiles
    both)."""
    causal, mask_fn, blocks = False, None, None
    if block_mask is not None:
        from torch.nn.attention.flex_attention import noop_mask

        _check_block_mask(block_mask, query, key)
        mask_mod = block_mask.mask_mod
        if _traced(mask_mod, "causal", lambda: _is_causal_mask(mask_mod)):
            causal = True
        elif mask_mod is not noop_mask:
            mask_fn = mask_mod
            tiles = schedule_blocks(query.shape[-1], value.shape[-1])
            if tuple(block_mask.BLOCK_SIZE) == tiles:
                blocks = _block_mask_map(block_mask, query, key, tiles)
    if score_mod is None and mask_fn is None:
        return FlexKernel(None, [], causal)
    region = ScoreModRegion("")
    if score_mod is not None:
        region = _traced(score_mod, "score_mod", lambda: trace_score_mod(score_mod))
    if mask_fn is not None:
        first = len(region.captures)
        mask_region = _traced(
            mask_fn,
            ("mask_mod", first),
            lambda: trace_score_mod(_masked(mask_fn), "mask_mod", first_capture=first),
        )
        both = ScoreModRegion(f"{region}\n      {mask_region}" if region else mask_region)
        both.captures = region.captures + mask_region.captures
        region = both
    captures = _kernel_captures(region.captures, query)
    schedule = None
    if blocks is not None:
        if short_tiles is None:
            short_tiles = _mean_blocks(block_mask) <= _SHORT_TILE_BLOCKS
        schedule = _schedule(query.shape[-1], value.shape[-1], short_tiles)
    text = schedule_text(
        region,
        query.dtype,
        query.shape[-1],
        "flex_score_mod",
        head_dim_v=value.shape[-1],
        causal=causal,
        block_map=blocks is not None,
        schedule=schedule,
    )
    if blocks is not None:
        captures.append(blocks)
    return FlexKernel(text, captures, causal)


def _kernel_captures(captures, query) -> "list[torch.Tensor]":
    """The tensors a score_mod reads, as the kernel takes them: on the
    query's device (they are not moved: a copy per call would hide the
    cost), contiguous, a 0-D tensor as [1]."""
    out = []
    for i, t in enumerate(captures):
        if t.device != query.device:
            raise UnsupportedInputError(
                f"{_OP}: score_mod reads a tensor on {t.device} (captured tensor #{i}, "
                f"shape {list(t.shape)}, {t.dtype}); expected it on {query.device}, the "
                "query's device",
                reason="flex_attention captured tensor device",
            )
        out.append(t.reshape(1) if t.dim() == 0 else t.contiguous())
    return out
