#!/usr/bin/env bash
# A quick look at schedule candidates on the GPU machine, in one call:
#   here:  scripts/hopper-sweep.sh VARIANT ...   (writes build/sweep/)
#   there: scripts/device-sweep.sh [SEQLENS] [HEAD_DIMS] [CAUSAL]
#          (carry build/sweep, build/kernels, build/runtime)
# 1. scripts/check_bundles.py on every candidate: float64 reference on odd
#    shapes, GQA, Sq != Sk and many waves of blocks;
# 2. the harness on the candidates next to the shipped kernels and cuDNN in
#    the same run (bf16; default S 512,1024,2048,8192,16384, D 64,128,256,
#    causal 0,1). Rows a candidate does not cover are n/a.
# Logs and results.json go to $OUT (or build/device-sweep).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
LOGS=${OUT:-build/device-sweep}
mkdir -p "$LOGS"
source scripts/candidates.sh
check_candidates

echo "== harness"
timeout "${BENCH_TIMEOUT:-300}" python3 -m tiledattn.bench --seqlens "${1:-512,1024,2048,8192,16384}" \
  --head-dims "${2:-64,128,256}" --dtypes bf16 --causal "${3:-0,1}" \
  --backends tiledattn cudnn "${schedules[@]}" --no-plots --out "$LOGS/bench" 2>&1 |
  grep -v '%|' | tail -n 40
