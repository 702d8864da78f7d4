"""A decode loop over Llama-3-8B-shaped attention (32 query heads, 8 KV
heads, head dim 128; random weights, a few layers) with a paged KV cache:
a prompt through tiledattn.kvcache_attention (causal, bottom-right), then
one token per step, each step's K/V appended into the pages by the same
call, optionally replayed as one CUDA graph per step. At the end every
layer's last output is checked against torch's SDPA over the cache.

    GPU machine: PYTHONPATH=python python3 scripts/decode_loop.py [--graphs]

docs/Serving.md shows its core; python/test/test_gpu_kvcache.py runs it.
"""

import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import tiledattn  # noqa: E402

HEADS_Q, HEADS_KV, HEAD_DIM = 32, 8, 128
HIDDEN = HEADS_Q * HEAD_DIM


class Layer:
    """One attention layer's weights and its paged K/V cache."""

    def __init__(self, batch, pages_per_seq, page, dtype, gen):
        def weight(rows, cols):
            w = torch.randn(rows, cols, generator=gen, device="cuda") / math.sqrt(rows)
            return w.to(dtype)

        self.wq = weight(HIDDEN, HIDDEN)
        self.wk = weight(HIDDEN, HEADS_KV * HEAD_DIM)
        self.wv = weight(HIDDEN, HEADS_KV * HEAD_DIM)
        self.wo = weight(HIDDEN, HIDDEN)
        shape = (batch * pages_per_seq, page, HEADS_KV, HEAD_DIM)
        self.k_cache = torch.zeros(shape, dtype=dtype, device="cuda")
        self.v_cache = torch.zeros(shape, dtype=dtype, device="cuda")

    def __call__(self, x, lengths, block_table, causal, cache=None):
        """x [B, T, HIDDEN] -> [B, T, HIDDEN]; appends T tokens' K/V."""
        batch, tokens, _ = x.shape
        q = (x @ self.wq).view(batch, tokens, HEADS_Q, HEAD_DIM)
        k = (x @ self.wk).view(batch, tokens, HEADS_KV, HEAD_DIM)
        v = (x @ self.wv).view(batch, tokens, HEADS_KV, HEAD_DIM)
        out = tiledattn.kvcache_attention(
            q,
            self.k_cache,
            self.v_cache,
            lengths,
            block_table,
            k=k,
            v=v,
            causal=causal,
            cache=cache,
        )
        self.last_q, self.last_out = q, out
        return out.reshape(batch, tokens, HIDDEN) @ self.wo


def run(batch=4, layers=2, prompt=16, steps=8, page=256, graphs=False, cache=None) -> float:
    """The loop; returns the largest difference of the last step's outputs
    from torch's SDPA over the cache (every layer)."""
    dtype = torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(0)
    max_len = prompt + steps
    pages_per_seq = -(-max_len // page)
    stack = [Layer(batch, pages_per_seq, page, dtype, gen) for _ in range(layers)]
    # Sequence b's pages, shuffled: a server's pages are anywhere.
    order = torch.randperm(batch * pages_per_seq, generator=gen, device="cuda")
    block_table = order.view(batch, pages_per_seq).to(torch.int32)
    lengths = torch.zeros(batch, dtype=torch.int32, device="cuda")

    def forward(x, causal):
        for layer in stack:
            x = layer(x, lengths, block_table, causal, cache)
        return x

    # The prompt: causal over its own tokens (bottom-right from length 0).
    x = torch.randn(batch, prompt, HIDDEN, generator=gen, device="cuda").to(dtype)
    forward(x, causal=True)
    lengths += prompt
    token = torch.randn(batch, 1, HIDDEN, generator=gen, device="cuda").to(dtype)
    if graphs:
        # Warm up on a side stream (allocations, the kernels' first load),
        # then capture one step; each replay appends at `lengths`, which
        # advances in place between replays.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            forward(token, causal=False)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = forward(token, causal=False)
    for step in range(steps):
        token.copy_(torch.randn(batch, 1, HIDDEN, generator=gen, device="cuda"))
        if graphs:
            graph.replay()
        else:
            out = forward(token, causal=False)
        if step + 1 < steps:
            lengths += 1
            token.copy_(out[:, -1:])
    torch.cuda.synchronize()
    # Check: each layer's last output (from the loop, graph replays included)
    # against torch's SDPA of its query over the whole cache.
    worst = 0.0
    n = int(lengths[0]) + 1
    positions = torch.arange(n, device="cuda")
    for layer in stack:
        for b in range(batch):
            where = (block_table[b, positions // page].long(), positions % page)
            k = layer.k_cache[where].transpose(0, 1)[None]  # [1, Hkv, n, D]
            v = layer.v_cache[where].transpose(0, 1)[None]
            q = layer.last_q[b : b + 1].transpose(1, 2)
            want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True)
            got = layer.last_out[b : b + 1].transpose(1, 2).float()
            worst = max(worst, (got - want).abs().max().item())
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", action="store_true", help="replay each step as a CUDA graph")
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    worst = run(steps=args.steps, graphs=args.graphs)
    print(f"decode loop: largest difference from torch SDPA {worst:.3g}")
    return 0 if worst < 5e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
