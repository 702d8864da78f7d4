"""Numerics and integration of the real kernels on a Hopper GPU.

Skipped (with the reason) without a CUDA device, on a device other than
compute capability 9.0, or when the kernel directory has no bundles. The
criterion, as in the flash-attention tests: against a float64 reference,
max|ours - ref| <= 2 * max|torch eager in the input dtype - ref| + 1e-5, and
the lse within 1e-3 + 1e-4 * |ref| of the float64 logsumexp wherever a call
returns it. The reference is computed before the kernel runs, and the inputs
are checked unchanged after it. The output memory is poisoned (NaN) before
each call, and each check asserts that the output the kernel wrote is one of
the poisoned blocks: otherwise an element the kernel failed to write could
hold a previous call's correct answer.
"""

import concurrent.futures
import functools
import itertools
import json
import math
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
import torch

import tiledattn
from tiledattn import registry

sdpa = tiledattn.scaled_dot_product_attention

DTYPES = [torch.float16, torch.bfloat16]
HEAD_DIMS = [64, 128, 192, 256]
CHUNK = 1024  # query rows per reference block, to bound float64 memory


def _skip_reason():
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    cc = torch.cuda.get_device_capability()
    if cc != (9, 0):
        return f"the kernels target sm_90a but this GPU is compute capability {cc}"
    if not registry.available_kernels():
        return f"no kernel bundles in {tiledattn.kernel_dir()} (build the kernels)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.fixture(autouse=True)
def _prefill_kernels_only(monkeypatch):
    """These tests check the shipped prefill bundles (writes included, by
    poisoned outputs) at every shape, Sq = 1 too: scaled_dot_product_attention's
    decode route is off here (test_gpu_decode.py tests it)."""
    monkeypatch.setattr(tiledattn.decode, "routed", lambda launch: None)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    torch._dynamo.reset()


def per_score(score_mod, scores, first_row=0):
    """`score_mod` on every score of [B, H, Q, K] `scores` (rows from
    `first_row`), vmapped over scalar indices as FlexAttention applies it."""
    fn = score_mod
    for dims in (
        (0, None, None, None, 0),
        (0, None, None, 0, None),
        (0, None, 0, None, None),
        (0, 0, None, None, None),
    ):
        fn = torch.vmap(fn, in_dims=dims)
    batches, heads, rows, keys = scores.shape
    dev = scores.device
    return fn(
        scores,
        torch.arange(batches, device=dev),
        torch.arange(heads, device=dev),
        torch.arange(first_row, first_row + rows, device=dev),
        torch.arange(keys, device=dev),
    )


def reference(q, k, v, causal, scale, score_mod=None):
    """float64 output and lse, plus torch eager in the input dtype.

    Takes [B, H, S, D] tensors; k/v heads are repeated for GQA. `score_mod`,
    if given, maps the scaled scores before the mask, as FlexAttention's
    score_mod(score, b, h, q_idx, kv_idx), called per score as FlexAttention
    does (vmap over scalar indices: `ids[b][kv_idx]` indexes as written).
    """
    ratio = q.shape[1] // k.shape[1]
    if ratio > 1:
        k, v = (t.repeat_interleave(ratio, dim=1) for t in (k, v))
    sq, sk = q.shape[2], k.shape[2]
    out64, lse64, low = [], [], []
    k64, v64 = k.double(), v.double()
    for start in range(0, sq, CHUNK):
        rows = slice(start, min(start + CHUNK, sq))
        mask = None
        if causal:  # top-left: query i sees keys j <= i
            i = torch.arange(rows.start, rows.stop, device=q.device)[:, None]
            mask = torch.arange(sk, device=q.device)[None, :] <= i
        s64 = q[:, :, rows].double() @ k64.transpose(-1, -2) * scale
        slow = (q[:, :, rows] @ k.transpose(-1, -2)) * scale
        if score_mod is not None:
            s64 = per_score(score_mod, s64, rows.start)
            slow = per_score(score_mod, slow, rows.start).to(slow.dtype)
        if mask is not None:
            s64 = s64.masked_fill(~mask, -math.inf)
            slow = slow.masked_fill(~mask, -math.inf)
        lse64.append(torch.logsumexp(s64, dim=-1))
        out64.append(torch.softmax(s64, dim=-1) @ v64)
        low.append(torch.softmax(slow, dim=-1) @ v)
    return torch.cat(out64, 2), torch.cat(lse64, 2), torch.cat(low, 2)


def poison(*shapes_dtypes):
    """Fills blocks of these sizes with NaN and frees them, so that the
    caching allocator hands them to the tensors of the same sizes allocated
    next on this stream, in this order: an element the kernel fails to
    write stays NaN. Returns the blocks' byte spans, for assert_poisoned."""
    blocks = [torch.full(s, math.nan, dtype=d, device="cuda") for s, d in shapes_dtypes]
    spans = [(t.data_ptr(), t.data_ptr() + t.untyped_storage().nbytes()) for t in blocks]
    del blocks
    return spans


def poison_outputs(rows, head_dim_v, dtype):
    """poison() for the outputs of one tiledattn::sdpa_fwd call, in the order
    it allocates them: out ([B * H * Sq, head_dim_v] of the input dtype) and
    lse ([B * H * Sq] float32)."""
    return poison(((rows, head_dim_v), dtype), ((rows,), torch.float32))


def assert_poisoned(t, spans, what):
    """t's memory lies in one of the blocks poison() filled with NaN."""
    storage = t.untyped_storage()
    start = storage.data_ptr()
    end = start + storage.nbytes()
    assert any(low <= start and end <= high for low, high in spans), (
        f"{what}: the kernel wrote [{start:#x}, {end:#x}), not one of the poisoned "
        f"blocks {[(hex(a), hex(b)) for a, b in spans]}: the call proves nothing "
        "about elements it fails to write"
    )


def snapshot(*tensors):
    return [t.clone() for t in tensors]


def assert_unchanged(before, tensors, what):
    for name, old, new in zip(("q", "k", "v"), before, tensors):
        assert torch.equal(old, new), f"{what}: the kernel changed its input '{name}'"


def check_close(out, ref, low, what=""):
    assert out.shape == ref.shape, f"{what}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    assert torch.isfinite(out).all(), f"{what}: output has NaN/Inf (unwritten or overflow)"
    err = (out.double() - ref).abs().max().item()
    err_low = (low.double() - ref).abs().max().item()
    assert err <= 2 * err_low + 1e-5, (
        f"{what}: max|ours - ref| = {err:.3g} > 2 * max|eager - ref| + 1e-5 = {2 * err_low + 1e-5:.3g}"
    )


def check_out(out, ref, low, what, *, dtype, spans=None):
    """dtype, shape, finiteness and the criterion; with spans, that the kernel
    wrote a poisoned block."""
    assert out.dtype == dtype, f"{what}: output dtype {out.dtype}, expected {dtype}"
    assert out.device == ref.device, f"{what}: output on {out.device}, inputs on {ref.device}"
    if spans is not None:
        assert_poisoned(out, spans, what)
    check_close(out, ref, low, what)


def check_lse(lse, ref_lse, what, *, spans=None):
    assert lse.dtype == torch.float32, f"{what}: lse dtype {lse.dtype}, expected float32"
    assert lse.shape == ref_lse.shape, (
        f"{what}: lse shape {tuple(lse.shape)} != {tuple(ref_lse.shape)}"
    )
    if spans is not None:
        assert_poisoned(lse, spans, f"{what} lse")
    assert torch.isfinite(lse).all(), f"{what}: lse has NaN/Inf (unwritten or overflow)"
    torch.testing.assert_close(
        lse.double(), ref_lse, atol=1e-3, rtol=1e-4, msg=lambda m: f"{what}: lse: {m}"
    )


def make(b, h, s, d, dtype):
    return torch.randn(b, h, s, d, dtype=dtype, device="cuda")


def run_and_check(q, k, v, causal, gqa=False, scale=None, refs=None, what=None):
    """The public call on [B, H, S, D] inputs (heads and batch may
    broadcast), checked against float64 with its output poisoned."""
    what = what or f"q{tuple(q.shape)} k{tuple(k.shape)} causal={causal}"
    before = snapshot(q, k, v)
    default = 1 / math.sqrt(q.shape[-1])
    ref, _, low = refs or reference(q, k, v, causal, default if scale is None else scale)
    spans = poison_outputs(ref.numel() // ref.shape[-1], v.shape[-1], q.dtype)
    out = sdpa(q, k, v, is_causal=causal, scale=scale, enable_gqa=gqa)
    torch.cuda.synchronize()
    assert_unchanged(before, (q, k, v), what)
    check_out(out, ref, low, what, dtype=q.dtype, spans=spans)
    return out


def op_and_check(q, k, v, causal, scale, bundle, what, refs=None):
    """tiledattn::sdpa_fwd on [B, H, S, D] inputs with `bundle`, out and lse
    poisoned and both checked against float64. Returns (out, lse)."""
    before = snapshot(q, k, v)
    ref, ref_lse, low = refs or reference(q, k, v, causal, scale)
    spans = poison_outputs(math.prod(q.shape[:3]), v.shape[-1], q.dtype)
    out, lse = torch.ops.tiledattn.sdpa_fwd(q, k, v, causal, scale, str(bundle))
    torch.cuda.synchronize()
    assert_unchanged(before, (q, k, v), what)
    check_out(out, ref, low, what, dtype=q.dtype, spans=spans)
    check_lse(lse, ref_lse, what, spans=spans)
    return out, lse


# (batch, heads_q, heads_kv, seqlen_q, seqlen_k); long ones keep B*H small.
SHAPES = [
    (1, 1, 1, 1, 1),
    (1, 1, 1, 17, 17),
    (2, 3, 3, 113, 113),
    (1, 2, 2, 1000, 1000),
    (1, 2, 2, 4097, 4097),
    (1, 1, 1, 16384, 16384),
    (1, 2, 2, 1, 17),
    (2, 2, 2, 17, 113),
    (1, 2, 2, 113, 1000),
    (1, 2, 2, 1000, 17),
    (1, 1, 1, 4097, 1000),
    (1, 1, 1, 1000, 4097),
    (1, 1, 1, 1, 16384),
    (8, 16, 16, 128, 128),
    (4, 32, 32, 200, 64),
    (2, 8, 2, 256, 256),  # GQA 4
    (1, 16, 2, 1000, 1000),  # GQA 8
    (2, 8, 1, 113, 300),  # MQA (GQA 8)
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}h{}kv{}q{}k{}".format(*s))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS, ids=lambda d: f"d{d}")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_matches_reference(dtype, head_dim, causal, shape):
    b, hq, hkv, sq, sk = shape
    q, k, v = (
        make(b, hq, sq, head_dim, dtype),
        make(b, hkv, sk, head_dim, dtype),
        make(b, hkv, sk, head_dim, dtype),
    )
    run_and_check(q, k, v, causal, gqa=hq != hkv)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}h{}kv{}q{}k{}".format(*s))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_a_value_head_dim_of_its_own_matches_reference(dtype, causal, shape):
    # DeepSeek's head dims: queries and keys 192, values (and the output) 128.
    b, hq, hkv, sq, sk = shape
    q = make(b, hq, sq, 192, dtype)
    k, v = make(b, hkv, sk, 192, dtype), make(b, hkv, sk, 128, dtype)
    out = run_and_check(q, k, v, causal, gqa=hq != hkv)
    assert out.shape == (b, hq, sq, 128)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_lse_and_op_output(dtype, causal):
    b, hq, hkv, sq, sk, d = 2, 8, 2, 1000, 777, 128
    q, k, v = (
        make(b, hq, sq, d, dtype),
        make(b, hkv, sk, d, dtype),
        make(b, hkv, sk, d, dtype),
    )
    bundle = registry.select(dtype, d, causal, seqlen_k=sk).path
    scale = 0.3
    refs = reference(q, k, v, causal, scale)
    out, lse = op_and_check(q, k, v, causal, scale, bundle, "op", refs=refs)
    assert out.shape == (b, hq, sq, d) and lse.shape == (b, hq, sq)
    public = run_and_check(q, k, v, causal, gqa=True, scale=scale, refs=refs, what="public")
    assert torch.equal(out, public)


@pytest.mark.parametrize("causal", [False, True])
def test_custom_scale(causal):
    q, k, v = (make(2, 4, 300, 64, torch.float16) for _ in range(3))
    run_and_check(q, k, v, causal, scale=0.05)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
def test_bshd_transposed_view(dtype, causal):
    b, s, h, d = 2, 333, 8, 128
    q, k, v = (
        torch.randn(b, s, h, d, dtype=dtype, device="cuda").transpose(1, 2) for _ in range(3)
    )
    assert not q.is_contiguous()
    run_and_check(q, k, v, causal)


@pytest.mark.parametrize("hq, hkv", [(8, 8), (8, 2)])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_qkv_slices(hq, hkv, causal):
    # The output of one QKV projection, [B, S, (Hq + 2 Hkv) * D], sliced
    # and viewed as [B, H, S, D] with no copy.
    b, s, d, dtype = 2, 517, 64, torch.bfloat16
    qkv = torch.randn(b, s, (hq + 2 * hkv) * d, dtype=dtype, device="cuda")
    q, k, v = qkv.split([hq * d, hkv * d, hkv * d], dim=-1)
    q = q.view(b, s, hq, d).transpose(1, 2)
    k = k.view(b, s, hkv, d).transpose(1, 2)
    v = v.view(b, s, hkv, d).transpose(1, 2)
    assert k.data_ptr() != qkv.data_ptr() and k.stride() == (
        s * (hq + 2 * hkv) * d,
        d,
        (hq + 2 * hkv) * d,
        1,
    )
    run_and_check(q, k, v, causal, gqa=hq != hkv)


def test_3d_and_5d_inputs():
    f16 = torch.float16
    q3, k3, v3 = (torch.randn(3, 100, 64, dtype=f16, device="cuda") for _ in range(3))
    before = snapshot(q3, k3, v3)
    ref, _, low = reference(q3.unsqueeze(1), k3.unsqueeze(1), v3.unsqueeze(1), False, 1 / 8)
    spans = poison_outputs(3 * 100, 64, f16)
    out3 = sdpa(q3, k3, v3)
    torch.cuda.synchronize()
    assert_unchanged(before, (q3, k3, v3), "3-D")
    assert out3.shape == (3, 100, 64)
    check_out(out3, ref.squeeze(1), low.squeeze(1), "3-D", dtype=f16, spans=spans)

    q5, k5, v5 = (torch.randn(2, 3, 4, 50, 64, dtype=f16, device="cuda") for _ in range(3))
    before = snapshot(q5, k5, v5)
    flat = [t.reshape(6, 4, 50, 64) for t in (q5, k5, v5)]
    ref, _, low = reference(*flat, True, 1 / 8)
    spans = poison_outputs(6 * 4 * 50, 64, f16)
    out5 = sdpa(q5, k5, v5, is_causal=True)
    torch.cuda.synchronize()
    assert_unchanged(before, (q5, k5, v5), "5-D")
    assert out5.shape == (2, 3, 4, 50, 64)
    check_out(out5.reshape(6, 4, 50, 64), ref, low, "5-D", dtype=f16, spans=spans)


def test_non_default_stream():
    q0, k0, v0 = (make(2, 8, 2048, 128, torch.bfloat16) for _ in range(3))
    ref, _, low = reference(q0, k0, v0, True, 1 / math.sqrt(128))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        # The inputs are written on the side stream after a delay: a kernel
        # launched on any other stream would read them unwritten.
        torch.cuda._sleep(50_000_000)
        q, k, v = q0.clone(), k0.clone(), v0.clone()
        # Poisoned on the side stream: its outputs come from that stream's pool.
        spans = poison_outputs(2 * 8 * 2048, 128, torch.bfloat16)
        out = sdpa(q, k, v, is_causal=True)
        done = torch.cuda.Event()
        done.record(stream)
    done.synchronize()
    assert_unchanged((q0, k0, v0), (q, k, v), "side stream")
    check_out(out, ref, low, "side stream", dtype=torch.bfloat16, spans=spans)


def test_repeated_calls_are_bitwise_identical():
    q, k, v = (
        make(2, 16, 1500, 128, torch.float16),
        make(2, 4, 1500, 128, torch.float16),
        make(2, 4, 1500, 128, torch.float16),
    )
    refs = reference(q, k, v, True, 1 / math.sqrt(128))
    # Every result stays alive, so no call can be handed a block that holds
    # an earlier call's answer: each writes a freshly poisoned one.
    results = [
        run_and_check(q, k, v, True, gqa=True, refs=refs, what=f"call {i + 1}") for i in range(4)
    ]
    assert len({out.data_ptr() for out in results}) == len(results)
    for i, out in enumerate(results[1:]):
        assert torch.equal(out, results[0]), f"call {i + 2} differs from the first"


def test_cuda_graph_capture_and_replay():
    shape = (2, 8, 1024, 64)
    q, k, v = (make(*shape, torch.float16) for _ in range(3))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up, as torch.cuda.graphs asks
        sdpa(q, k, v, is_causal=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = sdpa(q, k, v, is_causal=True)
    for i in range(2):
        for t in (q, k, v):
            t.copy_(torch.randn_like(t))
        before = snapshot(q, k, v)
        ref, _, low = reference(q, k, v, True, 1 / 8)
        out.fill_(math.nan)  # the graph's own output block, poisoned
        graph.replay()
        torch.cuda.synchronize()
        assert_unchanged(before, (q, k, v), f"graph replay {i + 1}")
        check_out(out, ref, low, f"graph replay {i + 1}", dtype=torch.float16)


def test_first_load_during_capture(tmp_path):
    # A bundle at a new path has no module yet: it is loaded inside capture.
    bundle = tmp_path / "copy"
    shutil.copytree(registry.select(torch.bfloat16, 128, False).path, bundle)
    kernel = tiledattn.compile(bundle)
    q, k, v = (make(1, 4, 500, 128, torch.bfloat16) for _ in range(3))
    before = snapshot(q, k, v)
    ref, _, low = reference(q, k, v, False, 1 / math.sqrt(128))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = kernel(q, k, v)
    out.fill_(math.nan)  # the graph's own output block, poisoned
    graph.replay()
    torch.cuda.synchronize()
    assert_unchanged(before, (q, k, v), "loaded under capture")
    check_out(out, ref, low, "loaded under capture", dtype=torch.bfloat16)


@pytest.mark.parametrize("dynamic", [None, True])
def test_torch_compile_fullgraph(dynamic):
    def block(q, k, v):
        return sdpa(q, k, v, is_causal=True, enable_gqa=True).transpose(1, 2).flatten(2) * 0.5

    compiled = torch.compile(block, fullgraph=True, dynamic=dynamic)
    for sq in (256, 1000):
        q, k, v = (
            make(2, 8, sq, 64, torch.bfloat16),
            make(2, 2, sq, 64, torch.bfloat16),
            make(2, 2, sq, 64, torch.bfloat16),
        )
        # The eager attention, checked and kept alive: the compiled graph's
        # attention output cannot be handed its block. That output is an
        # intermediate of the graph, so its poisoned block cannot be checked.
        eager = run_and_check(q, k, v, True, gqa=True)
        poison_outputs(2 * 8 * sq, 64, torch.bfloat16)
        out = compiled(q, k, v)
        assert out.dtype == torch.bfloat16 and out.shape == (2, sq, 8 * 64)
        assert torch.equal(out, eager.transpose(1, 2).flatten(2) * 0.5)


def test_compiled_kernel_matches_registry_kernel():
    entry = registry.select(torch.float16, 64, True, seqlen_k=300)
    kernel = tiledattn.compile(entry.path)
    q, k, v = (make(2, 4, 300, 64, torch.float16) for _ in range(3))
    before = snapshot(q, k, v)
    refs = reference(q, k, v, True, 1 / 8)
    spans = poison_outputs(2 * 4 * 300, 64, torch.float16)
    out = kernel(q, k, v)
    torch.cuda.synchronize()
    assert_unchanged(before, (q, k, v), "compiled kernel")
    check_out(out, refs[0], refs[2], "compiled kernel", dtype=torch.float16, spans=spans)
    assert torch.equal(out, run_and_check(q, k, v, True, refs=refs))


def test_gradients_flow_on_gpu():
    # The values: test_gpu_backward.py; here, that backward runs at all.
    q = make(1, 2, 64, 64, torch.float16).requires_grad_()
    out = sdpa(q, q.detach(), q.detach())
    out.float().sum().backward()
    assert q.grad.shape == q.shape and torch.isfinite(q.grad).all()


def test_fallback_on_gpu():
    q, k, v = (make(1, 2, 64, 96, torch.float16) for _ in range(3))  # no d96 bundle
    tiledattn.attention._warned.clear()
    with pytest.warns(UserWarning, match="falling back"):
        out = sdpa(q, k, v, fallback=True)
    torch.testing.assert_close(out, torch.nn.functional.scaled_dot_product_attention(q, k, v))


def test_runtime_checks_at_the_op_boundary():
    bundle = str(registry.select(torch.float16, 128, False).path)
    q = make(1, 2, 64, 64, torch.float16)
    with pytest.raises(
        RuntimeError,
        match=r"expected 'q' to have head dim 128 \(bundle 'sdpa_fwd_f16_d128'\) but got 64",
    ):
        torch.ops.tiledattn.sdpa_fwd(q, q, q, False, 0.1, bundle)
    q = make(1, 2, 64, 128, torch.float16)
    with pytest.raises(
        RuntimeError,
        match=r"is_causal is true but bundle 'sdpa_fwd_f16_d128' has mask 'none'",
    ):
        torch.ops.tiledattn.sdpa_fwd(q, q, q, True, 0.1, bundle)
    with pytest.raises(
        RuntimeError,
        match=r"expected 'k' to have dtype Half \(bundle 'sdpa_fwd_f16_d128' is compiled "
        r"for f16\) but got BFloat16",
    ):
        torch.ops.tiledattn.sdpa_fwd(q, q.bfloat16(), q, False, 0.1, bundle)
    for scale in (math.nan, math.inf, -math.inf):
        with pytest.raises(
            RuntimeError, match=rf"expected a finite 'scale' but got {re.escape(str(scale))}"
        ):
            torch.ops.tiledattn.sdpa_fwd(q, q, q, False, scale, bundle)
    flat = torch.empty(2 * 64 * 128 + 1, dtype=torch.float16, device="cuda")
    odd = flat[1:].view(1, 2, 64, 128)
    with pytest.raises(RuntimeError, match=r"expected 'q' to be 16-byte aligned"):
        torch.ops.tiledattn.sdpa_fwd(odd, q, q, False, 0.1, bundle)
    with pytest.raises(
        RuntimeError, match=r"expected 'v' to be a CUDA tensor but got a tensor on cpu"
    ):
        torch.ops.tiledattn.sdpa_fwd(q, q, q.cpu(), False, 0.1, bundle)


class _Block(torch.nn.Module):
    """A pre-norm transformer block with grouped-query attention, the way
    model code calls F.scaled_dot_product_attention: one fused QKV
    projection, BSHD views transposed to BHSD, causal."""

    def __init__(self, dim=512, heads=8, kv_heads=2, attention=None):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, (heads + 2 * kv_heads) * self.head_dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim)
        )
        self.attention = attention or torch.nn.functional.scaled_dot_product_attention

    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, self.heads + 2 * self.kv_heads, self.head_dim)
        q, k, v = qkv.split([self.heads, self.kv_heads, self.kv_heads], dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # views, no copies
        a = self.attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, -1))
        return x + self.mlp(self.norm2(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_drop_in_for_a_transformer_block(dtype):
    """The README's promise: swap F.scaled_dot_product_attention for
    tiledattn's in a model and get the same outputs within tolerance."""
    torch_block = _Block().cuda().to(dtype).eval()
    ours = _Block(attention=sdpa).cuda().to(dtype).eval()
    ours.load_state_dict(torch_block.state_dict())
    gold = _Block().cuda().double().eval()
    gold.load_state_dict(torch_block.state_dict())
    x = torch.randn(2, 333, 512, device="cuda", dtype=dtype)
    with torch.no_grad():
        ref = gold(x.double())
        err_torch = (torch_block(x).double() - ref).abs().max().item()
        err_ours = (ours(x).double() - ref).abs().max().item()
    assert math.isfinite(err_ours)
    assert err_ours <= 2 * err_torch + 1e-5, (err_ours, err_torch)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_long_keys_take_their_bundle(dtype):
    # D=64 causal ships a bundle for long keys (seqlen_k >= its
    # min_seqlen_k); the public call must take it from there on and the
    # general one below.
    name = registry.dtype_name(dtype)
    longs = [
        e
        for e in registry.kernels()
        if (e.dtype, e.head_dim, e.causal) == (name, 64, True) and e.min_seqlen_k
    ]
    if not longs:
        pytest.skip("the kernel dir has no D=64 causal bundle for long keys")
    start = longs[0].min_seqlen_k
    long_entry = registry.select(dtype, 64, True, seqlen_k=start)
    short_entry = registry.select(dtype, 64, True, seqlen_k=start - 1)
    assert long_entry.name == longs[0].name
    assert not short_entry.has_length_range
    q, k, v = (make(1, 3, start, 64, dtype) for _ in range(3))
    refs = reference(q, k, v, True, 1 / 8)
    out = run_and_check(q, k, v, causal=True, refs=refs)
    direct, _ = op_and_check(q, k, v, True, 1 / 8, long_entry.path, long_entry.name, refs=refs)
    assert torch.equal(out, direct)


@pytest.mark.parametrize(
    "shape",
    [(2, 3, 3, 113, 113), (1, 2, 2, 1000, 2100), (2, 4, 2, 1000, 1000), (1, 2, 2, 300, 1000)],
)
def test_every_bundle_is_right_at_any_length(runtime, shape):
    # A length range only says where a bundle is fastest: each bundle in
    # the kernel dir must be right everywhere, inside its range or not.
    b, hq, hkv, sq, sk = shape
    for entry in registry.kernels():
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        q = make(b, hq, sq, entry.head_dim, dtype)
        k = make(b, hkv, sk, entry.head_dim, dtype)
        v = make(b, hkv, sk, entry.head_dim_v, dtype)
        scale = 1 / math.sqrt(entry.head_dim)
        what = f"{entry.name} q{tuple(q.shape)} k{tuple(k.shape)}"
        op_and_check(q, k, v, entry.causal, scale, entry.path, what)


@pytest.mark.parametrize("scale", [-0.3, -0.05, 0.0], ids=["minus0.3", "minus0.05", "zero"])
def test_every_bundle_takes_any_finite_scale(runtime, scale):
    # torch's SDPA takes any finite scale. A negative one turns the row
    # maximum into the minimum and the -inf of masked keys into +inf, so
    # the op runs it as -scale on -q; 0 makes every key weigh the same.
    # 300 keys: a partly masked last block, and causal diagonals.
    for entry in registry.kernels():
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        q, k = (make(1, 2, 300, entry.head_dim, dtype) for _ in range(2))
        v = make(1, 2, 300, entry.head_dim_v, dtype)
        q = q * 8  # wide score ranges: overflow if the shift were wrong
        what = f"{entry.name} scale={scale}"
        op_and_check(q, k, v, entry.causal, scale, entry.path, what)
    q, k, v = (make(2, 4, 300, 128, torch.bfloat16) for _ in range(3))
    for causal in (False, True):
        run_and_check(q, k, v, causal, scale=scale, refs=reference(q, k, v, causal, scale))


# Heads that broadcast: torch's SDPA broadcasts a single key/value head (or a
# single query head, or a batch of one) without enable_gqa; so must we.
BROADCASTS = {
    "kv_one_head": ((2, 6), (2, 1)),
    "q_one_head": ((2, 1), (2, 6)),
    "kv_one_batch": ((2, 6), (1, 6)),
}


@pytest.mark.parametrize("kind", list(BROADCASTS))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS, ids=lambda d: f"d{d}")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_broadcast_without_gqa(dtype, head_dim, causal, kind):
    (bq, hq), (bkv, hkv) = BROADCASTS[kind]
    q = make(bq, hq, 300, head_dim, dtype)
    k, v = (make(bkv, hkv, 517, head_dim, dtype) for _ in range(2))
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.empty(t.shape, device="meta") for t in (q, k, v))
    ).shape
    out = run_and_check(q, k, v, causal, what=f"{kind} q{tuple(q.shape)} k{tuple(k.shape)}")
    assert out.shape == expected == (2, 6, 300, head_dim)


@pytest.mark.parametrize("which", ["kv_heads", "q_heads", "kv_batch"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS, ids=lambda d: f"d{d}")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_stride_zero_expanded_inputs(dtype, head_dim, causal, which):
    # expand() gives a stride of 0 along the expanded dimension: the kernel
    # must read the one head (or batch) for all of them, tensor maps included.
    b, h, sq, sk, d = 2, 6, 300, 517, head_dim
    q_shape, kv_shape = {
        "kv_heads": ((b, h), (b, 1)),
        "q_heads": ((b, 1), (b, h)),
        "kv_batch": ((b, h), (1, h)),
    }[which]
    q = make(*q_shape, sq, d, dtype).expand(b, h, sq, d)
    k, v = (make(*kv_shape, sk, d, dtype).expand(b, h, sk, d) for _ in range(2))
    expanded = [t for t in (q, k, v) if 0 in t.stride()]
    assert len(expanded) == (1 if which == "q_heads" else 2)
    run_and_check(q, k, v, causal, what=f"stride 0 {which}")


ROUNDING_MARGIN = 4


def scores_inputs(kind, dtype, head_dim, shape):
    """q, k, v whose scores are large, shifted or dominated by one key."""
    b, hq, hkv, sq, sk = shape
    d = head_dim
    q = make(b, hq, sq, d, dtype)
    k, v = (make(b, hkv, sk, d, dtype) for _ in range(2))
    if kind == "q_times_20":  # scaled scores with a standard deviation of 20
        q = q * 20
    elif kind in ("shift_up", "shift_down"):
        # Every scaled score shifted by +-100 (exp overflows or underflows
        # without the running max): q and k share coordinate 0.
        q[..., 0] = 16
        k[..., 0] = (100 if kind == "shift_up" else -100) * math.sqrt(d) / 16
    elif kind == "dominant_key":
        # In each (batch, key/value head) one key scores about 20 above the
        # rest for every query: the last key, the first, keys 63 and 64 (on
        # either side of a 64-key block boundary), in turn.
        q[..., 0] = 4
        positions = [sk - 1, 0, 63, 64]
        for i, (bi, hi) in enumerate(itertools.product(range(b), range(hkv))):
            k[bi, hi, positions[i % len(positions)], 0] = 5 * math.sqrt(d)
    else:
        raise ValueError(kind)
    return q, k, v


@pytest.mark.parametrize(
    "shape", [(2, 4, 2, 333, 333), (1, 4, 2, 100, 2100)], ids=["q333k333", "q100k2100"]
)
@pytest.mark.parametrize("kind", ["q_times_20", "shift_up", "shift_down", "dominant_key"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", HEAD_DIMS, ids=lambda d: f"d{d}")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_large_and_shifted_scores(runtime, dtype, head_dim, causal, kind, shape):
    q, k, v = scores_inputs(kind, dtype, head_dim, shape)
    scale = 1 / math.sqrt(head_dim)
    entry = registry.select(dtype, head_dim, causal, seqlen_k=k.shape[2])
    what = f"{kind} {entry.name} q{tuple(q.shape)} k{tuple(k.shape)}"
    refs = reference(q, k, v, causal, scale)
    out, _ = op_and_check(q, k, v, causal, scale, entry.path, what, refs=refs)
    # Eager in the input dtype rounds these large scores coarsely (bf16: a
    # spacing of 4 at 800), so the criterion above allows up to ~100 times
    # the output's own rounding error here. A kernel computing the scores
    # in float32 stays within a few times that rounding error (a CPU
    # emulation of FlashAttention's arithmetic: at most 1.4 times).
    ref = refs[0]
    rounding = (ref.to(dtype).double() - ref).abs().max().item()
    err = (out.double() - ref).abs().max().item()
    assert err <= ROUNDING_MARGIN * rounding + 1e-5, (
        f"{what}: max|ours - ref| = {err:.3g} > {ROUNDING_MARGIN} * max|ref rounded to "
        f"{dtype} - ref| + 1e-5 = {ROUNDING_MARGIN * rounding + 1e-5:.3g}"
    )
    public = run_and_check(q, k, v, causal, gqa=True, refs=refs, what=f"{what} public")
    assert torch.equal(out, public), f"{what}: the public call differs from the op"


def mma_sync_kernel_dir():
    """Where the mma_sync schedules' bundles are built (python/CMakeLists.txt,
    target tiledattn-mma-sync-kernels)."""
    override = os.environ.get("TILEDATTN_MMA_SYNC_KERNEL_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "build" / "kernels-mma_sync"


MMA_SYNC_SCHEDULES = Path(tiledattn.__file__).parent / "schedules" / "mma_sync"


@pytest.mark.parametrize(
    "shape",
    [(2, 3, 3, 113, 113), (1, 4, 2, 1000, 777), (2, 2, 1, 17, 300), (1, 2, 2, 300, 17)],
    ids=lambda s: "b{}h{}kv{}q{}k{}".format(*s),
)
def test_mma_sync_bundles_are_right(runtime, shape):
    # The mma_sync schedules are kept as examples of the other lowering,
    # not shipped: the GPU round builds them into their own directory and
    # runs every one here.
    directory = mma_sync_kernel_dir()
    entries = registry.kernels(directory)
    if not entries:
        pytest.skip(
            f"no mma_sync bundles in {directory} (build target tiledattn-mma-sync-kernels; "
            "TILEDATTN_MMA_SYNC_KERNEL_DIR overrides the directory)"
        )
    # One bundle per schedule, and the float16 form the build derives from
    # each bf16 one (tiledattn_bundles ... F16_FORMS).
    stems = [p.stem for p in MMA_SYNC_SCHEDULES.glob("*.mlir")]
    expected = stems + [s.replace("_bf16_", "_f16_") for s in stems if "_bf16_" in s]
    assert sorted(e.name for e in entries) == sorted(expected), (
        f"{directory} does not hold a bundle for each schedule in {MMA_SYNC_SCHEDULES}"
    )
    b, hq, hkv, sq, sk = shape
    for entry in entries:
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
        q = make(b, hq, sq, entry.head_dim, dtype)
        k, v = (make(b, hkv, sk, entry.head_dim, dtype) for _ in range(2))
        scale = 0.3 if entry.causal else 1 / math.sqrt(entry.head_dim)
        what = f"mma_sync {entry.name} q{tuple(q.shape)} k{tuple(k.shape)}"
        op_and_check(q, k, v, entry.causal, scale, entry.path, what)


def _takes_param(entry, name):
    manifest = json.loads((entry.path / "manifest.json").read_text())
    return any(p["name"] == name for p in manifest["params"])


# (batch, heads, tokens): more tiles than multiprocessors.
_MANY_TILES = (4, 8, 1000)


def test_tile_counter_is_zero_for_every_launch(runtime):
    # dynamic_tiles kernels count tiles on a per-stream counter that the
    # launch's last tile puts back to 0. A count left over would make the
    # next launch skip tiles, leaving the poisoned (NaN) outputs: check
    # back-to-back launches, a second stream and a replayed CUDA graph.
    entries = [e for e in registry.kernels() if _takes_param(e, "tile_counter")]
    if not entries:
        pytest.skip("no bundle in the kernel dir takes a tile counter")
    for entry in entries:
        _check_repeated_launches(entry, _MANY_TILES)


@pytest.mark.parametrize(
    "shape",
    [
        (2, 16, 8192),  # 2048 tiles: a tail of 68 over 132 blocks, 3 per tile
        (4, 16, 1536),  # one or two blocks per tail tile
        (3, 7, 777),  # a tail of fewer K/V steps than blocks: one more round
        (1, 33, 4096),  # 1056 tiles: no tail on 132 multiprocessors
    ],
)
def test_split_tail_workspace_for_every_launch(runtime, shape):
    # split_tail kernels leave partial O in a per-stream workspace whose
    # flags the merging block puts back to 0. A flag left set would let the
    # next launch merge stale values; one never set would hang it.
    entries = [e for e in registry.kernels() if _takes_param(e, "workspace")]
    if not entries:
        pytest.skip("no bundle in the kernel dir takes a workspace (split_tail)")
    for entry in entries:
        _check_repeated_launches(entry, shape)


def _check_repeated_launches(entry, tokens_shape):
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[entry.dtype]
    shape = (*tokens_shape, entry.head_dim)
    q, k, v = (torch.randn(shape, dtype=dtype, device="cuda") for _ in range(3))
    scale = 1 / math.sqrt(entry.head_dim)
    path = str(entry.path)
    before = snapshot(q, k, v)
    ref, ref_lse, low = reference(q, k, v, entry.causal, scale)
    # Every result stays alive, so no launch can be handed a block that
    # holds an earlier launch's answer: each writes a freshly poisoned one.
    results = []

    def launch(what):
        spans = poison_outputs(math.prod(tokens_shape), entry.head_dim_v, dtype)
        out, lse = torch.ops.tiledattn.sdpa_fwd(q, k, v, entry.causal, scale, path)
        assert_poisoned(out, spans, f"{entry.name} {what}")
        assert_poisoned(lse, spans, f"{entry.name} {what} lse")
        results.append((what, out, lse))
        return out, lse

    first, first_lse = launch("first launch")
    torch.cuda.synchronize()
    check_out(first, ref, low, f"{entry.name} first launch", dtype=dtype)
    check_lse(first_lse, ref_lse, f"{entry.name} first launch")
    for i in range(5):
        launch(f"launch {i + 2}")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launch("launch on a second stream")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured, captured_lse = torch.ops.tiledattn.sdpa_fwd(q, k, v, entry.causal, scale, path)
    for i in range(3):
        captured.fill_(math.nan)
        captured_lse.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(captured, first), f"{entry.name}: graph replay {i + 1} differs"
        assert torch.equal(captured_lse, first_lse), (
            f"{entry.name}: graph replay {i + 1} lse differs"
        )
        launch(f"launch after replay {i + 1}")
    torch.cuda.synchronize()
    for what, out, lse in results[1:]:
        assert torch.equal(out, first), f"{entry.name}: {what} differs from the first"
        assert torch.equal(lse, first_lse), f"{entry.name}: {what} lse differs from the first"
    assert_unchanged(before, (q, k, v), entry.name)


# Input types (issue 25): zero-size dimensions, views, a second GPU,
# requires_grad under no_grad (nested jagged tensors: test_gpu_varlen.py).

ZERO_SIZE = [
    # (query shape, key/value shape, enable_gqa)
    ((0, 4, 128, 64), (0, 4, 128, 64), False),  # B = 0
    ((2, 0, 128, 64), (2, 0, 128, 64), False),  # H = 0
    ((2, 4, 0, 64), (2, 4, 128, 64), False),  # Sq = 0
    ((2, 4, 128, 64), (2, 4, 0, 64), False),  # Sk = 0: zero rows
    ((2, 8, 128, 128), (2, 2, 0, 128), True),  # Sk = 0, GQA
    ((2, 4, 0, 64), (2, 4, 0, 64), False),
    ((0, 128, 64), (0, 128, 64), False),  # 3-D
]


@pytest.mark.parametrize("q_shape, kv_shape, gqa", ZERO_SIZE, ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_zero_size_dims_on_gpu(monkeypatch, q_shape, kv_shape, gqa, causal):
    def no_launch(self):
        raise AssertionError("a kernel was launched for an empty input")

    monkeypatch.setattr(tiledattn.attention._Launch, "run", no_launch)
    q = torch.randn(q_shape, dtype=torch.bfloat16, device="cuda")
    k, v = (torch.randn(kv_shape, dtype=torch.bfloat16, device="cuda") for _ in range(2))
    out = sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)
    # torch's shape (from its meta kernel: its CPU kernel dies with SIGFPE on
    # zero heads) and its values: an empty result, or zeros without keys.
    shape = torch.nn.functional.scaled_dot_product_attention(
        *(t.to("meta") for t in (q, k, v)), is_causal=causal, enable_gqa=gqa
    ).shape
    assert (out.shape, out.dtype, out.device) == (shape, q.dtype, q.device)
    assert torch.equal(out, torch.zeros_like(out))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_no_keys_match_torch_on_gpu(causal):
    q = make(2, 4, 33, 128, torch.float16)
    k = v = make(2, 4, 0, 128, torch.float16)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert torch.equal(sdpa(q, k, v, is_causal=causal), expected)


# Views the kernel takes without a copy, on real data (the transposed BSHD
# view, fused QKV slices and stride-0 expansions have tests above).
GPU_VIEWS = {
    "seqlen_slice": lambda d, dt: make(2, 4, 303, d, dt)[:, :, 3:],
    "every_other_head": lambda d, dt: make(2, 8, 300, d, dt)[:, ::2],
    "every_other_row": lambda d, dt: make(2, 4, 600, d, dt)[:, :, ::2],
    "batch_slice": lambda d, dt: make(4, 4, 300, d, dt)[1:3],
    "head_dim_slice": lambda d, dt: make(2, 4, 300, 2 * d, dt)[..., d:],
    "odd_stride_on_a_size_1_dim": lambda d, dt: make(2, 1, 300, d, dt).as_strided(
        (2, 1, 300, d), (300 * d, 3, d, 1)
    ),
}


@pytest.mark.parametrize("view", list(GPU_VIEWS))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128], ids=lambda d: f"d{d}")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_views_the_kernel_takes_on_gpu(dtype, head_dim, causal, view):
    q, k, v = (GPU_VIEWS[view](head_dim, dtype) for _ in range(3))
    assert q._base is not None  # a view of a larger tensor, not a copy
    run_and_check(q, k, v, causal, what=f"{view} view")


@pytest.mark.parametrize(
    "view",
    [
        lambda: make(2, 4, 300, 128, torch.bfloat16)[..., ::2],
        lambda: make(2, 4, 64, 300, torch.bfloat16).transpose(-1, -2),
        lambda: make(2, 4, 300, 64, torch.bfloat16).contiguous(memory_format=torch.channels_last),
    ],
    ids=["last_dim_step_2", "transposed_last_dims", "channels_last"],
)
def test_views_the_kernel_refuses_fall_back_on_gpu(view):
    q = view()
    k, v = (make(2, 4, 300, 64, torch.bfloat16) for _ in range(2))
    tiledattn.attention._warned.clear()
    with pytest.raises(tiledattn.UnsupportedInputError, match=r"stride 1 in its last dimension"):
        sdpa(q, k, v)
    with pytest.warns(UserWarning, match=r"falling back"):
        out = sdpa(q, k, v, fallback=True)
    torch.testing.assert_close(out, torch.nn.functional.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_requires_grad_inputs_under_no_grad_on_gpu(mode):
    q, k, v = (make(2, 4, 300, 128, torch.bfloat16).requires_grad_() for _ in range(3))
    refs = reference(q.detach(), k.detach(), v.detach(), True, 128**-0.5)
    with mode():
        out = run_and_check(q, k, v, True, refs=refs, what=f"requires_grad under {mode.__name__}")
    assert not out.requires_grad


def _second_gpu_skip_reason():
    if torch.cuda.device_count() < 2:
        return f"needs two GPUs; this machine has {torch.cuda.device_count()}"
    if torch.cuda.get_device_capability(1) != (9, 0):
        return f"cuda:1 is compute capability {torch.cuda.get_device_capability(1)}"
    return None


@pytest.mark.skipif(_second_gpu_skip_reason() is not None, reason=str(_second_gpu_skip_reason()))
@pytest.mark.parametrize("head_dim", [64, 128, 256], ids=lambda d: f"d{d}")
def test_second_gpu(head_dim):
    """Inputs on cuda:1 while cuda:0 is current: the runtime's device guard
    loads, allocates and launches on cuda:1, on its current stream, and
    leaves cuda:0 current. Run on cuda:0 first, so the kernel is loaded
    there and must be loaded again for cuda:1."""
    dtype = torch.bfloat16
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        with torch.cuda.device(0):
            q, k, v = (
                torch.randn(2, 4, 333, head_dim, dtype=dtype, device=device) for _ in range(3)
            )
            ref, _, low = reference(q, k, v, True, head_dim**-0.5)
            with torch.cuda.device(device):
                spans = poison_outputs(2 * 4 * 333, head_dim, dtype)
            out = sdpa(q, k, v, is_causal=True)
            assert torch.cuda.current_device() == 0
        torch.cuda.synchronize(device)
        check_out(out, ref, low, f"inputs on {device}", dtype=dtype, spans=spans)
    with pytest.raises(tiledattn.InvalidInputError, match=r"on one device but got cuda:1, cuda:0"):
        sdpa(q, k.to("cuda:0"), v)
    side = torch.cuda.Stream(device="cuda:1")
    with torch.cuda.stream(side):
        q, k, v = (torch.randn(1, 2, 200, head_dim, dtype=dtype, device="cuda:1") for _ in range(3))
        out = sdpa(q, k, v)
    side.synchronize()
    ref, _, low = reference(q, k, v, False, head_dim**-0.5)
    check_out(out, ref, low, "cuda:1 side stream", dtype=dtype)


def test_concurrent_first_calls_from_threads_and_streams(tmp_path):
    # Eight Python threads make the first call of a bundle at the same time,
    # each on its own CUDA stream (a multi-threaded server's first requests):
    # the runtime's locked caches load the bundle for all of them, and every
    # result is right. The public call and a compiled kernel both take part.
    bundle = tmp_path / "copy"
    shutil.copytree(registry.select(torch.bfloat16, 128, True).path, bundle)
    kernel = tiledattn.compile(bundle)
    inputs = [
        tuple(make(1, 4, 300 + 17 * i, 128, torch.bfloat16) for _ in range(3)) for i in range(8)
    ]
    refs = [reference(q, k, v, True, 1 / math.sqrt(128)) for q, k, v in inputs]
    start = threading.Barrier(len(inputs))

    def work(i):
        q, k, v = inputs[i]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())  # the inputs are written
        start.wait()
        with torch.cuda.stream(stream):
            call = kernel if i % 2 else functools.partial(sdpa, enable_gqa=False)
            out = call(q, k, v, is_causal=True)
        stream.synchronize()
        return out

    with concurrent.futures.ThreadPoolExecutor(len(inputs)) as pool:
        outs = list(pool.map(work, range(len(inputs))))
    assert len({out.data_ptr() for out in outs}) == len(outs)
    for i, (out, (ref, _, low)) in enumerate(zip(outs, refs)):
        check_close(out, ref, low, f"thread {i}")


def test_a_repeated_call_takes_its_plan_and_checks_alignment_again():
    from tiledattn import attention

    q, k, v = (make(2, 4, 100, 64, torch.bfloat16) for _ in range(3))
    first = tiledattn.scaled_dot_product_attention(q, k, v)
    assert attention._plan_key(q, k, v, False, None, False) in attention._plans
    again = tiledattn.scaled_dot_product_attention(q, k, v)
    assert torch.equal(first, again)
    # The same layout at a pointer 4 bytes off: refused as without a plan.
    storage = torch.empty(q.numel() + 8, dtype=q.dtype, device="cuda")
    shifted = storage[2 : 2 + q.numel()].view(q.shape).copy_(q)
    with pytest.raises(tiledattn.UnsupportedInputError, match=r"'query' to be \d+-byte aligned"):
        tiledattn.scaled_dot_product_attention(shifted, k, v)
