"""The runtime's TMA tensor maps: checks and cuTensorMapEncodeTiled arguments.

tiledattn::tensor_map_info runs the checks sdpa_fwd runs before it encodes a
bundle's tensor maps and returns the arguments it would pass to the driver;
it needs the runtime library but no GPU (CPU tensors have data pointers).
"""

import json
import re

import bundles
import pytest
import torch

import tiledattn


@pytest.fixture(autouse=True)
def _runtime(runtime):
    return runtime


def tensor_maps(bundle, q, k, v):
    return json.loads(torch.ops.tiledattn.tensor_map_info(q, k, v, str(bundle)))


def rejects(pattern):
    return pytest.raises(RuntimeError, match=re.compile(pattern, re.DOTALL))


def qkv(b=2, hq=16, hkv=4, sq=1000, sk=777, d=128, dtype=torch.bfloat16):
    q = torch.empty(b, hq, sq, d, dtype=dtype)
    k = torch.empty(b, hkv, sk, d, dtype=dtype)
    return q, k, torch.empty_like(k)


@pytest.mark.parametrize("dtype, name", [(torch.bfloat16, "BFLOAT16"), (torch.float16, "FLOAT16")])
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_contiguous_operands(tmp_path, dtype, name, head_dim):
    short = "bf16" if dtype == torch.bfloat16 else "f16"
    bundle = bundles.make_bundle(tmp_path, short, head_dim, False, tma=True)
    q, k, v = qkv(d=head_dim, dtype=dtype)
    maps = tensor_maps(bundle, q, k, v)
    assert [m["operand"] for m in maps] == ["q", "k", "v"]
    rows = 176 if head_dim <= 128 else 80
    for m, t, box_rows in zip(maps, (q, k, v), (128, rows, rows)):
        assert m["data_type"] == f"CU_TENSOR_MAP_DATA_TYPE_{name}"
        assert m["rank"] == 4
        assert m["global_address"] == t.data_ptr()
        assert m["global_dim"] == list(reversed(t.shape))
        b, h, s, d = t.shape
        assert m["global_strides"] == [d * 2, s * d * 2, h * s * d * 2]
        assert m["box_dim"] == [64, box_rows, 1, 1]
        assert m["element_strides"] == [1, 1, 1, 1]
        assert m["interleave"] == "CU_TENSOR_MAP_INTERLEAVE_NONE"
        assert m["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B"
        assert m["l2_promotion"] == "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"
        assert m["oob_fill"] == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"


def test_bshd_views_and_fused_qkv(tmp_path):
    # A fused QKV projection [B, S, 3 * H * D] viewed as three BSHD tensors,
    # each transposed to [B, H, S, D]: strides, not copies.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    b, s, h, d = 2, 300, 8, 128
    fused = torch.empty(b, s, 3, h, d, dtype=torch.bfloat16)
    q, k, v = (fused[:, :, i].transpose(1, 2) for i in range(3))
    maps = tensor_maps(bundle, q, k, v)
    row = 3 * h * d * 2
    for m, t in zip(maps, (q, k, v)):
        assert m["global_dim"] == [d, s, h, b]
        assert m["global_strides"] == [row, d * 2, s * row]
        assert m["global_address"] == t.data_ptr()


def test_output_map_follows_the_allocated_output(tmp_path):
    # tma_store kernels take a map of the output the runtime allocates:
    # [B, Hq, Sq, head_dim] like q, contiguous, boxes of 64 x 64.
    maps = [
        {"operand": "q", "box": [64, 128], "swizzle": 128},
        {"operand": "o", "box": [64, 64], "swizzle": 128},
    ]
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True, tensor_maps=maps)
    q, k, v = qkv(b=2, hq=16, sq=1000, d=128)
    q = q.transpose(1, 2).contiguous().transpose(1, 2)  # q itself BSHD-strided
    mq, mo = tensor_maps(bundle, q, k, v)
    assert mo["operand"] == "o"
    assert mo["global_dim"] == [128, 1000, 16, 2]
    assert mo["global_strides"] == [128 * 2, 1000 * 128 * 2, 16 * 1000 * 128 * 2]
    assert mo["box_dim"] == [64, 64, 1, 1]
    assert mo["global_address"] != q.data_ptr()
    assert mq["global_strides"] == [16 * 128 * 2, 128 * 2, 1000 * 16 * 128 * 2]


@pytest.mark.parametrize("swizzle, name", [(0, "NONE"), (32, "32B"), (64, "64B"), (128, "128B")])
def test_swizzle_modes(tmp_path, swizzle, name):
    maps = [{"operand": "k", "box": [max(swizzle, 16) // 2, 64], "swizzle": swizzle}]
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True, tensor_maps=maps)
    (m,) = tensor_maps(bundle, *qkv())
    assert m["operand"] == "k" and m["swizzle"] == f"CU_TENSOR_MAP_SWIZZLE_{name}"
    assert m["box_dim"] == [max(swizzle, 16) // 2, 64, 1, 1]


def test_kernels_without_tensor_maps(tmp_path):
    assert tensor_maps(bundles.make_bundle(tmp_path, "bf16", 128), *qkv()) == []


def test_broadcast_heads_have_stride_zero(tmp_path):
    # A single key/value head broadcast to all query heads (stride 0) is a
    # valid TMA stride.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    q, k, v = qkv(hkv=1)
    k, v = k.expand(2, 16, 777, 128), v.expand(2, 16, 777, 128)
    maps = tensor_maps(bundle, q, k, v)
    assert maps[1]["global_strides"] == [256, 0, 777 * 256]


def misaligned(t, elements):
    """`t`'s shape, `elements` elements past a fresh allocation's start."""
    flat = torch.empty(t.numel() + elements, dtype=t.dtype)
    return flat[elements:].view(t.shape)


def test_misaligned_data_pointer(tmp_path):
    # 4-byte aligned passes the bundle's old alignment_bytes; TMA needs 16.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True, alignment_bytes=4)
    q, k, v = qkv()
    with rejects(
        r"tiledattn\.sdpa_fwd: expected 'k' to be 16-byte aligned for its TMA tensor map "
        r"but its data pointer is 0x[0-9a-f]*[02468ace]4"
    ):
        tensor_maps(bundle, q, misaligned(k, 2), v)


def test_misaligned_strides(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True, alignment_bytes=4)
    q, k, _ = qkv()
    v = torch.empty(2, 4, 777, 130, dtype=torch.bfloat16)[..., :128]
    with rejects(
        r"expected the strides of 'v' in dims 0 to 2 to be multiples of 8 elements "
        r"\(16 bytes\) for its TMA tensor map but got strides \[404040, 101010, 130, 1\]"
    ):
        tensor_maps(bundle, q, k, v)


def test_alignment_bytes_16_checks_first(tmp_path):
    # With the alignment_bytes the compiler writes for TMA kernels, the
    # generic check already names the requirement.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    q, k, _ = qkv()
    v = torch.empty(2, 4, 777, 132, dtype=torch.bfloat16)[..., :128]
    with rejects(r"strides of 'v' to be multiples of 8 elements \(16-byte alignment\)"):
        tensor_maps(bundle, q, k, v)


def meta(shape, strides):
    """A bf16 meta tensor (data pointer 0): shapes too large to allocate."""
    return torch.empty(1, dtype=torch.bfloat16, device="meta").as_strided(shape, strides)


def test_huge_strides(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    q = meta((1, 16, 1000, 128), (2048000, 128000, 128, 1))
    # Batch and head strides (which TMA encodes even for size 1) of 2^40 bytes.
    k = meta((1, 1, 777, 128), (2**39, 2**39, 128, 1))
    with rejects(
        r"expected the strides of 'k' to be below 2\^40 bytes for its TMA tensor map but "
        r"got strides \[549755813888, 549755813888, 128, 1\] \(2-byte elements\)"
    ):
        tensor_maps(bundle, q, k, k)


def test_huge_dims(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    q = meta((2**32, 16, 1000, 128), (0, 128000, 128, 1))
    k = meta((2**32, 4, 777, 128), (0, 0, 128, 1))
    with rejects(
        r"expected every dimension of 'q' to be in \[1, 2\^32\) for its TMA tensor map but "
        r"got shape \[4294967296, 16, 1000, 128\]"
    ):
        tensor_maps(bundle, q, k, k)


def test_the_other_checks_run_first(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    q, k, v = qkv(d=64)
    with rejects(r"expected 'q' to have head dim 128 \(bundle 'sdpa_fwd_bf16_d128'\) but got 64"):
        tensor_maps(bundle, q, k, v)


def test_sdpa_fwd_checks_before_the_driver(tmp_path):
    # On CPU the op stops at the device check, before any tensor map.
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    with rejects(r"expected 'q' to be a CUDA tensor but got a tensor on cpu"):
        torch.ops.tiledattn.sdpa_fwd(*qkv(), False, 0.1, str(bundle))


def test_info_needs_a_bundle(tmp_path):
    with rejects(r"cannot read bundle manifest"):
        tensor_maps(tmp_path / "none", *qkv())


def test_bundle_info_stays_the_public_view(tmp_path):
    bundle = bundles.make_bundle(tmp_path, "bf16", 128, False, tma=True)
    assert json.loads(tiledattn.bundle_info(bundle))["tensor_maps"][0]["box"] == [64, 128]
