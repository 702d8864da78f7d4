#!/usr/bin/env bash
# Packs what a GPU round needs from this machine's build into one compressed
# file, build/device-carry.tgz, to carry instead of the directories: the
# device tool's carry is capped at 64 MiB with the tracked tree, and the
# bundles' PTX compresses about tenfold. device-round.sh (and the other
# device scripts) unpack it first when it is there.
#   bash scripts/device-pack.sh [PATH...]   (default: the round's set)
#   run(carry=["build/device-carry.tgz"], command="bash scripts/device-round.sh")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
paths=("$@")
if [ ${#paths[@]} -eq 0 ]; then
  paths=(build/kernels build/kernels-sanitize build/kernels-mma_sync build/kernels-tile-ir
    build/kernel-mutants build/runtime/libtiledattn_runtime.so build/bin/tiledattn-cpp-caller dist)
fi
for p in "${paths[@]}"; do
  [ -e "$p" ] || { echo "device-pack: $p does not exist (build it first)" >&2; exit 1; }
done
# A wheel older than the package's sources would test yesterday's code.
for p in "${paths[@]}"; do
  if [ "$p" = dist ] &&
    [ -n "$(find python/tiledattn -name '*.py' -newer "$(ls -t dist/*.whl | head -n 1)" -print -quit)" ]; then
    echo "device-pack: dist/*.whl is older than python/tiledattn; rebuild it:" \
      "rm -f dist/*.whl && pip wheel . --no-deps -w dist" >&2
    exit 1
  fi
done
# The device's copy of the tree has no current .git: the commit these
# outputs were built at travels with them (build/device-commit), and the
# device scripts name it in their results (TILEDATTN_GIT_COMMIT).
git describe --always --dirty --abbrev=12 >build/device-commit
tar -czf build/device-carry.tgz --exclude='.compile-*' "${paths[@]}" build/device-commit
echo "device-pack: build/device-carry.tgz $(du -h build/device-carry.tgz | cut -f1) from $(du -ch "${paths[@]}" | tail -n 1 | cut -f1)"
