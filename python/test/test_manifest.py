"""The runtime's bundle checks (manifest fields, cubin header).

Needs the runtime library (built on CPU machines too) but no GPU: a bad
bundle is rejected before the driver is opened.
"""

import concurrent.futures
import json
import re
import threading

import bundles
import pytest

import tiledattn


@pytest.fixture(autouse=True)
def _runtime(runtime):
    return runtime


def info(bundle):
    return json.loads(tiledattn.bundle_info(bundle))


def rejects(bundle, pattern):
    with pytest.raises(RuntimeError, match=re.compile(pattern, re.DOTALL)):
        tiledattn.bundle_info(bundle)


def test_good_bundle_round_trips(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, True)
    spec = info(bundle)
    expected = bundles.manifest("bf16", 128, True)
    del expected["resources"]  # informational; the runtime does not keep it
    assert spec == expected


def test_persistent_grid_rule_round_trips(tmp_path):
    # What a persistent kernel's manifest says (lib/Target/Bundle.cpp): one
    # block per multiprocessor at most, looping over the tiles.
    grid = {
        "x": "min(ceil_div(seqlen_q, block_m) * heads_q * batch, multiprocessors * 2)",
        "y": "1",
        "z": "1",
    }
    bundle = bundles.make_bundle(tmp_path, grid=grid)
    assert info(bundle)["grid"] == grid


@pytest.mark.parametrize(
    "override, pattern",
    [
        ({"format_version": 2}, r"field 'format_version': expected 1 but found 2"),
        (
            {"target": "sm_80"},
            r"field 'target': expected \"sm_90a\" but found \"sm_80\"",
        ),
        (
            {"dtype": "f32"},
            r"field 'dtype': expected \"f16\" or \"bf16\" but found \"f32\"",
        ),
        (
            {"head_dim": "64"},
            r"field 'head_dim': expected a positive integer but found string \"64\"",
        ),
        ({"head_dim": 0}, r"field 'head_dim': expected a positive integer but found 0"),
        (
            {"head_dim": 64.0},
            r"field 'head_dim': expected a positive integer but found number 64\.000000",
        ),
        (
            {"block_m": 2**63},
            r"field 'block_m': expected a positive integer but found number 9223372036854775808\.0",
        ),
        (
            {"block_n": -(2**63)},
            r"field 'block_n': expected a positive integer but found -9223372036854775808$",
        ),
        ({"causal": None}, r"field 'causal': expected true or false but found null$"),
        ({"causal": 1}, r"field 'causal': expected true or false but found integer 1"),
        (
            {"mask": "alibi"},
            r"field 'mask': expected \"none\" or \"causal_top_left\" but found \"alibi\"",
        ),
        (
            {"mask": "causal_top_left"},
            r"field 'mask': expected \"none\" since field 'causal' is false",
        ),
        (
            {"threads": 2048},
            r"field 'threads': expected at most 1024 threads per block but found 2048",
        ),
        ({"alignment_bytes": 6}, r"field 'alignment_bytes': expected a power of two"),
        (
            {
                "grid": {
                    "x": "ceil_div(seqlen_q, block_q)",
                    "y": "heads_q",
                    "z": "batch",
                }
            },
            r"field 'grid.x': expected a grid rule but found \"ceil_div\(seqlen_q, block_q\)\": unknown variable 'block_q'",
        ),
        ({"grid": {"x": "1", "y": "heads_q"}}, r"missing required field 'grid.z'"),
        (
            {"grid": {"x": "min(seqlen_q)", "y": "1", "z": "1"}},
            r"field 'grid.x': expected a grid rule but found \"min\(seqlen_q\)\": expected ',' in min",
        ),
        (
            {"grid": {"x": "max(batch, 1)", "y": "1", "z": "1"}},
            r"field 'grid.x': expected a grid rule but found \"max\(batch, 1\)\": unknown variable 'max' \(expected one of .*multiprocessors, an integer, ceil_div\(a, b\) or min\(a, b\)\)",
        ),
        (
            {"params": []},
            r"field 'params': expected \[q: memref rank 4 f16, .*scale: f32\] \(then the "
            r"captured tensors capture0, capture1, \.\.\., and optionally tile_counter: "
            r"zeroed_i32 or workspace: zeroed_bytes_per_block\) but found \[\]",
        ),
        (
            {"ptx": "../kernel.ptx"},
            r"field 'ptx': expected a file name inside the bundle directory",
        ),
    ],
)
def test_bad_manifest_field(tmp_path, override, pattern):
    bundle = bundles.make_bundle(tmp_path, **override)
    rejects(bundle, r"manifest\.json: " + pattern)


def test_invalid_utf8_is_named_not_passed_on(tmp_path):
    # nlohmann quotes the bytes it read; a message that is not UTF-8 would
    # reach Python as a UnicodeDecodeError instead of the error.
    bundle = bundles.make_bundle(tmp_path)
    (bundle / "manifest.json").write_bytes(b'{"format_version": "\xff\xfe"}')
    rejects(bundle, r"ill-formed UTF-8 byte; last read: '\"\\xff'$")


def test_file_name_with_a_nul_byte(tmp_path):
    text = json.dumps(bundles.manifest(cubin="kernel.cubin\0x"))  # "\u0000" in JSON
    bundle = bundles.make_bundle(tmp_path, manifest_text=text)
    rejects(bundle, r"field 'cubin': expected a file name inside the bundle directory but found ")


@pytest.mark.parametrize("field", ["kernel", "target", "dtype", "block_m", "params", "ptx"])
def test_missing_field(tmp_path, field):
    m = bundles.manifest()
    del m[field]
    bundle = bundles.make_bundle(tmp_path, manifest_text=json.dumps(m))
    rejects(bundle, rf"manifest\.json: missing required field '{field}'")


def test_wrong_param_dtype(tmp_path):
    m = bundles.manifest("bf16")
    m["params"][4]["dtype"] = "bf16"
    bundle = bundles.make_bundle(tmp_path, manifest_text=json.dumps(m))
    rejects(
        bundle,
        r"field 'params': expected \[.*lse: memref rank 3 f32.*but found \[.*lse: memref rank 3 bf16",
    )


def test_tile_counter_param_round_trips(tmp_path):
    # What a dynamic_tiles kernel's manifest says (lib/Target/Bundle.cpp).
    params = bundles.manifest()["params"] + [{"name": "tile_counter", "kind": "zeroed_i32"}]
    bundle = bundles.make_bundle(tmp_path, params=params)
    assert info(bundle)["params"][-2:] == [
        {"name": "scale", "kind": "f32"},
        {"name": "tile_counter", "kind": "zeroed_i32"},
    ]


def test_workspace_param_round_trips(tmp_path):
    # What a split_tail kernel's manifest says (lib/Target/Bundle.cpp).
    extra = {"name": "workspace", "kind": "zeroed_bytes_per_block", "bytes_per_block": 69640}
    bundle = bundles.make_bundle(tmp_path, params=bundles.manifest()["params"] + [extra])
    assert [(p["name"], p["kind"]) for p in info(bundle)["params"][-2:]] == [
        ("scale", "f32"),
        ("workspace", "zeroed_bytes_per_block"),
    ]


def test_captured_tensor_params_round_trip(tmp_path):
    # What a kernel whose score_mod reads tensors says (lib/Target/Bundle.cpp):
    # capture0, capture1, ... after scale, before a tile counter.
    captures = [
        {"name": "capture0", "kind": "memref", "rank": 2, "dtype": "i32"},
        {"name": "capture1", "kind": "memref", "rank": 1, "dtype": "f32", "layout": "strided"},
    ]
    counter = {"name": "tile_counter", "kind": "zeroed_i32"}
    bundle = bundles.make_bundle(
        tmp_path, params=bundles.manifest()["params"] + captures + [counter]
    )
    params = info(bundle)["params"]
    assert params[6:8] == captures and params[8] == counter


@pytest.mark.parametrize(
    "capture, pattern",
    [
        (
            {"kind": "memref", "rank": 1, "dtype": "c64"},
            r"params\[6\]\.dtype': expected one of \"f32\", .* but found \"c64\"",
        ),
        ({"kind": "f32"}, r"params\[6\]\.kind': expected \"memref\" \(a captured tensor\)"),
        ({"kind": "memref", "rank": 0, "dtype": "f32"}, r"params\[6\]\.rank"),
        (
            {"kind": "memref", "rank": 1, "dtype": "f32", "layout": "column_major"},
            r"params\[6\]\.layout': expected \"strided\" \(any strides\) or no layout",
        ),
    ],
    ids=["dtype", "kind", "rank", "layout"],
)
def test_bad_captured_tensor_param(tmp_path, capture, pattern):
    params = bundles.manifest()["params"] + [{"name": "capture0", **capture}]
    rejects(bundles.make_bundle(tmp_path, params=params), pattern)


def test_captured_tensors_are_numbered_from_0(tmp_path):
    extra = {"name": "capture1", "kind": "memref", "rank": 1, "dtype": "f32"}
    bundle = bundles.make_bundle(tmp_path, params=bundles.manifest()["params"] + [extra])
    rejects(bundle, r"but found \[.*scale: f32, capture1: memref rank 1 f32\]")


@pytest.mark.parametrize("bytes_per_block", [None, 0, "64"])
def test_bad_workspace_param(tmp_path, bytes_per_block):
    extra = {"name": "workspace", "kind": "zeroed_bytes_per_block"}
    if bytes_per_block is not None:
        extra["bytes_per_block"] = bytes_per_block
    bundle = bundles.make_bundle(tmp_path, params=bundles.manifest()["params"] + [extra])
    rejects(bundle, r"params\[6\]\.bytes_per_block")


@pytest.mark.parametrize(
    "extra",
    [
        {"name": "tile_counter", "kind": "i32"},
        {"name": "counter", "kind": "zeroed_i32"},
    ],
)
def test_bad_tile_counter_param(tmp_path, extra):
    bundle = bundles.make_bundle(tmp_path, params=bundles.manifest()["params"] + [extra])
    rejects(
        bundle,
        r"field 'params': expected \[q: .*scale: f32\] \(then the captured tensors "
        r"capture0, capture1, \.\.\., and optionally tile_counter: zeroed_i32 or "
        r"workspace: zeroed_bytes_per_block\) but found "
        r"\[.*scale: f32, " + extra["name"] + ": " + extra["kind"] + r"\]",
    )


@pytest.mark.parametrize(
    "text, pattern",
    [
        (
            "",
            r"not valid JSON: line 1, column 1: unexpected end of input; expected "
            r"'\[', '\{', or a literal \(the file is empty\)$",
        ),
        (
            '{"format_version": 1,}',
            r"not valid JSON: line 1, column 22: unexpected '}'; expected a string key$",
        ),
        ('{"a": 1, "a": 2}', r"not valid JSON: duplicate key \"a\" in the top-level object$"),
        (
            '{"grid": {"x": "1", "y": "1", "x": "2"}}',
            r"duplicate key \"x\" in the object at 'grid'$",
        ),
        (
            '{"tensor_maps": [{}, {"box": 1, "box": 2}]}',
            r"duplicate key \"box\" in the object at 'tensor_maps\[1\]'$",
        ),
        ("[1, 2]", r"expected a JSON object at the top level but found an array"),
        (
            '{"format_version": 1',
            r"line 1, column 21: unexpected end of input; expected ',' or '}' in an object$",
        ),
        ('{"a": [1, 2 3]}', r"line 1, column 13: unexpected number literal; expected ',' or ']'"),
        ('{"a": tru}', r"line 1, column 10: invalid literal; last read: '\"a\": tru}'"),
        ('{"a": 01}', r"line 1, column 8: unexpected number literal; expected ',' or '}'"),
        ('{"a": "\x01"}', r"control character U\+0001 \(SOH\) must be escaped"),
        ('{"a": "\\ud800"}', r"surrogate U\+D800\.\.U\+DBFF must be followed by"),
        ('{"a": 1} x', r"line 1, column 10: .*expected end of input"),
        ('{"a": 1, // comment\n}', r"line 1, column 10: invalid literal"),
        ("[" * 100 + "]" * 100, r"not valid JSON: nesting deeper than 64 levels$"),
        ('{"a": 1e999}', r"not valid JSON: number overflow parsing '1e999'$"),
        ('\ufeff{"a": 1}', r"line 1, column 1: a byte order mark \(U\+FEFF\) before the JSON"),
    ],
)
def test_bad_json(tmp_path, text, pattern):
    rejects(bundles.make_bundle(tmp_path, manifest_text=text), pattern)


def test_missing_manifest(tmp_path):
    rejects(tmp_path, r"cannot read bundle manifest '.*manifest\.json'")


def test_garbage_cubin(tmp_path):
    bundle = bundles.make_bundle(tmp_path, cubin=b"this is not an ELF file")
    rejects(bundle, r"kernel\.cubin: not a cubin: expected the ELF magic 7f 45 4c 46")


def test_empty_cubin(tmp_path):
    bundle = bundles.make_bundle(tmp_path, cubin=b"")
    rejects(bundle, r"not a cubin: .* but found a file of 0 bytes")


def test_truncated_cubin(tmp_path):
    bundle = bundles.make_bundle(tmp_path, cubin=bundles.fake_cubin("x")[:40])
    rejects(
        bundle,
        r"truncated cubin: expected at least 64 bytes of ELF header but found 40",
    )


def test_truncated_section_headers(tmp_path):
    image = bytearray(bundles.fake_cubin("sdpa_fwd_f16_d64"))
    image[40:48] = (4096).to_bytes(8, "little")  # e_shoff
    image[58:60] = (64).to_bytes(2, "little")  # e_shentsize
    image[60:62] = (10).to_bytes(2, "little")  # e_shnum
    bundle = bundles.make_bundle(tmp_path, cubin=bytes(image))
    rejects(
        bundle,
        rf"truncated cubin: its headers end at byte 4736 but the file has {len(image)} bytes",
    )


def test_header_offset_that_wraps_around(tmp_path):
    # e_phoff near 2^64: offset + size wraps to a small number in 64 bits.
    image = bytearray(bundles.fake_cubin("sdpa_fwd_f16_d64"))
    image[32:40] = (2**64 - 16).to_bytes(8, "little")  # e_phoff
    image[54:56] = (56).to_bytes(2, "little")  # e_phentsize
    image[56:58] = (1).to_bytes(2, "little")  # e_phnum
    bundle = bundles.make_bundle(tmp_path, cubin=bytes(image))
    rejects(bundle, r"truncated cubin: its headers end at byte 2\^64 or beyond but the file has")


@pytest.mark.parametrize("kernel", ["fwd_f16_d64", "d64", "sdpa_fwd_f16_d6"])
def test_kernel_name_must_be_a_whole_symbol(tmp_path, kernel):
    # The tail or the head of the cubin's symbol is not the symbol.
    bundle = bundles.make_bundle(
        tmp_path, kernel=kernel, cubin=bundles.fake_cubin("sdpa_fwd_f16_d64")
    )
    rejects(bundle, rf"the cubin does not define kernel '{kernel}' named by the manifest")


def test_not_a_cuda_elf(tmp_path):
    image = bytearray(bundles.fake_cubin("sdpa_fwd_f16_d64"))
    image[18:20] = (62).to_bytes(2, "little")  # EM_X86_64
    bundle = bundles.make_bundle(tmp_path, cubin=bytes(image))
    rejects(bundle, r"expected ELF machine 190 \(EM_CUDA\) but found 62")


def test_cubin_without_the_kernel(tmp_path):
    bundle = bundles.make_bundle(tmp_path, cubin=bundles.fake_cubin("other_kernel"))
    rejects(bundle, r"the cubin does not define kernel 'sdpa_fwd_f16_d64'")


def test_failed_bundle_is_not_cached(tmp_path):
    bundle = bundles.make_bundle(tmp_path, target="sm_80")
    rejects(bundle, r"sm_80")
    bundles.make_bundle(tmp_path)
    assert info(bundle)["target"] == "sm_90a"


# Hopper kernels: TMA tensor maps, 384 threads, ~200 KiB of shared memory.


@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_tma_bundle_round_trips(tmp_path, head_dim):
    bundle = bundles.make_bundle(tmp_path, "bf16", head_dim, False, tma=True)
    spec = info(bundle)
    expected = bundles.tma_manifest("bf16", head_dim, False)
    del expected["resources"]
    assert spec == expected
    assert spec["threads"] == 384 and spec["dynamic_smem_bytes"] == 204800


def test_limits_are_the_hardware_limits(tmp_path):
    spec = info(bundles.make_bundle(tmp_path, threads=1024, dynamic_smem_bytes=232448))
    assert (spec["threads"], spec["dynamic_smem_bytes"]) == (1024, 232448)


def test_empty_tensor_maps_means_none(tmp_path):
    assert "tensor_maps" not in info(bundles.make_bundle(tmp_path, tensor_maps=[]))


def tensor_maps(*maps):
    """tensor_maps with the entries given as (operand, box, swizzle)."""
    return [{"operand": o, "box": b, "swizzle": s} for o, b, s in maps]


@pytest.mark.parametrize(
    "override, pattern",
    [
        (
            {"dynamic_smem_bytes": 232449},
            r"field 'dynamic_smem_bytes': expected at most 232448 bytes \(227 KiB, "
            r"the sm_90 limit per block\) but found 232449",
        ),
        (
            {"tensor_maps": {"operand": "q"}},
            r"field 'tensor_maps': expected an array of tensor maps but found an object",
        ),
        (
            {"tensor_maps": tensor_maps(*[("q", [64, 128], 128)] * 9)},
            r"field 'tensor_maps': expected at most 8 tensor maps but found 9",
        ),
        (
            {"tensor_maps": ["q"]},
            r"field 'tensor_maps\[0\]': expected an object with operand, box and "
            r"swizzle but found string \"q\"",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [64, 128], 128), ("lse", [64, 128], 128))},
            r"field 'tensor_maps\[1\]\.operand': expected \"q\", \"k\", \"v\" or \"o\" but found \"lse\"",
        ),
        (
            {"tensor_maps": [{"operand": 1, "box": [64, 128], "swizzle": 128}]},
            r"field 'tensor_maps\[0\]\.operand': expected a string but found integer 1",
        ),
        (
            {"tensor_maps": [{"operand": "q", "swizzle": 128}]},
            r"missing required field 'tensor_maps\[0\]\.box'",
        ),
        (
            {"tensor_maps": [{"operand": "q", "box": [64, 128]}]},
            r"missing required field 'tensor_maps\[0\]\.swizzle'",
        ),
        (
            {"tensor_maps": [{"operand": "q", "box": [64, 128], "swizzle": 128, "rows": 1}]},
            r"field 'tensor_maps\[0\]': expected only the keys \"operand\", \"box\" and "
            r"\"swizzle\" but found key \"rows\"",
        ),
        (
            {"tensor_maps": tensor_maps(("k", [64, 128, 1], 128))},
            r"field 'tensor_maps\[0\]\.box': expected an array \[box_cols, box_rows\] of "
            r"two integers but found an array of 3 elements",
        ),
        (
            {"tensor_maps": tensor_maps(("k", [64, "128"], 128))},
            r"field 'tensor_maps\[0\]\.box\[1\]': expected an integer in \[1, 256\] but "
            r"found string \"128\"",
        ),
        (
            {"tensor_maps": tensor_maps(("k", [64, 512], 128))},
            r"field 'tensor_maps\[0\]\.box\[1\]': expected an integer in \[1, 256\] \(the "
            r"TMA box limit\) but found 512",
        ),
        (
            {"tensor_maps": tensor_maps(("v", [0, 128], 0))},
            r"field 'tensor_maps\[0\]\.box\[0\]': expected an integer in \[1, 256\] .* but found 0",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [64, 128], 96))},
            r"field 'tensor_maps\[0\]\.swizzle': expected 0, 32, 64 or 128 \(bytes\) but found 96",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [64, 128], -128))},
            r"field 'tensor_maps\[0\]\.swizzle': expected a non-negative integer but found -128",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [128, 128], 128))},
            r"field 'tensor_maps\[0\]\.box\[0\]': expected an inner box of 128 bytes \(the "
            r"swizzle span, 64 f16 elements\) but found box\[0\] = 128 f16 elements = 256 bytes",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [64, 128], 128), ("k", [16, 128], 64))},
            r"field 'tensor_maps\[1\]\.box\[0\]': expected an inner box of 64 bytes \(the "
            r"swizzle span, 32 f16 elements\) but found box\[0\] = 16 f16 elements = 32 bytes",
        ),
        (
            {"tensor_maps": tensor_maps(("q", [12, 128], 0))},
            r"field 'tensor_maps\[0\]\.box\[0\]': expected an inner box that is a multiple "
            r"of 16 bytes but found box\[0\] = 12 f16 elements = 24 bytes",
        ),
    ],
)
def test_bad_tensor_maps(tmp_path, override, pattern):
    bundle = bundles.make_bundle(tmp_path, **override)
    rejects(bundle, r"manifest\.json: " + pattern)


@pytest.mark.parametrize("swizzle, cols", [(0, 8), (0, 256), (32, 16), (64, 32), (128, 64)])
def test_good_swizzles(tmp_path, swizzle, cols):
    maps = tensor_maps(("q", [cols, 64], swizzle))
    assert info(bundles.make_bundle(tmp_path, tensor_maps=maps))["tensor_maps"] == maps


def test_concurrent_first_loads_agree(tmp_path, runtime):
    # Threads that ask for the same new bundles at once (the first calls of
    # a multi-threaded server) each get the bundle, parsed once and alike;
    # a bad bundle fails the same way in every thread.
    good = [bundles.make_bundle(tmp_path / f"b{i}", "bf16", 128, i % 2 == 0) for i in range(4)]
    bad = bundles.make_bundle(tmp_path / "bad", block_m=-1)
    start = threading.Barrier(8)

    def work():
        start.wait()
        seen = [tiledattn.bundle_info(b) for b in good]
        try:
            tiledattn.bundle_info(bad)
            error = None
        except RuntimeError as e:
            error = str(e)
        return seen, error

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = [f.result() for f in [pool.submit(work) for _ in range(8)]]
    assert all(r == results[0] for r in results)
    assert results[0][1] and "block_m" in results[0][1]
    assert [json.loads(s)["causal"] for s in results[0][0]] == [True, False, True, False]
