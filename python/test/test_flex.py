"""tiledattn.flex_attention on the CPU: tracing score_mod callables into tile
IR, the errors for what cannot be expressed, and (where the compiler is
built) compiling the traced IR to a bundle."""

import json
import math
import subprocess
from pathlib import Path

import pytest
import torch
from flex_examples import CAPTURE_MODS, SCORE_MODS, alibi, sliding_window, softcap

import tiledattn
from tiledattn import registry
from tiledattn.errors import UnsupportedInputError
from tiledattn.flex import schedule_text, trace_score_mod

BUILD = Path(__file__).resolve().parents[2] / "build"
OPT = BUILD / "bin" / "tiledattn-opt"


def test_softcap_traces_to_arith_and_math():
    region = trace_score_mod(softcap)
    assert region.startswith("score_mod {\n  ^bb0(%score: f32, %b: index, %h: index,")
    assert "math.tanh" in region and "arith.divf %score, %v0 fastmath<arcp,afn>" in region
    # tanh runs approximated (tanh.approx.f32), as FlashAttention's softcap.
    assert all("fastmath<afn>" in line for line in region.splitlines() if "math.tanh" in line)
    assert region.rstrip().endswith("}")


def test_index_arithmetic_stays_integer_until_it_meets_the_score():
    region = trace_score_mod(alibi)
    assert "arith.subi %kv_idx, %q_idx : index" in region
    assert "arith.sitofp" in region and "math.powf" in region


def test_masks_are_selects_of_minus_infinity():
    region = trace_score_mod(sliding_window)
    assert "arith.cmpi sle" in region and "arith.cmpi sge" in region
    assert "arith.andi" in region and "0xFF800000" in region and "arith.select" in region


@pytest.mark.skipif(not OPT.is_file(), reason=f"{OPT} is not built")
@pytest.mark.parametrize("score_mod", SCORE_MODS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("head_dim", [64, 128, 192, 256])
def test_traced_schedules_verify_and_become_tile_programs(tmp_path, score_mod, head_dim):
    text = schedule_text(trace_score_mod(score_mod), torch.bfloat16, head_dim, "flex")
    path = tmp_path / "flex.mlir"
    path.write_text(text)
    result = subprocess.run(
        [str(OPT), str(path), "--tiledattn-tile-sdpa"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    # One for block 0 (overlap_softmax writes it apart) and one per K/V loop.
    assert result.stdout.count("tiledattn.score_mod") == 3


@pytest.mark.skipif(
    not (BUILD / "bin" / "tiledattn-compile").is_file(), reason="tiledattn-compile is not built"
)
def test_division_by_a_score_dependent_value_is_the_approximate_division(tmp_path):
    def by_distance(score, b, h, q_idx, kv_idx):
        return score / (1 + (q_idx - kv_idx).abs())

    text = schedule_text(trace_score_mod(by_distance), torch.bfloat16, 64, "flex")
    ptx = (tiledattn.compile(text, cache=tmp_path).path / "kernel.ptx").read_text()
    assert "div.rn.f32" not in ptx and "div.approx" in ptx


@pytest.mark.skipif(
    not (BUILD / "bin" / "tiledattn-compile").is_file(), reason="tiledattn-compile is not built"
)
def test_a_traced_score_mod_compiles_to_a_bundle_that_is_never_picked_for_plain_calls(
    tmp_path, monkeypatch
):
    text = schedule_text(trace_score_mod(softcap), torch.float16, 128, "flex")
    kernel = tiledattn.compile(text, cache=tmp_path)
    manifest = json.loads((kernel.path / "manifest.json").read_text())
    assert "math.tanh" in manifest["score_mod"]
    ptx = (kernel.path / "kernel.ptx").read_text()
    assert "tanh.approx.f32" in ptx and "__nv_tanhf" not in ptx
    # score / 30 as a multiply by 1/30: no IEEE division (div.rn.f32, about
    # a dozen instructions per score) in the block loops.
    assert "div.rn.f32" not in ptx
    assert manifest["resources"]["spill_stores"] == 0
    assert not kernel.entry.is_plain_attention
    # A second call with the same trace reuses the cached bundle.
    again = tiledattn.compile(text, cache=tmp_path)
    assert again.path == kernel.path
    monkeypatch.setenv("TILEDATTN_KERNEL_DIR", str(tmp_path))
    registry.refresh()
    try:
        assert registry.supported_head_dims(torch.float16, False) == []
    finally:
        monkeypatch.undo()
        registry.refresh()


@pytest.mark.skipif(
    not (BUILD / "bin" / "tiledattn-compile").is_file(), reason="tiledattn-compile is not built"
)
@pytest.mark.parametrize("make_mod", CAPTURE_MODS, ids=lambda f: f.__name__)
def test_captured_tensors_are_manifest_params_the_runtime_reads(tmp_path, runtime, make_mod):
    region = trace_score_mod(make_mod("cpu", 2, 4, 64))
    kernel = tiledattn.compile(schedule_text(region, torch.bfloat16, 64, "flex"), cache=tmp_path)
    manifest = json.loads((kernel.path / "manifest.json").read_text())
    names = [p["name"] for p in manifest["params"]]
    assert names == ["q", "k", "v", "o", "lse", "scale"] + [
        f"capture{i}" for i in range(len(region.captures))
    ]
    assert manifest["resources"]["spill_stores"] == 0
    # The runtime loads the manifest (its own reader) and reads them back.
    info = json.loads(torch.ops.tiledattn.bundle_info(str(kernel.path)))
    assert info["params"][6:] == manifest["params"][6:]


@pytest.mark.skipif(
    not (BUILD / "bin" / "tiledattn-compile").is_file(), reason="tiledattn-compile is not built"
)
def test_a_value_head_dim_of_its_own_compiles(tmp_path):
    # DeepSeek's head dims: queries and keys 192, values 128.
    text = schedule_text(trace_score_mod(softcap), torch.bfloat16, 192, "flex", head_dim_v=128)
    kernel = tiledattn.compile(text, cache=tmp_path)
    assert (kernel.entry.head_dim, kernel.entry.head_dim_v) == (192, 128)
    manifest = json.loads((kernel.path / "manifest.json").read_text())
    assert manifest["resources"]["spill_stores"] == 0


def test_python_control_flow_is_refused_with_a_hint():
    def branches(score, b, h, q_idx, kv_idx):
        if score > 0:
            return score
        return -score

    with pytest.raises(UnsupportedInputError, match=r"may not branch on its arguments"):
        trace_score_mod(branches)


def test_captured_tensors_become_kernel_arguments():
    slopes = torch.rand(8)
    ids = torch.zeros(2, 50, dtype=torch.int32)

    def reads_tensors(score, b, h, q_idx, kv_idx):
        same = ids[b, q_idx] == ids[b][kv_idx]  # both index forms
        return torch.where(same, score + slopes[h] * (kv_idx - q_idx), -float("inf"))

    region = trace_score_mod(reads_tensors)
    assert region.captures[0] is ids and region.captures[1] is slopes
    assert len(region.captures) == 2, "a tensor read twice is one argument"
    assert "memref.load %cap0[%b, %q_idx] : memref<?x?xi32>" in region
    assert "memref.load %cap0[%b, %kv_idx] : memref<?x?xi32>" in region
    assert "arith.index_cast" in region and "memref.load %cap1[%h] : memref<?xf32>" in region
    text = schedule_text(region, torch.bfloat16, 64, "flex")
    assert "%scale: f32, %cap0: memref<?x?xi32>, %cap1: memref<?xf32>) {" in text


@pytest.mark.parametrize(
    "tensor, loads",
    [
        (torch.ones(4, dtype=torch.bool), ["memref<?xi8>", "arith.cmpi ne"]),
        (torch.ones(4, dtype=torch.uint8), ["memref<?xi8>", "arith.index_castui"]),
        (torch.ones(4, dtype=torch.int64), ["memref<?xi64>", "arith.index_cast "]),
        (torch.ones(4, dtype=torch.float16), ["memref<?xf16>", "arith.extf"]),
        (torch.ones(4, dtype=torch.float64), ["memref<?xf64>", "arith.truncf"]),
    ],
    ids=["bool", "uint8", "int64", "float16", "float64"],
)
def test_each_capture_dtype_loads_as_a_score_mod_value(tensor, loads):
    def reads(score, b, h, q_idx, kv_idx):
        value = tensor[kv_idx]
        return torch.where(value, score, 0.0) if tensor.dtype == torch.bool else score + value

    region = trace_score_mod(reads)
    assert all(text in region for text in loads), region


def test_a_0d_capture_is_passed_as_one_element():
    temperature = torch.tensor(0.5)
    region = trace_score_mod(lambda s, b, h, i, j: s * temperature)
    assert "memref.load %cap0[%v0] : memref<?xf32>" in region


@pytest.mark.parametrize(
    "score_mod, message",
    [
        (lambda s, b, h, i, j: s + _ROWS[h], r"indexed by 1 of its 2 dimensions as a value"),
        (lambda s, b, h, i, j: s + _ROWS[h, i, j], r"shape \[4, 4\] with 3 indices"),
        (lambda s, b, h, i, j: s + _ROWS[h, -1], r"with -1; expected traced indices"),
        (lambda s, b, h, i, j: s + _ROWS[h, 1:], r"with slice\(1, None, None\)"),
        (lambda s, b, h, i, j: s + _ROWS[h, s], r"with a float; expected integers"),
        (lambda s, b, h, i, j: s + _COMPLEX[h].real, r"dtype torch.complex64"),
        (lambda s, b, h, i, j: s[h], r"indexes a value that is not a captured tensor"),
    ],
    ids=["partial", "too-many", "negative", "slice", "float-index", "complex", "score"],
)
def test_what_a_capture_cannot_do_is_named(score_mod, message):
    with pytest.raises(UnsupportedInputError, match=message):
        trace_score_mod(score_mod)


_ROWS = torch.zeros(4, 4)
_COMPLEX = torch.zeros(4, dtype=torch.complex64)


@pytest.mark.parametrize(
    "score_mod, message",
    [
        (lambda s, b, h, i, j: torch.erfinv(s), r"calls erfinv, which tiledattn cannot lower"),
        (lambda s, b, h, i, j: i >= j, r"returns a comparison"),
        (lambda s, b, h, i, j: s + (i >= j), r"comparison's result"),
        (lambda s, b, h, i: s, r"takes 4 arguments; expected 5"),
        (lambda s, b, h, i, j: s.softmax(0), r"calls Tensor.softmax"),
    ],
    ids=["erfinv", "returns-bool", "bool-as-number", "four-args", "method"],
)
def test_what_cannot_be_expressed_is_named(score_mod, message):
    with pytest.raises(UnsupportedInputError, match=message):
        trace_score_mod(score_mod)


def _flex_kernel(score_mod, mask_mod, length=300, head_dim=64, block_size=128):
    from torch.nn.attention.flex_attention import create_block_mask

    from tiledattn.flex import flex_kernel

    q = torch.empty(1, 2, length, head_dim, dtype=torch.bfloat16)
    block_mask = create_block_mask(
        mask_mod, None, None, length, length, device="cpu", BLOCK_SIZE=block_size
    )
    return flex_kernel(q, q, q, score_mod, block_mask)


def test_a_block_masks_mask_mod_becomes_the_kernels_mask_mod_with_its_block_map():
    def window_mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 100)

    plan = _flex_kernel(softcap, window_mask)
    assert not plan.causal
    score_mod = plan.text[plan.text.index("score_mod {") : plan.text.index("mask_mod {")]
    mask_mod = plan.text[plan.text.index("mask_mod {") :]
    assert "math.tanh" in score_mod and "arith.select" not in score_mod
    assert "math.tanh" not in mask_mod and "arith.cmpi sge, %q_idx, %kv_idx" in mask_mod
    assert "arith.select" in mask_mod and "0xFF800000" in mask_mod
    assert "block_map(%blocks : memref<?x?x?x?xi32>)" in plan.text
    # The map: per query block of 128 rows, the full blocks (none: a window
    # of 100 never covers a block), then the partial ones, in key order.
    (bmap,) = plan.captures
    rows = [row[: 2 + row[1]] for row in bmap[0, 0].tolist()]
    assert rows == [[0, 1, 0], [0, 2, 0, 1], [0, 2, 1, 2]]
    # Without a score_mod, the mask_mod alone.
    plan = _flex_kernel(None, window_mask)
    assert "score_mod {" not in plan.text and "mask_mod {" in plan.text


def test_short_tiles_run_the_persistent_schedule():
    # A map that keeps few K/V blocks a query tile (a causal window of 1024
    # keys: at most 9 of 128) runs the persistent short-tile schedule at
    # D = 128; one that keeps many (a prefix of 3000 keys: 24) the default.
    from tiledattn.flex import _SCHEDULES, _SHORT_TILE_SCHEDULES, schedule_blocks

    def window_mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 1024)

    def prefix_mask(b, h, q_idx, kv_idx):
        return kv_idx < 3000

    short = _flex_kernel(None, window_mask, length=4096, head_dim=128)
    assert f"schedule(#tiledattn.schedule<{_SHORT_TILE_SCHEDULES[128]}>)" in short.text
    assert "dynamic_tiles = true" in short.text and "block_map(" in short.text
    long = _flex_kernel(None, prefix_mask, length=4096, head_dim=128)
    assert f"schedule(#tiledattn.schedule<{_SCHEDULES[128]}>)" in long.text
    # Both schedules have the tiles the block map is made for.
    assert schedule_blocks(128, schedule=_SHORT_TILE_SCHEDULES[128]) == schedule_blocks(128)
    # Head dims without a measured short-tile schedule keep theirs.
    assert "dynamic_tiles" not in _flex_kernel(None, window_mask, length=4096).text


def test_short_tiles_can_be_chosen_by_the_caller():
    from torch.nn.attention.flex_attention import create_block_mask

    from tiledattn.flex import flex_kernel

    def window_mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 100)

    q = torch.empty(1, 2, 300, 128, dtype=torch.bfloat16)
    mask = create_block_mask(window_mask, None, None, 300, 300, device="cpu")
    assert "dynamic_tiles" in flex_kernel(q, q, q, None, mask).text
    assert "dynamic_tiles" not in flex_kernel(q, q, q, None, mask, short_tiles=False).text


def test_block_masks_of_other_blocks_apply_the_mask_mod_on_every_block():
    def window_mask(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 100)

    plan = _flex_kernel(softcap, window_mask, block_size=64)
    assert "mask_mod {" in plan.text and "block_map" not in plan.text and not plan.captures
    # Head dim 256 runs tiles of 64 keys: FlexAttention's default blocks do
    # not fit them.
    plan = _flex_kernel(None, window_mask, head_dim=256)
    assert "mask_mod {" in plan.text and "block_map" not in plan.text


@pytest.mark.parametrize(
    "mask_mod, causal",
    [
        (lambda b, h, q_idx, kv_idx: q_idx >= kv_idx, True),
        (lambda b, h, q_idx, kv_idx: kv_idx <= q_idx, True),
        # Not torch's top-left causal: the diagonal is masked too.
        (lambda b, h, q_idx, kv_idx: q_idx > kv_idx, False),
        (lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) & (h >= 0), False),
    ],
    ids=["q>=kv", "kv<=q", "q>kv", "with-head-term"],
)
def test_the_causal_mask_mod_runs_as_a_causal_kernel(mask_mod, causal):
    # The kernels apply the top-left causal mask themselves and skip the
    # blocks above the diagonal; any other mask_mod is applied per score.
    plan = _flex_kernel(softcap, mask_mod)
    assert plan.causal == causal
    assert ("mask_mod {" not in plan.text) == causal
    assert ("into %o, %lse causal" in plan.text) == causal


def test_block_masks_that_cannot_be_honoured_are_refused():
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask

    from tiledattn.flex import flex_kernel

    q = torch.empty(1, 1, 300, 64)
    full = create_block_mask(lambda b, h, i, j: i >= 0, None, None, 300, 300, device="cpu")
    # Block sparsity beyond the mask_mod (here: no mask_mod, one block row
    # empty): tiledattn would compute the dense attention, so it refuses.
    sparse = BlockMask.from_kv_blocks(
        torch.tensor([[[1, 0, 3]]], dtype=torch.int32),
        torch.tensor([[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]], dtype=torch.int32),
        seq_lengths=(300, 300),
    )
    with pytest.raises(UnsupportedInputError, match=r"keeps other blocks than its mask_mod"):
        flex_kernel(q, q, q, softcap, sparse)
    with pytest.raises(UnsupportedInputError, match=r"lengths \(100, 100\) but it was made"):
        short = q[:, :, :100]
        flex_kernel(short, short, short, softcap, full)
    with pytest.raises(TypeError, match=r"expected 'block_mask' to be a torch.nn.attention"):
        flex_kernel(q, q, q, softcap, object())


def test_flex_attention_refuses_other_head_dims_and_dtypes():
    with pytest.raises(
        UnsupportedInputError,
        match=r"expected head dim a positive multiple of 16 up to 256 but got 72",
    ):
        schedule_text(trace_score_mod(softcap), torch.float16, 72, "flex")
    with pytest.raises(
        UnsupportedInputError,
        match="expected value head dim a positive multiple of 16 up to 256 but got 320",
    ):
        schedule_text(trace_score_mod(softcap), torch.float16, 128, "flex", head_dim_v=320)
    # Head dims of part of a 64-column atom run on the tiles of the next
    # whole one: 80 on 128's schedule.
    text = schedule_text(trace_score_mod(softcap), torch.float16, 80, "flex")
    assert "memref<?x?x?x80xf16" in text and "block_n = 128" in text
    with pytest.raises(UnsupportedInputError, match=r"expected dtype float16 or bfloat16"):
        schedule_text(trace_score_mod(softcap), torch.float32, 64, "flex")


def test_constants_print_as_mlir_floats():
    region = trace_score_mod(lambda s, b, h, i, j: s * 2 + 1e-3 - math.inf)
    assert "arith.constant 2.0 : f32" in region
    assert "arith.constant 0.001 : f32" in region
    assert "arith.constant 0x7F800000 : f32" in region


def test_a_machine_without_the_compiler_finds_bundles_compiled_elsewhere(tmp_path, monkeypatch):
    # The GPU machine has no MLIR: what the build machine compiled into the
    # same cache is found by the text alone.
    if not (BUILD / "bin" / "tiledattn-compile").is_file():
        pytest.skip("tiledattn-compile is not built")
    text = schedule_text(trace_score_mod(softcap), torch.bfloat16, 64, "flex")
    compiled = tiledattn.compile(text, cache=tmp_path)
    monkeypatch.setenv("TILEDATTN_COMPILE", str(tmp_path / "no-compiler-here"))
    found = tiledattn.compile(text, cache=tmp_path)
    assert found.path != compiled.path and found.path.parent.name == "by-text"
    assert (found.path / "kernel.cubin").read_bytes() == (
        compiled.path / "kernel.cubin"
    ).read_bytes()
    other = schedule_text(trace_score_mod(alibi), torch.bfloat16, 64, "flex")
    with pytest.raises(tiledattn.CompileError, match=r"nor is there a bundle compiled elsewhere"):
        tiledattn.compile(other, cache=tmp_path)


def test_capture_dtypes_are_the_runtimes():
    # One list in C++ (KernelSpec.h: the compiler names captures' dtypes
    # from it, the runtime checks them against it); flex's torch-to-MLIR map
    # must give exactly those names.
    import re
    from pathlib import Path

    from tiledattn.flex import _CAPTURE_TYPES

    header = Path(__file__).resolve().parents[2] / "include/tiledattn/Runtime/KernelSpec.h"
    text = header.read_text()
    initializer = re.search(r"kCaptureDtypes\[\] = \{([^}]*)\}", text).group(1)
    assert set(_CAPTURE_TYPES.values()) == set(re.findall(r'"(\w+)"', initializer))


@pytest.mark.skipif(
    not (BUILD / "bin" / "tiledattn-compile").is_file(), reason="tiledattn-compile is not built"
)
@pytest.mark.parametrize("head_dim, head_dim_v", [(32, 32), (80, 80), (96, 96), (96, 64)])
def test_head_dims_without_a_bundle_run_on_padded_tiles(head_dim, head_dim_v):
    # scaled_dot_product_attention at a head dim no shipped bundle has runs
    # the tile program's kernel for it (tiles of whole 64-column atoms),
    # compiled once; on meta tensors the whole call runs.
    from tiledattn.attention import _padded_kernel

    q = torch.empty(2, 4, 100, head_dim, dtype=torch.bfloat16, device="meta")
    v = torch.empty(2, 4, 100, head_dim_v, dtype=torch.bfloat16, device="meta")
    for causal in (False, True):
        out = tiledattn.scaled_dot_product_attention(q, q, v, is_causal=causal)
        assert out.shape == (2, 4, 100, head_dim_v) and out.device.type == "meta"
        entry = _padded_kernel(torch.bfloat16, head_dim, head_dim_v, causal)
        assert (entry.head_dim, entry.head_dim_v, entry.causal) == (head_dim, head_dim_v, causal)
    # Not a multiple of 16: no kernel, and the error says which head dims run.
    with pytest.raises(UnsupportedInputError, match=r"head_dim=72"):
        q = torch.empty(2, 4, 100, 72, dtype=torch.bfloat16, device="meta")
        tiledattn.scaled_dot_product_attention(q, q, q)
