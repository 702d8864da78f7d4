#!/usr/bin/env bash
# The main job: list the compiled kernels and their resources; on a machine
# with a CUDA GPU, also run and check each one beside torch's SDPA.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" exec "${PYTHON:-python3}" -m tiledattn "$@"
