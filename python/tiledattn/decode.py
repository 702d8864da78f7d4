"""Decode attention: a few query tokens (speculative decoding, multi-token
prediction: 1 to 16) against a long KV cache, split along the keys.

No kernel of its own: the flex schedule with a block map, driven so that
- the query heads that share a KV head fill one query tile together (GQA
  packing: [B, Hq, Sq, D] viewed as [B, Hkv, g * Sq, D], row j * Sq + i
  being head j of the group at position i), so each K/V block is read once
  per KV head, not once per query head;
- the keys are split S ways (split-KV): the packed queries are repeated S
  times along the heads, [B, Hkv * S, g * Sq, D], and the kernel's GQA
  mapping (head h -> KV head h // S) sends all S copies to their KV head,
  while the block map gives copy s the K/V blocks of split s only;
- the S partial outputs and log-sum-exps are then combined by their
  log-sum-exps (torch ops).
Causal is bottom-right aligned (query i sees keys up to Sk - Sq + i): a
mask_mod reads each packed row's last key from an int32 tensor, on the
one or two blocks the boundary crosses. scaled_dot_product_attention
sends its decodes here (is_decode, routed).
"""

import functools
import typing

import torch
from torch._subclasses.fake_tensor import is_fake

from tiledattn.attention import _launch, _launch_from, _layout_key, _plan_of
from tiledattn.compiler import cache_dir
from tiledattn.errors import (
    CompileError,
    InvalidInputError,
    UnsupportedInputError,
    require_4d,
    require_kernel_device,
)

_OP = "tiledattn.decode_attention"


def multiprocessors(device) -> int:
    """The GPU's multiprocessors (an H100's 132 for meta tensors)."""
    if device.type != "cuda":
        return 132
    return torch.cuda.get_device_properties(device).multi_processor_count


def num_splits(kv_rows: int, key_blocks: int, multiprocessors: int) -> int:
    """Splits of the keys for `kv_rows` (B * Hkv) packed tiles of
    `key_blocks` K/V blocks: the most that still run in one wave (one
    thread block per multiprocessor: the decode tiles hold 150-210 KiB of
    shared memory), each split at least two blocks long. One wave, not
    "at least one": 17 splits of 8 tiles on 132 multiprocessors are 136
    thread blocks, two waves, and ran at 1.7 TB/s where cuDNN ran 2.9."""
    if 2 * kv_rows > multiprocessors or key_blocks < 4:
        return 1
    return max(1, min(multiprocessors // kv_rows, key_blocks // 2))


# The decode kernels' schedules (#tiledattn.schedule fields), by name:
# "flex" is flex_attention's own (two consumers of 64 rows, 128 rows a
# tile); "m64" one consumer of 64 rows (decode fills 4-64 rows of a tile:
# half the wgmma and softmax work) with a third K/V stage in the shared
# memory that frees.
SCHEDULES = {
    "flex": None,
    "m64": "block_m = 64, block_n = 128, num_stages = 3, warps = 8, mma = wgmma, "
    "producer = tma, swizzle = 128, consumer_warpgroups = 1, overlap_softmax = true, "
    "tma_store = true",
}
DEFAULT_SCHEDULE = "flex"
# The head dims whose decode kernels (DEFAULT_SCHEDULE, both dtypes,
# causal and not) the package carries compiled (scripts/package_kernels.py).
PACKAGED_HEAD_DIMS = (64, 128)


@functools.lru_cache(maxsize=64)
def _block_sizes(schedule: str, head_dim: int, head_dim_v: int) -> "tuple[int, int]":
    from tiledattn.flex import schedule_blocks

    return schedule_blocks(head_dim, head_dim_v, SCHEDULES[schedule])


@functools.lru_cache(maxsize=64)
def _split_map(heads_kv, splits, block, length_k, rows, causal_from, device, block_m=128):
    """The block map of [B, Hkv * S, rows] packed queries (tiles of
    `block_m` rows) and K/V blocks of `block` keys: head h takes the blocks
    of split h % S; a block holding a key at or past `causal_from`
    (Sk - Sq + 1: some row's bound) is partial, the rest full
    (map_from_blocks makes the ragged last one partial)."""
    from tiledattn.masks import map_from_blocks

    key_blocks = -(-length_k // block)
    bounds = [s * key_blocks // splits for s in range(splits + 1)]
    state = torch.zeros(splits, key_blocks, dtype=torch.int64)
    for s in range(splits):
        state[s, bounds[s] : bounds[s + 1]] = 2
    if causal_from is not None:
        last = (torch.arange(key_blocks) + 1) * block - 1  # each block's last key
        state = torch.where((state == 2) & (last >= causal_from), 1, state)
    state = state.repeat(heads_kv, 1)[None, :, None, :]
    return map_from_blocks(state.to(device), rows, length_k, block_m, block)


@functools.lru_cache(maxsize=64)
def _row_bounds(group: int, length_q: int, offset: int, device) -> torch.Tensor:
    """The last key each packed row sees (causal): Sk - Sq + i for row
    j * Sq + i; 128 entries, a whole tile: the mask_mod runs on the tile's
    rows past the last one too (not stored), and must not read past the
    tensor."""
    positions = torch.arange(length_q, dtype=torch.int32).repeat(group) + offset
    padded = torch.full((128,), offset, dtype=torch.int32)
    padded[: positions.numel()] = positions
    return padded.to(device)


# Every (schedule, dtype, head dims, causal) a tuning run tries: 2 x 2 x
# 2 x 2 at the packaged head dims, with room.
@functools.lru_cache(maxsize=64)
def _kernel_text(dtype, head_dim, head_dim_v, causal, schedule=DEFAULT_SCHEDULE):
    from tiledattn.flex import ScoreModRegion, _masked, schedule_text, trace_score_mod

    region = ScoreModRegion("")
    if causal:
        stand_in = torch.empty(2, dtype=torch.int32, device="meta")

        def bounded(b, h, q_idx, kv_idx):
            return kv_idx <= stand_in[q_idx]

        region = trace_score_mod(_masked(bounded), "mask_mod")
    return schedule_text(
        region,
        dtype,
        head_dim,
        "decode",
        head_dim_v=head_dim_v,
        block_map=True,
        schedule=SCHEDULES[schedule],
    )


def decode_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    causal: bool = False,
    scale: "float | None" = None,
    splits: "int | None" = None,
    schedule: "str | None" = None,
    return_lse: bool = False,
    cache=None,
):
    """Attention of a few queries against a long KV cache: query [B, Hq, Sq,
    D] with Hq * Sq / Hkv <= 128 (e.g. Sq <= 16 with 8 query heads per KV
    head), key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv], float16 or bfloat16
    CUDA tensors; Hq a multiple of Hkv. `causal` is bottom-right aligned.
    `splits` (default: from the shape and the GPU's multiprocessors) cuts
    the keys into that many parts, run side by side and combined.
    `schedule` names one of SCHEDULES. With neither `schedule` nor `splits`
    given, the ones tiledattn.tune kept for the shape class, else
    DEFAULT_SCHEDULE and num_splits. Returns
    the output [B, Hq, Sq, Dv] and, with return_lse, the log-sum-exp
    [B, Hq, Sq] (float32)."""
    plan_key = _plan_key(query, key, value, causal, scale, splits, schedule, cache)
    chosen = _chosen.get(plan_key) if plan_key is not None else None
    if chosen is None:
        chosen = _Chosen(*_choose(query, key, value, causal, splits, schedule, cache))
        if plan_key is not None:
            if len(_chosen) >= 256:  # a few per model; start over past that
                _chosen.clear()
            _chosen[plan_key] = chosen
    fixed = chosen.plan
    if fixed is None:
        plan = _plan(query, key, value, causal, chosen.splits, chosen.sms, chosen.schedule)
        if plan_key is not None:
            chosen.plan = plan._replace(packed=None)
    else:
        plan = fixed._replace(packed=pack_queries(query, fixed.heads_kv, fixed.splits))
    kept = chosen if plan_key is not None else None
    return run(plan, key, value, scale, chosen.entry, return_lse, kept)


class _Chosen:
    """What decode_attention chose for a layout (kernel, schedule, splits,
    multiprocessors) and, after its first call, what the calls after it
    repeat: the plan but the packed queries (its captures and shapes follow
    from the layout) and the decode kernel's launch plan (attention._plan_of)."""

    __slots__ = ("entry", "schedule", "splits", "sms", "plan", "launch")

    def __init__(self, entry, schedule, splits, sms):
        self.entry, self.schedule, self.splits, self.sms = entry, schedule, splits, sms
        self.plan = None  # a _Plan
        self.launch = None


# What decode_attention chose (a _Chosen) for calls by their inputs' layout
# and arguments (_plan_key): a decode loop's steps skip the checks, the
# choice and the plan after the first. tune_decode clears it (a new winner
# changes the choice).
_chosen: dict = {}


def _plan_key(query, key, value, causal, scale, splits, schedule, cache) -> "tuple | None":
    """The key of a call in _chosen; None where it may not use one
    (attention._layout_key)."""
    layout = _layout_key(query, key, value)
    if layout is None:
        return None
    # The cache the kernel was found in: a given one, else the
    # environment's (which a test or a user may point elsewhere).
    where = str(cache) if cache is not None else cache_dir()
    return (*layout, causal, scale, splits, schedule, where)


def _choose(query, key, value, causal, splits, schedule, cache):
    """decode_attention's checks, then its kernel entry, schedule, splits
    (None: num_splits') and the GPU's multiprocessors."""
    from tiledattn.compiler import kernel_entry

    require_4d(_OP, "[B, H, S, D] ", query=query, key=key, value=value)
    batch, heads_q, length_q, head_dim = query.shape
    heads_kv, length_k = key.shape[1], key.shape[2]
    if heads_kv == 0 or heads_q % heads_kv or value.shape[:3] != key.shape[:3]:
        raise InvalidInputError(
            f"{_OP}: expected 'key' and 'value' of shapes [B, Hkv, Sk, *] with Hkv dividing "
            f"the query's {heads_q} heads but got {tuple(key.shape)} and {tuple(value.shape)}"
        )
    group = heads_q // heads_kv
    rows = group * length_q
    if rows > 128 or length_q == 0 or length_k == 0:
        raise UnsupportedInputError(
            f"{_OP}: expected 1 to 128 packed query rows (query heads per KV head x Sq = "
            f"{group} x {length_q}) and keys but got {rows} rows and {length_k} keys; "
            "scaled_dot_product_attention runs longer queries",
            "decode rows",
        )
    if causal and length_q > length_k:
        raise InvalidInputError(
            f"{_OP}: causal (bottom-right) needs Sq <= Sk but got {length_q} and {length_k}"
        )
    if schedule is not None and schedule not in SCHEDULES:
        raise InvalidInputError(
            f"{_OP}: expected 'schedule' to be one of {sorted(SCHEDULES)} but got {schedule!r}"
        )
    require_kernel_device(_OP, query.device)
    sms = multiprocessors(query.device)
    if schedule is None and splits is None:
        schedule, splits = _tuned(query, key, value, causal, sms)
    schedule = DEFAULT_SCHEDULE if schedule is None else schedule
    key_blocks = -(-length_k // _block_sizes(schedule, head_dim, value.shape[-1])[1])
    if splits is not None and (not isinstance(splits, int) or not 1 <= splits <= key_blocks):
        raise InvalidInputError(
            f"{_OP}: expected 'splits' from 1 to the {key_blocks} K/V blocks but got {splits!r}"
        )
    # The kernel first: where it is not to be had, nothing was allocated.
    text = _kernel_text(query.dtype, query.shape[-1], value.shape[-1], causal, schedule)
    return kernel_entry(text, cache=cache), schedule, splits, sms


def _tuned(query, key, value, causal, multiprocessors) -> "tuple[str | None, int | None]":
    """The schedule and split count tiledattn.tune kept for this call's
    shape class, the splits held to this call's K/V blocks and one wave
    (a class spans lengths and batches up to twice as large); (None, None)
    where none was kept."""
    from tiledattn import tune

    winner = tune.lookup(tune.decode_class(query, key, value, causal))
    if not winner or winner.get("schedule") not in SCHEDULES:
        return None, None
    schedule = winner["schedule"]
    block = _block_sizes(schedule, query.shape[-1], value.shape[-1])[1]
    key_blocks = -(-key.shape[2] // block)
    wave = max(1, multiprocessors // (query.shape[0] * key.shape[1]))
    splits = winner.get("splits")
    splits = max(1, min(int(splits), key_blocks, wave)) if isinstance(splits, int) else None
    return schedule, splits


# (dtype, head dim, value head dim) whose decode kernel could not be had
# (no compiler and not in the cache): scaled_dot_product_attention stops
# asking for it.
_unavailable: "set[tuple]" = set()


def is_decode(query_shape, heads_kv: int, causal: bool) -> bool:
    """Whether scaled_dot_product_attention of a [B, Hq, Sq, D] query on
    `heads_kv` key/value heads is a decode that decode_attention runs: at
    most 16 queries whose heads per KV head fill at most a tile (128 rows),
    not causal (torch's top-left is_causal is not a KV cache's bottom-right)."""
    heads_q, length_q = query_shape[1], query_shape[2]
    return (
        not causal
        and 0 < length_q <= 16
        and heads_kv > 0
        and heads_q % heads_kv == 0
        and heads_q // heads_kv * length_q <= 128
    )


def routed(launch) -> "torch.Tensor | None":
    """scaled_dot_product_attention's result by decode_attention where it
    is_decode, for eager CUDA tensors without score_mod captures. None
    otherwise, and where the kernel is not to be had (no compiler and not
    compiled: the prefill kernels run it then, and from then on)."""
    q, k, v = (getattr(launch, name, None) for name in ("q", "k", "v"))
    if q is None:  # an empty input's launch: nothing to run
        return None
    what = (q.dtype, q.shape[-1], v.shape[-1])
    if (
        launch.captures
        or not is_decode(q.shape, k.shape[1], launch.is_causal)
        or q.device.type != "cuda"
        or what in _unavailable
        or torch.compiler.is_compiling()
        or is_fake(q)
        # training: the decode kernel (captures) has no backward, the prefill one has
        or (torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad))
    ):
        return None
    try:
        out = decode_attention(q, k, v, scale=launch.scale)
    except (CompileError, UnsupportedInputError):
        _unavailable.add(what)
        return None
    return launch.unflatten(out)[0]


class _Plan(typing.NamedTuple):
    """What decode_attention launches: the packed queries [B, Hkv * S,
    g * Sq, D], the tensors the kernel reads after scale (row bounds when
    causal, then the block map) and the shapes to unpack by."""

    packed: torch.Tensor
    captures: "list[torch.Tensor]"
    shape: "tuple[int, int, int, int]"  # B, Hq, Sq, Dv
    heads_kv: int
    splits: int


def _plan(query, key, value, causal, splits, multiprocessors, schedule=DEFAULT_SCHEDULE) -> _Plan:
    batch, heads_q, length_q, head_dim = query.shape
    heads_kv, length_k, head_dim_v = key.shape[1], key.shape[2], value.shape[3]
    group = heads_q // heads_kv
    rows = group * length_q
    block_m, block = _block_sizes(schedule, head_dim, head_dim_v)
    key_blocks = -(-length_k // block)
    if splits is None:
        splits = num_splits(batch * heads_kv, key_blocks, multiprocessors)
    packed = pack_queries(query, heads_kv, splits)
    offset = length_k - length_q
    causal_from = offset + 1 if causal else None
    bmap = _split_map(heads_kv, splits, block, length_k, rows, causal_from, query.device, block_m)
    captures = [_row_bounds(group, length_q, offset, query.device)] if causal else []
    shape = (batch, heads_q, length_q, head_dim_v)
    return _Plan(packed, captures + [bmap], shape, heads_kv, splits)


def pack_queries(query, heads_kv: int, splits: int) -> torch.Tensor:
    """query [B, Hq, Sq, D] as [B, Hkv * S, Hq / Hkv * Sq, D]: the query
    heads of a KV head as rows of one tile (a view of a contiguous query),
    repeated once per split along the heads."""
    batch, heads_q, length_q, head_dim = query.shape
    rows = heads_q // heads_kv * length_q
    packed = query.reshape(batch, heads_kv, rows, head_dim)
    if splits > 1:
        packed = packed.unsqueeze(2).expand(batch, heads_kv, splits, rows, head_dim)
        packed = packed.reshape(batch, heads_kv * splits, rows, head_dim)
    return packed


def run(plan: _Plan, key, value, scale, entry, return_lse, chosen=None):
    """`entry`'s kernel on the plan's packed queries, `key` and `value`
    (with the plan's captures), its results combined and unpacked
    (_finish): what decode_attention and kvcache_attention launch. A
    `chosen` (_Chosen of this call's layout) keeps the launch's plan: the
    next call skips _launch's key and lookup."""
    launch = None
    if chosen is not None and chosen.launch is not None:
        launch = _launch_from(chosen.launch, plan.packed, key, value)
    if launch is None:
        launch = _launch(plan.packed, key, value, None, 0.0, False, scale, True, False, entry)
        if chosen is not None:
            chosen.launch = _plan_of(launch, plan.packed, key, value)
    launch.captures = plan.captures
    out, lse = launch.run_with_lse()
    return _finish(plan, out, lse, return_lse)


def _finish(plan: _Plan, out, lse, return_lse):
    """The kernel's [B, Hkv * S, g * Sq, *] results combined over the splits
    and unpacked to [B, Hq, Sq, *]."""
    batch, heads_q, length_q, head_dim_v = plan.shape
    if plan.splits > 1:
        out, lse = _combine(out, lse, batch, plan.heads_kv, plan.splits, out.shape[2], return_lse)
    out = out.reshape(batch, heads_q, length_q, head_dim_v)
    if not return_lse:
        return out
    return out, lse.reshape(batch, heads_q, length_q)


def _combine(out, lse, batch, heads_kv, splits, rows, with_lse=True):
    """The splits' outputs weighted by exp(lse_s - lse), the softmax of
    their lses (each row sees a key in some split: Sq <= Sk), and the lse
    itself only `with_lse`. Few kernels on purpose: the host issues each,
    and with the logsumexp (nine kernels) and casts it cost 250 us a call
    on the GPU machine, more than a B1 Sk128k kernel (195 us)."""
    parts = out.view(batch, heads_kv, splits, rows, -1)
    lses = lse.view(batch, heads_kv, splits, rows)
    weights = torch.softmax(lses, dim=2).unsqueeze(-1)  # float32: the sum is in float32
    combined = (weights * parts).sum(2).to(out.dtype)
    return combined, torch.logsumexp(lses, dim=2) if with_lse else None


def bandwidth_bytes(key: torch.Tensor, value: torch.Tensor) -> int:
    """K + V bytes a decode call reads once (the bandwidth figure's numerator)."""
    return key.numel() * key.element_size() + value.numel() * value.element_size()
