// REQUIRES: ptxas
// RUN: rm -rf %t && tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal.mlir -o %t | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --input-file %t/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/kernel.ptx
// RUN: FileCheck %s --check-prefix=STORE --input-file %t/kernel.ptx
// RUN: FileCheck %s --check-prefix=NOLIBDEVICE --input-file %t/kernel.ptx
// RUN: test -s %t/kernel.cubin
// RUN: rm -rf %t.q && tiledattn-compile --quiet --chip=sm_90a %schedules/sdpa_fwd_bf16_d64.mlir -o %t.q | count 0
// RUN: FileCheck %s --check-prefix=QUIET --input-file %t.q/manifest.json

// tiledattn-compile writes a kernel bundle: manifest.json, kernel.ptx,
// kernel.cubin, and a one-line summary of what ptxas reported.

// Dynamic: 1024 (alignment pad) + Q 128 x 128 x 2 + 2 stages x (K + V) x
// 128 x 128 x 2 = 164864. Static: the 10 mbarriers of the tile program's
// rings (a full and an empty one per slot: Q's, then 2 stages x (K + V)),
// 8 bytes each (the dynamic shared memory is extern, after them, not a
// static of its own: tiledattn-extern-dynamic-shared-memory).
// SUMMARY: sdpa_fwd_bf16_d128_causal: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem=164944 threads=384 -> {{.*}}

// CHECK-DAG: "format_version": 1
// CHECK-DAG: "name": "sdpa_fwd_bf16_d128_causal"
// CHECK-DAG: "kernel": "sdpa_fwd_bf16_d128_causal"
// CHECK-DAG: "target": "sm_90a"
// CHECK-DAG: "dtype": "bf16"
// CHECK-DAG: "head_dim": 128
// CHECK-DAG: "causal": true
// CHECK-DAG: "mask": "causal_top_left"
// CHECK-DAG: "block_m": 128
// CHECK-DAG: "block_n": 128
// CHECK-DAG: "threads": 384
// CHECK-DAG: "dynamic_smem_bytes": 164864
// CHECK-DAG: "alignment_bytes": 16
// CHECK-DAG: "tensor_maps": [
// CHECK-DAG: "cubin": "kernel.cubin"
// CHECK-DAG: "ptx": "kernel.ptx"
// CHECK-DAG: "resources": {
// CHECK-DAG: "registers": {{[1-9][0-9]*}}
// CHECK-DAG: "spill_stores": 0
// CHECK-DAG: "spill_loads": 0
// CHECK-DAG: "stack_bytes": 0
// CHECK-DAG: "schedule": "#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2, warps = 12, mma = wgmma, producer = tma, swizzle = 128, consumer_warpgroups = 2, pingpong = true, overlap_softmax = true, tma_store = true, overlap_epilogue = true>"

// PTX: .target sm_90a
// PTX: .visible .entry sdpa_fwd_bf16_d128_causal(
// The four tensor maps (q, k, v, o), by value after `scale`.
// PTX-COUNT-4: .param .align 64 .b8 sdpa_fwd_bf16_d128_causal_param_{{[0-9]+}}[128]
// PTX: cvta.param.u64
// PTX: mbarrier.init.shared.b64
// The producer's and the consumers' code, in either order.
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global
// NOLIBDEVICE-NOT: __nv_
// O leaves by stmatrix and a TMA store, whose reads are waited for.
// STORE: stmatrix.sync.aligned.m8n8.x4.shared.b16
// STORE: cp.async.bulk.tensor.4d.global.shared::cta
// STORE: cp.async.bulk.commit_group
// STORE: cp.async.bulk.wait_group.read 0

// QUIET-DAG: "dtype": "bf16"
// QUIET-DAG: "head_dim": 64
// QUIET-DAG: "causal": false
// QUIET-DAG: "mask": "none"
