#!/usr/bin/env bash
# Runs every test: the lit suite (dialect, passes, lowering, PTX, tools,
# ptxas on every shipped schedule), the mutation check's CPU part
# (scripts/mutation_check.py cpu: every mutant of the compiler's output and
# of the package must make a suite fail), the fuzzers for a fixed budget
# (scripts/fuzz_compiler.py, scripts/fuzz_bundles.py), then the Python
# tests. GPU tests skip with a reason on machines without CUDA. The last
# line is pytest's summary.
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
echo "== fuzz: tiledattn-opt / tiledattn-compile (200 cases or 60 s)"
# A new seed each day (reproduce a failure with --seed); failures are saved
# under build/fuzz-compiler and build/fuzz-bundles.
SEED=${TILEDATTN_FUZZ_SEED:-$(date +%Y%m%d)}
"$PY" scripts/fuzz_compiler.py --build "$BUILD" --seed "$SEED" --cases 200 --time 60
fuzz_rc=$?
echo "== fuzz: the runtime's bundle loader (2000 cases or 60 s)"
if [ -f "$BUILD/runtime/libtiledattn_runtime.so" ]; then
  TILEDATTN_BUILD_DIR=$BUILD "$PY" scripts/fuzz_bundles.py --seed "$SEED" --cases 2000 --time 60 ||
    fuzz_rc=1
else
  echo "skipped: no runtime library in $BUILD/runtime"
fi
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
if [ $fuzz_rc -ne 0 ]; then
  echo "a fuzzer found a failure (seed $SEED; see above)"
  exit $fuzz_rc
fi
exit $py_rc
