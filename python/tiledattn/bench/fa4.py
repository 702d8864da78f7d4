"""FlashAttention-4 (`flash_attn.cute`, PyPI flash-attn-4) as a harness
backend, where it is installed (docs/Performance.md says how to bring it to
the GPU machine). Its inputs are (B, S, H, D); the harness's (B, H, S, D)
are copied once per case (not timed) and its output is viewed back.

The variants map to FlashAttention's own arguments, not to FA4's CuTe-DSL
score/mask mods (whose callables are not FlexAttention's):
- causal: causal=True (top-left and bottom-right agree on square cases);
- softcap30: softcap=30.0; other score_mods are refused;
- window1024 (q - k < 1024, causal): window_size=(1023, 0);
- key_padding (the first 3/4 of each sequence's keys): varlen with every
  query and that many keys per sequence (cu_seqlens_k);
- documents4 (causal within four packed documents): varlen over the
  documents, causal.
The float64 check guards the mapping: a mismatch shows as WRONG."""

import torch

from tiledattn.bench.backends import Backend, Prepared, Unsupported


def _interface():
    try:
        from flash_attn.cute import interface
    except Exception as error:  # noqa: BLE001 -- any import failure: not installed
        raise Unsupported(f"flash_attn.cute (FlashAttention-4) not importable: {error}") from None
    return interface


def _first(result):
    """FA4 returns (out, lse); older builds the output alone."""
    return result[0] if isinstance(result, tuple) else result


def _cu_seqlens(lengths, device) -> torch.Tensor:
    cu = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    cu[1:] = torch.tensor(lengths).cumsum(0)
    return cu.to(device)


class FA4(Backend):
    name = "fa4"
    takes_score_mod = True  # softcap30 only (below)

    def prepare(self, case, q, k, v):
        interface = _interface()
        if case.score_mod not in ("none", "softcap30"):
            raise Unsupported(f"fa4 cannot apply score_mod {case.score_mod}")
        softcap = 30.0 if case.score_mod == "softcap30" else 0.0
        # (B, S, H, D) copies; leaves of their own when the harness takes a
        # backward (Prepared.bshd_leaves)
        q4, k4, v4 = (
            t.detach().transpose(1, 2).contiguous().requires_grad_(t.requires_grad)
            for t in (q, k, v)
        )
        leaves = (q4, k4, v4) if q.requires_grad else ()
        mask = case.mask
        if mask in ("none", "window1024"):
            window = (1023, 0) if mask == "window1024" else (None, None)
            causal = case.causal or mask == "window1024"
            kwargs = {"causal": causal, "softcap": softcap}
            if window != (None, None):
                kwargs["window_size"] = window

            def fn():
                return _first(interface.flash_attn_func(q4, k4, v4, **kwargs)).transpose(1, 2)

            return Prepared(fn, {"kernel": f"flash_attn_func {kwargs}"}, bshd_leaves=leaves)
        return self._varlen(case, interface, q4, k4, v4, softcap)

    def _varlen(self, case, interface, q4, k4, v4, softcap):
        from tiledattn.bench.masks import document_ids

        batch, seqlen, heads, dim = q4.shape
        if case.mask == "key_padding":
            kept = seqlen * 3 // 4
            lengths_q, lengths_k, causal = [seqlen] * batch, [kept] * batch, False
            keys, values = (t[:, :kept].reshape(-1, heads, dim) for t in (k4, v4))
        elif case.mask == "documents4":
            ids = document_ids(1, seqlen, "cpu")[0]
            lengths = torch.bincount(ids).tolist() * batch
            lengths_q, lengths_k, causal = lengths, lengths, True
            keys, values = (t.reshape(-1, heads, dim) for t in (k4, v4))
        else:
            raise Unsupported(f"fa4: no FlashAttention form of mask {case.mask}")
        queries = q4.reshape(-1, heads, dim)
        cu_q, cu_k = (_cu_seqlens(n, q4.device) for n in (lengths_q, lengths_k))
        kwargs = {
            "cu_seqlens_q": cu_q,
            "cu_seqlens_k": cu_k,
            "max_seqlen_q": max(lengths_q),
            "max_seqlen_k": max(lengths_k),
            "causal": causal,
            "softcap": softcap,
        }

        def fn():
            out = _first(interface.flash_attn_varlen_func(queries, keys, values, **kwargs))
            return out.view(batch, seqlen, heads, -1).transpose(1, 2)

        return Prepared(fn, {"kernel": f"flash_attn_varlen_func causal={causal}"})
