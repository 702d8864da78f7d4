"""The masks the harness times (--mask NAME), the issue's variants: key
padding, a causal sliding window and causal packed documents. Each gives
FlexAttention's mask_mod (tiledattn runs key padding as an SDPA attn_mask
and the others through flex_attention with a BlockMask; FlexAttention
takes the BlockMask), the dense bool mask torch's SDPA backends take, and
the number of kept (query, key) pairs, on which TFLOP/s are counted."""

import dataclasses

import torch


@dataclasses.dataclass(frozen=True)
class Mask:
    name: str
    doc: str
    # Whether tiledattn runs it as scaled_dot_product_attention's attn_mask
    # (else as flex_attention's BlockMask).
    as_attn_mask: bool = False

    def mask_mod(self, batch: int, seqlen: int, device):
        """FlexAttention's mask_mod(b, h, q_idx, kv_idx) -> keep."""
        if self.name == "key_padding":
            lengths = torch.full((batch,), seqlen * 3 // 4, device=device)
            return lambda b, h, q_idx, kv_idx: kv_idx < lengths[b]
        if self.name == "window1024":
            return lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) & (q_idx - kv_idx < 1024)
        ids = document_ids(batch, seqlen, device)
        return lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) & (ids[b, q_idx] == ids[b, kv_idx])

    def dense(self, batch: int, seqlen: int, device) -> torch.Tensor:
        """The bool mask (True: keep) of shape (B|1, 1, S|1, S)."""
        q = torch.arange(seqlen, device=device)[:, None]
        kv = torch.arange(seqlen, device=device)[None, :]
        if self.name == "key_padding":
            return (kv < seqlen * 3 // 4).expand(batch, seqlen)[:, None, None, :]
        if self.name == "window1024":
            return ((q >= kv) & (q - kv < 1024))[None, None]
        ids = document_ids(batch, seqlen, device)
        same = ids[:, :, None] == ids[:, None, :]
        return (same & (q >= kv))[:, None]

    def kept_pairs(self, batch: int, seqlen: int) -> int:
        """Kept (query, key) pairs of one head, summed over the batch."""
        return int(self.dense(batch, seqlen, "cpu").expand(batch, 1, seqlen, seqlen).sum())


def document_ids(batch: int, seqlen: int, device) -> torch.Tensor:
    """Four packed documents per sequence, of lengths 1/8, 1/4, 1/4 and 3/8
    of it (fixed, so that every backend and run sees the same), int32."""
    cuts = torch.tensor([seqlen // 8, seqlen * 3 // 8, seqlen * 5 // 8], device=device)
    ids = (torch.arange(seqlen, device=device)[:, None] >= cuts[None, :]).sum(-1)
    return ids.to(torch.int32).expand(batch, seqlen).contiguous()


MASKS = {
    m.name: m
    for m in (
        Mask("key_padding", "25% of the keys masked at the end", as_attn_mask=True),
        Mask("window1024", "causal sliding window of 1024 keys"),
        Mask("documents4", "causal, four packed documents (1/8, 1/4, 1/4, 3/8)"),
    )
}
