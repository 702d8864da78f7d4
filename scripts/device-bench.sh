#!/usr/bin/env bash
# The benchmark half of a GPU round (after scripts/device-round.sh): the
# harness on the paper grid (B x S = 16k, H x D = 2048; head dim 256 joins
# when its kernel exists) against the PyTorch SDPA backends in the same run,
# then one ncu profile of the head-dim-128 kernel. While the harness runs,
# nvidia-smi dmon traces power, temperature and clocks once a second into
# $OUT/dmon.log (the 16k rows run near the power limit; docs/Performance.md).
# Plots are drawn on the build machine from results.json
# (python -m tiledattn.bench --from-json).
#   there: TILEDATTN_GIT_COMMIT=<hash> scripts/device-bench.sh
#          (carry build/kernels, build/runtime; the device's copy of the tree
#          has no current .git, so the commit must be passed in)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OUTDIR=${OUT:-build/device-bench}
mkdir -p "$OUTDIR"
if [ -z "${TILEDATTN_GIT_COMMIT:-}" ] && [ -f build/device-commit ]; then
  TILEDATTN_GIT_COMMIT=$(cat build/device-commit) # from device-pack.sh
  export TILEDATTN_GIT_COMMIT
fi
if [ -z "${TILEDATTN_GIT_COMMIT:-}" ]; then
  echo "warning: TILEDATTN_GIT_COMMIT is not set; results.json may name the wrong commit"
fi
export PYTHONUNBUFFERED=1 PYTHONPATH=python
export TILEDATTN_KERNEL_DIR=${TILEDATTN_KERNEL_DIR:-$PWD/build/kernels}
export TILEDATTN_RUNTIME_LIB=${TILEDATTN_RUNTIME_LIB:-$PWD/build/runtime/libtiledattn_runtime.so}
dmon=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi dmon -s pc -d 1 -o T >"$OUTDIR/dmon.log" 2>&1 &
  dmon=$!
fi
timeout "${BENCH_TIMEOUT:-300}" python3 -m tiledattn.bench --preset paper \
  --backends tiledattn cudnn flash efficient --no-plots --out "$OUTDIR/bench" 2>&1 |
  grep -v '%|' | tail -n 60
if [ -n "$dmon" ]; then
  kill "$dmon" 2>/dev/null
  wait "$dmon" 2>/dev/null
  echo "power/clock trace: $(($(wc -l <"$OUTDIR/dmon.log") - 2)) samples in $OUTDIR/dmon.log"
fi
if command -v ncu >/dev/null && [ "${PROFILE:-1}" = 1 ]; then
  timeout "${NCU_TIMEOUT:-150}" ncu --kernel-name regex:sdpa_fwd --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
    python3 scripts/profile_bundle.py "$TILEDATTN_KERNEL_DIR/sdpa_fwd_bf16_d128" 8192 \
    >"$OUTDIR/ncu.txt" 2>&1
  grep -E "Duration|Throughput|Stall|Issue|Pipe|Warp Cycles|Eligible|Active Warps" "$OUTDIR/ncu.txt" | head -n 40
fi
