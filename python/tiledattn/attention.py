"""tiledattn.scaled_dot_product_attention: torch's SDPA on tiledattn kernels.

Inputs are checked here, in Python and before CUDA is touched, so every
unsupported or invalid input fails with a message that names the argument,
what was expected and what was given (and so that these checks run on
machines without a GPU). The runtime checks again at the kernel boundary.
"""

import math
import operator
import warnings

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import is_fake

from tiledattn import _runtime, registry
from tiledattn.errors import InvalidInputError, UnsupportedInputError, require_kernel_device
from tiledattn.masks import check_attn_mask, mask_kernel_text

_OP = "tiledattn.scaled_dot_product_attention"
_NAMES = ("query", "key", "value")

# Under torch.compile these run once, at trace time, and their results become
# constants of the graph: file system scans and library loading cannot be
# traced, and their answers do not depend on tensor values.


@torch.compiler.assume_constant_result
def _ensure_runtime() -> bool:
    _runtime.load_runtime()
    return True


@torch.compiler.assume_constant_result
def _bundle_choices(dtype: str, head_dim: int, head_dim_v: int, causal: bool) -> "tuple":
    """The bundles for these inputs, in the order they are tried: (min
    seqlen_k, max seqlen_k (None: open), directory, alignment its inputs
    need)."""
    return tuple(
        (e.min_seqlen_k, e.max_seqlen_k, str(e.path), e.required_alignment)
        for e in registry.candidates(dtype, head_dim, causal, head_dim_v=head_dim_v)
    )


def _select_bundle(dtype, head_dim, head_dim_v, causal, seqlen_k) -> "tuple[str, int]":
    """The directory and input alignment of the first bundle meant for
    seqlen_k. The comparisons run here, in traced code, so that under
    torch.compile a graph guards on the length class it was traced for."""
    choices = _bundle_choices(dtype, head_dim, head_dim_v, causal)
    for low, high, path, alignment in choices:
        if registry.in_length_range(seqlen_k, low, high):
            return path, alignment
    raise _unsupported(
        f"no kernel bundle for seqlen_k={seqlen_k} (dim -2 of 'key') among those "
        f"for dtype={dtype} head_dim={head_dim} is_causal={causal}, whose length "
        f"ranges are {[(low, high) for low, high, _, _ in choices]}",
        "seqlen_k",
    )


def _unsupported(message: str, reason: str) -> UnsupportedInputError:
    return UnsupportedInputError(f"{_OP}: {message}", reason)


def _invalid(message: str) -> InvalidInputError:
    return InvalidInputError(f"{_OP}: {message}")


def _shape(t: torch.Tensor) -> tuple:
    return tuple(t.shape)


def _data_ptr(t: torch.Tensor) -> "int | None":
    """The data pointer, or None for tensors without storage (meta, fake)."""
    if t.device.type == "meta" or is_fake(t):
        return None
    try:
        return t.data_ptr()
    except RuntimeError:
        return None


class _Launch:
    """Inputs reshaped for the kernel and where the result goes."""

    def __init__(self, q, k, v, is_causal, scale, bundle, batch_shape, squeeze):
        self.q, self.k, self.v = q, k, v
        self.is_causal = is_causal
        self.scale = scale
        self.bundle = bundle
        self.batch_shape = batch_shape
        self.squeeze = squeeze
        # Tensors the bundle's score_mod reads (flex_attention), in the
        # order of its manifest's capture0, capture1, ...
        self.captures: list[torch.Tensor] | None = None
        # The bytes the bundle needs its inputs' pointers aligned to.
        self.alignment = 16

    def run(self) -> torch.Tensor:
        return self.run_with_lse()[0]

    def run_with_lse(self) -> "tuple[torch.Tensor, torch.Tensor]":
        """The output and the log-sum-exp of each query row (float32, the
        output's shape without its last dimension)."""
        _ensure_runtime()
        needs_grad = torch.is_grad_enabled() and (
            self.q.requires_grad or self.k.requires_grad or self.v.requires_grad
        )
        if self.captures and needs_grad:
            raise UnsupportedInputError(
                f"{_OP}: inputs that require grad on a kernel that reads captured tensors "
                "(a score_mod, mask, block map, varlen or decode kernel): it has no backward "
                "yet; run it under torch.no_grad()",
                "backward",
            )
        args = (self.q, self.k, self.v, self.is_causal, self.scale, self.bundle)
        # An eager call that needs no gradient skips the autograd kernel
        # (Python, tiledattn.backward's): sdpa_fwd_no_grad has none. Traced
        # calls keep the one op torch.compile's graphs know.
        op = torch.ops.tiledattn.sdpa_fwd
        if not needs_grad and not torch.compiler.is_compiling():
            op = torch.ops.tiledattn.sdpa_fwd_no_grad
        # The optional captures only where there are some: the op's
        # six-argument form stays the common call.
        out, lse = op(*args, *([self.captures] if self.captures else []))
        return self.unflatten(out, lse)

    def unflatten(self, out, lse=None) -> "tuple[torch.Tensor, torch.Tensor | None]":
        """The kernel's [N, H, L, *] results in the inputs' batch shape (the
        lse may be None)."""
        if len(self.batch_shape) != 1:
            out = out.reshape(*self.batch_shape, *out.shape[1:])
            if lse is not None:
                lse = lse.reshape(*self.batch_shape, *lse.shape[1:])
        if self.squeeze:
            return out.squeeze(-3), None if lse is None else lse.squeeze(-2)
        return out, lse


def _prepare(
    query,
    key,
    value,
    attn_mask,
    dropout_p,
    is_causal,
    scale,
    enable_gqa,
    fallback,
    entry,
) -> _Launch:
    tensors = (query, key, value)
    for name, t in zip(_NAMES, tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"{_OP}: expected '{name}' to be a torch.Tensor but got {type(t).__name__}"
            )
        # Nested jagged tensors (torch's variable-length input) have symbolic
        # ragged sizes that no check below can compare; sparse tensors have no
        # strides.
        if t.is_nested or t.layout != torch.strided:
            kind = "nested" if t.is_nested else "sparse"
            raise _unsupported(
                f"expected '{name}' to be a dense tensor (layout torch.strided) but "
                f"got a {kind} tensor with layout {t.layout}; tiledattn takes nested "
                "jagged inputs only as query, key and value together and has no "
                "sparse kernels (pass "
                "fallback=True for torch's SDPA)",
                "layout",
            )
        if t.dim() < 3:
            raise _invalid(
                f"expected '{name}' to have at least 3 dimensions (N, ..., L, E) "
                f"but got shape {_shape(t)}"
            )
    if attn_mask is not None:
        if entry is not None:
            raise _invalid("expected 'attn_mask' to be None with a compiled kernel")
        check_attn_mask(attn_mask, query, is_causal)
    if dropout_p != 0.0:
        raise _unsupported(
            f"expected 'dropout_p' to be 0.0 (tiledattn has no dropout) but got {dropout_p}",
            "dropout_p",
        )
    # torch's SDPA turns a non-finite scale into NaN outputs without a word;
    # here it is an error, with fallback or not. Under torch.compile the scale
    # may be symbolic, with no value to check: the runtime checks it at launch.
    if scale is not None and not torch.compiler.is_compiling() and not math.isfinite(float(scale)):
        raise _invalid(
            f"expected 'scale' to be a finite number (or None for 1/sqrt(E)) but got {float(scale)}"
        )
    if key.device != query.device or value.device != query.device:
        raise _invalid(
            "expected 'query', 'key' and 'value' on one device but got "
            f"{query.device}, {key.device} and {value.device}"
        )
    if key.dtype != query.dtype or value.dtype != query.dtype:
        raise _invalid(
            "expected 'query', 'key' and 'value' to have the same dtype but got "
            f"{query.dtype}, {key.dtype} and {value.dtype}"
        )
    if query.dtype not in (torch.float16, torch.bfloat16):
        raise _unsupported(
            "expected 'query', 'key' and 'value' to have dtype torch.float16 or "
            f"torch.bfloat16 but got {query.dtype}",
            "dtype",
        )
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise _invalid(
            "expected 'query', 'key' and 'value' to have the same number of "
            f"dimensions but got shapes {_shape(query)}, {_shape(key)} and "
            f"{_shape(value)}"
        )
    # operator.index specializes a symbolic size under torch.compile (int()
    # does not): each head dim has its own kernel, unlike batch, heads and
    # lengths.
    head_dim = operator.index(query.shape[-1])
    if key.shape[-1] != head_dim:
        raise _invalid(
            f"expected 'key' to have head dim {head_dim} (the last dimension of "
            f"'query') but got shape {_shape(key)}"
        )
    if value.shape[-2] != key.shape[-2]:
        raise _invalid(
            f"expected 'value' to have sequence length {key.shape[-2]} (dim -2 "
            f"of 'key') but got shape {_shape(value)}"
        )
    head_dim_v = operator.index(value.shape[-1])

    squeeze = query.dim() == 3
    q, k, v = (t.unsqueeze(-3) for t in tensors) if squeeze else tensors
    heads_q, heads_k, heads_v = q.shape[-3], k.shape[-3], v.shape[-3]
    if heads_v != heads_k:
        raise _invalid(
            f"expected 'value' to have {heads_k} heads (dim -3 of 'key') but got "
            f"shape {_shape(value)}"
        )
    if enable_gqa:
        if heads_k == 0 or heads_q % heads_k != 0:
            raise _invalid(
                f"expected the heads of 'query' ({heads_q}, dim -3) to be a "
                f"multiple of the heads of 'key' and 'value' ({heads_k}) for "
                "grouped-query attention"
            )
    elif heads_q != heads_k:
        if heads_k != 1 and heads_q != 1:
            raise _invalid(
                f"expected 'key' and 'value' to have {heads_q} heads (dim -3 of "
                f"'query') but got {heads_k}; pass enable_gqa=True for "
                "grouped-query attention"
            )
        # torch broadcasts a single head; the kernel's head mapping
        # (h -> h / (Hq / Hkv)) covers one key/value head, and a single query
        # head is expanded with stride 0.
        if heads_q == 1:
            q = q.expand(*q.shape[:-3], heads_k, *q.shape[-2:])
            heads_q = heads_k
    batch_shapes = (q.shape[:-3], k.shape[:-3], v.shape[:-3])
    try:
        # The common case costs a comparison, not torch's broadcast rules.
        batch_shape = (
            batch_shapes[0]
            if batch_shapes[0] == batch_shapes[1] == batch_shapes[2]
            else torch.broadcast_shapes(*batch_shapes)
        )
    except RuntimeError:
        raise _invalid(
            f"expected the batch dimensions of 'query' {tuple(q.shape[:-3])}, "
            f"'key' {tuple(k.shape[:-3])} and 'value' {tuple(v.shape[:-3])} to "
            "be equal or broadcastable"
        ) from None
    q, k, v = (
        t if t.shape[:-3] == batch_shape else t.expand(*batch_shape, *t.shape[-3:])
        for t in (q, k, v)
    )
    if len(batch_shape) != 1:
        q, k, v = (t.reshape(-1, *t.shape[-3:]) for t in (q, k, v))

    # Empty inputs: torch's result, without a kernel (a launch needs a
    # non-empty grid). With no keys (Sk = 0) every output row is 0, as in
    # torch's SDPA (its math backend on CPU and CUDA: the weighted sum over no
    # values); otherwise the output itself is empty.
    out_shape = (*batch_shape, *q.shape[-3:-1], head_dim_v)
    if k.shape[-2] == 0 or any(size == 0 for size in out_shape):
        require_kernel_device(_OP, query.device)
        return _Empty(out_shape, squeeze, tensors)

    for name, t in zip(_NAMES, tensors):
        if t.stride(-1) != 1:
            raise _unsupported(
                f"expected '{name}' to have stride 1 in its last dimension but got "
                f"strides {t.stride()}",
                "stride",
            )

    causal = bool(is_causal)
    dtype = registry.dtype_name(query.dtype)
    captures = None
    # A kernel whose score_mod reads the mask (compiled once per kind; not
    # for CPU tensors, which are refused below).
    if attn_mask is not None and query.device.type in ("cuda", "meta"):
        # Refused before the kernel is sought: where it is not to be had
        # (no compiler), this is still the error that says why.
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            raise _unsupported(
                "inputs that require grad with an 'attn_mask': its kernel has no backward "
                "yet (run it under torch.no_grad(), or pass fallback=True for torch's SDPA)",
                "backward",
            )
        entry, captures = _mask_kernel(attn_mask, q, k, v, squeeze)
    if entry is None and _padded(head_dim, head_dim_v) and query.device.type in ("cuda", "meta"):
        entry = _padded_kernel(query.dtype, head_dim, head_dim_v, causal)
    if entry is None:
        bundle, alignment = _select_bundle(dtype, head_dim, head_dim_v, causal, key.shape[-2])
    else:
        given = (dtype, head_dim, head_dim_v, causal)
        compiled = (entry.dtype, entry.head_dim, entry.head_dim_v, entry.causal)
        if given != compiled:
            raise _unsupported(
                f"bundle '{entry.name}' runs (dtype, head_dim, head_dim_v, "
                f"is_causal) = {compiled} but got {given}",
                "bundle",
            )
        bundle, alignment = str(entry.path), entry.required_alignment

    per_element = max(1, alignment // query.element_size())
    # The stride of a dimension of size 1 is never used: a misaligned one
    # (from as_strided, or a view of a view) becomes 0.
    q, k, v = (_unit_strides_zeroed(t, per_element) for t in (q, k, v))
    for name, t in zip(_NAMES, (q, k, v)):
        if any(s % per_element for s in t.stride()[:-1]):
            raise _unsupported(
                f"expected the strides of '{name}' to be multiples of "
                f"{per_element} elements ({alignment}-byte alignment) but got "
                f"{t.stride()}",
                "alignment",
            )
        # Tracing has no data pointers; the runtime checks them at launch.
        if not torch.compiler.is_compiling():
            address = _data_ptr(t)
            if address is not None and address % alignment:
                raise _unsupported(
                    f"expected '{name}' to be {alignment}-byte aligned but its "
                    f"data pointer is {address:#x} (storage offset "
                    f"{t.storage_offset()})",
                    "alignment",
                )
    require_kernel_device(_OP, query.device)
    scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    launch = _Launch(q, k, v, causal, scale, bundle, batch_shape, squeeze)
    launch.captures = captures
    launch.alignment = alignment
    return launch


def _padded(head_dim: int, head_dim_v: int) -> bool:
    """Head dims no shipped bundle has that the tile program runs on tiles
    of whole 64-column atoms: multiples of 16 up to 256 (32, 80, 96, ...)."""
    dims = (head_dim, head_dim_v)
    return any(d % 64 for d in dims) and all(d % 16 == 0 and 0 < d <= 256 for d in dims)


def padded_kernel_text(dtype, head_dim, head_dim_v, causal) -> str:
    """The schedule of _padded_kernel (the compile cache's key)."""
    from tiledattn.flex import ScoreModRegion, schedule_text

    return schedule_text(
        ScoreModRegion(""), dtype, head_dim, "sdpa_padded", head_dim_v=head_dim_v, causal=causal
    )


def _compiled_entry(text: str, what: str, reason: str):
    """kernel_entry(text); a kernel that cannot be compiled here (no
    compiler, no cached bundle) is an unsupported input, so that
    fallback=True gives torch's SDPA. `what` says what runs on it."""
    from tiledattn.compiler import CompileError, kernel_entry

    try:
        return kernel_entry(text)
    except CompileError as error:
        raise _unsupported(f"{what}, which failed: {error}", reason) from None


def _padded_kernel(dtype, head_dim, head_dim_v, causal):
    """The tile program's kernel for _padded head dims (flex_attention's
    schedule, no score_mod), compiled once per kind: it needs the compiler,
    or the kernel in the cache."""
    return _compiled_entry(
        padded_kernel_text(dtype, head_dim, head_dim_v, causal),
        f"head dim {head_dim} (value {head_dim_v}) runs on a kernel compiled for it "
        "(tiles of whole 64-column atoms)",
        "padded head dim compile",
    )


def _mask_kernel(attn_mask, q, k, v, squeeze):
    """The compiled kernel (its registry entry) that applies `attn_mask` to
    scores of q [B, H, L, E] and k [B, Hk, S, E], and the tensors it reads."""
    scores = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    text, captures = mask_kernel_text(attn_mask, scores, squeeze, q.dtype, q.shape[-1], v.shape[-1])
    what = "'attn_mask' runs on a kernel compiled for its kind"
    entry = _compiled_entry(text, what, "attn_mask compile")
    return entry, captures


def _unit_strides_zeroed(t: torch.Tensor, per_element: int) -> torch.Tensor:
    strides = t.stride()
    if not any(size == 1 and stride % per_element for size, stride in zip(t.shape, strides)):
        return t
    strides = [0 if size == 1 else stride for size, stride in zip(t.shape, strides)]
    return t.as_strided(t.shape, strides, t.storage_offset())


class _Empty:
    """The result for inputs with a zero-size batch, head or sequence
    dimension: zeros of the output's shape, like torch's SDPA."""

    def __init__(self, shape, squeeze, inputs):
        self.shape, self.squeeze, self.inputs = shape, squeeze, inputs

    def run(self) -> torch.Tensor:
        query = self.inputs[0]
        out = query.new_zeros(self.shape)
        if torch.is_grad_enabled() and any(t.requires_grad for t in self.inputs):
            # The output is 0 whatever the inputs are, so every gradient is
            # 0; sums over no elements keep the graph without reading any
            # value (a NaN or inf in an input stays out of the result).
            out = out + sum(t.flatten()[:0].sum() for t in self.inputs)
        return out.squeeze(-3) if self.squeeze else out

    def run_with_lse(self) -> "tuple[torch.Tensor, torch.Tensor]":
        # No keys: every row's sum is 0, so its lse is -inf (torch's
        # logsumexp of nothing).
        out = self.run()
        lse = torch.full(out.shape[:-1], -math.inf, dtype=torch.float32, device=out.device)
        return out, lse


_warned: "set[str]" = set()

# Plain calls (no mask, no dropout, no fallback, CUDA tensors used as they
# are) by their inputs' layout, arguments and kernel (a given compiled
# kernel's, e.g. decode's): a call like one before (each layer of a model,
# each step of a decode loop) skips the checks it passed then, and only its
# data pointers' alignment is checked again.
_plans: "dict[tuple, tuple[str, int, float, bool, tuple]]" = {}


def _layout_key(query, key, value) -> "tuple | None":
    """The inputs' layout (shapes, strides, dtypes, devices), the part of a
    plan's key that the inputs give; None where a call may not use a plan
    (not exactly torch.Tensor: subclasses, fake and nested tensors; not
    CUDA; under torch.compile)."""
    tensor = torch.Tensor
    if type(query) is not tensor or type(key) is not tensor or type(value) is not tensor:
        return None
    if query.device.type != "cuda" or torch.compiler.is_compiling():
        return None
    return (
        query.shape,
        query.stride(),
        key.shape,
        key.stride(),
        value.shape,
        value.stride(),
        query.dtype,
        key.dtype,
        value.dtype,
        query.device,
        key.device,
        value.device,
    )


def _plan_key(query, key, value, is_causal, scale, enable_gqa, entry=None) -> "tuple | None":
    """The key of a plain call (on `entry`'s kernel where given) in _plans;
    None where it may not use one (_layout_key)."""
    layout = _layout_key(query, key, value)
    if layout is None:
        return None
    return (*layout, is_causal, scale, enable_gqa, None if entry is None else str(entry.path))


def _planned(plan_key, query, key, value) -> "_Launch | None":
    """The launch of a call planned before, where its pointers are aligned
    as the bundle needs (else None: the full checks say why)."""
    plan = _plans.get(plan_key)
    if plan is None:
        return None
    return _launch_from(plan, query, key, value)


def _launch_from(plan, query, key, value) -> "_Launch | None":
    """The launch of `plan` (_plan_of's) on these inputs, where their
    pointers are aligned as its bundle needs (else None)."""
    bundle, alignment, scale, causal, batch_shape = plan
    if query.data_ptr() % alignment or key.data_ptr() % alignment or value.data_ptr() % alignment:
        return None
    return _Launch(query, key, value, causal, scale, bundle, batch_shape, False)


def _launch(
    query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, fallback, entry
) -> "_Launch | _Empty":
    """_prepare's launch; for a plain call (no mask, no dropout, no
    fallback) with the layout, arguments and kernel of one before, that
    call's plan, with only the pointers' alignment checked again."""
    plan_key = None
    if attn_mask is None and dropout_p == 0.0 and not fallback:
        plan_key = _plan_key(query, key, value, is_causal, scale, enable_gqa, entry)
    if plan_key is not None:
        launch = _planned(plan_key, query, key, value)
        if launch is not None:
            return launch
    launch = _prepare(
        query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, fallback, entry
    )
    if plan_key is not None:
        _remember(plan_key, launch, query, key, value)
    return launch


def _remember(plan_key, launch, query, key, value) -> None:
    """Keeps `launch`'s plan for calls like this one (_plan_of)."""
    plan = _plan_of(launch, query, key, value)
    if plan is None:
        return
    if len(_plans) >= 256:  # a few per model; start over past that
        _plans.clear()
    _plans[plan_key] = plan


def _plan_of(launch, query, key, value) -> "tuple | None":
    """`launch`'s plan (what _launch_from needs) where it took the inputs
    as they are (no view, expand or restride of its own); else None."""
    if not (
        isinstance(launch, _Launch)
        and launch.q is query
        and launch.k is key
        and launch.v is value
        and launch.captures is None
        and not launch.squeeze
    ):
        return None
    return (launch.bundle, launch.alignment, launch.scale, launch.is_causal, launch.batch_shape)


def _attention(
    query,
    key,
    value,
    attn_mask,
    dropout_p,
    is_causal,
    scale,
    enable_gqa,
    fallback,
    entry=None,
) -> torch.Tensor:
    try:
        if isinstance(query, torch.Tensor) and query.is_nested and query.layout == torch.jagged:
            from tiledattn.varlen import nested_attention

            return nested_attention(
                query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa
            )
        launch = _launch(
            query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, fallback, entry
        )
    except UnsupportedInputError as error:
        if not fallback:
            raise
        if error.reason not in _warned:
            _warned.add(error.reason)
            warnings.warn(
                f"{error}; falling back to "
                "torch.nn.functional.scaled_dot_product_attention "
                "(warned once per reason)",
                stacklevel=3,
            )
        return F.scaled_dot_product_attention(
            query,
            key,
            value,
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=scale,
            enable_gqa=enable_gqa,
        )
    if attn_mask is None and entry is None:
        from tiledattn.decode import routed

        result = routed(launch)
        if result is not None:
            return result
    return launch.run()


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: "torch.Tensor | None" = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: "float | None" = None,
    enable_gqa: bool = False,
    *,
    fallback: bool = False,
) -> torch.Tensor:
    """torch.nn.functional.scaled_dot_product_attention on tiledattn kernels.

    Takes (N, ..., L, E) query and (N, ..., S, E) key/value tensors of dtype
    float16 or bfloat16 on a CUDA device, with torch's semantics: scale
    defaults to 1/sqrt(E) (a given one must be finite), is_causal is top-left
    aligned, enable_gqa lets key/value have fewer heads (dim -3) than query.
    Key and value are not repeated for GQA: the kernel maps query heads to
    key/value heads. Non-contiguous views work without a copy as long as the
    last dimension has stride 1 (other strides: multiples of the bundle's
    alignment; a dimension of size 1 may have any stride). Meta and fake
    tensors give meta/fake results of the right shape. Inputs with a
    zero-size batch, head or sequence dimension give torch's result without
    a launch: an empty output, or zeros when there are no keys.

    An attn_mask (bool: True keeps a score; float: added to the scaled
    scores) of any shape that broadcasts to (N, H, L, S) runs on a kernel
    compiled once per mask kind (tiledattn.masks), for 3-D and 4-D inputs
    and not together with is_causal (torch's rule).

    Nested jagged tensors [B, H, j, D] (torch's variable-length input) run
    as tiledattn.varlen_attention on their values (is_causal only where
    query and key have the same lengths, where torch's top-left and
    FlashAttention's bottom-right alignments agree).

    Inputs tiledattn cannot run (dropout, other dtypes or head dims, CPU
    tensors, sparse tensors, a last dimension with a stride other than 1,
    ...) raise UnsupportedInputError naming the argument;
    with fallback=True they go to torch's SDPA instead, with one warning per
    reason. Invalid inputs raise InvalidInputError either way. Gradients flow
    through the result (tiledattn.backward: FlashAttention-2's backward in
    torch ops, until the backward kernel); an attn_mask with inputs that
    require grad is refused (with fallback=True: torch's SDPA).
    """
    return _attention(
        query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, fallback
    )
