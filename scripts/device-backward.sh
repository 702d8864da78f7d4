#!/usr/bin/env bash
# Issue 23's backward in one device call, most important first:
#   1. its GPU tests (every main program and the causal candidate against
#      float64, autograd, torch.compile, deterministic mode, the training
#      test), with $TILEDATTN_BACKWARD_MAIN as given (default: the package's);
#   2. scripts/backward_programs_speed.py: every main program beside cuDNN
#      and FA2, plus the candidate bundles given as arguments (its --main /
#      --main-blocks / --main-row-order options, passed through) and the
#      deterministic mode; then the causal form (with the causal candidates
#      given as --causal-main BUNDLE);
#   3. head dims 64, 192 and 256 beside cuDNN and FA2, and
#      scripts/backward_phases.py (each kernel's share of a backward, ours
#      and cuDNN's, at 1k and 4k);
#   4. with TRAIN=1, scripts/train_compare.py, 300 steps, not causal: the
#      curves (JSON; `python3 scripts/train_compare.py --plot` draws them
#      here). Off by default: the curves change only with the programs'
#      numerics, and the rest fills a call.
# The programs' bundles are the package's (build/kernels/by-text,
# scripts/package_kernels.py; the GPU machine has no compiler).
#   there: OUT=<dir> bash scripts/device-backward.sh [--main BUNDLE ...]
#          [--causal-main BUNDLE ...]
#          (carry build/device-carry.tgz, scripts/device-pack.sh)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OUTDIR=${OUT:-build/device-backward}
mkdir -p "$OUTDIR"
if [ -f build/device-carry.tgz ] && [ ! -d build/kernels ]; then
  tar -xzf build/device-carry.tgz || exit 2
fi
[ -f build/device-commit ] && echo "commit $(cat build/device-commit) (build/device-commit)"
export PYTHONUNBUFFERED=1 PYTHONPATH=python PYTHONWARNINGS=ignore
export TILEDATTN_KERNEL_DIR=${TILEDATTN_KERNEL_DIR:-$PWD/build/kernels}
export TILEDATTN_RUNTIME_LIB=${TILEDATTN_RUNTIME_LIB:-$PWD/build/runtime/libtiledattn_runtime.so}
status=0
args=() causal_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --causal-main ]; then causal_args+=(--main "$2"); else args+=("$1" "$2"); fi
  shift 2
done
timeout 240 python3 -m pytest -q -p no:cacheprovider python/test/test_gpu_backward_programs.py \
  python/test/test_gpu_backward.py python/test/test_gpu_training.py >"$OUTDIR/tests.txt" 2>&1 || status=1
grep -E '^(FAILED|ERROR) ' "$OUTDIR/tests.txt" | head -n 20
echo "backward tests: $(tail -n 1 "$OUTDIR/tests.txt")"
timeout 150 python3 scripts/backward_programs_speed.py --lengths 1024,4096,16384 --deterministic ${args[@]+"${args[@]}"} \
  >"$OUTDIR/speed.txt" 2>&1 || status=1
tail -n 5 "$OUTDIR/speed.txt"
# The causal form (and its candidates) and head dim 64.
timeout 90 python3 scripts/backward_programs_speed.py --lengths 1024,4096,16384 --causal \
  ${causal_args[@]+"${causal_args[@]}"} >"$OUTDIR/speed-causal.txt" 2>&1 || status=1
tail -n 5 "$OUTDIR/speed-causal.txt"
for d in 64 192 256; do
  timeout 60 python3 scripts/backward_programs_speed.py --lengths 1024,4096,16384 --head-dim $d \
    >"$OUTDIR/speed-d$d.txt" 2>&1 || status=1
  tail -n 5 "$OUTDIR/speed-d$d.txt"
done
timeout 60 python3 scripts/backward_phases.py --lengths 1024,4096 >"$OUTDIR/phases.txt" 2>&1 || status=1
grep -E '^##|a call' "$OUTDIR/phases.txt"
if [ "${TRAIN:-0}" = 1 ]; then
  timeout 90 python3 scripts/train_compare.py --steps 300 --out "$OUTDIR" >"$OUTDIR/train.txt" 2>&1 ||
    status=1
  tail -n 1 "$OUTDIR/train.txt"
fi
exit $status
