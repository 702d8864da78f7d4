#!/usr/bin/env bash
# The same-run A/B of the tile program against the kernels before it
# (issue "The tile IR expresses the Hopper kernel"; docs/perf-notes.md):
# every shipped schedule the tile program writes is lowered through it by
# default; this compiles it once more through convert-sdpa-to-hopper
# (`tiledattn-compile --hopper-emitter`) as emitter_<name>, the candidate the
# shipped bundle is measured against, and lists the schedules that still go
# through convert-sdpa-to-hopper with the refinements the program lacks.
#   here:  scripts/tile-program-sweep.sh        (writes build/sweep-tile-program/)
#   there: SWEEP=build/sweep-tile-program scripts/device-ab.sh 4096,16384 128 0 2
#          (carry build/sweep-tile-program, build/kernels, build/runtime)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${SWEEP:-build/sweep-tile-program}
compile=${TILEDATTN_COMPILE:-build/bin/tiledattn-compile}
rm -rf "$out" && mkdir -p "$out"
written=0 refused=0
for f in python/tiledattn/schedules/*.mlir; do
  name=$(basename "$f" .mlir)
  tmp=$(mktemp -d)
  if log=$("$compile" --hopper-tile-program "$f" -o "$tmp/tile" 2>&1); then
    "$compile" --quiet --hopper-emitter "$f" -o "$out/emitter_$name"
    if cmp -s "$tmp/tile/kernel.cubin" "$out/emitter_$name/kernel.cubin"; then
      rm -rf "${out:?}/emitter_$name" # D = 192 and the like: no emitter kernel
      echo "tile program: $name (only)"
    else
      echo "tile program: $name (its emitter kernel: emitter_$name)"
    fi
    written=$((written + 1))
  else
    # The diagnostic names the refinements the program does not write.
    echo "emitter:      $name: $(grep -o 'sets [a-z0-9_, ]*, which' <<<"$log" | sed 's/^sets //; s/, which$//')"
    refused=$((refused + 1))
  fi
  rm -rf "$tmp"
done
echo "$written of $((written + refused)) shipped schedules go through the tile program; their emitter kernels are in $out"
