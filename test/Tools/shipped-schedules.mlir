// REQUIRES: ptxas
// Every shipped schedule lowers, and ptxas assembles it without spilling.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-compile %schedules/sdpa_fwd_f16_d64.mlir -o %t/1 | FileCheck %s -DNAME=sdpa_fwd_f16_d64
// RUN: tiledattn-compile %schedules/sdpa_fwd_f16_d64_causal.mlir -o %t/2 | FileCheck %s -DNAME=sdpa_fwd_f16_d64_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_f16_d128.mlir -o %t/3 | FileCheck %s -DNAME=sdpa_fwd_f16_d128
// RUN: tiledattn-compile %schedules/sdpa_fwd_f16_d128_causal.mlir -o %t/4 | FileCheck %s -DNAME=sdpa_fwd_f16_d128_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64.mlir -o %t/5 | FileCheck %s -DNAME=sdpa_fwd_bf16_d64
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d64_causal.mlir -o %t/6 | FileCheck %s -DNAME=sdpa_fwd_bf16_d64_causal
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128.mlir -o %t/7 | FileCheck %s -DNAME=sdpa_fwd_bf16_d128
// RUN: tiledattn-compile %schedules/sdpa_fwd_bf16_d128_causal.mlir -o %t/8 | FileCheck %s -DNAME=sdpa_fwd_bf16_d128_causal

// CHECK: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=128 -> {{.*}}
