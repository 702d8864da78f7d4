"""Writes python/tiledattn/schedules/variants/: each attention variant's
schedule (bf16, head dim 128) as the Python entry that runs it writes it,
with a header that says what it computes, what it reads after %scale and
how to compile and call it. The files are for reading and editing; the
entries write the same text at the call (python/test/test_variant_schedules.py
checks they agree), so the files cannot drift from what runs.

    python3 scripts/gen_variant_schedules.py [--check]

--check exits 1 if a file differs from what this would write."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

import torch  # noqa: E402
from torch.nn.attention.flex_attention import create_block_mask  # noqa: E402

from tiledattn import flex, variants, varlen  # noqa: E402
from tiledattn.bench.masks import document_ids  # noqa: E402
from tiledattn.masks import mask_kernel_text  # noqa: E402

OUT = ROOT / "python" / "tiledattn" / "schedules" / "variants"
BF16 = torch.bfloat16
CALL = (
    "Compile and call it (on CUDA tensors [B, H, S, 128]):\n"
    "  kernel = tiledattn.compile('{path}')\n"
    "  out = kernel(q, k, v, captures=[{captures}])\n"
)
MAP = (
    "The block map (int32 [B|1, H|1, query tiles, 2 + key blocks]): per 128-row\n"
    "query tile the number of full 128-key blocks, the number listed, then\n"
    "their indices, full ones first; tiledattn.masks.block_map builds it from a\n"
    "dense bool mask, tiledattn.flex from a BlockMask of 128 x 128 blocks.\n"
)


def _qkv(seqlen_q=1024, seqlen_k=1024):
    q = torch.empty(2, 4, seqlen_q, 128, dtype=BF16)
    k = torch.empty(2, 4, seqlen_k, 128, dtype=BF16)
    return q, k, k


def _window():
    q, k, v = _qkv()
    text = variants.kernel_text(q, k, v, causal=True, window_size=(1023, 0))
    about = (
        "Causal sliding window of 1024 keys (Mistral's): query i sees keys\n"
        "i - 1023 .. i (reading Sk - Sq per head, int32 [H], all equal). The\n"
        "mask_mod runs on the partial blocks of the map only.\n"
        "Python: tiledattn.variant_attention(q, k, v, causal=True,\n"
        "window_size=(1023, 0)).\n" + MAP
    )
    return text, about, "offsets, block_map"


def _bottom_right():
    q, k, v = _qkv(seqlen_q=256, seqlen_k=1024)
    text = variants.kernel_text(q, k, v, causal=True)
    about = (
        "Causal, bottom-right aligned (FlashAttention's convention for a KV\n"
        "cache or chunked prefill): query i of Sq sees keys up to i + Sk - Sq.\n"
        "The mask_mod reads the offset Sk - Sq per head (int32 [H], all equal),\n"
        "so one kernel serves every offset.\n"
        "Python: tiledattn.variant_attention(q, k, v, causal=True) with\n"
        "Sq = 256, Sk = 1024.\n" + MAP
    )
    return text, about, "offsets, block_map"


def _softcap():
    q, k, v = _qkv()

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def softcap(score, b, h, q_idx, kv_idx):
        return 30 * torch.tanh(score / 30)

    block_mask = create_block_mask(causal, None, None, 1024, 1024, device="cpu")
    text = flex.flex_kernel(q, k, v, softcap, block_mask).text
    about = (
        "Causal with Gemma-2's logit softcap: s -> 30 * tanh(s / 30) on the\n"
        "scaled scores (tanh.approx.f32; the division a multiply by 1/30).\n"
        "Python: tiledattn.variant_attention(q, k, v, causal=True, softcap=30),\n"
        "or tiledattn.flex_attention with that score_mod and a causal BlockMask.\n"
    )
    return text, about, ""


def _alibi():
    q, k, v = _qkv()
    slopes = torch.empty(4, dtype=torch.float32)
    text = variants.kernel_text(q, k, v, causal=True, alibi_slopes=slopes)
    about = (
        "Causal with ALiBi: s -> s - slope[h] * (q + Sk - Sq - k), slopes read\n"
        "from a float32 tensor of one per head, Sk - Sq from an int32 one.\n"
        "Python: tiledattn.variant_attention(q, k, v, causal=True,\n"
        "alibi_slopes=slopes).\n"
    )
    return text, about, "slopes, offsets"


def _documents():
    q, k, v = _qkv()
    ids = document_ids(2, 1024, "cpu")

    def same_document(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (ids[b, q_idx] == ids[b, kv_idx])

    block_mask = create_block_mask(same_document, 2, None, 1024, 1024, device="cpu")
    text = flex.flex_kernel(q, k, v, None, block_mask).text
    about = (
        "Causal within packed documents: query i sees key j <= i of the same\n"
        "document, ids (int32 [B, S]) read by the mask_mod.\n"
        "Python: tiledattn.flex_attention(q, k, v, block_mask=create_block_mask(\n"
        "same_document, B, None, S, S)).\n" + MAP
    )
    return text, about, "ids, block_map"


def _varlen():
    text = varlen._kernel_text(BF16, 128, 128)[0]
    about = (
        "Variable-length sequences packed along the tokens (FlashAttention's\n"
        "varlen layout, [1, H, total tokens, 128] here): a mask_mod over each\n"
        "token's sequence and position (int32 tensors read as captures) and a\n"
        "block map built from cu_seqlens.\n"
        "Python: tiledattn.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k),\n"
        "which builds the captures (tiledattn.varlen.positions) and the map.\n"
    )
    return text, about, "*positions, block_map"


def _key_padding():
    keep = torch.ones(2, 1, 1, 1024, dtype=torch.bool)
    text, _ = mask_kernel_text(keep, (2, 4, 1024, 1024), False, BF16, 128, 128)
    about = (
        "Key padding, as scaled_dot_product_attention(attn_mask=...) runs a\n"
        "bool mask of shape (B, 1, 1, S): the mask_mod reads it (as int8, of\n"
        "that shape; tiledattn.masks.compact_mask) on the partial blocks of the\n"
        "map.\n"
        "Python: tiledattn.scaled_dot_product_attention(q, k, v, attn_mask=keep).\n" + MAP
    )
    return text, about, "mask, block_map"


VARIANTS = {
    "window_causal_fwd_bf16_d128": _window,
    "causal_bottom_right_fwd_bf16_d128": _bottom_right,
    "softcap30_causal_fwd_bf16_d128": _softcap,
    "alibi_causal_fwd_bf16_d128": _alibi,
    "documents_causal_fwd_bf16_d128": _documents,
    "varlen_fwd_bf16_d128": _varlen,
    "key_padding_fwd_bf16_d128": _key_padding,
}


def render(name: str) -> "tuple[str, str]":
    """(the file's text, the text its Python entry compiles)."""
    text, about, captures = VARIANTS[name]()
    path = f"python/tiledattn/schedules/variants/{name}.mlir"
    header = about + CALL.format(path=path, captures=captures)
    header += "Written by scripts/gen_variant_schedules.py.\n"
    comment = "".join(f"// {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + "\n" + text, text


def main() -> int:
    check = "--check" in sys.argv[1:]
    OUT.mkdir(parents=True, exist_ok=True)
    stale = []
    for name in VARIANTS:
        path = OUT / f"{name}.mlir"
        content, _ = render(name)
        if check:
            if not path.is_file() or path.read_text() != content:
                stale.append(path)
        else:
            path.write_text(content)
            print(path.relative_to(ROOT))
    for path in stale:
        print(f"{path.relative_to(ROOT)} differs from what its entry writes", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
