#!/usr/bin/env bash
# compute-sanitizer over every kernel, on the GPU machine (part of
# scripts/device-round.sh):
#   scripts/device-sanitize.sh [SANITIZE_DIR] [SHIPPED_DIR]
# 1. memcheck, racecheck, synccheck and initcheck over every bundle in
#    SANITIZE_DIR (build/kernels-sanitize: the shipped schedules compiled
#    with tiledattn-compile --sanitizer-build, i.e. without setmaxnreg), each
#    bundle called at a short and a long key length by
#    scripts/sanitize_kernels.py: no error, and every result right.
# 2. synccheck over the shipped bundles themselves (SHIPPED_DIR,
#    build/kernels): no error. Their results are reported, not counted: the
#    tools' instrumentation assumes every warp keeps the launch's register
#    count, so it corrupts the registers of the warps that setmaxnreg gave
#    more or fewer (every shipped kernel then computes garbage under it,
#    D = 64 ones included, while right without it).
# The five runs go in parallel, one process each. initcheck runs without
# torch's caching allocator and watches torch's kernels too: an output
# element the kernel did not write is then an uninitialized read when the
# script sums the output. Racecheck, the slowest, takes shorter lengths.
# Logs: $LOGS (default $OUT or build/device-sanitize)/sanitize-*.log; one line
# per run. Exit status: 0 when every run was clean, else 1 (2: no tool).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
SANITIZE_DIR=${1:-build/kernels-sanitize}
SHIPPED_DIR=${2:-${TILEDATTN_KERNEL_DIR:-build/kernels}}
LOGS=${LOGS:-${OUT:-build/device-sanitize}}
LENGTHS=${SANITIZE_LENGTHS:-300,5000}
RACECHECK_LENGTHS=${SANITIZE_RACECHECK_LENGTHS:-200,1100}
mkdir -p "$LOGS"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "error: no compute-sanitizer on this machine"; exit 2; }
for d in "$SANITIZE_DIR" "$SHIPPED_DIR"; do
  ls "$d"/*/manifest.json >/dev/null 2>&1 || { echo "error: no bundles in $d"; exit 2; }
done
export PYTHONUNBUFFERED=1

run() { # name tool dir lengths [script options]
  local name=$1 tool=$2 dir=$3 lengths=$4 env=() filter=(--kernel-name kns=sdpa_fwd)
  shift 4
  if [ "$tool" = initcheck ]; then
    env=(PYTORCH_NO_CUDA_MEMORY_CACHING=1)
    filter=()
  fi
  env "${env[@]}" timeout "${SANITIZE_TIMEOUT:-420}" "$sanitizer" --tool "$tool" \
    --error-exitcode 1 --print-limit 10 "${filter[@]}" \
    python3 scripts/sanitize_kernels.py "$dir" --lengths "$lengths" "$@" \
    >"$LOGS/sanitize-$name.log" 2>&1
}

names=(memcheck racecheck synccheck initcheck synccheck-shipped)
pids=()
run memcheck memcheck "$SANITIZE_DIR" "$LENGTHS" & pids+=($!)
run racecheck racecheck "$SANITIZE_DIR" "$RACECHECK_LENGTHS" & pids+=($!)
run synccheck synccheck "$SANITIZE_DIR" "$LENGTHS" & pids+=($!)
run initcheck initcheck "$SANITIZE_DIR" "$LENGTHS" & pids+=($!)
run synccheck-shipped synccheck "$SHIPPED_DIR" "$LENGTHS" --no-check & pids+=($!)
rc=0
i=0
for pid in "${pids[@]}"; do
  wait "$pid"
  status=$?
  name=${names[$i]}
  i=$((i + 1))
  log=$LOGS/sanitize-$name.log
  errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$log" | head -n 1 | grep -oE "[0-9]+")
  last=$(grep -E " (ok  |FAIL) " "$log" | tail -n 1 | awk '{print $1, $3, $4}')
  printf 'sanitize %-18s exit %-3s errors %-4s %3s ok %3s wrong  (last: %s)\n' "$name" "$status" \
    "${errors:-?}" "$(grep -cE ' ok  ' "$log")" "$(grep -cE ' FAIL ' "$log")" "${last:-none}"
  [ "$status" -eq 0 ] && [ "${errors:-1}" -eq 0 ] || rc=1
done
exit $rc
