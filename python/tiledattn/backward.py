"""The backward of tiledattn::sdpa_fwd for autograd: the tile-IR backward
programs (tiledattn.backward_kernels) where they cover the forward's
inputs and deterministic algorithms are off, else the torch-ops backward
below, until the programs cover what the forward does (issue 23).

FlashAttention-2's algorithm in torch ops, in float32: the forward saves
O and the log-sum-exp, the backward recomputes P = exp(scale Q K^T - lse)
a chunk of query rows at a time (so that a chunk's scores stay under a
memory budget) and accumulates

    delta = rowsum(dO * O)
    dV   += P^T dO
    dS    = P * (dO V^T - delta + dlse)
    dQ    = scale dS K,   dK += scale dS^T Q

over the chunks; with grouped-query attention dK and dV are summed over the
query heads of a group. Correct at any shape the forward runs, and slow:
it is there so that training works, and for the autograd, torch.compile
and training tests the kernel will have to pass too. Kernels that read
captured tensors (masks, score_mods, block maps: flex, varlen, decode)
refuse grad at the forward call instead (attention._prepare for an
attn_mask, _Launch.run_with_lse for the rest)."""

import torch

from . import backward_kernels

# The float32 scores of one chunk: 256 MiB (four such tensors live at once).
CHUNK_BYTES = 256 << 20


def _score_chunks(qf, kf, causal, scale, chunk_bytes):
    """(r0, r1, scale * Q[r0:r1] K^T, top-left causal masked) over chunks of
    query rows whose scores take at most `chunk_bytes`."""
    batch, heads, length_q, _ = qf.shape
    length_k = kf.shape[2]
    rows = max(1, chunk_bytes // max(1, qf.element_size() * batch * heads * length_k))
    keys = torch.arange(length_k, device=qf.device)
    for r0 in range(0, length_q, rows):
        r1 = min(length_q, r0 + rows)
        scores = torch.matmul(qf[:, :, r0:r1], kf.transpose(-1, -2)) * scale
        if causal:
            future = keys[None, :] > torch.arange(r0, r1, device=qf.device)[:, None]
            scores = scores.masked_fill(future, -float("inf"))
        yield r0, r1, scores


def sdpa_backward(
    grad_out,
    grad_lse,
    q,
    k,
    v,
    out,
    lse,
    causal,
    scale,
    chunk_bytes=CHUNK_BYTES,
    compute=torch.float32,
):
    """(dq, dk, dv) of q [N, Hq, Sq, D], k [N, Hkv, Sk, D], v [N, Hkv, Sk, Dv]
    given the forward's out and lse, for the gradients of out (and of lse,
    or None); causal is top-left (key j <= query i). `compute`: the
    arithmetic's dtype (float64 for a reference)."""
    batch, heads_q, length_q, _ = q.shape
    heads_kv, length_k = k.shape[1], k.shape[2]
    group = heads_q // heads_kv
    qf, do = q.to(compute), grad_out.to(compute)
    # K/V per query head (a view where there is no group to repeat over).
    kf, vf = (
        t.to(compute).repeat_interleave(group, dim=1) if group > 1 else t.to(compute)
        for t in (k, v)
    )
    delta = (do * out.to(compute)).sum(-1)  # [N, Hq, Sq]
    if grad_lse is not None:
        delta = delta - grad_lse.to(compute)
    dq = torch.empty_like(qf)
    dk = torch.zeros_like(kf)
    dv = torch.zeros_like(vf)
    for r0, r1, scores in _score_chunks(qf, kf, causal, scale, chunk_bytes):
        p = torch.exp(scores - lse[:, :, r0:r1, None].to(compute))
        del scores
        chunk_do = do[:, :, r0:r1]
        dv += torch.matmul(p.transpose(-1, -2), chunk_do)
        ds = p * (torch.matmul(chunk_do, vf.transpose(-1, -2)) - delta[:, :, r0:r1, None])
        del p
        dq[:, :, r0:r1] = torch.matmul(ds, kf) * scale
        dk += torch.matmul(ds.transpose(-1, -2), qf[:, :, r0:r1]) * scale
    if group > 1:
        dk = dk.view(batch, heads_kv, group, length_k, -1).sum(2)
        dv = dv.view(batch, heads_kv, group, length_k, -1).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def forward_with_lse(q, k, v, causal, scale, compute=torch.float64, chunk_bytes=CHUNK_BYTES):
    """The output and lse of plain attention (GQA, top-left causal) in
    `compute`, a chunk of query rows at a time: the reference the harness
    checks backward runs against, with sdpa_backward in float64."""
    batch, heads_q, length_q, _ = q.shape
    group = heads_q // k.shape[1]
    qf = q.to(compute)
    kf, vf = (t.to(compute).repeat_interleave(group, dim=1) for t in (k, v))
    out = torch.empty(*q.shape[:3], v.shape[-1], dtype=compute, device=q.device)
    lse = torch.empty(q.shape[:3], dtype=compute, device=q.device)
    for r0, r1, scores in _score_chunks(qf, kf, causal, scale, chunk_bytes):
        lse[:, :, r0:r1] = torch.logsumexp(scores, -1)
        out[:, :, r0:r1] = torch.matmul(torch.softmax(scores, -1), vf)
    return out, lse


def _setup_context(ctx, inputs, output):
    q, k, v, is_causal, scale = inputs[:5]
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.causal, ctx.scale = bool(is_causal), float(scale)


def _backward(ctx, grad_out, grad_lse):
    q, k, v, out, lse = ctx.saved_tensors
    if grad_out is None:
        grad_out = torch.zeros_like(out)
    # torch.use_deterministic_algorithms: the programs without atomics where
    # they cover the call (backward_kernels.DETERMINISTIC_PROGRAMS), else
    # the torch-ops backward, which has none either.
    deterministic = torch.are_deterministic_algorithms_enabled()
    if backward_kernels.covers(q, k, v, ctx.causal, deterministic=deterministic):
        dq, dk, dv = torch.ops.tiledattn.backward_programs(
            q,
            k,
            v,
            out,
            lse,
            grad_out.to(out.dtype),
            grad_lse,
            ctx.scale,
            ctx.causal,
            deterministic,
        )
    else:
        dq, dk, dv = sdpa_backward(grad_out, grad_lse, q, k, v, out, lse, ctx.causal, ctx.scale)
    # None for is_causal, scale, bundle, and captures where the call passed
    # them: as many as the call's arguments (needs_input_grad has one each)
    return (dq, dk, dv) + (None,) * (len(ctx.needs_input_grad) - 3)


_registered = False


def register() -> None:
    """Registers the backward on tiledattn::sdpa_fwd (once)."""
    global _registered
    if not _registered:
        torch.library.register_autograd(
            "tiledattn::sdpa_fwd", _backward, setup_context=_setup_context
        )
        _registered = True
