"""Meta/fake tensors and torch.compile, on CPU.

tiledattn::sdpa_fwd has a Meta kernel, so meta tensors run the whole public
path (validation, bundle selection, the op) without a GPU, and torch.compile
traces it with fake tensors. Needs the runtime library, not a GPU.
"""

import warnings

import pytest
import torch

import tiledattn
from tiledattn.errors import UnsupportedInputError

sdpa = tiledattn.scaled_dot_product_attention


@pytest.fixture(autouse=True)
def _setup(runtime, fake_kernel_dir):
    torch._dynamo.reset()
    tiledattn.attention._warned.clear()


def meta(*shape, dtype=torch.bfloat16, requires_grad=False):
    return torch.empty(*shape, dtype=dtype, device="meta", requires_grad=requires_grad)


def test_op_meta_shapes(fake_kernel_dir):
    q, k = meta(2, 8, 100, 128), meta(2, 2, 300, 128)
    bundle = str(fake_kernel_dir / "sdpa_fwd_bf16_d128")
    out, lse = torch.ops.tiledattn.sdpa_fwd(q, k, k, False, 0.1, bundle)
    assert (out.shape, out.dtype, out.device.type) == (
        (2, 8, 100, 128),
        torch.bfloat16,
        "meta",
    )
    assert (lse.shape, lse.dtype) == ((2, 8, 100), torch.float32)


def test_op_meta_checks_rank(fake_kernel_dir):
    with pytest.raises(RuntimeError, match=r"tiledattn\.sdpa_fwd: expected 'k' to be a 4-D tensor"):
        torch.ops.tiledattn.sdpa_fwd(
            meta(2, 8, 100, 64), meta(8, 100, 64), meta(8, 100, 64), False, 0.1, ""
        )


def test_op_on_cpu_names_the_device(fake_kernel_dir):
    q = torch.zeros(1, 1, 4, 64, dtype=torch.float16)
    with pytest.raises(
        RuntimeError, match=r"expected 'q' to be a CUDA tensor but got a tensor on cpu"
    ):
        torch.ops.tiledattn.sdpa_fwd(q, q, q, False, 0.1, str(fake_kernel_dir / "sdpa_fwd_f16_d64"))


@pytest.mark.parametrize(
    "q_shape, kv_shape, gqa, out_shape",
    [
        ((2, 8, 100, 64), (2, 8, 50, 64), False, (2, 8, 100, 64)),
        ((2, 8, 100, 64), (2, 2, 50, 64), True, (2, 8, 100, 64)),
        ((2, 8, 100, 64), (2, 1, 50, 64), False, (2, 8, 100, 64)),  # broadcast head
        ((5, 100, 128), (5, 50, 128), False, (5, 100, 128)),  # 3-D: one head
        ((2, 3, 4, 17, 64), (2, 3, 4, 9, 64), False, (2, 3, 4, 17, 64)),  # 5-D
        ((2, 4, 17, 64), (1, 4, 9, 64), False, (2, 4, 17, 64)),  # broadcast batch
    ],
)
def test_public_api_on_meta(q_shape, kv_shape, gqa, out_shape):
    out = sdpa(meta(*q_shape), meta(*kv_shape), meta(*kv_shape), enable_gqa=gqa)
    assert out.shape == out_shape and out.device.type == "meta"


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_fullgraph(dynamic):
    def attend(q, k, v):
        return sdpa(q, k, v, is_causal=True, enable_gqa=True) * 2

    compiled = torch.compile(attend, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    q, kv = meta(2, 8, 100, 64), meta(2, 2, 100, 64)
    assert compiled(q, kv, kv).shape == (2, 8, 100, 64)
    assert compiled(meta(1, 8, 33, 64), meta(1, 2, 70, 64), meta(1, 2, 70, 64)).shape == (
        1,
        8,
        33,
        64,
    )


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_with_a_scale_argument(dynamic):
    # A float argument may be traced symbolically: the finite-scale check
    # must not break the graph (the runtime checks the value at launch).
    def attend(q, k, v, scale):
        return sdpa(q, k, v, scale=scale) * 2

    compiled = torch.compile(attend, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    q, kv = meta(2, 8, 100, 64), meta(2, 8, 50, 64)
    for scale in (0.5, 0.25):
        assert compiled(q, kv, kv, scale).shape == (2, 8, 100, 64)


def test_gradients_flow_through_the_op():
    # tiledattn.backward on meta tensors: gradients of the inputs' shapes
    # (their values: test_backward.py; on the GPU: test_gpu.py).
    q = meta(1, 8, 16, 64, requires_grad=True)
    kv = meta(1, 2, 24, 64, requires_grad=True)
    out = sdpa(q, kv, kv, is_causal=True, enable_gqa=True)
    assert "tiledattn" in str(out.grad_fn) or out.grad_fn is not None
    out.sum().backward()
    assert q.grad.shape == q.shape and kv.grad.shape == kv.shape


def test_fallback_when_grad_is_needed():
    # An attn_mask's kernel has no backward: with fallback, torch's SDPA.
    q = meta(1, 2, 16, 64, requires_grad=True)
    mask = torch.ones(16, 16, dtype=torch.bool, device="meta")
    with pytest.raises(UnsupportedInputError, match=r"require grad with an 'attn_mask'"):
        sdpa(q, q, q, attn_mask=mask)
    with pytest.warns(UserWarning, match=r"require grad.*falling back"):
        out = sdpa(q, q, q, attn_mask=mask, fallback=True)
    assert out.grad_fn is not None and "tiledattn" not in type(out.grad_fn).__name__
    with torch.no_grad():
        assert sdpa(q, q, q, attn_mask=mask, fallback=True).shape == (1, 2, 16, 64)


# FakeTensorMode (what torch.compile and shape propagation use) outside
# torch.compile: fake CUDA tensors need no GPU and give fake results.


def test_fake_tensor_mode_gives_fake_results():
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode(), warnings.catch_warnings():
        # Reading a fake tensor's data pointer warns (and is meaningless).
        warnings.simplefilter("error")
        q = torch.empty(2, 8, 100, 64, dtype=torch.bfloat16, device="cuda")
        kv = torch.empty(2, 2, 300, 64, dtype=torch.bfloat16, device="cuda")
        out = sdpa(q, kv, kv, is_causal=True, enable_gqa=True)
        empty = sdpa(q, kv[:, :, :0], kv[:, :, :0], enable_gqa=True)
    for result in (out, empty):
        assert isinstance(result, FakeTensor)
        assert (result.shape, result.dtype, result.device.type) == (
            (2, 8, 100, 64),
            torch.bfloat16,
            "cuda",
        )


def test_fake_cpu_tensors_fall_back_to_torchs_fake_result():
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(2, 4, 16, 64, dtype=torch.float16)
        with pytest.raises(tiledattn.UnsupportedInputError, match=r"CUDA tensors"):
            sdpa(q, q, q)
        with pytest.warns(UserWarning, match=r"falling back"):
            out = sdpa(q, q, q, fallback=True)
    assert isinstance(out, FakeTensor) and out.shape == q.shape


# requires_grad inputs under no_grad / inference_mode: a forward-only call,
# no backward to refuse.


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
@pytest.mark.parametrize("fallback", [False, True])
def test_requires_grad_inputs_without_grad_mode(mode, fallback):
    q = meta(1, 2, 16, 64, requires_grad=True)
    with mode(), warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning: the kernel runs
        out = sdpa(q, q, q, fallback=fallback)
    assert out.shape == (1, 2, 16, 64) and not out.requires_grad


def _ops_called(fn):
    """The tiledattn ops fn() calls, by name, in order."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == "tiledattn":
                self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Record() as record:
        fn()
    return record.names


def test_calls_needing_no_gradient_skip_the_autograd_kernel():
    # sdpa_fwd_no_grad has no autograd kernel (whose Python is a third of
    # a small call's host time); calls that need a gradient keep sdpa_fwd,
    # whose backward they need.
    q = meta(1, 2, 16, 64)
    grad_q = meta(1, 2, 16, 64, requires_grad=True)
    assert _ops_called(lambda: sdpa(q, q, q)) == ["sdpa_fwd_no_grad.default"]
    with torch.no_grad():
        assert _ops_called(lambda: sdpa(grad_q, q, q)) == ["sdpa_fwd_no_grad.default"]
    assert _ops_called(lambda: sdpa(grad_q, q, q)) == ["sdpa_fwd.default"]


def test_forward_and_backward_trace_under_torch_compile_fullgraph():
    # AOTAutograd traces the registered backward with the forward (meta
    # tensors; the values on the GPU: test_gpu_backward.py).
    def loss(q, k, v):
        return sdpa(q, k, v, is_causal=True).float().square().sum()

    compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
    q = meta(2, 8, 200, 64, requires_grad=True)
    kv = meta(2, 8, 150, 64, requires_grad=True)
    grads = torch.autograd.grad(compiled(q, kv, kv), (q, kv))
    assert [g.shape for g in grads] == [q.shape, kv.shape]
