#!/usr/bin/env bash
# Builds the tiledattn wheel (pyproject.toml: the package, the runtime
# library, the kernel bundles of build/kernels), installs it into a fresh
# virtual environment that sees only the interpreter's packages (torch, pytest),
# and runs the Python suite from the installed package with no TILEDATTN_*
# variable set. Prints the wheel's size; the last line is pytest's summary.
#
#   scripts/wheel-check.sh                 # build dist/*.whl here, then test it
#   scripts/wheel-check.sh dist/X.whl      # test a carried wheel (GPU machine:
#                                          # no network, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
wheel=${1:-}
if [ -z "$wheel" ]; then
  rm -rf dist
  echo "== pip wheel . (runtime from lib/Runtime, bundles from ${TILEDATTN_WHEEL_KERNEL_DIR:-build/kernels})"
  "$PY" -m pip wheel . --no-deps -w dist -q
  wheel=$(ls dist/tiledattn-*.whl)
fi
echo "wheel: $wheel, $(stat -c %s "$wheel") bytes"
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
"$PY" -m venv --system-site-packages "$venv"
# --system-site-packages reaches only the base interpreter's packages; when
# $PY is itself a virtual environment (the GPU machine's is), torch and
# pytest live in its site-packages, so point the new one there too. Those
# paths come after the venv's own, where the wheel is installed.
"$PY" -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  >"$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/host-packages.pth"
"$venv/bin/python" -m pip install -q --no-deps --no-index "$wheel"
unset TILEDATTN_KERNEL_DIR TILEDATTN_RUNTIME_LIB TILEDATTN_COMPILE PYTHONPATH
cd "$(dirname "$venv")"
"$venv/bin/python" - <<'EOF'
import tiledattn
from tiledattn import _runtime

print(f"installed: {tiledattn.__file__}")
print(f"runtime: {tiledattn.load_runtime()}")
print(f"kernels: {tiledattn.kernel_dir()}, {len(tiledattn.available_kernels())} bundles")
assert _runtime.PACKAGE_DIR in tiledattn.load_runtime().parents
assert tiledattn.kernel_dir() == _runtime.WHEEL_KERNEL_DIR
EOF
# The tile-IR kernels' tests run in the round itself, apart (a hang in a new
# kernel must not stop this check).
TILEDATTN_TEST_INSTALLED=1 "$venv/bin/python" -m pytest "$ROOT/python/test" -q -rs -p no:cacheprovider \
  --ignore="$ROOT/python/test/test_gpu_tile_ir.py" --ignore="$ROOT/python/test/test_gpu_flex.py"
