"""The attention implementations the harness times, behind one interface.

Each backend's prepare() does the per-shape work that must not be timed
(kernel selection, torch.compile, block masks) and returns a Prepared: the
callable to time and what we learned (kernel name, compile seconds, which
kernel SDPA's auto-dispatch chose). It raises Unsupported when the backend
cannot run the shape; the sweep records the reason and goes on.
"""

import contextlib
import dataclasses
import math
import os
import time
from pathlib import Path

import torch
import torch.nn.functional as F

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}

# Name -> forced torch SDPA backend (SDPBackend member name); None is auto.
SDPA_FORCED = {
    "flash": "FLASH_ATTENTION",
    "efficient": "EFFICIENT_ATTENTION",
    "cudnn": "CUDNN_ATTENTION",
    "math": "MATH",
}
ALL_BACKENDS = ("tiledattn", "sdpa_auto", *SDPA_FORCED, "eager", "flex", "fa4")
# Unfused backends: O(S^2) memory and ~20-60 TFLOP/s, so they get fewer runs
# and are skipped beyond --slow-max-seqlen to keep the sweep's budget.
SLOW_BACKENDS = ("math", "eager")
# Fused SDPA kernels a FlexAttention run is compared with to flag it as slow.
FUSED_BASELINES = ("sdpa_auto", "flash", "cudnn", "efficient")


def _sync(t):
    if t.is_cuda:
        torch.cuda.synchronize()


class Unsupported(Exception):
    """The backend cannot run this shape (a reason, not a failure)."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One point of the sweep: inputs of shape (batch, heads, seqlen, head_dim)."""

    dtype: str
    head_dim: int
    causal: bool
    seqlen_q: int
    seqlen_k: int
    batch: int
    heads: int
    # --score-mod: a name in bench.score_mods.SCORE_MODS ("none": plain).
    score_mod: str = "none"
    # --mask: a name in bench.masks.MASKS ("none": no mask).
    mask: str = "none"
    # K/V heads (grouped-query attention); 0: as many as the queries'.
    heads_kv: int = 0

    @property
    def kv_heads(self) -> int:
        return self.heads_kv or self.heads

    @property
    def gqa(self) -> bool:
        return self.kv_heads != self.heads

    @property
    def kv_bytes(self) -> int:
        """The bytes of K and V: a decode's traffic (its bandwidth figure)."""
        element = torch.empty((), dtype=self.torch_dtype).element_size()
        return 2 * self.batch * self.kv_heads * self.seqlen_k * self.head_dim * element

    @property
    def torch_dtype(self):
        return DTYPES[self.dtype]

    @property
    def score_mod_fn(self):
        from tiledattn.bench.score_mods import SCORE_MODS

        return SCORE_MODS[self.score_mod]

    @property
    def mask_spec(self):
        """The bench.masks.Mask of --mask, or None."""
        from tiledattn.bench.masks import MASKS

        return None if self.mask == "none" else MASKS[self.mask]

    def masked_score_mod(self, device):
        """The score function the float64 reference applies: the score_mod,
        then the mask's -inf (None when neither)."""
        score_mod, mask = self.score_mod_fn, self.mask_spec
        if mask is None:
            return score_mod
        keep = mask.dense(self.batch, self.seqlen_k, device)
        keep = keep.expand(self.batch, 1, self.seqlen_q, self.seqlen_k)

        def masked(score, b, h, q_idx, kv_idx):
            if score_mod is not None:
                score = score_mod(score, b, h, q_idx, kv_idx)
            return score.masked_fill(~keep[b, 0, q_idx, kv_idx], float("-inf"))

        return masked

    def block_mask(self, device):
        """FlexAttention's BlockMask of the mask (causal top-left when the
        case is causal without one), or None."""
        from torch.nn.attention.flex_attention import create_block_mask

        if self.mask_spec is not None:
            mask_mod = self.mask_spec.mask_mod(self.batch, self.seqlen_k, device)
            batch = self.batch
        elif self.causal:
            batch = None

            def mask_mod(b, h, q_idx, kv_idx):
                return q_idx >= kv_idx
        else:
            return None
        return create_block_mask(mask_mod, batch, None, self.seqlen_q, self.seqlen_k, device=device)

    def fields(self):
        return dataclasses.asdict(self)

    def label(self):
        mod = "" if self.score_mod == "none" else f" {self.score_mod}"
        mod += "" if self.mask == "none" else f" {self.mask}"
        if self.seqlen_k != self.seqlen_q:
            length = f"Sq{self.seqlen_q} Sk{self.seqlen_k}"
        else:
            length = f"S{self.seqlen_q}"
        heads = f"H{self.heads}" + (f"/{self.kv_heads}" if self.gqa else "")
        return (
            f"{self.dtype} D{self.head_dim} {'causal' if self.causal else 'full'}{mod} "
            f"{length} B{self.batch} {heads}"
        )


@dataclasses.dataclass
class Prepared:
    fn: object  # () -> output tensor
    info: dict = dataclasses.field(default_factory=dict)
    # Entered once around the check and the timing loop (not per call), so
    # e.g. sdpa_kernel's Python cost stays out of the timed region.
    context: object = contextlib.nullcontext
    # A backend that runs on copies of q, k, v in its own (B, S, H, D) layout
    # (FA4) gives them here, as leaves that require grad, and fn's output is
    # a transpose(1, 2) view of its own: the backward mode then differentiates
    # with respect to them, with dO in that layout, so the copies' backward
    # (four transposes, about 4% of FA4's backward at 4k and 11% at 1k) is
    # not in its time.
    bshd_leaves: tuple = ()


class Backend:
    name = "?"
    slow = False
    is_tiledattn = False  # ratio column: tiledattn variants vs the rest
    takes_score_mod = False  # can run --score-mod cases

    def prepare(self, case, q, k, v):
        raise NotImplementedError


def no_score_mod(backend, case):
    """Unsupported for a backend that cannot apply the case's score_mod."""
    if case.score_mod != "none" and not backend.takes_score_mod:
        raise Unsupported(f"{backend.name} cannot apply score_mod {case.score_mod}")


def no_mask(backend, case):
    """Unsupported for a backend that takes no attn_mask (--mask cases)."""
    if case.mask != "none":
        raise Unsupported(f"{backend.name} takes no mask ({case.mask})")


class TiledAttn(Backend):
    """The registry's kernel for (dtype, head dim, causal)."""

    name = "tiledattn"
    is_tiledattn = True
    takes_score_mod = True

    def prepare(self, case, q, k, v):
        import tiledattn
        from tiledattn.errors import TiledAttnError, UnsupportedInputError

        mask = case.mask_spec
        if mask is not None and mask.as_attn_mask and case.score_mod == "none":
            return self._prepare_attn_mask(case, q, k, v)
        if case.score_mod != "none" or mask is not None:
            return self._prepare_flex(case, q, k, v)
        try:
            entry = tiledattn.registry.select(
                case.torch_dtype, case.head_dim, case.causal, seqlen_k=k.shape[-2]
            )
        except (UnsupportedInputError, TiledAttnError) as error:
            raise Unsupported(str(error)) from None

        def fn():
            return tiledattn.scaled_dot_product_attention(
                q, k, v, is_causal=case.causal, enable_gqa=case.gqa
            )

        kernel = entry.name
        if tiledattn.decode.is_decode(q.shape, k.shape[1], case.causal):
            kernel = "decode_attention"
        return Prepared(fn, {"kernel": kernel})

    def _prepare_attn_mask(self, case, q, k, v):
        """scaled_dot_product_attention with the case's mask as attn_mask: its
        kernel compiled (or found) and its block map built before timing."""
        import tiledattn
        from tiledattn.errors import TiledAttnError

        keep = case.mask_spec.dense(case.batch, case.seqlen_k, q.device)
        start = time.perf_counter()
        try:
            tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        except TiledAttnError as error:
            raise Unsupported(str(error)) from None
        _sync(q)
        compile_s = time.perf_counter() - start

        def fn():
            return tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=keep)

        return Prepared(fn, {"kernel": f"attn_mask:{case.mask}", "compile_s": compile_s})

    def _prepare_flex(self, case, q, k, v):
        """tiledattn.flex_attention with the case's score_mod and BlockMask (a
        causal one runs as a causal kernel, another through its block map),
        compiled (or found in the cache) before timing."""
        import tiledattn
        from tiledattn.errors import TiledAttnError

        block_mask = case.block_mask(q.device)
        score_mod = case.score_mod_fn
        start = time.perf_counter()
        try:
            tiledattn.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask)
        except TiledAttnError as error:
            raise Unsupported(str(error)) from None
        _sync(q)
        compile_s = time.perf_counter() - start

        def fn():
            return tiledattn.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask)

        name = "+".join(m for m in (case.score_mod, case.mask) if m != "none")
        return Prepared(fn, {"kernel": f"flex:{name}", "compile_s": compile_s})


class Schedule(Backend):
    """A user schedule (--schedule my.mlir), compiled once with tiledattn.compile."""

    is_tiledattn = True

    def __init__(self, path):
        self.path = str(path)
        self.name = "schedule:" + Path(path).stem
        self.kernel = None
        self.compile_s = float("nan")
        self.error = None

    def compile(self):
        """Compiles now (before the sweep); a failure is kept and reported per row."""
        import tiledattn

        start = time.perf_counter()
        try:
            self.kernel = tiledattn.compile(self.path)
        except Exception as error:  # noqa: BLE001 -- any failure: report it per row
            self.error = f"compile failed: {error}"
        self.compile_s = time.perf_counter() - start
        return self

    def prepare(self, case, q, k, v):
        no_score_mod(self, case)
        no_mask(self, case)
        if case.gqa:
            raise Unsupported(f"{self.name} runs as many K/V heads as query heads")
        if self.kernel is None and self.error is None:
            self.compile()
        if self.error:
            raise RuntimeError(self.error)
        entry = self.kernel.entry
        have = (entry.dtype, entry.head_dim, entry.causal)
        want = ({"fp16": "f16"}.get(case.dtype, case.dtype), case.head_dim, case.causal)
        if have != want:
            raise Unsupported(f"schedule compiled for (dtype, D, causal) = {have}")
        kernel = self.kernel

        def fn():
            return kernel(q, k, v, is_causal=case.causal)

        return Prepared(fn, {"kernel": kernel.name, "compile_s": self.compile_s})


def sdpa_choice(q, k, v, causal, enable_gqa=False):
    """The backend torch's auto-dispatch picks, by name, from the dispatcher's
    own choice function (what F.scaled_dot_product_attention consults)."""
    from torch.nn.attention import SDPBackend

    try:
        index = torch._fused_sdp_choice(
            q, k, v, None, 0.0, causal, scale=None, enable_gqa=enable_gqa
        )
    except Exception as error:  # noqa: BLE001 -- private API: never stop the sweep
        return f"unknown ({type(error).__name__})"
    for name, member in SDPBackend.__members__.items():
        if int(member.value) == int(index):
            return name
    return f"unknown ({index})"


# Substrings of CUDA kernel names -> the SDPA backend that launches them.
_KERNEL_FAMILIES = (
    ("cudnn", "CUDNN_ATTENTION"),
    ("flash_fwd", "FLASH_ATTENTION"),
    ("fmha", "EFFICIENT_ATTENTION"),
    ("efficient", "EFFICIENT_ATTENTION"),
)


def classify_kernels(names):
    """Which SDPA backend a list of CUDA kernel names came from."""
    for name in names:
        low = name.lower()
        for needle, family in _KERNEL_FAMILIES:
            if needle in low:
                return family
    return "MATH" if names else "unknown"


def profiled_kernels(fn):
    """CUDA kernel names one call of fn launches (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    names = []
    for event in prof.events():
        is_cuda = getattr(event, "device_type", None) == torch.autograd.DeviceType.CUDA
        if is_cuda and event.name not in names:
            names.append(event.name)
    return names


class Sdpa(Backend):
    """torch SDPA, auto-dispatched (kind None) or forced with sdpa_kernel."""

    def __init__(self, name, forced=None):
        self.name = name
        self.forced = forced
        self.slow = name in SLOW_BACKENDS

    def context(self):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        if self.forced is None:
            return contextlib.nullcontext()
        return sdpa_kernel([getattr(SDPBackend, self.forced)])

    def prepare(self, case, q, k, v):
        no_score_mod(self, case)
        keep = None
        if case.mask_spec is not None:
            if self.forced == "FLASH_ATTENTION":
                no_mask(self, case)
            keep = case.mask_spec.dense(case.batch, case.seqlen_k, q.device)

        def fn():
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=keep, is_causal=case.causal, enable_gqa=case.gqa
            )

        info = {}
        if self.forced is None:
            # Two independent answers: the dispatcher's choice, and the
            # kernels that actually ran (they should agree).
            info["chosen"] = sdpa_choice(q, k, v, case.causal, case.gqa)
            try:
                names = profiled_kernels(fn)
                info["profiled"] = classify_kernels(names)
                info["kernel"] = ";".join(n[:80] for n in names[:3])
            except Exception as error:  # noqa: BLE001 -- the profiler is optional
                info["profiled"] = f"unknown ({type(error).__name__})"
        return Prepared(fn, info, self.context)


class Eager(Backend):
    """Unfused attention as users write it: matmul and the second matmul in
    the input dtype, softmax in float32."""

    name = "eager"
    slow = True

    def prepare(self, case, q, k, v):
        no_score_mod(self, case)
        scale = 1.0 / math.sqrt(case.head_dim)
        mask = None
        if case.causal:
            mask = torch.ones(
                case.seqlen_q, case.seqlen_k, dtype=torch.bool, device=q.device
            ).tril()
        elif case.mask_spec is not None:
            mask = case.mask_spec.dense(case.batch, case.seqlen_k, q.device)

        if case.gqa:
            k, v = (t.repeat_interleave(case.heads // case.kv_heads, dim=1) for t in (k, v))

        def fn():
            scores = torch.matmul(q, k.transpose(-2, -1)).float() * scale
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            return torch.matmul(torch.softmax(scores, dim=-1).to(q.dtype), v)

        return Prepared(fn)


# A flex run below this fraction of the best fused SDPA kernel in the same
# row is flagged: the known failure is a silent unfused fallback (~17 vs
# ~400 TFLOP/s on the H200, ANCHORS section 7), far below this line.
FLEX_SLOW_FRACTION = 0.25


class Flex(Backend):
    """FlexAttention through torch.compile, one fresh compile per shape.

    dynamo is reset per shape and its recompile limit raised, with
    fullgraph=True so a graph break raises instead of falling back to the
    unfused eager path (which is what silently happens past the limit).
    """

    name = "flex"
    takes_score_mod = True

    def prepare(self, case, q, k, v):
        try:
            from torch.nn.attention.flex_attention import flex_attention
        except ImportError as error:
            raise Unsupported(f"no FlexAttention in this torch: {error}") from None
        import torch._dynamo
        import torch._dynamo.utils

        torch._dynamo.reset()
        config = torch._dynamo.config
        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(config, knob):
                setattr(config, knob, 1024)
        for knob in ("accumulated_recompile_limit", "accumulated_cache_size_limit"):
            if hasattr(config, knob):
                setattr(config, knob, 8192)
        torch._dynamo.utils.counters.clear()

        start = time.perf_counter()
        block_mask = case.block_mask(q.device)
        _sync(q)
        mask_s = time.perf_counter() - start

        compiled = torch.compile(flex_attention, fullgraph=True, dynamic=False)
        score_mod = case.score_mod_fn
        start = time.perf_counter()
        gqa = case.gqa
        compiled(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa)  # compiles
        _sync(q)
        compile_s = time.perf_counter() - start
        graphs = torch._dynamo.utils.counters["stats"].get("unique_graphs", None)

        def fn():
            return compiled(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa)

        info = {"compile_s": compile_s, "block_mask_s": mask_s}
        if graphs is not None:
            info["kernel"] = f"dynamo graphs={graphs}"
        return Prepared(fn, info)


def _fa4():
    from tiledattn.bench.fa4 import FA4  # bench.fa4 imports this module

    return FA4()


def make_backends(names, schedules=()):
    """Backend objects for --backends names (in ALL_BACKENDS order) plus schedules."""
    factories = {
        "tiledattn": TiledAttn,
        "sdpa_auto": lambda: Sdpa("sdpa_auto"),
        "eager": Eager,
        "flex": Flex,
        "fa4": _fa4,
    }
    for name, forced in SDPA_FORCED.items():
        factories[name] = lambda name=name, forced=forced: Sdpa(name, forced)
    backends = [factories[name]() for name in ALL_BACKENDS if name in names]
    backends += [Schedule(os.fspath(path)) for path in schedules]
    return backends
