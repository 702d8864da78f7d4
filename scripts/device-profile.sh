#!/usr/bin/env bash
# ncu profiles on the GPU machine of one shipped kernel and of cuDNN's SDPA
# at the same paper-preset shape (B x S = 16k, H x D = 2048, bf16): launch
# configuration (grid, cluster, registers, shared memory), speed of light,
# memory and warp stalls, side by side.
#   there: scripts/device-profile.sh [SEQLEN ...]   (default 512 16384)
#          D=128 and CAUSAL=0 by default; carry build/kernels. BUNDLE picks
#          another bundle (e.g. build/kernels/sdpa_fwd_bf16_d256_short)
# Full reports go to $OUT (or build/device-profile); a digest is printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
LOGS=${OUT:-build/device-profile}
mkdir -p "$LOGS"
D=${D:-128}
CAUSAL=${CAUSAL:-0}
KDIR=${TILEDATTN_KERNEL_DIR:-build/kernels}
bundle=${BUNDLE:-$KDIR/sdpa_fwd_bf16_d$D$([ "$CAUSAL" = 1 ] && echo _causal)}
sections=(--section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis
          --section WarpStateStats --section Occupancy --clock-control none)
digest() {
  grep -E "^  [a-zA-Z_]|Duration|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared|Compute \(SM\) Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth|DRAM Throughput|Warp Cycles Per Issued|Achieved Occupancy|Waves Per SM" "$1" | head -n 60
}
for S in "${@:-512 16384}"; do
  echo "=== tiledattn $(basename "$bundle") S=$S"
  timeout 150 ncu "${sections[@]}" --kernel-name regex:sdpa_fwd --launch-skip 2 --launch-count 1 \
    python3 scripts/profile_bundle.py "$bundle" "$S" >"$LOGS/tiledattn-$S.txt" 2>&1
  digest "$LOGS/tiledattn-$S.txt"
  echo "=== cuDNN S=$S (the first 8 kernels: input fills, then the SDPA calls)"
  timeout 150 ncu "${sections[@]}" --launch-count 8 \
    python3 scripts/profile_sdpa.py "$S" "$D" cudnn "$CAUSAL" \
    >"$LOGS/cudnn-$S.txt" 2>&1
  digest "$LOGS/cudnn-$S.txt"
done
