// REQUIRES: ptxas
// RUN: rm -rf %t && tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal.mlir -o %t | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --input-file %t/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/kernel.ptx
// RUN: test -s %t/kernel.cubin
// RUN: rm -rf %t.q && tiledattn-compile --quiet --chip=sm_90a %schedules/sdpa_fwd_f16_d64.mlir -o %t.q | count 0
// RUN: FileCheck %s --check-prefix=QUIET --input-file %t.q/manifest.json

// tiledattn-compile writes a kernel bundle: manifest.json, kernel.ptx,
// kernel.cubin, and a one-line summary of what ptxas reported.

// The ring is 3 stages x (K + V) x 64 rows x 128 x 2 bytes = 98304; upstream's
// dynamic-shared-memory symbol adds one static byte to what ptxas reports.
// SUMMARY: sdpa_fwd_bf16_d128_causal: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem=98305 threads=128 -> {{.*}}

// CHECK-DAG: "format_version": 1
// CHECK-DAG: "name": "sdpa_fwd_bf16_d128_causal"
// CHECK-DAG: "kernel": "sdpa_fwd_bf16_d128_causal"
// CHECK-DAG: "target": "sm_90a"
// CHECK-DAG: "dtype": "bf16"
// CHECK-DAG: "head_dim": 128
// CHECK-DAG: "causal": true
// CHECK-DAG: "mask": "causal_top_left"
// CHECK-DAG: "block_m": 64
// CHECK-DAG: "block_n": 64
// CHECK-DAG: "threads": 128
// CHECK-DAG: "dynamic_smem_bytes": 98304
// CHECK-DAG: "cubin": "kernel.cubin"
// CHECK-DAG: "ptx": "kernel.ptx"
// CHECK-DAG: "resources": {
// CHECK-DAG: "registers": {{[1-9][0-9]*}}
// CHECK-DAG: "spill_stores": 0
// CHECK-DAG: "spill_loads": 0
// CHECK-DAG: "stack_bytes": 0
// CHECK-DAG: "schedule": "#tiledattn.schedule<block_m = 64, block_n = 64, num_stages = 3, warps = 4, mma = mma_sync, producer = cp_async, swizzle = 128, split_kv_loop = false>"

// PTX: .target sm_90a
// PTX: .visible .entry sdpa_fwd_bf16_d128_causal(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: __nv_

// QUIET-DAG: "dtype": "f16"
// QUIET-DAG: "head_dim": 64
// QUIET-DAG: "causal": false
// QUIET-DAG: "mask": "none"
