// REQUIRES: ptxas
// The experimental schedules (python/tiledattn/schedules/experimental, not
// shipped) keep lowering and assembling without spills: the one-warpgroup
// wgmma ones, and the two-blocks-per-multiprocessor Hopper candidates, which
// must start with .maxnreg 128 (65536 / (2 x 256 threads)).
// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_f16_d64.mlir -o %t/1 | FileCheck %s -DNAME=wgmma_fwd_f16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_f16_d64_causal.mlir -o %t/2 | FileCheck %s -DNAME=wgmma_fwd_f16_d64_causal
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64.mlir -o %t/3 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64_causal.mlir -o %t/4 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64_causal
// RUN: not tiledattn-compile %schedules/experimental/wgmma_fwd_f16_d64.mlir -o %t/5 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: tiledattn-compile %schedules/experimental/two_ctas_fwd_bf16_d64.mlir -o %t/6 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_fwd_bf16_d64
// RUN: FileCheck %s --check-prefix=TWO-PTX --input-file %t/6/kernel.ptx
// RUN: tiledattn-compile %schedules/experimental/two_ctas_fwd_f16_d64.mlir -o %t/7 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_fwd_f16_d64

// CHECK: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem=50177 threads=128 -> {{.*}}
// OFF: is lowered only with the experimental-wgmma option
// TWO: [[NAME]]: registers=128 spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=256 -> {{.*}}
// TWO-PTX: .minnctapersm 2
// TWO-PTX: .maxnreg 128
// TWO-PTX: setmaxnreg.dec.sync.aligned.u32 24
// TWO-PTX: setmaxnreg.inc.sync.aligned.u32 232
