#!/usr/bin/env bash
# Issue 22's target grid on the GPU machine: the harness on each variant
# (key padding, causal sliding window 1024, causal 4 documents, causal
# softcap 30) at bf16, head dim 128, 16 heads, B x S = 16k, S = 4k and 16k,
# against FlexAttention (compiled), cuDNN and the efficient backend in the
# same run, and FlashAttention-4 where scripts/device-fa4.sh installed it.
# The kernels come from
# the build's flex cache (the GPU machine has no compiler).
#   there: TILEDATTN_GIT_COMMIT=<hash> OUT=<dir> scripts/device-variants.sh
#          (carry build/kernels, build/kernels-tile-ir, build/runtime)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OUTDIR=${OUT:-build/device-variants}
mkdir -p "$OUTDIR"
if [ -z "${TILEDATTN_GIT_COMMIT:-}" ] && [ -f build/device-commit ]; then
  TILEDATTN_GIT_COMMIT=$(cat build/device-commit) # from device-pack.sh
  export TILEDATTN_GIT_COMMIT
fi
export PYTHONUNBUFFERED=1 PYTHONPATH=python
export TILEDATTN_KERNEL_DIR=${TILEDATTN_KERNEL_DIR:-$PWD/build/kernels}
export TILEDATTN_RUNTIME_LIB=${TILEDATTN_RUNTIME_LIB:-$PWD/build/runtime/libtiledattn_runtime.so}
export TILEDATTN_CACHE_DIR=${TILEDATTN_CACHE_DIR:-$PWD/build/kernels-tile-ir/flex-cache}
[ -d /root/fa4site ] && PYTHONPATH=$PYTHONPATH:/root/fa4site
backends="tiledattn flex cudnn efficient"
python3 -c "import flash_attn.cute.interface" 2>/dev/null && backends="$backends fa4"
echo "backends: $backends"
status=0
run() { # name, harness arguments...
  local name=$1
  shift
  echo "== $name"
  timeout "${VARIANT_TIMEOUT:-150}" python3 -m tiledattn.bench --seqlens 4096,16384 \
    --head-dims 128 --dtypes bf16 --heads 16 --backends $backends --no-plots \
    --no-tqdm --out "$OUTDIR/$name" "$@" 2>&1 | grep -v '%|' | tail -n 25
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && echo "$name: exit $rc" && status=1
}
run key_padding --causal 0 --mask key_padding
run window1024 --causal 0 --mask window1024
run documents4 --causal 0 --mask documents4
run softcap30 --causal 1 --score-mod softcap30
exit $status
