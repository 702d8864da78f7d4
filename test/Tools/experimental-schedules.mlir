// REQUIRES: ptxas
// The experimental wgmma schedules (python/tiledattn/schedules/experimental,
// not built or shipped) keep lowering and assembling without spills.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_f16_d64.mlir -o %t/1 | FileCheck %s -DNAME=wgmma_fwd_f16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_f16_d64_causal.mlir -o %t/2 | FileCheck %s -DNAME=wgmma_fwd_f16_d64_causal
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64.mlir -o %t/3 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64_causal.mlir -o %t/4 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64_causal
// RUN: not tiledattn-compile %schedules/experimental/wgmma_fwd_f16_d64.mlir -o %t/5 2>&1 | FileCheck %s --check-prefix=OFF

// CHECK: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem=50177 threads=128 -> {{.*}}
// OFF: is lowered only with the experimental-wgmma option
