#!/usr/bin/env bash
# Compiles a sweep of Hopper schedule variants (producer = tma) into
# build/sweep/<variant>/ for a quick look on the GPU machine:
#   here:  scripts/hopper-sweep.sh [VARIANT ...]
#   there: python3 scripts/check_bundles.py build/sweep --time
#          (carry build/sweep)
# A variant is D:block_n:stages:overlap_softmax:pingpong:causal (0/1 flags),
# e.g. 128:128:2:1:1:0.
# The harness (python -m tiledattn.bench --schedule DIR ...) gives the
# numbers that pick the shipped defaults (docs/Schedules.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  variants=(64:128:2:0:0:0 64:128:2:0:1:0 64:128:2:1:1:0
            128:128:2:0:0:0 128:128:2:0:1:0 128:128:2:1:1:0
            128:128:2:0:1:1 128:128:2:1:1:1
            256:64:2:0:1:0 256:80:2:1:0:0 256:80:2:1:1:0)
fi
out=build/sweep
rm -rf "$out" && mkdir -p "$out/src"
for v in "${variants[@]}"; do
  IFS=: read -r d n s ov pp causal <<<"$v"
  fields=()
  [ "$pp" = 1 ] && fields+=("pingpong = true")
  [ "$ov" = 1 ] && fields+=("overlap_softmax = true")
  extra=$(IFS=,; echo "${fields[*]}" | sed 's/,/, /g')
  name="d${d}_n${n}_s${s}_ov${ov}_pp${pp}"
  python3 scripts/gen-hopper-schedules.py "$out/src/$name" --dtypes bf16 \
    --head-dims "$d" --causal "$causal" --block-n "$d:$n" --stages "$d:$s" \
    --extra "$extra"
  for f in "$out/src/$name"/*.mlir; do
    base=$(basename "$f" .mlir)
    echo "[$name] $base"
    build/bin/tiledattn-compile "$f" -o "$out/${name}_${base#sdpa_fwd_}" | tail -n 1
  done
  rm -rf "$out/src/$name"
done
rm -rf "$out/src"
