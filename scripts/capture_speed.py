"""What reading tensors costs a kernel (session 25): flex_attention's ALiBi
with slopes computed in the score_mod (constants) against slopes read from a
tensor, a document mask from int32 ids, and scaled_dot_product_attention
with a key-padding attn_mask (25% of keys masked) against torch's SDPA with
the same mask; bf16, head dim 128, non-causal, B * S = 16k. Run on the GPU
machine from the repository root, with the flex cache built here:

    python3 scripts/capture_speed.py

TFLOP/s count every (query, key) pair, except for key padding: the kept
pairs only (the issue's convention). The document BlockMask row (the share
of blocks it runs in its name) counts every pair too: its figure is how
much faster than dense attention the skipped blocks make it."""

import functools
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "python" / "test")]
import os  # noqa: E402

os.environ.setdefault("TILEDATTN_CACHE_DIR", str(ROOT / "build/kernels-tile-ir/flex-cache"))
from flex_examples import alibi, alibi_slopes, document_mask, document_mask_mod  # noqa: E402

import tiledattn  # noqa: E402
from tiledattn.bench.measure import median_ms  # noqa: E402

CACHE = os.environ["TILEDATTN_CACHE_DIR"]


def main() -> int:
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for b, h, s in ((4, 16, 4096), (1, 16, 16384)):
        q, k, v = (torch.randn(b, h, s, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        dense = 4 * b * h * s * s * 128
        keep = torch.arange(s, device="cuda") < s * 3 // 4
        mask = keep[None, None, None, :].expand(b, 1, s, s)
        flex = tiledattn.flex_attention
        from torch.nn.attention.flex_attention import create_block_mask

        torch.manual_seed(0)
        documents = create_block_mask(document_mask_mod("cuda", b, h, s), b, None, s, s)
        kept = documents.to_dense().float().mean().item()  # share of blocks run
        rows = {
            "flex alibi (constants)": (dense, flex, dict(score_mod=alibi)),
            "flex alibi (slopes tensor)": (
                dense,
                flex,
                dict(score_mod=alibi_slopes("cuda", b, h, s)),
            ),
            "flex document mask (ids)": (
                dense,
                flex,
                dict(score_mod=document_mask("cuda", b, h, s)),
            ),
            f"flex document BlockMask ({kept:.0%})": (
                dense,
                flex,
                dict(block_mask=documents),
            ),
            "torch SDPA (no mask)": (dense, sdpa, {}),
            "tiledattn key padding 25%": (
                dense * 3 // 4,
                tiledattn.scaled_dot_product_attention,
                dict(attn_mask=mask),
            ),
            "torch SDPA key padding 25%": (dense * 3 // 4, sdpa, dict(attn_mask=mask)),
        }
        for name, (flops, fn, kwargs) in rows.items():
            if fn is flex:
                kwargs["cache"] = CACHE
            ms = median_ms(functools.partial(fn, q, k, v, **kwargs), runs=30)
            print(f"B={b} H={h} S={s} {name:28s} {ms:7.3f} ms {flops / ms / 1e9:6.0f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
