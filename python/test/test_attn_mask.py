"""scaled_dot_product_attention's attn_mask on the CPU: what is refused and
how (torch's rules, clear errors), the kernel text each mask kind gets, and
meta tensors through the whole call (the GPU tests: test_gpu_masks.py)."""

import pytest
import torch

import tiledattn
from tiledattn.compiler import CompileError, compiler_path
from tiledattn.errors import InvalidInputError, UnsupportedInputError
from tiledattn.masks import (
    block_map,
    cached_block_map,
    compact_mask,
    mask_kernel_text,
    mask_score_mod,
)

META = dict(device="meta", dtype=torch.bfloat16)

# A call with a mask compiles its kind's kernel (on meta tensors too): on a
# machine without the compiler (the GPU machine) those tests skip.
try:
    _NO_COMPILER = None if compiler_path().is_file() else f"{compiler_path()} is not a file"
except CompileError as error:
    _NO_COMPILER = str(error)
needs_compiler = pytest.mark.skipif(_NO_COMPILER is not None, reason=str(_NO_COMPILER))


def qkv(b=2, h=4, lq=100, lk=120, d=64):
    return (
        torch.empty(b, h, lq, d, **META),
        torch.empty(b, h, lk, d, **META),
        torch.empty(b, h, lk, d, **META),
    )


@pytest.mark.parametrize(
    "mask, kwargs, error, message",
    [
        (
            [[True]],
            {},
            TypeError,
            r"expected 'attn_mask' to be a torch.Tensor or None but got list",
        ),
        (
            torch.empty(100, 120, dtype=torch.bool, device="meta"),
            {"is_causal": True},
            InvalidInputError,
            r"expected 'attn_mask' to be None when is_causal=True",
        ),
        (
            torch.empty(100, 120, dtype=torch.int32, device="meta"),
            {},
            InvalidInputError,
            r"to have dtype torch.bool \(True: keep\) or a float dtype .* but got torch.int32",
        ),
        (
            torch.empty(100, 120, dtype=torch.float16, device="meta"),
            {},
            InvalidInputError,
            r"to have dtype torch.float32 or the query's dtype torch.bfloat16 \(torch's rule\) "
            r"but got torch.float16",
        ),
        (
            torch.empty(100, 120, dtype=torch.bool),
            {},
            InvalidInputError,
            r"expected 'attn_mask' on meta \(the device of 'query'\) but got cpu",
        ),
        (
            torch.empty(3, 1, 100, 120, dtype=torch.bool, device="meta"),
            {},
            InvalidInputError,
            r"to broadcast to the attention scores' shape \(B, H, L, S\) = \(2, 4, 100, 120\) "
            r"but got shape \(3, 1, 100, 120\)",
        ),
    ],
    ids=["list", "with-is-causal", "int32", "other-half-type", "other-device", "shape"],
)
def test_bad_masks_are_named(mask, kwargs, error, message):
    with pytest.raises(error, match=message):
        tiledattn.scaled_dot_product_attention(*qkv(), attn_mask=mask, **kwargs)


def test_inputs_of_five_dimensions_with_a_mask_are_refused():
    q = torch.empty(2, 2, 4, 100, 64, **META)
    mask = torch.empty(100, 100, dtype=torch.bool, device="meta")
    with pytest.raises(UnsupportedInputError, match=r"inputs of 3 or 4 dimensions"):
        tiledattn.scaled_dot_product_attention(q, q, q, attn_mask=mask)


@pytest.mark.parametrize(
    "shape",
    [(2, 4, 100, 120), (2, 1, 100, 120), (1, 4, 1, 120), (100, 120), (120,)],
    ids=lambda s: "x".join(map(str, s)),
)
@pytest.mark.parametrize("dtype", [torch.bool, torch.bfloat16, torch.float32])
@needs_compiler
def test_every_broadcast_shape_runs_on_meta_tensors(shape, dtype):
    mask = torch.empty(shape, dtype=dtype, device="meta")
    out = tiledattn.scaled_dot_product_attention(*qkv(), attn_mask=mask)
    assert out.shape == (2, 4, 100, 64) and out.device.type == "meta"


@needs_compiler
def test_three_dimensional_inputs_take_a_batch_of_masks():
    q = torch.empty(3, 100, 64, **META)
    k = torch.empty(3, 140, 64, **META)
    mask = torch.empty(3, 100, 140, dtype=torch.bool, device="meta")
    assert tiledattn.scaled_dot_product_attention(q, k, k, attn_mask=mask).shape == (3, 100, 64)


def test_broadcast_dimensions_are_read_at_0_and_not_copied():
    keys = torch.rand(2, 1, 1, 120) > 0.5
    mask = keys.expand(2, 4, 100, 120)  # Hugging Face's expanded padding mask
    text, captures = mask_kernel_text(mask, (2, 4, 100, 120), False, torch.bfloat16, 64, 64)
    assert captures[0].shape == (2, 1, 1, 120)
    assert captures[0].data_ptr() == keys.data_ptr(), "the expanded mask was copied"
    load = next(line for line in text.splitlines() if "memref.load" in line)
    assert load.split("[")[1].startswith("%b, %v"), load  # batch, then constant 0s
    assert load.rstrip().endswith("%kv_idx] : memref<?x?x?x?xi8>"), load


def test_bool_masks_select_and_float_masks_add():
    keep = mask_score_mod(*compact_mask(torch.ones(4, 4, dtype=torch.bool), (1, 1, 4, 4), False))
    add = mask_score_mod(*compact_mask(torch.zeros(4, 4), (1, 1, 4, 4), False))
    assert keep.__name__ == "attn_mask_keep" and add.__name__ == "attn_mask_add"
    text_keep, _ = mask_kernel_text(
        torch.ones(4, 4, dtype=torch.bool), (1, 1, 4, 4), False, torch.float16, 64, 64
    )
    text_add, _ = mask_kernel_text(torch.zeros(4, 4), (1, 1, 4, 4), False, torch.float16, 64, 64)
    assert "arith.select" in text_keep and "0xFF800000" in text_keep
    assert "arith.addf %score" in text_add and "arith.select" not in text_add


def test_a_mask_falls_back_where_it_cannot_run(monkeypatch):
    # Without the compiler (and no cached kernel), the error says why;
    # fallback=True gives torch's SDPA (here also for the CPU tensors).
    monkeypatch.setenv("TILEDATTN_COMPILE", "/nonexistent/tiledattn-compile")
    monkeypatch.setenv("TILEDATTN_CACHE_DIR", "/nonexistent-cache")
    meta = torch.empty(1, 2, 8, 64, **META)
    with pytest.raises(UnsupportedInputError, match=r"'attn_mask' runs on a kernel compiled"):
        tiledattn.scaled_dot_product_attention(
            meta, meta, meta, attn_mask=torch.empty(8, 8, dtype=torch.bool, device="meta")
        )
    q, k, v = (torch.randn(1, 2, 8, 64, dtype=torch.bfloat16) for _ in range(3))
    mask = torch.rand(8, 8) > 0.3
    mask[:, 0] = True
    with pytest.raises(UnsupportedInputError, match=r"to be CUDA tensors"):
        tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with pytest.warns(UserWarning, match=r"falling back"):
        out = tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=mask, fallback=True)
    torch.testing.assert_close(
        out, torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    )


def test_block_map_lists_full_then_partial_blocks():
    # One query block of 4 rows, keys in blocks of 2 (the last one ragged):
    # block 0 kept whole, block 1 partly, block 2 not at all, block 3 whole,
    # block 4 (key 8 only) whole but past the keys' end.
    keep = torch.zeros(4, 9, dtype=torch.bool)
    keep[:, 0:2] = True
    keep[1, 2] = True
    keep[:, 6:9] = True
    mask, _ = compact_mask(keep, (1, 1, 4, 9), False)
    assert block_map(mask, (1, 1, 4, 9), 4, 2).tolist() == [[[[2, 4, 0, 3, 1, 4, 2]]]]
    # As an additive mask: zeros leave a block unchanged, other finite
    # values make it partial, -inf masks.
    add = torch.where(keep, 0.0, float("-inf"))
    add[0, 7] = 0.5
    mask, _ = compact_mask(add, (1, 1, 4, 9), False)
    assert block_map(mask, (1, 1, 4, 9), 4, 2).tolist() == [[[[1, 4, 0, 1, 3, 4, 2]]]]
    # Rows past the queries' end neither keep a block nor spoil a full one.
    mask, _ = compact_mask(torch.ones(5, 8, dtype=torch.bool), (1, 1, 5, 8), False)
    assert block_map(mask, (1, 1, 5, 8), 4, 4).tolist() == [[[[2, 2, 0, 1], [2, 2, 0, 1]]]]
    # A query block no key reaches lists block 0, partial.
    mask, _ = compact_mask(torch.zeros(4, 9, dtype=torch.bool), (1, 1, 4, 9), False)
    assert block_map(mask, (1, 1, 4, 9), 4, 2)[0, 0, 0, :3].tolist() == [0, 1, 0]


def _attention_by_map(q, k, v, mask, varies, bmap, block_m, block_n, scale):
    """What the kernel computes from a block map, in float64: per query
    block only the listed K/V blocks, the mask (as its score_mod) and the
    keys' end applied on the partial ones; a full block's keys past the end
    would count (TMA reads them as zeros); rows with nothing kept give
    zeros."""
    batches, heads, length_q, _ = q.shape
    length_k = k.shape[2]
    padded = -(-length_k // block_n) * block_n
    k = torch.nn.functional.pad(k, (0, 0, 0, padded - length_k))
    v = torch.nn.functional.pad(v, (0, 0, 0, padded - length_k))
    scores = scale * q @ k.transpose(-1, -2)
    additive = mask if mask.dtype != torch.bool else torch.where(mask, 0.0, float("-inf"))
    additive = additive.double().expand(batches, heads, length_q, length_k)
    out = torch.zeros(batches, heads, length_q, v.shape[-1], dtype=torch.float64)
    for b in range(batches):
        for h in range(heads):
            for m in range(-(-length_q // block_m)):
                entry = bmap[b if bmap.shape[0] > 1 else 0, h if bmap.shape[1] > 1 else 0, m]
                full, listed = entry[0].item(), entry[1].item()
                rows = slice(m * block_m, min(length_q, (m + 1) * block_m))
                s = torch.full((rows.stop - rows.start, padded), float("-inf"), dtype=torch.float64)
                for n, block in enumerate(entry[2 : 2 + listed].tolist()):
                    keys = slice(block * block_n, (block + 1) * block_n)
                    s[:, keys] = scores[b, h, rows, keys]
                    if n >= full:
                        inside = slice(keys.start, min(length_k, keys.stop))
                        s[:, inside] += additive[b, h, rows, inside]
                        s[:, length_k:] = float("-inf")
                p = torch.softmax(s, -1).nan_to_num(0.0)
                out[b, h, rows] = p @ v[b, h // (heads // k.shape[1])]
    return out


MAP_SHAPES = [(2, 3, 50, 45), (2, 1, 50, 45), (1, 3, 1, 45), (50, 45), (45,), (2, 1, 50, 1)]


@pytest.mark.parametrize("shape", MAP_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kind", ["bool", "additive"])
def test_a_block_map_computes_what_the_mask_says(shape, kind):
    # Against the dense masked softmax, in float64, with tiles small enough
    # for every kind of block: full, partial, skipped, ragged at both ends.
    gen = torch.Generator().manual_seed(hash((shape, kind)) % 2**31)
    scores_shape = (2, 3, 50, 45)
    q, k, v = (torch.randn(2, 3, n, 16, generator=gen, dtype=torch.float64) for n in (50, 45, 45))
    # Runs of kept keys (padding, documents) leave whole blocks kept or masked.
    runs = torch.rand(shape, generator=gen).cumsum(-1) % 3 < 2
    if kind == "bool":
        mask = runs
        mask.view(-1)[: min(mask.numel(), 30)] = False  # some rows with no key
    else:
        mask = torch.where(runs, 0.0, float("-inf"))
        mask = torch.where(torch.rand(shape, generator=gen) < 0.05, 0.25, mask)
    compacted, varies = compact_mask(mask, scores_shape, False)
    for block_m, block_n in [(16, 8), (64, 64), (8, 16)]:
        bmap = block_map(compacted, scores_shape, block_m, block_n)
        got = _attention_by_map(q, k, v, compacted, varies, bmap, block_m, block_n, 0.25)
        additive = mask if kind == "additive" else torch.where(mask, 0.0, float("-inf"))
        p = torch.softmax(0.25 * q @ k.transpose(-1, -2) + additive, -1).nan_to_num(0.0)
        torch.testing.assert_close(got, p @ v, rtol=1e-12, atol=1e-12)


def test_a_block_map_skips_blocks():
    # Key padding, 25% of the keys masked at the end: a quarter of the
    # blocks is skipped, and all the others are full.
    keep = torch.ones(2, 1, 1, 1024, dtype=torch.bool)
    keep[..., 768:] = False
    mask, _ = compact_mask(keep, (2, 16, 1024, 1024), False)
    bmap = block_map(mask, (2, 16, 1024, 1024), 128, 128)
    assert bmap.shape == (2, 1, 8, 10)
    assert (bmap[..., 0] == 6).all() and (bmap[..., 1] == 6).all()
    assert bmap[0, 0, 0, 2:8].tolist() == [0, 1, 2, 3, 4, 5]


def test_block_maps_are_kept_per_mask_until_it_changes():
    keep = torch.rand(2, 1, 1, 300) > 0.3
    mask, _ = compact_mask(keep, (2, 4, 200, 300), False)
    first = cached_block_map(keep, mask, (2, 4, 200, 300), (128, 128))
    assert cached_block_map(keep, mask, (2, 4, 200, 300), (128, 128)) is first
    assert cached_block_map(keep, mask, (2, 4, 200, 300), (128, 64)) is not first
    keep[0, 0, 0, :] = False  # in place: a new version
    mask, _ = compact_mask(keep, (2, 4, 200, 300), False)
    again = cached_block_map(keep, mask, (2, 4, 200, 300), (128, 128))
    assert again is not first and not torch.equal(again, first)
    other = keep.clone()  # equal values, another tensor
    assert cached_block_map(other, mask, (2, 4, 200, 300), (128, 128)) is not again


def test_the_mask_kernel_reads_a_block_map():
    keep = torch.rand(2, 1, 1, 120) > 0.5
    text, captures = mask_kernel_text(keep, (2, 4, 100, 120), False, torch.bfloat16, 128, 128)
    assert "%blocks: memref<?x?x?x?xi32>" in text
    assert "block_map(%blocks : memref<?x?x?x?xi32>)" in text
    assert captures[1].dtype == torch.int32 and captures[1].shape == (2, 1, 1, 3)
