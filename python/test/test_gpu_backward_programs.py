"""GPU tests of the backward's tile programs (issue 23), from the build's
flex cache (scripts/flex_cache.py compiles them; the GPU machine has no
compiler). They skip, saying why, without a Hopper GPU."""

from pathlib import Path

import pytest
import torch
from test_gpu import _skip_reason, make
from test_gpu_flex import CACHE

import tiledattn
from tiledattn.attention import _prepare

pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))

PROGRAMS = Path(tiledattn.__file__).parent / "schedules" / "backward"


@pytest.mark.parametrize("shape", [(2, 3, 300), (1, 2, 128), (1, 1, 1)], ids=str)
def test_preprocess_gives_the_rows_dot_products(shape):
    # D = rowsum(dO * O) per query row, in f32 from bf16 inputs, against
    # float64: odd lengths leave a partial last tile, whose rows past S the
    # program must not write (the lse buffer's tail stays as allocated).
    kernel = tiledattn.compile(PROGRAMS / "preprocess_bf16_d128.mlir", cache=CACHE)
    torch.manual_seed(0)
    b, h, s = shape
    o, do = (make(b, h, s, 128, torch.bfloat16) for _ in range(2))
    launch = _prepare(o, do, do, None, 0.0, False, None, False, False, kernel.entry)
    _, delta = launch.run_with_lse()
    ref = (do.double() * o.double()).sum(-1)
    assert delta.shape == (b, h, s) and delta.dtype == torch.float32
    # 128 products of bf16 values, summed in f32 (pairwise, then over four
    # threads): a few f32 ulps of the terms' magnitude.
    scale = (do.double().abs() * o.double().abs()).sum(-1)
    err = (delta.double() - ref).abs()
    assert (err <= 1e-6 * scale + 1e-6).all(), f"max error {err.max().item()}"
