"""score_mod callables the flex_attention tests trace, compile and check
(python/test/test_flex.py on the CPU, test_gpu_flex.py on the GPU), and the
shapes the GPU tests run; scripts/flex_cache.py compiles their kernels into
a cache the GPU round carries (the GPU machine has no compiler)."""

import torch


def softcap(score, b, h, q_idx, kv_idx):
    return 30 * torch.tanh(score / 30)


def alibi(score, b, h, q_idx, kv_idx):
    return score + (kv_idx - q_idx) * 0.5 ** (h + 1)


def causal(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, -float("inf"))


def sliding_window(score, b, h, q_idx, kv_idx):
    inside = (q_idx - kv_idx <= 256) & (q_idx >= kv_idx)
    return torch.where(inside, score, -float("inf"))


def methods_and_clamp(score, b, h, q_idx, kv_idx):
    return score.tanh().clamp(min=-0.5, max=0.5) + torch.sigmoid(score) - (b - h)


SCORE_MODS = [softcap, alibi, causal, sliding_window, methods_and_clamp]

# (batch, query heads, key/value heads, query length, key length, head dim,
# value head dim): GQA, odd lengths, every head dim, DeepSeek's 192 / 128.
GPU_SHAPES = [
    (2, 3, 3, 113, 113, 64, 64),
    (1, 4, 2, 1000, 777, 128, 128),
    (1, 2, 2, 300, 600, 256, 256),
    (1, 4, 1, 257, 300, 192, 128),
]


# score_mods that read tensors (FlexAttention's captured tensors), each made
# by a factory from (device, batch, heads, key length): the kernel is
# compiled for the tensors' dtypes and ranks only, so scripts/flex_cache.py
# traces them with CPU tensors and the GPU tests run them with CUDA ones.
def alibi_slopes(device, batch, heads, length):
    """ALiBi with a slope per head, read from a float32 tensor."""
    slopes = torch.exp2(-8 * torch.arange(1, heads + 1, device=device) / heads)

    def alibi_from_slopes(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    return alibi_from_slopes


def document_mask(device, batch, heads, length):
    """Packed documents: a query sees the keys of its own document (int32
    ids per batch row and position, four documents of random lengths)."""
    cuts = torch.sort(torch.randint(1, max(length, 2), (batch, 3), device=device)).values
    positions = torch.arange(length, device=device)
    ids = (positions[None, :, None] >= cuts[:, None, :]).sum(-1).to(torch.int32)

    def same_document(score, b, h, q_idx, kv_idx):
        return torch.where(ids[b, q_idx] == ids[b][kv_idx], score, -float("inf"))

    return same_document


def document_mask_mod(device, batch, heads, length):
    """document_mask as a FlexAttention mask_mod (for a BlockMask): its
    blocks inside one document are full, those across a boundary partial,
    the others skipped."""
    cuts = torch.sort(torch.randint(1, max(length, 2), (batch, 3), device=device)).values
    positions = torch.arange(length, device=device)
    ids = (positions[None, :, None] >= cuts[:, None, :]).sum(-1).to(torch.int32)

    def same_document_mask(b, h, q_idx, kv_idx):
        return ids[b, q_idx] == ids[b, kv_idx]

    return same_document_mask


# Head dims no shipped bundle has that the GPU tests run (head dim, value
# head dim): the tile program pads them to whole 64-column atoms.
PADDED_HEAD_DIMS = [(32, 32), (80, 80), (96, 96), (96, 64)]

# The shape (b, hq, hkv, sq, sk, d, dv) of the GPU test of document_mask_mod.
DOCUMENT_BLOCK_MASK_SHAPE = (2, 4, 2, 1000, 1000, 128, 128)


def key_bias_and_padding(device, batch, heads, length):
    """A bf16 bias per batch row and key, and a bool mask of kept keys
    (about a quarter padded away), scaled by a 0-D temperature."""
    bias = torch.randn(batch, length, device=device).to(torch.bfloat16)
    keep = torch.rand(length, device=device) > 0.25
    temperature = torch.tensor(0.75, device=device)

    def biased_and_padded(score, b, h, q_idx, kv_idx):
        return torch.where(keep[kv_idx], score * temperature + bias[b, kv_idx], -float("inf"))

    return biased_and_padded


CAPTURE_MODS = [alibi_slopes, document_mask, key_bias_and_padding]
# (batch, query heads, key/value heads, query length, key length, head dim,
# value head dim) of the captured-tensor cases.
CAPTURE_SHAPES = [(2, 3, 3, 113, 113, 64, 64), (2, 4, 2, 1000, 1000, 128, 128)]


# torch SDPA attn_mask cases (tiledattn.masks): (name, (batch, heads, query
# length, key length, head dim), 3-D inputs without a head dimension, the
# mask made from (device, batch, heads, query length, key length)). Each
# mask kind (dtype, which dimensions vary) is its own kernel, which
# scripts/flex_cache.py compiles from the same factory on the CPU.
def _key_padding(device, b, h, lq, lk, dtype):  # Hugging Face's padded batch
    keep = (
        torch.arange(lk, device=device)[None, :]
        < torch.tensor([lk, lk * 2 // 3], device=device)[:, None]
    )
    return keep[:b, None, None, :].expand(b, 1, lq, lk)


def _bias_per_head(device, b, h, lq, lk, dtype):
    return torch.randn(1, h, lq, lk, device=device).to(dtype)


def _bottom_right_causal(device, b, h, lq, lk, dtype):
    i = torch.arange(lq, device=device)[:, None]
    j = torch.arange(lk, device=device)[None, :]
    return torch.zeros(lq, lk, device=device).masked_fill(j > i + (lk - lq), -float("inf"))


def _broadcast_keys(device, b, h, lq, lk, dtype):
    return (torch.rand(b, 1, 1, lk, device=device) > 0.3).expand(b, h, lq, lk)


def _per_batch_3d(device, b, h, lq, lk, dtype):
    return torch.rand(b, lq, lk, device=device) > 0.2


ATTN_MASK_CASES = [
    ("key_padding", (2, 4, 200, 300, 128), False, _key_padding),
    ("bias_per_head", (2, 4, 200, 300, 128), False, _bias_per_head),
    ("bottom_right_causal", (1, 2, 150, 400, 128), False, _bottom_right_causal),
    ("broadcast_keys", (2, 3, 129, 257, 64), False, _broadcast_keys),
    ("per_batch_3d", (3, 1, 100, 140, 64), True, _per_batch_3d),
]


def causal_mask(b, h, q_idx, kv_idx):
    """A FlexAttention mask_mod, for block_mask cases: flex_attention runs it
    as a causal kernel."""
    return q_idx >= kv_idx


def window_mask(b, h, q_idx, kv_idx):
    """A mask_mod flex_attention applies on the partial blocks of its map: a
    causal window of 100."""
    return (q_idx >= kv_idx) & (q_idx - kv_idx < 100)


# (score_mod, mask_mod, shape) of the GPU tests with a block_mask.
BLOCK_MASK_CASES = [
    (softcap, causal_mask, (1, 2, 2, 300, 300, 128, 128)),
    (softcap, window_mask, (1, 2, 2, 300, 300, 128, 128)),
    (None, causal_mask, (1, 2, 2, 300, 300, 128, 128)),
]


def block_mask_kernel(score_mod, mask_mod, shape, dtype=torch.bfloat16):
    """The kernel text flex_attention runs for score_mod with a BlockMask
    of mask_mod (None: plain attention), from CPU stand-ins of `shape`."""
    from torch.nn.attention.flex_attention import create_block_mask

    from tiledattn.flex import flex_kernel

    b, hq, hkv, sq, sk, d, dv = shape
    q = torch.empty(b, hq, sq, d, dtype=dtype)
    k = torch.empty(b, hkv, sk, d, dtype=dtype)
    v = torch.empty(b, hkv, sk, dv, dtype=dtype)
    mask = create_block_mask(mask_mod, None, None, sq, sk, device="cpu")
    return flex_kernel(q, k, v, score_mod, mask).text


# tiledattn.attention's variants (FlashAttention's arguments) the GPU tests
# run: (name, (batch, heads, query length, key length, head dim), the
# arguments from (batch, heads, device)). scripts/flex_cache.py compiles
# each from CPU stand-ins.
VARIANT_CASES = [
    ("causal_more_keys", (2, 4, 300, 500, 128), lambda b, h, dev: {"causal": True}),
    ("window_100_0", (1, 4, 700, 700, 128), lambda b, h, dev: {"window_size": (100, 0)}),
    ("window_64_64", (2, 2, 400, 400, 64), lambda b, h, dev: {"window_size": (64, 64)}),
    (
        "softcap_alibi_causal",
        (2, 4, 513, 513, 128),
        lambda b, h, dev: {
            "causal": True,
            "softcap": 30.0,
            "alibi_slopes": torch.rand(h, device=dev),
        },
    ),
    (
        "alibi_per_batch",
        (2, 4, 200, 333, 64),
        lambda b, h, dev: {"alibi_slopes": torch.rand(b, h, device=dev)},
    ),
]
