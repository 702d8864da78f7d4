"""tiledattn: scaled-dot-product attention kernels compiled from MLIR schedules.

    import tiledattn
    out = tiledattn.scaled_dot_product_attention(q, k, v, is_causal=True)
    print(tiledattn.registry.explain(q.dtype, q.shape[-1], causal=True))
    kernel = tiledattn.compile("my_schedule.mlir")  # same signature
    out = tiledattn.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + (j - i))
    out = tiledattn.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, causal=True)
    out = tiledattn.decode_attention(q, k_cache, v_cache)  # Sq <= 16, split-KV
    tiledattn.tune.tune_decode(q, k_cache, v_cache)  # times schedules, keeps the best
    out = tiledattn.kvcache_attention(q, k_cache, v_cache, seqlens, block_table, k=k, v=v)
    with tiledattn.context_parallel.enabled(): ...  # PyTorch's ring attention on tiledattn

The package is pure Python over torch.ops.tiledattn, which the runtime library
(libtiledattn_runtime.so) registers; it is loaded when a kernel first runs.
"""

__version__ = "0.1.0"

from tiledattn import context_parallel, registry, tune
from tiledattn._runtime import bundle_info, kernel_dir, load_runtime
from tiledattn.attention import scaled_dot_product_attention
from tiledattn.compiler import CompiledKernel, compile
from tiledattn.decode import decode_attention
from tiledattn.errors import (
    CompileError,
    InvalidInputError,
    RuntimeLibraryError,
    TiledAttnError,
    UnsupportedInputError,
)
from tiledattn.flex import flex_attention
from tiledattn.kvcache import kvcache_attention
from tiledattn.registry import available_kernels
from tiledattn.variants import variant_attention
from tiledattn.varlen import varlen_attention

__all__ = [
    "CompileError",
    "CompiledKernel",
    "InvalidInputError",
    "RuntimeLibraryError",
    "TiledAttnError",
    "UnsupportedInputError",
    "__version__",
    "available_kernels",
    "bundle_info",
    "compile",
    "context_parallel",
    "flex_attention",
    "kernel_dir",
    "kvcache_attention",
    "load_runtime",
    "registry",
    "scaled_dot_product_attention",
    "tune",
    "variant_attention",
    "varlen_attention",
    "decode_attention",
]
