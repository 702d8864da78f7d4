"""Kernel selection by (dtype, head dim, causal). CPU only."""

import json

import bundles
import pytest
import torch

import tiledattn
from tiledattn import registry
from tiledattn.errors import UnsupportedInputError


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, "f16", "bfloat16"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_select_picks_the_matching_bundle(fake_kernel_dir, dtype, head_dim, causal):
    entry = registry.select(dtype, head_dim, causal)
    short = registry.dtype_name(dtype)
    assert entry.name == f"sdpa_fwd_{short}_d{head_dim}" + ("_causal" if causal else "")
    assert (entry.dtype, entry.head_dim, entry.causal) == (short, head_dim, causal)
    assert entry.path == fake_kernel_dir.resolve() / entry.name


def test_available_kernels(fake_kernel_dir):
    assert sorted(tiledattn.available_kernels()) == sorted(
        f"sdpa_fwd_{t}_d{d}{c}" for t in ("f16", "bf16") for d in (64, 128) for c in ("", "_causal")
    )


def test_no_bundle(fake_kernel_dir):
    with pytest.raises(UnsupportedInputError, match=r"head_dim=256 .*causal=True"):
        registry.select(torch.float16, 256, True)
    with pytest.raises(UnsupportedInputError, match=r"expected dtype float16 or bfloat16"):
        registry.select(torch.float32, 64, False)


def test_empty_kernel_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEDATTN_KERNEL_DIR", str(tmp_path / "none"))
    registry.refresh()
    assert tiledattn.available_kernels() == []
    with pytest.raises(UnsupportedInputError, match=r"available: none"):
        registry.select("f16", 64, False)


def test_canonical_name_wins(fake_kernel_dir):
    # An experimental bundle for the same inputs does not displace the shipped one.
    bundles.make_bundle(fake_kernel_dir, "f16", 64, False, name="aaa_experiment")
    (fake_kernel_dir / "sdpa_fwd_f16_d64").rename(fake_kernel_dir / "zzz")
    registry.refresh()
    # Selection goes by manifest, not directory name.
    assert registry.select("f16", 64, False).name == "sdpa_fwd_f16_d64"
    assert "also matching: aaa_experiment" in registry.explain("f16", 64, False)


def test_selection_is_remembered_until_refresh(fake_kernel_dir):
    first = registry.select("bf16", 128, True)
    assert registry.select("bf16", 128, True) is first  # no new scan
    (fake_kernel_dir / first.name).rename(fake_kernel_dir / "moved")
    assert registry.select("bf16", 128, True) is first
    registry.refresh()
    moved = registry.select("bf16", 128, True)
    assert moved.path == (fake_kernel_dir / "moved").resolve()


def test_explain(fake_kernel_dir):
    text = registry.explain(torch.bfloat16, 128, True)
    assert "inputs: dtype=bf16 head_dim=128 head_dim_v=128 causal=True" in text
    assert "selected: sdpa_fwd_bf16_d128_causal" in text
    assert "block_m=64 block_n=64 threads=128" in text
    assert "selected: none (no bundle matches)" in registry.explain("f16", 96, False)


def test_bad_manifests_are_skipped_and_explained(fake_kernel_dir):
    bad = bundles.make_bundle(fake_kernel_dir, "f16", 64, False, name="broken")
    (bad / "manifest.json").write_text(
        json.dumps(bundles.manifest("f16", 64, False, format_version=2))
    )
    registry.refresh()
    assert "broken" not in tiledattn.available_kernels()
    assert "field 'format_version': expected 1 but found 2" in registry.explain("f16", 64, False)


def test_read_bundle_names_file_and_field(tmp_path):
    bundle = bundles.make_bundle(tmp_path, head_dim="64")
    with pytest.raises(
        tiledattn.InvalidInputError,
        match=r"manifest\.json: field 'head_dim': expected an integer but found \"64\"",
    ):
        registry.read_bundle(bundle)
    m = bundles.manifest()
    del m["causal"]
    (bundle / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(tiledattn.InvalidInputError, match=r"missing required field 'causal'"):
        registry.read_bundle(bundle)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
def test_select_head_dim_256(hopper_kernel_dir, dtype, causal):
    entry = registry.select(dtype, 256, causal)
    assert entry.name == f"sdpa_fwd_{dtype}_d256" + ("_causal" if causal else "")
    assert [t["operand"] for t in entry.tensor_maps] == ["q", "k", "v"]
    assert entry.required_alignment == 16
    assert entry.manifest["threads"] == 384
    assert registry.supported_head_dims(dtype, causal) == [64, 128, 256]


def test_unsupported_head_dim_lists_the_supported_ones(hopper_kernel_dir):
    with pytest.raises(
        UnsupportedInputError,
        match=r"no kernel bundle for dtype=bf16 head_dim=96 head_dim_v=96 causal=True in .*; "
        r"supported head dims for dtype=bf16 causal=True: 64, 128, 256 \(available: ",
    ):
        registry.select("bf16", 96, True)


def test_supported_head_dims_follow_the_kernel_dir(fake_kernel_dir):
    assert registry.supported_head_dims("f16", False) == [64, 128]
    with pytest.raises(UnsupportedInputError, match=r"supported head dims .*: 64, 128 \("):
        registry.select("f16", 256, False)


def test_required_alignment(tmp_path):
    # TMA needs 16 bytes even if a manifest asks for less.
    entry = registry.read_bundle(bundles.make_bundle(tmp_path, tma=True, alignment_bytes=4))
    assert (entry.alignment_bytes, entry.required_alignment) == (4, 16)
    plain = registry.read_bundle(bundles.make_bundle(tmp_path / "plain"))
    assert (plain.tensor_maps, plain.required_alignment) == ([], 4)


def test_explain_names_tma(hopper_kernel_dir):
    assert "threads=384 tma=q,k,v" in registry.explain("f16", 256, False)


def test_length_ranges_select_by_seqlen_k(fake_kernel_dir):
    # A bundle meant for long keys wins there; the one without a range runs
    # the rest and is what select() without a length gives.
    bundles.make_bundle(
        fake_kernel_dir, "f16", 64, True, name="sdpa_fwd_f16_d64_causal_long", min_seqlen_k=2048
    )
    bundles.make_bundle(
        fake_kernel_dir,
        "f16",
        64,
        True,
        name="sdpa_fwd_f16_d64_causal_mid",
        min_seqlen_k=1024,
        max_seqlen_k=1536,
    )
    registry.refresh()
    pick = lambda n: registry.select("f16", 64, True, seqlen_k=n).name  # noqa: E731
    assert pick(4096) == pick(2048) == "sdpa_fwd_f16_d64_causal_long"
    assert pick(1024) == pick(1536) == "sdpa_fwd_f16_d64_causal_mid"
    assert pick(1) == pick(1023) == pick(1537) == pick(2047) == "sdpa_fwd_f16_d64_causal"
    assert registry.select("f16", 64, True).name == "sdpa_fwd_f16_d64_causal"
    # Other inputs are untouched by the ranges.
    assert registry.select("f16", 64, False, seqlen_k=4096).name == "sdpa_fwd_f16_d64"
    text = registry.explain("f16", 64, True, seqlen_k=3000)
    assert "seqlen_k=3000" in text
    assert "selected: sdpa_fwd_f16_d64_causal_long" in text
    assert "for seqlen_k >= 2048" in text
    assert "for 1024 <= seqlen_k <= 1536" in text


def test_length_range_without_a_general_bundle(fake_kernel_dir):
    import shutil

    shutil.rmtree(fake_kernel_dir / "sdpa_fwd_bf16_d128")
    bundles.make_bundle(
        fake_kernel_dir, "bf16", 128, False, name="sdpa_fwd_bf16_d128_long", min_seqlen_k=2048
    )
    registry.refresh()
    assert registry.select("bf16", 128, False, seqlen_k=2048).name == "sdpa_fwd_bf16_d128_long"
    with pytest.raises(
        UnsupportedInputError,
        match=r"no kernel bundle for seqlen_k=100 .*sdpa_fwd_bf16_d128_long: seqlen_k >= 2048",
    ):
        registry.select("bf16", 128, False, seqlen_k=100)
    assert "no bundle's length range holds seqlen_k=100" in registry.explain(
        "bf16", 128, False, seqlen_k=100
    )


def test_attention_selects_by_key_length(fake_kernel_dir):
    from tiledattn import attention

    bundles.make_bundle(
        fake_kernel_dir, "bf16", 64, True, name="sdpa_fwd_bf16_d64_causal_long", min_seqlen_k=2048
    )
    registry.refresh()
    long_path, _ = attention._select_bundle("bf16", 64, 64, True, 2048)
    short_path, _ = attention._select_bundle("bf16", 64, 64, True, 2047)
    assert long_path.endswith("sdpa_fwd_bf16_d64_causal_long")
    assert short_path.endswith("sdpa_fwd_bf16_d64_causal")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"min_seqlen_k": 0}, r"field 'min_seqlen_k': expected a positive integer .* found 0"),
        ({"max_seqlen_k": "8k"}, r"field 'max_seqlen_k': expected a positive integer .* \"8k\""),
        ({"min_seqlen_k": True}, r"field 'min_seqlen_k': expected a positive integer .* true"),
        (
            {"min_seqlen_k": 4096, "max_seqlen_k": 2048},
            r"fields 'min_seqlen_k', 'max_seqlen_k': expected min <= max but found 4096 and 2048",
        ),
    ],
)
def test_bad_length_range_names_the_field(tmp_path, fields, message):
    with pytest.raises(tiledattn.InvalidInputError, match=message):
        registry.read_bundle(bundles.make_bundle(tmp_path, **fields))


def test_tile_ir_bundles_are_well_formed():
    # The bundles compiled through the tile program (build/kernels-tile-ir,
    # checked on the GPU by test_gpu_tile_ir.py) read like the shipped ones:
    # one per file in schedules/tile_ir, TMA maps for q, k and v (and o, with
    # boxes of a warpgroup's 64 rows, for tma_store), a block of 128 threads
    # per warpgroup, no spills, a grid of one block per tile or, persistent,
    # at most one per multiprocessor (tiledattn.for_each_tile).
    from pathlib import Path

    directory = Path(__file__).resolve().parents[2] / "build" / "kernels-tile-ir"
    entries = registry.kernels(directory)
    if not entries:
        pytest.skip(f"no tile-IR bundles in {directory} (build target tiledattn-tile-ir-kernels)")
    sources = Path(tiledattn.__file__).parent / "schedules" / "tile_ir"
    assert sorted(e.name for e in entries) == sorted(p.stem for p in sources.glob("*.mlir"))
    for entry in entries:
        manifest = json.loads((entry.path / "manifest.json").read_text())
        maps = [m["operand"] for m in manifest["tensor_maps"]]
        stores = "tma_store = true" in manifest["schedule"]
        assert maps == ["q", "k", "v"] + (["o"] if stores else []), entry.name
        if stores:
            assert manifest["tensor_maps"][3]["box"] == [64, 64], entry.name
        assert manifest["threads"] % 128 == 0 and manifest["threads"] >= 256, entry.name
        assert manifest["resources"]["spill_stores"] == 0, entry.name
        tiles = "ceil_div(seqlen_q, block_m)"
        if "persistent = true" in manifest["schedule"]:
            tiles = f"min({tiles} * heads_q * batch, multiprocessors)"
        assert manifest["grid"]["x"] == tiles, entry.name
    assert any("persistent = true" in e.manifest["schedule"] for e in entries)
    assert any("tma_store = true" in e.manifest["schedule"] for e in entries)


def test_score_mod_kernels_are_never_picked_for_plain_attention(fake_kernel_dir):
    # A kernel that changes the scores (a softcap, a bias) computes
    # something else than the attention a plain call asks for.
    bundles.make_bundle(
        fake_kernel_dir, "f16", 96, False, name="softcap_f16_d96", score_mod="^bb0(...)"
    )
    registry.refresh()
    entry = next(e for e in registry.kernels() if e.name == "softcap_f16_d96")
    assert entry.score_mod == "^bb0(...)" and not entry.is_plain_attention
    assert 96 not in registry.supported_head_dims(torch.float16, False)
    with pytest.raises(UnsupportedInputError, match=r"head_dim=96"):
        registry.select(torch.float16, 96, False)


def test_score_mod_must_be_text(fake_kernel_dir):
    bundles.make_bundle(fake_kernel_dir, "f16", 96, False, name="bad_f16_d96", score_mod=3)
    registry.refresh()
    assert "bad_f16_d96" not in [e.name for e in registry.kernels()]
    assert "field 'score_mod': expected a string" in registry.explain(torch.float16, 96, False)


def test_a_bundle_from_before_the_shared_memory_fix_is_refused(tmp_path):
    # Before tiledattn-extern-dynamic-shared-memory (1e2ce23) LLVM printed the
    # dynamic shared memory as a static beside the mbarriers, under the first
    # tile: such a bundle gives NaN rows under load, so it is refused by name.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False)
    ptx = bundle / "kernel.ptx"
    ptx.write_text(
        "// __dynamic_shmem__0 has been demoted\n"
        + ptx.read_text().replace("{", "{\n\t.shared .align 16 .b8 __dynamic_shmem__0;", 1)
    )
    with pytest.raises(
        tiledattn.InvalidInputError,
        match=r"manifest\.json: expected a bundle whose dynamic shared memory is declared "
        r"extern, but kernel\.ptx has it as a static beside the mbarriers .* compile the "
        r"schedule again",
    ):
        registry.read_bundle(bundle)


def test_every_built_bundle_declares_its_shared_memory_extern():
    # What the build compiled (shipped, by-text, tile-IR, sanitizer and
    # mma_sync bundles) reads without the refusal above...
    from pathlib import Path

    build = Path(__file__).resolve().parents[2] / "build"
    dirs = ["kernels", "kernels/by-text", "kernels-tile-ir", "kernels-sanitize", "kernels-mma_sync"]
    found = [p.parent for d in dirs for p in (build / d).glob("*/manifest.json")]
    if not found:
        pytest.skip(f"no bundles under {build} (run scripts/setup.sh)")
    for bundle in found:
        entry = registry.read_bundle(bundle)
        # and whose warp roles got their register budgets: tiledattn-compile
        # builds again with .maxnreg where ptxas drops setmaxnreg (C7508), so
        # a bundle that says it was dropped means that retry stopped working.
        assert not entry.manifest["resources"].get("setmaxnreg_ignored"), bundle
