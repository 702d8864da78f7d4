#!/usr/bin/env bash
# Runs every test: the lit suite (dialect, passes, lowering, PTX, tools,
# ptxas on every shipped schedule), the Python tests, then the mutation
# check's CPU part (scripts/mutation_check.py cpu: every mutant of the
# compiler's output and of the package must make a suite fail). GPU tests
# skip with a reason on machines without CUDA. The last line is pytest's
# summary.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BUILD=${TILEDATTN_BUILD_DIR:-$PWD/build}
PY=${PYTHON:-python3}
echo "== lit: check-tiledattn"
ninja -C "$BUILD" check-tiledattn
lit_rc=$?
echo "== mutation check (CPU part)"
"$PY" scripts/mutation_check.py cpu --build "$BUILD"
mutation_rc=$?
echo "== pytest: python/test"
"$PY" -m pytest python/test -q -rs
py_rc=$?
if [ $lit_rc -ne 0 ]; then
  echo "check-tiledattn failed (exit $lit_rc)"
  exit $lit_rc
fi
if [ $mutation_rc -ne 0 ]; then
  echo "the mutation check failed (exit $mutation_rc)"
  exit $mutation_rc
fi
exit $py_rc
