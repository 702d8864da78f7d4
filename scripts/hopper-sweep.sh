#!/usr/bin/env bash
# Compiles a sweep of Hopper schedule variants (producer = tma) into
# build/sweep/<variant>_<kernel>/ for a quick look on the GPU machine:
#   here:  scripts/hopper-sweep.sh [VARIANT ...]
#   there: python3 scripts/check_bundles.py build/sweep --time
#          (carry build/sweep)
# A variant is D:block_n:stages:consumers:causal[:FIELDS] where FIELDS are
# more schedule fields separated by ';' (0/1 flags as true/false), e.g.
#   128:128:2:2:0:pingpong=true;overlap_softmax=true;persistent=true
# The variant's directory name spells them out (d128_n128_s2_c2_pp_ov_pers...).
# The harness (python -m tiledattn.bench --schedule DIR ...) gives the
# numbers that pick the shipped defaults (docs/Schedules.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
variants=("$@")
shipped="pingpong=true;overlap_softmax=true"
if [ ${#variants[@]} -eq 0 ]; then
  variants=("128:128:2:2:0:$shipped" "128:128:2:2:0:$shipped;persistent=true"
            "128:128:2:2:1:$shipped;persistent=true"
            "64:128:2:3:0:$shipped;producer_regs=32;consumer_regs=160"
            "256:80:2:2:0:$shipped;persistent=true")
fi
out=build/sweep
rm -rf "$out" && mkdir -p "$out/src"
for v in "${variants[@]}"; do
  IFS=: read -r d n s c causal fields <<<"$v"
  extra=""
  tag=""
  if [ -n "${fields:-}" ]; then
    IFS=';' read -r -a list <<<"$fields"
    for f in "${list[@]}"; do
      key=${f%%=*}
      value=${f#*=}
      extra+="${extra:+, }$key = $value"
      case $key in # short names keep the harness's columns readable
        pingpong) short=pp ;; overlap_softmax) short=ov ;; persistent) short=pers ;;
        producer_regs) short="pr" ;; consumer_regs) short=cr ;; tma_store) short=ts ;;
        q_buffers) short=qb ;; dynamic_tiles) short=dyn ;; tile_order) short=ord ;;
        overlap_epilogue) short=oe ;;
        defer_store) short=ds ;; narrow_diagonal) short=nd ;; skip_masked_blocks) short=skip ;;
        uniform_consumer) short=uc ;; exp2_on_fma) short=fma ;; hold_packed) short=hp ;; q_by_atom) short=qa ;; *) short=$key ;;
      esac
      case $value in
        true) tag+="_$short" ;;
        false) ;;
        *) tag+="_$short$value" ;;
      esac
    done
  fi
  name="d${d}_n${n}_s${s}_c${c}${tag}"
  python3 scripts/gen-hopper-schedules.py "$out/src/$name" --dtypes bf16 \
    --head-dims "$d" --causal "$causal" --block-n "$d:$n" --stages "$d:$s" \
    --consumers "$c" --extra "$extra"
  for f in "$out/src/$name"/*.mlir; do
    base=$(basename "$f" .mlir)
    echo "[$name] $base"
    build/bin/tiledattn-compile "$f" -o "$out/${name}_${base#sdpa_fwd_}" | tail -n 1
  done
  rm -rf "$out/src/$name"
done
rm -rf "$out/src"
