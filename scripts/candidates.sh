# shellcheck shell=bash
# Sourced by scripts/device-sweep.sh and scripts/device-ab.sh (from the
# repository root): the harness's environment, then check_candidates, which
# runs scripts/check_bundles.py on $SWEEP (default build/sweep) into
# $LOGS/check.log and sets `schedules` to the --schedule arguments of the
# candidates that passed (a wrong kernel is never timed).
export PYTHONUNBUFFERED=1 PYTHONPATH=python
export TILEDATTN_KERNEL_DIR=${TILEDATTN_KERNEL_DIR:-$PWD/build/kernels}
export TILEDATTN_RUNTIME_LIB=${TILEDATTN_RUNTIME_LIB:-$PWD/build/runtime/libtiledattn_runtime.so}
SWEEP=${SWEEP:-build/sweep}

check_candidates() {
  echo "== check_bundles $SWEEP"
  timeout "${CHECK_TIMEOUT:-240}" python3 scripts/check_bundles.py "$SWEEP" >"$LOGS/check.log" 2>&1
  echo "exit $?; $(tail -n 1 "$LOGS/check.log")"
  grep -E "^FAIL" "$LOGS/check.log" | head -n 20
  schedules=()
  local d
  for d in "$SWEEP"/*/; do
    grep -q "^FAIL *$(basename "$d") " "$LOGS/check.log" || schedules+=(--schedule "${d%/}")
  done
}
