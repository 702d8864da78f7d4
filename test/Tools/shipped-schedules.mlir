// REQUIRES: ptxas
// Every shipped schedule (warp-specialized TMA + wgmma) lowers,
// and ptxas assembles it without spilling, the float16 forms derived from
// the bf16 files (tiledattn-derive-program, as the build derives them); so
// do the mma_sync examples kept in schedules/mma_sync (one warpgroup, no
// TMA).
// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/1 | FileCheck %s --check-prefix=THREE -DNAME=sdpa_fwd_f16_d64
// RUN: FileCheck %s --check-prefixes=PERSISTENT,QB2 --input-file %t/1/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/2 | FileCheck %s -DNAME=sdpa_fwd_f16_d64_causal
// RUN: FileCheck %s --check-prefixes=PERSISTENT,DYN --input-file %t/2/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/3 | FileCheck %s -DNAME=sdpa_fwd_f16_d128
// RUN: FileCheck %s --check-prefixes=PERSISTENT,QB2 --input-file %t/3/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/4 | FileCheck %s -DNAME=sdpa_fwd_f16_d128_causal
// RUN: FileCheck %s --check-prefix=GRID --input-file %t/4/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/5 | FileCheck %s -DNAME=sdpa_fwd_f16_d256
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/6 | FileCheck %s -DNAME=sdpa_fwd_f16_d256_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir -o %t/7 | FileCheck %s --check-prefix=THREE -DNAME=sdpa_fwd_bf16_d64
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64_causal.mlir -o %t/8 | FileCheck %s -DNAME=sdpa_fwd_bf16_d64_causal
// RUN: FileCheck %s --check-prefixes=PERSISTENT,DYN --input-file %t/8/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128.mlir -o %t/9 | FileCheck %s -DNAME=sdpa_fwd_bf16_d128
// RUN: FileCheck %s --check-prefixes=PERSISTENT,QB2 --input-file %t/9/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_long.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/long16 | FileCheck %s -DNAME=sdpa_fwd_f16_d128_long
// RUN: FileCheck %s --check-prefixes=PERSISTENT,SPLIT,QB2 --input-file %t/long16/manifest.json
// RUN: FileCheck %s --check-prefix=LONG128 --input-file %t/long16/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_long.mlir -o %t/long | FileCheck %s -DNAME=sdpa_fwd_bf16_d128_long
// RUN: FileCheck %s --check-prefixes=PERSISTENT,SPLIT,QB2 --input-file %t/long/manifest.json
// RUN: FileCheck %s --check-prefix=LONG128 --input-file %t/long/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal.mlir -o %t/10 | FileCheck %s -DNAME=sdpa_fwd_bf16_d128_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256.mlir -o %t/11 | FileCheck %s -DNAME=sdpa_fwd_bf16_d256
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_causal.mlir -o %t/12 | FileCheck %s -DNAME=sdpa_fwd_bf16_d256_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64_causal_long.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/13 | FileCheck %s --check-prefix=THREE -DNAME=sdpa_fwd_f16_d64_causal_long
// RUN: FileCheck %s --check-prefixes=PERSISTENT,ACROSS --input-file %t/13/manifest.json
// RUN: FileCheck %s --check-prefix=LONG --input-file %t/13/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64_causal_long.mlir -o %t/14 | FileCheck %s --check-prefix=THREE -DNAME=sdpa_fwd_bf16_d64_causal_long
// RUN: FileCheck %s --check-prefixes=PERSISTENT,ACROSS --input-file %t/14/manifest.json
// RUN: FileCheck %s --check-prefix=LONG --input-file %t/14/manifest.json
// RUN: FileCheck %s --check-prefix=ANYLENGTH --input-file %t/8/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal_short.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/15 | FileCheck %s -DNAME=sdpa_fwd_f16_d128_causal_short
// RUN: FileCheck %s --check-prefixes=PERSISTENT,DYN,SHORT --input-file %t/15/manifest.json
// RUN: FileCheck %s --check-prefix=DYNPTX --input-file %t/15/kernel.ptx
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal_short.mlir -o %t/16 | FileCheck %s -DNAME=sdpa_fwd_bf16_d128_causal_short
// RUN: FileCheck %s --check-prefixes=PERSISTENT,DYN,SHORT --input-file %t/16/manifest.json
// RUN: FileCheck %s --check-prefix=DYNPTX --input-file %t/16/kernel.ptx
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_short.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/17 | FileCheck %s -DNAME=sdpa_fwd_f16_d256_short
// RUN: FileCheck %s --check-prefixes=PERSISTENT,SHORT512 --input-file %t/17/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_short.mlir -o %t/18 | FileCheck %s -DNAME=sdpa_fwd_bf16_d256_short
// RUN: FileCheck %s --check-prefixes=PERSISTENT,SHORT512 --input-file %t/18/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_causal_short.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/19 | FileCheck %s -DNAME=sdpa_fwd_f16_d256_causal_short
// RUN: FileCheck %s --check-prefixes=GRID,SHORTSKIP --input-file %t/19/manifest.json
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d256_causal_short.mlir -o %t/20 | FileCheck %s -DNAME=sdpa_fwd_bf16_d256_causal_short
// RUN: FileCheck %s --check-prefixes=GRID,SHORTSKIP --input-file %t/20/manifest.json
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/mma1 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_f16_d64
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d64_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/mma2 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_f16_d64_causal
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d128.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/mma3 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_f16_d128
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d128_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/mma4 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_f16_d128_causal
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d64.mlir -o %t/mma5 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_bf16_d64
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d64_causal.mlir -o %t/mma6 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_bf16_d64_causal
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d128.mlir -o %t/mma7 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_bf16_d128
// RUN: tiledattn-compile %schedules/mma_sync/sdpa_fwd_bf16_d128_causal.mlir -o %t/mma8 | FileCheck %s --check-prefix=MMA -DNAME=sdpa_fwd_bf16_d128_causal

// CHECK: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=384 -> {{.*}}
// MMA: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=128 -> {{.*}}
// Head dim 64 without a mask, and causal from 4.5k keys: three consumer
// warpgroups (512 threads).
// THREE: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=512 -> {{.*}}
// Causal D=128 (and D=256 causal): one block per tile, the grid follows
// the shape.
// GRID: "grid": {
// GRID-NEXT: "x": "ceil_div(seqlen_q, block_m)",
// GRID-NEXT: "y": "heads_q",
// GRID-NEXT: "z": "batch"
// D=64 and D=128 without a mask (D=128 with defer_store), D=64 causal
// (below 4.5k keys), D=128 causal up to 4k keys and D=256 without a mask up
// to 512: persistent, one block per multiprocessor at most, looping over
// the tiles (with two Q buffers but at D=256).
// PERSISTENT: "grid": {
// PERSISTENT-NEXT: "x": "min(ceil_div(seqlen_q, block_m) * heads_q * batch, multiprocessors)",
// PERSISTENT-NEXT: "y": "1",
// PERSISTENT-NEXT: "z": "1"
// D=128 without a mask from 4k keys on shares the last round's tiles out
// (split_tail): the runtime passes a zeroed workspace after scale.
// SPLIT: "kind": "zeroed_bytes_per_block",
// SPLIT-NEXT: "name": "workspace"
// LONG128: "min_seqlen_k": 2048,
// LONG128-NOT: "max_seqlen_k"
// From 2k keys Q.K^T takes Q from registers (q_in_registers), the O held
// for the next tile stays scaled and packed (hold_packed), and the consumer
// index is 32 bits wide (narrow_consumer_index: no spill).
// LONG128: "schedule": "#tiledattn.schedule<{{.*}}split_tail = true, hold_packed = true, q_in_registers = true, narrow_consumer_index = true>"
// QB2: "schedule": "#tiledattn.schedule<{{.*}}persistent = true, tma_store = true, q_buffers = 2{{(, defer_store = true(, split_tail = true(, hold_packed = true)?(, q_in_registers = true)?)?|, uniform_consumer = true)?(, one_thread_producer = true)?(, narrow_consumer_index = true)?}}>"
// D=64 causal from 4.5k keys on: three consumers (block_n 112 to fit 160
// registers), every head's longest tiles first; the manifest carries the
// range the package selects by.
// ACROSS: "schedule": "#tiledattn.schedule<{{.*}}persistent = true, tma_store = true, q_buffers = 2, tile_order = across_heads>"
// LONG-NOT: "max_seqlen_k"
// LONG: "min_seqlen_k": 4608,
// LONG-NOT: "max_seqlen_k"
// ANYLENGTH-NOT: seqlen_k
// Causal D=64 below 4.5k keys and D=128 up to 4k: tiles handed out by a
// counter the runtime passes after scale (one i32, zero at launch).
// SHORT-NOT: "min_seqlen_k"
// SHORT: "max_seqlen_k": 4096,
// SHORT-NOT: "min_seqlen_k"
// DYN: "name": "scale"
// DYN-NEXT: },
// DYN-NEXT: {
// DYN-NEXT: "kind": "zeroed_i32",
// DYN-NEXT: "name": "tile_counter"
// DYN-NEXT: }
// DYN-NEXT: ],
// DYN: "schedule": "#tiledattn.schedule<{{.*}}persistent = true, tma_store = true, q_buffers = 2, dynamic_tiles = true, overlap_epilogue = true, narrow_diagonal = true>"
// The counter follows scale and precedes the four grid-constant tensor maps;
// the producer's atomic add takes the next tile; the consumers read its rank
// through redux.sync, so ptxas keeps the tile arithmetic warp-uniform.
// DYNPTX: .param .f32 [[K:[a-z0-9_]+]]_param_53,
// DYNPTX-NEXT: .param .u64 .ptr .align 1 [[K]]_param_54,
// DYNPTX-NEXT: .param .align 64 .b8 [[K]]_param_55[128],
// DYNPTX-DAG: atom.global.add.u32 {{.*}}, 1;
// DYNPTX-DAG: redux.sync.min.u32
// D=256 up to 512 keys: block_n 64 (512 = 8 x 64; 80 leaves a block 40%
// used), persistent, with the ring position and Q's base through
// redux.sync (uniform_ring) so the block loop stays on the uniform datapath;
// through the tile program, its producer one thread at 40 registers.
// SHORT512: "max_seqlen_k": 512,
// SHORT512-NOT: "min_seqlen_k"
// SHORT512: "schedule": "#tiledattn.schedule<block_m = 128, block_n = 64,{{.*}}producer_regs = 40, consumer_regs = 232,{{.*}}persistent = true, tma_store = true, overlap_epilogue = true, uniform_ring = true, one_thread_producer = true>"
// Causal D=256 up to 512 keys: block_n 64, one block per tile, whose first
// Q.K^T starts on the first atoms of Q and K, and each consumer stops at
// the last block its rows reach (consumer 0 skips every tile's last block).
// SHORTSKIP: "max_seqlen_k": 512,
// SHORTSKIP-NOT: "min_seqlen_k"
// SHORTSKIP: "schedule": "#tiledattn.schedule<block_m = 128, block_n = 64,{{.*}}skip_masked_blocks = true, q_by_atom = true, k0_by_atom = true>"
