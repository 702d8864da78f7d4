#!/usr/bin/env bash
# compute-sanitizer over every kernel, on the GPU machine (part of
# scripts/device-round.sh):
#   scripts/device-sanitize.sh [SANITIZE_DIR] [SHIPPED_DIR]
# scripts/sanitize_kernels.py calls each bundle at a short and a long key
# length and checks the result against float64. What each tool can be
# trusted with on these kernels (H200, compute-sanitizer of CUDA 13.0,
# docs/Testing.md "compute-sanitizer"):
# - memcheck, over SANITIZE_DIR (build/kernels-sanitize: the shipped
#   schedules compiled without setmaxnreg, which a tool that patches the
#   code cannot account for; two shipped kernels faulted or returned NaN
#   under memcheck in a run beside other sanitizer processes): no error,
#   and every result right.
# - synccheck, over the shipped bundles (SHIPPED_DIR, build/kernels), one
#   process per bundle: no barrier error. Its results are not counted:
#   under synccheck every kernel returns NaN, sanitizer builds included,
#   while right without the tool (its instrumentation does not run wgmma
#   code faithfully); it still reports barrier misuse, as it did for the
#   D = 256 kernels' unwaited K-full phase (issue 27).
# - racecheck, alone over SANITIZE_DIR, then over the shipped bundles at
#   200 keys, one process per bundle: no hazard. Where the tool itself fails ("Internal Sanitizer
#   Error: The Sanitizer failed to handle a hardware exception"), the line
#   says so and it is not counted as a verdict either way.
# initcheck is not run: it does not see TMA stores as writes, so every
# output element reads as uninitialized.
# SANITIZE_TOOLS picks tools (default "memcheck synccheck racecheck").
# Logs: $LOGS (default $OUT or build/device-sanitize)/sanitize-*.log; one
# line per run and a summary per tool. Exit status: 0 when no tool found an
# error and memcheck's results were right, else 1 (2: no tool or bundles).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
SANITIZE_DIR=${1:-build/kernels-sanitize}
SHIPPED_DIR=${2:-${TILEDATTN_KERNEL_DIR:-build/kernels}}
LOGS=${LOGS:-${OUT:-build/device-sanitize}}
mkdir -p "$LOGS"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "error: no compute-sanitizer on this machine"; exit 2; }
for d in "$SANITIZE_DIR" "$SHIPPED_DIR"; do
  ls "$d"/*/manifest.json >/dev/null 2>&1 || { echo "error: no bundles in $d"; exit 2; }
done
export PYTHONUNBUFFERED=1 LOGS sanitizer

# sanitize TOOL NAME DIR LENGTHS [script options]: one tool over DIR (a kernel
# dir or one bundle); prints "TOOL NAME exit N errors N ok N wrong N".
sanitize() {
  local tool=$1 name=$2 dir=$3 lengths=$4 log
  shift 4
  log=$LOGS/sanitize-$tool-$name.log
  timeout "${SANITIZE_TIMEOUT:-240}" "$sanitizer" --tool "$tool" --error-exitcode 1 \
    --print-limit 10 --kernel-name kns=sdpa_fwd \
    python3 scripts/sanitize_kernels.py "$dir" --lengths "$lengths" "$@" >"$log" 2>&1
  local status=$? errors
  errors=$(grep -oE "(ERROR SUMMARY: [0-9]+|RACECHECK SUMMARY: [0-9]+ hazard)" "$log" | head -n 1 | grep -oE "[0-9]+")
  grep -q "Internal Sanitizer Error" "$log" && errors=tool-failed
  printf '%-9s %-36s exit %-3s errors %-11s %3s ok %3s wrong\n' "$tool" "$name" "$status" \
    "${errors:-?}" "$(grep -cE ' ok  ' "$log")" "$(grep -cE ' FAIL ' "$log")"
}
export -f sanitize

TOOLS=" ${SANITIZE_TOOLS:-memcheck synccheck racecheck} "
{
  # memcheck first and alone: beside racecheck runs that fail (and take a
  # hardware exception), two of its 44 calls once returned NaN, never alone.
  [[ $TOOLS == *" memcheck "* ]] && sanitize memcheck all "$SANITIZE_DIR" "${SANITIZE_LENGTHS:-300,5000}"
  # racecheck alone over the builds without setmaxnreg as well: on the
  # shipped builds, eight at a time, the tool failed on 19-21 of 22.
  [[ $TOOLS == *" racecheck "* ]] &&
    sanitize racecheck all-without-setmaxnreg "$SANITIZE_DIR" "${SANITIZE_RACECHECK_LENGTHS:-200}" --no-check
  for bundle in "$SHIPPED_DIR"/*/; do
    name=$(basename "$bundle")
    [[ $TOOLS == *" synccheck "* ]] && echo "synccheck $name $bundle ${SANITIZE_LENGTHS:-300,5000}"
    [[ $TOOLS == *" racecheck "* ]] && echo "racecheck $name $bundle ${SANITIZE_RACECHECK_LENGTHS:-200}"
  done | xargs -r -P "${SANITIZE_JOBS:-8}" -n 4 bash -c 'sanitize "$0" "$1" "$2" "$3" --no-check'
} | sort >"$LOGS/sanitize-summary.txt"
cat "$LOGS/sanitize-summary.txt"

rc=0
summary() { # tool: counts its lines; a line passes when its errors are 0
  local tool=$1 lines clean failed
  lines=$(grep -c "^$tool " "$LOGS/sanitize-summary.txt")
  clean=$(grep -E "^$tool " "$LOGS/sanitize-summary.txt" | grep -cE " errors 0 ")
  failed=$(grep -E "^$tool " "$LOGS/sanitize-summary.txt" | grep -c "tool-failed")
  local note=""
  [ "$failed" -eq 0 ] || note="; the tool itself failed on $failed"
  echo "sanitize $tool: $clean of $lines runs without an error$note"
  [ $((clean + failed)) -eq "$lines" ] || rc=1
}
[[ $TOOLS == *" synccheck "* ]] && summary synccheck
[[ $TOOLS == *" racecheck "* ]] && summary racecheck
if [[ $TOOLS == *" memcheck "* ]]; then
  grep -qE "^memcheck +all +exit 0 +errors 0 " "$LOGS/sanitize-summary.txt" || rc=1
  echo "sanitize memcheck: $(grep -E '^memcheck' "$LOGS/sanitize-summary.txt" | sed 's/  */ /g')"
fi
exit $rc
