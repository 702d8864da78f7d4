#!/usr/bin/env bash
# The shipped schedules compiled through tiledattn-tile-sdpa's tile program
# instead of convert-sdpa-to-hopper, for the same-run A/B that decides when
# a shipped schedule moves to the tile program (issue "The tile IR expresses
# the Hopper kernel"; docs/perf-notes.md):
#   here:  scripts/tile-program-sweep.sh        (writes build/sweep-tile-program/)
#   there: SWEEP=build/sweep-tile-program scripts/device-ab.sh 1024,4096,16384 128 0 2
#          (carry build/sweep-tile-program, build/kernels, build/runtime)
# Each schedule the tile program expresses becomes tile_<name>/; the others
# are listed with the refinements the program does not write yet.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${SWEEP:-build/sweep-tile-program}
compile=${TILEDATTN_COMPILE:-build/bin/tiledattn-compile}
rm -rf "$out" && mkdir -p "$out"
written=0 refused=0
for f in python/tiledattn/schedules/*.mlir; do
  name=$(basename "$f" .mlir)
  if log=$("$compile" --hopper-tile-program "$f" -o "$out/tile_$name" 2>&1); then
    echo "tile program: $name"
    written=$((written + 1))
  else
    rm -rf "${out:?}/tile_$name"
    # The diagnostic names the refinements the program does not write.
    echo "refused:      $name: $(grep -o 'sets [a-z0-9_, ]*, which' <<<"$log" | sed 's/^sets //; s/, which$//')"
    refused=$((refused + 1))
  fi
done
echo "$written of $((written + refused)) shipped schedules compiled through the tile program into $out"
