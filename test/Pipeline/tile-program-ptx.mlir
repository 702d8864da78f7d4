// REQUIRES: ptxas
// RUN: env CUDA_HOME=%cuda_home tiledattn-opt %s --tiledattn-to-ptx-pipeline | %PYTHON %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// A shipped-style producer = tma schedule (causal, bf16, D = 128, two
// consumers taking turns) through tiledattn-tile-sdpa's warp-specialized
// program and the tile passes, not convert-sdpa-to-hopper: the roles with
// their register budgets, TMA copies of Q and of K and V per block (two
// 64-column boxes each), the consumers' mmas in turns on named barriers,
// the softmax and the store of O and the lse from registers. ptxas
// assembles it without spills. The dynamic shared memory is declared extern
// (tiledattn-extern-dynamic-shared-memory), after the static mbarriers, not
// a one-byte static beside them.

!head = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @tile_program(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse, %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 128, block_n = 128, num_stages = 2,
                                   warps = 12, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 2,
                                   pingpong = true>)
      : !head, !head, !head, !head, !lse
  return
}

// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CHECK: .entry tile_program(
// CHECK-COUNT-3: .param .align 64 .b8 tile_program_param_{{[0-9]+}}[128]
// CHECK-NOT: __dynamic_shmem__0 has been demoted
// CHECK-NOT: .shared .align 16 .b8 __dynamic_shmem__0;
// CHECK: mbarrier.init
// CHECK: prefetch.tensormap
// CHECK: bar.sync {{[[:space:]]*}}0;
// CHECK: setmaxnreg.inc.sync.aligned.u32 {{[[:space:]]*}}240;
// CHECK: bar.sync {{.*}}, 256;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: bar.arrive
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: mbarrier.arrive
// CHECK: ex2.approx.ftz.f32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: lg2.approx.f32
// CHECK: st.global.b32
// CHECK: setmaxnreg.dec.sync.aligned.u32 {{[[:space:]]*}}24;
// CHECK-COUNT-2: cp.async.bulk.tensor.4d.shared::cluster.global{{.*}}mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait
// CHECK-COUNT-2: cp.async.bulk.tensor.4d.shared::cluster.global{{.*}}mbarrier::complete_tx::bytes
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
