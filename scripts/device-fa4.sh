#!/usr/bin/env bash
# Installs FlashAttention-4 (flash_attn.cute) on the GPU machine, which has
# no network, from wheels carried over several calls (a carry holds 64 MiB;
# with the tracked tree, about 20 MB; the CUDA DSL's wheel alone is 92 MB, so
# it travels in three byte-split parts):
#   here:  scripts/device-fa4.sh split   (wheels into .fa4a/, .fa4b/, .fa4c/,
#          .fa4d/; each ignored by git, each one call's carry)
#   there: calls 1-3 carry .fa4a, .fa4b, .fa4c, each running
#            scripts/device-fa4.sh keep <dir>    (copies the parts to /root/fa4)
#          call 4 carries .fa4d and runs
#            scripts/device-fa4.sh install       (joins, installs to /root/fa4lib)
#          then PYTHONPATH=python:/root/fa4site finds flash_attn.cute (the DSL
#          sets its paths in a .pth file: a sitecustomize adds the folder with
#          site.addsitedir). The calls must follow each other while the
#          machine is warm.
# Versions: docs/Performance.md (FA4 as a baseline) and shared ANCHORS §8.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
big=nvidia_cutlass_dsl_libs_cu12-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
case "${1:-}" in
split)
  dir=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform any -d "$dir" "flash-attn-4==4.0.0b36" \
    "nvidia-cutlass-dsl==4.8.1" "nvidia-cutlass-dsl-libs-base==4.8.1" \
    "nvidia-cutlass-dsl-libs-core==4.8.1" "nvidia-cutlass-dsl-libs-cu12==4.8.1" \
    "quack-kernels==0.6.5" "apache-tvm-ffi==0.1.15.post2" "torch-c-dlpack-ext==0.1.5"
  rm -rf .fa4a .fa4b .fa4c .fa4d && mkdir .fa4a .fa4b .fa4c .fa4d
  (cd .fa4a && split -n 3 -d -a 1 "$dir/$big" part && mv part1 ../.fa4b/ && mv part2 ../.fa4c/)
  rm "$dir/$big" && mv "$dir"/*.whl .fa4d/ && rmdir "$dir"
  for d in .fa4a .fa4b .fa4c .fa4d; do
    grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
  done
  du -sh .fa4a .fa4b .fa4c .fa4d
  ;;
keep)
  mkdir -p /root/fa4 && cp "$2"/* /root/fa4/ && ls -l /root/fa4
  ;;
install)
  cat /root/fa4/part0 /root/fa4/part1 /root/fa4/part2 >"/root/fa4/$big"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /root/fa4lib .fa4d/*.whl "/root/fa4/$big"
  mkdir -p /root/fa4site
  echo "import site; site.addsitedir('/root/fa4lib')" >/root/fa4site/sitecustomize.py
  PYTHONPATH=/root/fa4site python3 -c "import flash_attn.cute.interface as i; print('flash_attn.cute', i.__file__)"
  ;;
*)
  echo "usage: $0 split | keep DIR | install" >&2
  exit 2
  ;;
esac
