"""The score modifications the harness times (--score-mod NAME), each a
FlexAttention score_mod(score, b, h, q_idx, kv_idx): tiledattn runs it
through tiledattn.flex_attention (traced into tile IR), FlexAttention
through torch.compile, and the float64 reference applies it to the scaled
scores; fused SDPA kernels cannot apply it (n/a)."""

import torch


def softcap30(score, b, h, q_idx, kv_idx):
    """Gemma-2's logit softcap at 30."""
    return 30 * torch.tanh(score / 30)


def alibi(score, b, h, q_idx, kv_idx):
    """An ALiBi bias with slopes 2^-(h + 1) / 2 (no captured tensor)."""
    return score + (kv_idx - q_idx) * 2.0 ** (-(h + 1) / 2)


SCORE_MODS = {"none": None, "softcap30": softcap30, "alibi": alibi}
