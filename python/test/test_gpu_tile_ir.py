"""GPU tests of the tile-IR bundles (build/kernels-tile-ir): producer = tma
schedules compiled through tiledattn-tile-sdpa's warp-specialized tile
program, and tile programs edited by hand (schedules/tile_ir). Each is
checked against float64 with FlashAttention's criterion, as the shipped
kernels are. They skip, saying why, without a Hopper GPU or the bundles."""

import json
import math
import os
from pathlib import Path

import pytest
import torch
from test_gpu import (
    _check_repeated_launches,
    _skip_reason,
    _takes_param,
    make,
    op_and_check,
    reference,
)

import tiledattn
from tiledattn import registry

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

TILE_IR_SCHEDULES = Path(tiledattn.__file__).parent / "schedules" / "tile_ir"

# What a tile program or an sdpa's score_mod region adds to attention, as
# FlexAttention's score_mod(scaled scores, b, h, q_idx, kv_idx) (the float64
# reference applies it before the mask).
SCORE_MODS = {
    "softcap30_fwd_bf16_d128": lambda s, b, h, q, k: 30 * torch.tanh(s / 30),
    "alibi_fwd_f16_d64_causal": lambda s, b, h, q, k: s + 2.0 ** (-(h + 1) / 2) * (k - q),
}


def tile_ir_kernel_dir():
    """Where the tile-IR bundles are built (python/CMakeLists.txt, target
    tiledattn-tile-ir-kernels); TILEDATTN_TILE_IR_KERNEL_DIR overrides."""
    override = os.environ.get("TILEDATTN_TILE_IR_KERNEL_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "build" / "kernels-tile-ir"


@pytest.fixture
def tile_ir_entries(runtime):
    directory = tile_ir_kernel_dir()
    entries = registry.kernels(directory)
    if not entries:
        pytest.skip(
            f"no tile-IR bundles in {directory} (build target tiledattn-tile-ir-kernels; "
            "TILEDATTN_TILE_IR_KERNEL_DIR overrides the directory)"
        )
    assert sorted(e.name for e in entries) == sorted(
        p.stem for p in TILE_IR_SCHEDULES.glob("*.mlir")
    ), f"{directory} does not hold a bundle for each file in {TILE_IR_SCHEDULES}"
    return entries


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize(
    "shape",
    [
        (1, 1, 1, 1, 1),
        (2, 3, 3, 113, 113),
        (1, 4, 2, 1000, 777),
        (2, 2, 1, 17, 300),
        (1, 2, 2, 300, 17),
        (1, 2, 1, 2049, 2049),
    ],
    ids=lambda s: "b{}h{}kv{}q{}k{}".format(*s),
)
def test_tile_ir_bundles_are_right(tile_ir_entries, shape):
    # GQA, odd lengths, more keys than queries and fewer, many K/V blocks
    # (the rings wrap several times).
    b, hq, hkv, sq, sk = shape
    for entry in tile_ir_entries:
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        q = make(b, hq, sq, entry.head_dim, dtype)
        k = make(b, hkv, sk, entry.head_dim, dtype)
        v = make(b, hkv, sk, entry.head_dim_v, dtype)
        scale = 0.3 if entry.causal else 1 / math.sqrt(entry.head_dim)
        refs = reference(q, k, v, entry.causal, scale, score_mod=SCORE_MODS.get(entry.name))
        what = f"tile-IR {entry.name} q{tuple(q.shape)} k{tuple(k.shape)}"
        op_and_check(q, k, v, entry.causal, scale, entry.path, what, refs=refs)


def test_dynamic_tile_bundles_run_every_tile(tile_ir_entries):
    # dynamic_tiles hands tiles out from a counter the launch's last tile
    # zeroes: many more tiles than multiprocessors (blocks take several,
    # and the end mark), and launches back to back on one stream, each of
    # which must find the counter at zero again.
    def takes_a_counter(entry):
        manifest = json.loads((Path(entry.path) / "manifest.json").read_text())
        return any(p["name"] == "tile_counter" for p in manifest["params"])

    dynamic = [e for e in tile_ir_entries if takes_a_counter(e)]
    assert dynamic, "no dynamic_tiles bundle in schedules/tile_ir"
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for entry in dynamic:
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        for b, h, s in ((2, 8, 1500), (3, 16, 777), (1, 1, 1)):
            q, k, v = (make(b, h, s, entry.head_dim, dtype) for _ in range(3))
            tiles = math.ceil(s / 128) * h * b
            refs = reference(q, k, v, entry.causal, 0.3)
            for launch in range(3):
                what = f"tile-IR {entry.name} q{tuple(q.shape)}, {tiles} tiles on {sms} SMs, launch {launch}"
                op_and_check(q, k, v, entry.causal, 0.3, entry.path, what, refs=refs)


@pytest.mark.parametrize(
    "shape",
    [
        (2, 16, 8192),  # 2048 tiles: a tail of 68 over 132 blocks, 3 per tile
        (4, 16, 1536),  # one or two blocks per tail tile
        (3, 7, 777),  # a tail of fewer K/V steps than blocks: one more round
    ],
)
def test_split_tail_bundles_merge_their_pieces(tile_ir_entries, shape):
    # for_each_tile ... split_tail and merge_pieces: the pieces' partial O
    # meet in the launch's workspace, whose flags must be back at 0 for the
    # next launch (back to back, a second stream, a CUDA graph).
    split = [e for e in tile_ir_entries if _takes_param(e, "workspace")]
    assert split, "no split_tail bundle in schedules/tile_ir"
    for entry in split:
        _check_repeated_launches(entry, shape)


def test_split_tail_bundles_of_other_layouts_take_turns_on_a_stream(tile_ir_entries):
    # The launches of one stream share its zeroed workspace only where their
    # layouts (slot size, grid) agree: the merging blocks zero the flags but
    # leave the partial O, which sits where another head dim's flags are.
    # Sharing one buffer made the head dim 64 bundle merge before its
    # pieces were written, after the head dim 128 one (the twenty-fifth
    # session's GPU round).
    split = [e for e in tile_ir_entries if _takes_param(e, "workspace")]
    layouts = {e.head_dim_v for e in split}
    assert len(layouts) > 1, f"expected split_tail bundles of two head dims, got {layouts}"
    for turn in range(2):
        for entry in split:
            dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
            q, k, v = (make(2, 16, 8192, entry.head_dim, dtype) for _ in range(3))
            what = f"tile-IR {entry.name} turn {turn + 1} of 2, after the others"
            op_and_check(q, k, v, entry.causal, 0.3, entry.path, what)


def test_score_mod_kernels_compute_their_edit(tile_ir_entries):
    # Each score_mod kernel must differ from plain attention by far more
    # than its error against its own reference, or the edit did not take.
    # Scale 1 puts many scaled scores past the softcap (|s| up to ~50 for
    # head dim 128); the bias grows with the distance between rows and keys.
    for name, scale in (("softcap30_fwd_bf16_d128", 1.0), ("alibi_fwd_f16_d64_causal", 0.125)):
        entry = next(e for e in tile_ir_entries if e.name == name)
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        q, k, v = (make(1, 2, 500, entry.head_dim, dtype) for _ in range(3))
        refs = reference(q, k, v, entry.causal, scale, score_mod=SCORE_MODS[name])
        out, _ = op_and_check(q, k, v, entry.causal, scale, entry.path, name, refs=refs)
        plain = reference(q, k, v, entry.causal, scale)[0]
        error = (out.double() - refs[0]).abs().max().item()
        distance = (out.double() - plain).abs().max().item()
        assert distance > 20 * error, (
            f"{name}: max|ours - plain attention| = {distance:.3g} is not far above "
            f"max|ours - its reference| = {error:.3g}: the edit did not take"
        )


def test_score_mod_kernels_are_not_picked_for_plain_attention(tile_ir_entries):
    for entry in tile_ir_entries:
        assert entry.is_plain_attention == (entry.name not in SCORE_MODS), entry.name
