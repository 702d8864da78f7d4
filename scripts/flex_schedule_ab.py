"""A/B of flex_attention's head-dim-128 schedule against refinements of it,
on issue 22's variants (key padding, causal sliding window
1024, causal 4 documents, causal softcap 30), bf16, 16 heads, B x S = 16k.

    here (compiler): python3 scripts/flex_schedule_ab.py compile CACHE
    GPU machine:     python3 scripts/flex_schedule_ab.py time CACHE [--runs N]

`compile` builds every (refinement, variant) kernel into CACHE (a variant
the verifier refuses is reported and skipped); `time` runs them in one
process, interleaved round by round, checks each against the flex
schedule's output and prints TFLOP/s on kept pairs with the ratio to the
flex schedule. The kernel texts differ only in the schedule, so the cache
finds each by its text as flex_attention would."""

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

import torch  # noqa: E402
from torch.nn.attention.flex_attention import create_block_mask  # noqa: E402

import tiledattn  # noqa: E402
from tiledattn import flex  # noqa: E402
from tiledattn.bench.masks import MASKS  # noqa: E402
from tiledattn.bench.score_mods import SCORE_MODS  # noqa: E402

BASE = flex._SCHEDULES[128]
# Refinements on top of flex_attention's schedule; earlier rounds' sets are
# in results/2026-12-06-variants (flex-schedule-ab-*.txt).
REFINEMENTS = {
    "flex": "",
    # Persistent forms that overlap a short tile's end with the next one's
    # start (windows and short documents have 9 K/V blocks a tile or fewer).
    # flex_attention's short-tile schedule (producer 32 registers, consumers
    # 232), and the same at 24 / 240, where its producer spills 16 bytes.
    "short_tiles": "",
    "short_tiles_24_240": "persistent = true, dynamic_tiles = true, q_buffers = 2, "
    "defer_store = true",
}
DIVISION = flex._DIVISION
VARIANTS = ("key_padding", "window1024", "documents4", "softcap30")
SHAPES = ((4, 4096), (1, 16384))  # (B, S); H = 16, D = 128


def use(refinement: str) -> None:
    extra = REFINEMENTS[refinement]
    # Every case on the short-tile schedule, or none (whatever its tiles).
    flex._SHORT_TILE_BLOCKS = float("inf") if refinement == "short_tiles" else -1
    base = BASE
    if "defer_store" in extra:  # the program writes one of the two epilogues
        base = base.replace(", overlap_epilogue = true", "")
    flex._SCHEDULES[128] = base + (f", {extra}" if extra else "")
    division = "" if refinement == "ieee_division" else DIVISION
    if flex._DIVISION != division:
        flex._DIVISION = division
        flex._traces.clear()  # traced again with this division


def arguments(variant: str, batch: int, seqlen: int, device):
    """(score_mod, block_mask, kept pairs per head summed over the batch)."""
    if variant == "softcap30":

        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        block_mask = create_block_mask(causal, None, None, seqlen, seqlen, device=device)
        return SCORE_MODS["softcap30"], block_mask, batch * seqlen * (seqlen + 1) // 2
    mask = MASKS[variant]
    mod = mask.mask_mod(batch, seqlen, device)
    block_mask = create_block_mask(mod, batch, None, seqlen, seqlen, device=device)
    return None, block_mask, mask.kept_pairs(batch, seqlen)


def compile_all(cache: Path) -> int:
    for refinement in REFINEMENTS:
        use(refinement)
        for variant in VARIANTS:
            q = torch.empty(2, 2, 256, 128, dtype=torch.bfloat16)
            score_mod, block_mask, _ = arguments(variant, 2, 256, "cpu")
            text = flex.flex_kernel(q, q, q, score_mod, block_mask).text
            try:
                kernel = tiledattn.compile(text, cache=cache)
                # A candidate that spills is a different kernel from the
                # one the A/B means to time: say so next to its path.
                spills = kernel.manifest["resources"]["spill_stores"]
                note = f"  SPILLS {spills} bytes" if spills else ""
                print(f"{refinement:28s} {variant:12s} {kernel.path}{note}", flush=True)
            except tiledattn.CompileError as error:
                print(f"{refinement:28s} {variant:12s} refused: {str(error)[:300]}", flush=True)
    return 0


def time_all(cache: Path, runs: int, rounds: int) -> int:
    torch.manual_seed(0)
    print("| variant | S | B | " + " | ".join(REFINEMENTS) + " |")
    print("|---|---|---|" + "---|" * len(REFINEMENTS))
    status = 0
    for variant in VARIANTS:
        for batch, seqlen in SHAPES:
            q, k, v = (
                torch.randn(batch, 16, seqlen, 128, dtype=torch.bfloat16, device="cuda")
                for _ in range(3)
            )
            score_mod, block_mask, kept = arguments(variant, batch, seqlen, "cuda")
            flops = 4 * 16 * kept * 128
            calls, base = [], None
            for refinement in REFINEMENTS:
                use(refinement)
                try:
                    out = tiledattn.flex_attention(q, k, v, score_mod, block_mask, cache=cache)
                except tiledattn.TiledAttnError as error:
                    print(f"{variant} {refinement}: {str(error)[:200]}", file=sys.stderr)
                    continue
                if base is None:
                    base = out
                error = (out.float() - base.float()).abs().max().item()
                if error > 2e-2:
                    print(f"{variant} S{seqlen} {refinement}: WRONG, max |diff| {error}")
                    status = 1
                    continue
                calls.append(refinement)
            times = {name: [] for name in calls}
            start, end = torch.cuda.Event(True), torch.cuda.Event(True)
            for _ in range(rounds):  # interleaved: drift hits every refinement alike
                for name in calls:
                    use(name)
                    for _ in range(3):
                        tiledattn.flex_attention(q, k, v, score_mod, block_mask, cache=cache)
                    start.record()
                    for _ in range(runs):
                        tiledattn.flex_attention(q, k, v, score_mod, block_mask, cache=cache)
                    end.record()
                    end.synchronize()
                    times[name].append(start.elapsed_time(end) / runs)
            cells = []
            base_ms = statistics.median(times["flex"]) if "flex" in times else None
            for name in REFINEMENTS:
                if name not in times:
                    cells.append("n/a")
                    continue
                ms = statistics.median(times[name])
                ratio = f" ({base_ms / ms:.3f})" if base_ms else ""
                cells.append(f"{flops / ms / 1e9:.0f}{ratio}")
            print(f"| {variant} | {seqlen} | {batch} | " + " | ".join(cells) + " |", flush=True)
    print("TFLOP/s on kept pairs (speed vs the flex schedule in parentheses)")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("compile", "time"))
    parser.add_argument("cache", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.mode == "compile":
        return compile_all(args.cache)
    return time_all(args.cache, args.runs, args.rounds)


if __name__ == "__main__":
    sys.exit(main())
