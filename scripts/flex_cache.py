"""Compiles the kernels of python/test/test_gpu_flex.py and of the harness's
--score-mod cases into a flex_attention cache (default
build/kernels-tile-ir/flex-cache, carried with the tile-IR bundles; the
registry ignores it), where the GPU machine, which has no compiler, finds
them by their text:

    python3 scripts/flex_cache.py [CACHE_DIR]

The build runs it (python/CMakeLists.txt, target tiledattn-flex-cache). It
starts from an empty cache and keeps only the bundles under their text's key
(by-text/), the ones a machine without the compiler looks up, so that the
carry holds each kernel once and nothing stale."""

import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "python" / "test")]

import torch  # noqa: E402
from flex_examples import (  # noqa: E402
    ATTN_MASK_CASES,
    BLOCK_MASK_CASES,
    CAPTURE_MODS,
    CAPTURE_SHAPES,
    DOCUMENT_BLOCK_MASK_SHAPE,
    GPU_SHAPES,
    PADDED_HEAD_DIMS,
    SCORE_MODS,
    VARIANT_CASES,
    block_mask_kernel,
    document_mask_mod,
)
from torch.nn.attention.flex_attention import create_block_mask  # noqa: E402

import tiledattn  # noqa: E402
from tiledattn.attention import padded_kernel_text  # noqa: E402
from tiledattn.bench.masks import MASKS as BENCH_MASKS  # noqa: E402
from tiledattn.bench.score_mods import SCORE_MODS as BENCH_SCORE_MODS  # noqa: E402
from tiledattn.decode import SCHEDULES as DECODE_SCHEDULES  # noqa: E402
from tiledattn.decode import _kernel_text as decode_kernel_text  # noqa: E402
from tiledattn.flex import flex_kernel, schedule_text, trace_score_mod  # noqa: E402
from tiledattn.kvcache import kernel_text as kvcache_kernel_text  # noqa: E402
from tiledattn.masks import mask_kernel_text  # noqa: E402
from tiledattn.variants import kernel_text as variant_kernel_text  # noqa: E402
from tiledattn.varlen import _kernel_text as varlen_kernel_text  # noqa: E402


def main() -> int:
    cache = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else ROOT / "build" / "kernels-tile-ir" / "flex-cache"
    )
    shutil.rmtree(cache, ignore_errors=True)
    head_dims = sorted({shape[-2:] for shape in GPU_SHAPES})
    # The GPU tests' score_mods in bf16, and the harness's (--score-mod) in
    # both dtypes, so that a GPU run with TILEDATTN_CACHE_DIR set to this
    # cache finds them too.
    # (score_mod, dtype, causal); the harness times its score_mods causal too
    # (with a causal BlockMask, which flex_attention runs as a causal kernel).
    work = [(f, torch.bfloat16, False) for f in SCORE_MODS]
    work += [
        (f, t, causal)
        for f in BENCH_SCORE_MODS.values()
        if f
        for t in (torch.bfloat16, torch.float16)
        for causal in (False, True)
    ]
    # score_mods that read tensors: the text depends on their dtypes and
    # ranks only, so CPU tensors of the GPU tests' kinds give the same keys.
    capture_dims = sorted({shape[-2:] for shape in CAPTURE_SHAPES})
    work = [(f, t, c, head_dims) for f, t, c in work]
    work += [(make("cpu", 2, 4, 64), torch.bfloat16, False, capture_dims) for make in CAPTURE_MODS]
    for score_mod, dtype, causal, dims in work:
        region = trace_score_mod(score_mod)
        for head_dim, head_dim_v in dims:
            start = time.perf_counter()
            text = schedule_text(
                region, dtype, head_dim, "flex_score_mod", head_dim_v, causal=causal
            )
            kernel = tiledattn.compile(text, cache=cache)
            seconds = time.perf_counter() - start
            print(
                f"{score_mod.__name__} {dtype} d{head_dim} dv{head_dim_v}"
                f"{' causal' if causal else ''}: {kernel.path} "
                f"({seconds:.1f} s)"
            )
    # flex_attention with a BlockMask (python/test/test_gpu_flex.py): its
    # text holds the mask_mod, and the block map when the blocks fit.
    for score_mod, mask_mod, shape in BLOCK_MASK_CASES:
        text = block_mask_kernel(score_mod, mask_mod, shape)
        if text is not None:
            kernel = tiledattn.compile(text, cache=cache)
            print(f"block_mask {mask_mod.__name__} d{shape[5]}: {kernel.path}")
    # A BlockMask whose mask_mod reads tensors (packed documents; also
    # scripts/capture_speed.py's).
    text = block_mask_kernel(None, document_mask_mod("cpu", 2, 4, 1000), DOCUMENT_BLOCK_MASK_SHAPE)
    print(f"block_mask document_mask_mod: {tiledattn.compile(text, cache=cache).path}")
    # The harness's --mask cases (tiledattn.bench.masks), both dtypes: key
    # padding as an attn_mask, the others as BlockMasks, on both flex
    # schedules (which one runs depends on the lengths: short tiles or not).
    for mask in BENCH_MASKS.values():
        for dtype in (torch.bfloat16, torch.float16):
            for d in (64, 128, 256):
                q = torch.empty(2, 2, 256, d, dtype=dtype)
                if mask.as_attn_mask:
                    keep = mask.dense(2, 256, "cpu")
                    texts = [mask_kernel_text(keep, (2, 2, 256, 256), False, dtype, d, d)[0]]
                else:
                    block_mask = create_block_mask(
                        mask.mask_mod(2, 256, "cpu"), 2, None, 256, 256, device="cpu"
                    )
                    texts = sorted(
                        {
                            flex_kernel(q, q, q, None, block_mask, short_tiles=short).text
                            for short in (False, True)
                        }
                    )
                for text in texts:
                    path = tiledattn.compile(text, cache=cache).path
                    print(f"bench mask {mask.name} {dtype} d{d}: {path}")
    # varlen_attention's kernels (python/test/test_gpu_varlen.py): one per
    # (dtype, head dim), causal or not.
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            path = tiledattn.compile(varlen_kernel_text(dtype, d, d)[0], cache=cache).path
            print(f"varlen {dtype} d{d}: {path}")
    # Head dims no shipped bundle has (python/test/test_gpu_head_dims.py):
    # scaled_dot_product_attention's kernel for each, causal or not.
    for dtype in (torch.bfloat16, torch.float16):
        for d, dv in PADDED_HEAD_DIMS:
            for causal in (False, True):
                text = padded_kernel_text(dtype, d, dv, causal)
                path = tiledattn.compile(text, cache=cache).path
                print(f"padded d{d} dv{dv} {dtype} causal={causal}: {path}")
    # tiledattn.attention's variants (python/test/test_gpu_variants.py).
    for name, (b, h, sq, sk, d), make_variant in VARIANT_CASES:
        q = torch.empty(b, h, sq, d, dtype=torch.bfloat16)
        k = torch.empty(b, h, sk, d, dtype=torch.bfloat16)
        text = variant_kernel_text(q, k, k, **make_variant(b, h, "cpu"))
        if text is not None:
            print(f"variant {name}: {tiledattn.compile(text, cache=cache).path}")
    # decode_attention's kernels (python/test/test_gpu_decode.py).
    # Every candidate schedule (scripts/decode_speed.py --schedules times them).
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for causal in (False, True):
                for name in DECODE_SCHEDULES:
                    text = decode_kernel_text(dtype, d, d, causal, name)
                    path = tiledattn.compile(text, cache=cache).path
                    print(f"decode {name} {dtype} d{d} causal={causal}: {path}")
    # kvcache_attention's kernels (python/test/test_gpu_kvcache.py).
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for page in (0, 128, 256):
                path = tiledattn.compile(kvcache_kernel_text(dtype, d, d, page), cache=cache).path
                print(f"kvcache {dtype} d{d} page={page}: {path}")
    # The variants' schedule files (python/tiledattn/schedules/variants),
    # compiled as tiledattn.compile(path) reads them (their text, header
    # included, is the key).
    for path in sorted((ROOT / "python/tiledattn/schedules/variants").glob("*.mlir")):
        print(f"variant schedule {path.name}: {tiledattn.compile(path, cache=cache).path}")
    # (The backward's tile programs, every dtype and head dim, are the
    # package's: scripts/package_kernels.py; tiledattn.compile finds them
    # there when a test's cache does not have them.)
    # scripts/capture_speed.py's key padding: one row of kept keys for all.
    keys = torch.ones(1, 1, 1, 300, dtype=torch.bool).expand(2, 1, 200, 300)
    text, _ = mask_kernel_text(keys, (2, 4, 200, 300), False, torch.bfloat16, 128, 128)
    print(f"attn_mask key row bf16 d128: {tiledattn.compile(text, cache=cache).path}")
    # scaled_dot_product_attention's attn_mask cases (python/test/
    # test_gpu_masks.py): the kernel of each mask kind, in both dtypes.
    for name, (b, h, lq, lk, d), squeeze, make_mask in ATTN_MASK_CASES:
        for dtype in (torch.bfloat16, torch.float16):
            start = time.perf_counter()
            mask = make_mask("cpu", b, h, lq, lk, dtype)
            text, _ = mask_kernel_text(mask, (b, h, lq, lk), squeeze, dtype, d, d)
            kernel = tiledattn.compile(text, cache=cache)
            seconds = time.perf_counter() - start
            print(f"attn_mask {name} {dtype} d{d}: {kernel.path} ({seconds:.1f} s)")
    # The compiler's own keys name this machine's compiler binary: no use
    # elsewhere, and a second copy of every bundle.
    for entry in cache.iterdir():
        if entry.name != "by-text":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
