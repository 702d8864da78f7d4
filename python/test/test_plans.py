"""CPU tests of the plans of repeated plain calls (attention._plans): which
calls may have one, what a plan keeps, and that a plan's call checks its
pointers' alignment again. A GPU run: test_gpu.py."""

import torch

from tiledattn import attention


class _Stand:
    """A stand-in CUDA tensor: only a data pointer."""

    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


def test_only_eager_plain_cuda_tensors_have_plan_keys():
    meta = torch.empty(1, 2, 8, 64, device="meta")
    cpu = torch.empty(1, 2, 8, 64)
    assert attention._plan_key(meta, meta, meta, False, None, False) is None
    assert attention._plan_key(cpu, cpu, cpu, False, None, False) is None

    class Sub(torch.Tensor):
        pass

    sub = cpu.as_subclass(Sub)
    assert attention._plan_key(sub, cpu, cpu, False, None, False) is None


def test_a_planned_call_checks_its_pointers_alignment(monkeypatch):
    monkeypatch.setattr(attention, "_plans", {"key": ("bundle", 16, 0.125, True, (3,))})
    q, k, v = _Stand(1024), _Stand(2048), _Stand(4096)
    launch = attention._planned("key", q, k, v)
    assert (launch.q, launch.k, launch.v) == (q, k, v)
    assert (launch.bundle, launch.scale, launch.is_causal, launch.batch_shape) == (
        "bundle",
        0.125,
        True,
        (3,),
    )
    assert attention._planned("key", q, _Stand(2050), v) is None  # the full checks say why
    assert attention._planned("other", q, k, v) is None


def test_a_plan_is_kept_only_where_the_inputs_were_used_as_they_are(monkeypatch):
    monkeypatch.setattr(attention, "_plans", {})
    q, k, v = _Stand(0), _Stand(0), _Stand(0)
    launch = attention._Launch(q, k, v, False, 0.1, "b", (2,), False)
    launch.alignment = 128
    attention._remember("a", launch, q, k, v)
    assert attention._plans["a"] == ("b", 128, 0.1, False, (2,))
    viewed = attention._Launch(_Stand(0), k, v, False, 0.1, "b", (2,), False)
    attention._remember("b", viewed, q, k, v)  # q was viewed or restrided
    squeezed = attention._Launch(q, k, v, False, 0.1, "b", (2,), True)
    attention._remember("c", squeezed, q, k, v)  # a 3-D call
    captured = attention._Launch(q, k, v, False, 0.1, "b", (2,), False)
    captured.captures = [torch.empty(1)]
    attention._remember("d", captured, q, k, v)
    empty = attention._Empty((1,), False, (q, k, v))
    attention._remember("e", empty, q, k, v)
    assert list(attention._plans) == ["a"]
