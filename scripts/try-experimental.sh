#!/usr/bin/env bash
# First look at the experimental kernels on the GPU machine, in one call:
# correctness of every bundle in build/experimental against float64
# (scripts/check_bundles.py, six shapes each), then, only if all pass, the
# harness on them beside the shipped kernels and cuDNN.
#   here:  ninja -C build tiledattn-experimental-kernels
#   there: scripts/try-experimental.sh   (carry build/experimental,
#          build/kernels and build/runtime)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OUTDIR=${OUT:-build/try-experimental}
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1
if ! python3 scripts/check_bundles.py build/experimental | tee "$OUTDIR/check.log"; then
  echo "experimental kernels are wrong on some shapes: not timing them"
  exit 1
fi
schedules=()
for d in build/experimental/*/; do schedules+=(--schedule "${d%/}"); done
PYTHONPATH=python python3 -m tiledattn.bench --seqlens 1024,8192 --head-dims 64 \
  --dtypes bf16,fp16 --causal 0,1 --backends tiledattn cudnn flash "${schedules[@]}" \
  --no-plots --out "$OUTDIR/bench"
