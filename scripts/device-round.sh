#!/usr/bin/env bash
# The whole GPU round, run from the repository root on the GPU machine (torch,
# cmake, ninja, nvcc; no MLIR, no network):
#   1. print the machine (nvidia-smi, torch, nvcc);
#   2. check the carried kernel bundles (build/kernels or $TILEDATTN_KERNEL_DIR);
#   3. use the carried runtime (build/runtime/libtiledattn_runtime.so or
#      $TILEDATTN_RUNTIME_LIB), rebuilding it from lib/Runtime if it does not
#      load here;
#   4. run python3 -m pytest python/test and print its summary (the tests of
#      the tile-IR kernels apart, under NEW_KERNEL_TIMEOUT);
#   5. the C++ caller (test/Runtime), when its binary was carried;
#   6. the wheel, when dist/*.whl was carried (scripts/wheel-check.sh), and
#      the mutation check's GPU part (scripts/mutation_check.py gpu);
#   7. compute-sanitizer over every kernel (scripts/device-sanitize.sh;
#      SANITIZE=0 skips it);
#   8. speed lines: tiledattn vs torch SDPA, and the tile-IR program's
#      kernel vs the shipped one, medians of CUDA-event timings.
# QUICK=1 (with SANITIZE=0: about 100 s instead of 300) stops after step 5,
# for a session whose device time is nearly spent: the tests of every
# kernel, without the wheel, the mutants and the speed lines; the round
# then says what it left out.
# The build outputs come carried as directories or as build/device-carry.tgz
# (scripts/device-pack.sh), unpacked first.
# Logs go to build/device-round, or, when $OUT is set (the device tool,
# which brings back at most 8 files), to $OUT/device-round-logs.tgz. Exit
# status: 0 when pytest, the C++ caller, the mutation check and every
# sanitizer passed, 1 when one failed, 2 when the round could not start.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
if [ -n "${OUT:-}" ]; then
  LOGS=$(mktemp -d)/device-round
  trap 'tar -czf "$OUT/device-round-logs.tgz" -C "$(dirname "$LOGS")" device-round' EXIT
  trap 'echo "stopped (SIGTERM)"; exit 143' TERM  # the logs still come back
else
  LOGS=$ROOT/build/device-round
fi
mkdir -p "$LOGS"
step() { printf '\n== %s\n' "$*"; }
# The build outputs packed by scripts/device-pack.sh (one compressed carry).
if [ -f build/device-carry.tgz ]; then
  tar -xzf build/device-carry.tgz || exit 2
fi
if [ -z "${TILEDATTN_GIT_COMMIT:-}" ] && [ -f build/device-commit ]; then
  TILEDATTN_GIT_COMMIT=$(cat build/device-commit) # from device-pack.sh
  export TILEDATTN_GIT_COMMIT
fi

step "machine"
{
  echo "commit ${TILEDATTN_GIT_COMMIT:-unknown} (build/device-commit)"
  nvidia-smi || echo "nvidia-smi failed"
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "| torch", torch.__version__, "| cuda", torch.version.cuda, "| gpu", torch.cuda.get_device_name() if torch.cuda.is_available() else None, torch.cuda.get_device_capability() if torch.cuda.is_available() else "")'
  command -v nvcc >/dev/null && nvcc --version | tail -n 2
  cmake --version | head -n 1
} 2>&1 | tee "$LOGS/machine.log"

step "kernel bundles"
export TILEDATTN_KERNEL_DIR=${TILEDATTN_KERNEL_DIR:-$ROOT/build/kernels}
bundles=$(find "$TILEDATTN_KERNEL_DIR" -mindepth 2 -maxdepth 2 -name manifest.json 2>/dev/null | wc -l)
echo "$bundles bundles in $TILEDATTN_KERNEL_DIR"
if [ "$bundles" -eq 0 ]; then
  echo "error: no kernel bundles; build them on the build machine (ninja -C build) and carry build/kernels"
  exit 2
fi

step "runtime library"
lib=${TILEDATTN_RUNTIME_LIB:-$ROOT/build/runtime/libtiledattn_runtime.so}
loads() { python3 -c "import sys, torch; torch.ops.load_library(sys.argv[1])" "$1" 2>&1; }
if [ -f "$lib" ] && why=$(loads "$lib"); then
  echo "using $lib"
else
  echo "$lib does not load here (${why:-missing}); rebuilding from lib/Runtime"
  build=$ROOT/build/runtime-standalone
  if ! { cmake -G Ninja -S lib/Runtime -B "$build" -DCMAKE_BUILD_TYPE=Release &&
         ninja -C "$build"; } >"$LOGS/runtime-build.log" 2>&1; then
    tail -n 30 "$LOGS/runtime-build.log"
    echo "error: the runtime did not build; see $LOGS/runtime-build.log"
    exit 2
  fi
  lib=$build/runtime/libtiledattn_runtime.so
  why=$(loads "$lib") || { echo "error: the rebuilt $lib does not load: $why"; exit 2; }
  echo "using the rebuilt $lib"
fi
export TILEDATTN_RUNTIME_LIB=$lib

step "pytest"
if ! python3 -c "import pytest" 2>/dev/null; then
  # No network here: install pytest from wheels carried in .whl/.
  if ls "$ROOT"/.whl/pytest-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --find-links "$ROOT/.whl" pytest
  else
    echo "error: pytest is not installed and no wheels are in .whl/ (pip download pytest -d .whl on the build machine, then carry .whl)"
    exit 2
  fi
fi
# The kernels from the tile program (tile-IR bundles, flex_attention) run
# apart, under their own time limit: new kernels that hang must not take the
# rest of the round with them.
NEW_KERNEL_TESTS=(python/test/test_gpu_tile_ir.py python/test/test_gpu_flex.py python/test/test_gpu_masks.py
  python/test/test_gpu_varlen.py python/test/test_gpu_head_dims.py python/test/test_gpu_variants.py
  python/test/test_gpu_decode.py python/test/test_gpu_kvcache.py
  python/test/test_gpu_backward_programs.py)
python3 -m pytest python/test -q -rs --junitxml="$LOGS/pytest.xml" \
  "${NEW_KERNEL_TESTS[@]/#/--ignore=}" >"$LOGS/pytest.log" 2>&1
pytest_rc=$?
rc=$((pytest_rc ? 1 : 0))
grep -E '^(FAILED|ERROR) ' "$LOGS/pytest.log" | head -n 40
grep -E '^SKIPPED' "$LOGS/pytest.log" | head -n 5
echo "pytest summary: $(tail -n 1 "$LOGS/pytest.log") (exit $pytest_rc; log: $LOGS/pytest.log)"
timeout -s KILL "${NEW_KERNEL_TIMEOUT:-240}" python3 -m pytest "${NEW_KERNEL_TESTS[@]}" -q -rs \
  --junitxml="$LOGS/pytest-tile-ir.xml" >"$LOGS/pytest-tile-ir.log" 2>&1
tile_rc=$?
[ $tile_rc -eq 0 ] || rc=1
grep -E '^(FAILED|ERROR) ' "$LOGS/pytest-tile-ir.log" | head -n 20
[ $tile_rc -eq 137 ] && echo "tile-IR tests: killed after ${NEW_KERNEL_TIMEOUT:-240} s (a hang?)"
echo "pytest (tile-IR, flex) summary: $(tail -n 1 "$LOGS/pytest-tile-ir.log") (exit $tile_rc; log: $LOGS/pytest-tile-ir.log)"

step "C++ caller"
# The ops through libtorch's dispatcher from a C++ program (test/Runtime),
# when the build machine's binary was carried (build/bin/tiledattn-cpp-caller).
caller=$ROOT/build/bin/tiledattn-cpp-caller
if [ -x "$caller" ]; then
  torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
  LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$caller" "$TILEDATTN_KERNEL_DIR/sdpa_fwd_f16_d64" "$lib" >"$LOGS/cpp-caller.log" 2>&1
  caller_rc=$?
  tail -n 1 "$LOGS/cpp-caller.log"
  echo "C++ caller exit $caller_rc"
  [ $caller_rc -eq 0 ] || rc=1
else
  echo "skipped: $caller was not carried"
fi

if [ "${QUICK:-0}" = 1 ]; then
  step "left out (QUICK=1)"
  echo "the wheel suite, the mutation check, compute-sanitizer and the speed lines"
  exit $rc
fi

step "wheel"
# The wheel (pip wheel . --no-deps -w dist, carried as dist/): installed in a
# fresh virtual environment, the suite runs from it with no TILEDATTN_*
# variable (scripts/wheel-check.sh).
wheel=$(ls "$ROOT"/dist/tiledattn-*.whl 2>/dev/null | head -n 1)
if [ -n "$wheel" ]; then
  bash scripts/wheel-check.sh "$wheel" >"$LOGS/wheel-check.log" 2>&1
  wheel_rc=$?
  grep -E "^(wheel|installed|runtime|kernels):" "$LOGS/wheel-check.log"
  echo "wheel suite: $(tail -n 1 "$LOGS/wheel-check.log") (exit $wheel_rc)"
  [ $wheel_rc -eq 0 ] || rc=1
else
  echo "skipped: no dist/tiledattn-*.whl was carried"
fi

step "mutation check"
# scripts/mutation_check.py gpu: every kernel mutant (build/kernel-mutants,
# carried) and package mutant must make the GPU tests fail.
mutants_dir=${TILEDATTN_MUTANTS_DIR:-$ROOT/build/kernel-mutants}
if [ -d "$mutants_dir" ]; then
  python3 scripts/mutation_check.py gpu "$mutants_dir" --kernels "$TILEDATTN_KERNEL_DIR" \
    2>&1 | tee "$LOGS/mutation-check.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
else
  echo "error: no kernel mutants in $mutants_dir (build them here: ninja -C build, and carry build/kernel-mutants)"
  rc=1
fi

step "compute-sanitizer"
# scripts/device-sanitize.sh: memcheck over the sanitizer builds
# (build/kernels-sanitize), synccheck and racecheck over the shipped
# bundles, one process each; any error fails the round.
if [ "${SANITIZE:-1}" = 0 ]; then
  echo "skipped: SANITIZE=0"
else
  LOGS=$LOGS bash scripts/device-sanitize.sh "${TILEDATTN_SANITIZE_DIR:-$ROOT/build/kernels-sanitize}" \
    "$TILEDATTN_KERNEL_DIR" | tail -n 3
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi

step "speed"
TILE_IR_TESTS_RC=$tile_rc python3 - <<'PY' 2>&1 | tee "$LOGS/speed.log"
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, "python")
import tiledattn

B, H, S, D, dtype = 4, 16, 4096, 128, torch.bfloat16


def median_ms(fn, warmup=10, iters=50):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


try:
    q, k, v = (torch.randn(B, H, S, D, dtype=dtype, device="cuda") for _ in range(3))
    with torch.inference_mode():
        ours = median_ms(lambda: tiledattn.scaled_dot_product_attention(q, k, v))
        ref = median_ms(lambda: F.scaled_dot_product_attention(q, k, v))
    flops = 4 * B * H * S * S * D
    print(
        f"speed: B={B} H={H} S={S} D={D} bf16 non-causal: tiledattn {ours:.3f} ms "
        f"({flops / ours / 1e9:.0f} TFLOP/s), torch SDPA {ref:.3f} ms "
        f"({flops / ref / 1e9:.0f} TFLOP/s), tiledattn/torch speed {ref / ours:.2f}x"
    )
    # The same shape on the kernel lowered through the tile program
    # (schedules/tile_ir: the shipped schedule, field for field), beside the
    # shipped one; only once its tests passed (a hang would end the round).
    if os.environ.get("TILE_IR_TESTS_RC") != "0":
        raise RuntimeError("tile-IR program not timed: its tests did not pass")
    tile = "build/kernels-tile-ir/sdpa_fwd_bf16_d128"
    with torch.inference_mode():
        program = median_ms(
            lambda: torch.ops.tiledattn.sdpa_fwd(q, k, v, False, D**-0.5, tile)
        )
    print(
        f"speed: tile-IR program {tile}: {program:.3f} ms ({flops / program / 1e9:.0f} "
        f"TFLOP/s), shipped/tile-IR speed {program / ours:.2f}x"
    )
except Exception as error:  # the round's result is pytest's; report and go on
    print(f"speed: failed: {type(error).__name__}: {error}")
PY
exit $rc
