#!/usr/bin/env bash
# Sets up a fresh Debian machine for tiledattn and builds everything:
# LLVM/MLIR 22 and nlohmann-json from Debian, Python packages from PyPI
# (torch pinned to the GPU machine's 2.11.0), then configure + build with
# ninja. Idempotent: a second run installs nothing and prints one line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${TILEDATTN_BUILD_DIR:-$ROOT/build}
PY=${PYTHON:-python3}
log() { echo "setup: $*"; }

# 1. Debian packages.
APT_PKGS=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools nlohmann-json3-dev cmake ninja-build)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. Python packages.
PIP_PKGS=("torch==2.11.0" "numpy" "pytest" "lit" "ruff==0.17.6" "matplotlib" "clang-format>=22,<23")
need_pip=()
for spec in "${PIP_PKGS[@]}"; do
  "$PY" - "$spec" <<'PYEOF' || need_pip+=("$spec")
import sys
from importlib.metadata import version, PackageNotFoundError
spec = sys.argv[1]
name = spec.split("=")[0].split(">")[0].split("<")[0]
try:
    v = version(name)
except PackageNotFoundError:
    sys.exit(1)
if "==" in spec and v.split("+")[0] != spec.split("==")[1]:
    sys.exit(1)
if ">=" in spec and int(v.split(".")[0]) < int(spec.split(">=")[1].split(",")[0]):
    sys.exit(1)
PYEOF
done
if ((${#need_pip[@]})); then
  log "pip installing ${need_pip[*]}"
  "$PY" -m pip install -q --disable-pip-version-check "${need_pip[@]}" 2>&1 | grep -v "Running pip as the 'root'" || true
fi

# 3. CUDA toolkit (ptxas for the kernels, cuda.h for the runtime).
CUDA=${CUDA_PATH:-/usr/local/cuda}
[ -x "$CUDA/bin/ptxas" ] || { echo "setup: error: no ptxas at $CUDA/bin/ptxas; install the CUDA 13 toolkit or set CUDA_PATH" >&2; exit 1; }
RUNTIME=ON
[ -f "$CUDA/include/cuda.h" ] || { RUNTIME=OFF; log "no $CUDA/include/cuda.h: building without the runtime"; }

# 4. Configure once, then build (ninja is silent when nothing changed).
if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$(command -v "$PY")" \
    -DTILEDATTN_CUDA_PATH="$CUDA" -DTILEDATTN_ENABLE_RUNTIME=$RUNTIME >"$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log" >&2; exit 1; }
fi
out=$(ninja -C "$BUILD" 2>&1) || { echo "$out" >&2; exit 1; }
if grep -q "no work to do" <<<"$out"; then
  log "up to date"
else
  grep -E "^(sdpa_|tiledattn-compile)" <<<"$out" || true
  log "built $BUILD"
fi
