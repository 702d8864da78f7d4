#!/usr/bin/env bash
# Same-run A/B rounds on the GPU machine, the way the ninth session decided
# what to ship (docs/perf-notes.md): candidates next to the shipped kernels
# and cuDNN, many interleaved rounds per case, the whole sweep repeated.
#   here:  scripts/hopper-sweep.sh VARIANT ...   (writes build/sweep/)
#   there: scripts/device-ab.sh SEQLENS HEAD_DIMS CAUSAL [REPEATS] [-- BENCH_ARGS]
#          (carry build/sweep, build/kernels, build/runtime)
# e.g. scripts/device-ab.sh 4096,8192,16384 128 0 2 -- --batch 1 --heads 33
# 1. scripts/check_bundles.py on every candidate (a failing one is not timed);
# 2. the harness REPEATS times (default 2; bf16, 60 runs per case over one
#    full cycle of the balanced round order);
# 3. scripts/ab_summary.py over the repeats: each candidate / shipped, per run.
# Results go to $OUT (or build/device-ab): check.log, ab1/, ab2/, ...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
if [ $# -lt 3 ]; then
  echo "usage: $0 SEQLENS HEAD_DIMS CAUSAL [REPEATS] [-- BENCH_ARGS]" >&2
  exit 2
fi
seqlens=$1 dims=$2 causal=$3
shift 3
repeats=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  repeats=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
LOGS=${OUT:-build/device-ab}
mkdir -p "$LOGS"
source scripts/candidates.sh
CHECK_TIMEOUT=${CHECK_TIMEOUT:-120} check_candidates

runs=()
for i in $(seq 1 "$repeats"); do
  echo "== run $i of $repeats (t=${SECONDS}s)"
  timeout "${BENCH_TIMEOUT:-150}" python3 -m tiledattn.bench --seqlens "$seqlens" \
    --head-dims "$dims" --dtypes bf16 --causal "$causal" --runs 60 \
    --backends tiledattn cudnn "${schedules[@]}" --no-plots --out "$LOGS/ab$i" "$@" 2>&1 |
    grep -v '%|' | tail -n 1
  runs+=("$LOGS/ab$i")
done
echo "== same-run ratios"
python3 scripts/ab_summary.py "${runs[@]}"
