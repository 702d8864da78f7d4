// REQUIRES: ptxas
// The experimental schedules (python/tiledattn/schedules/experimental, not
// shipped) keep lowering and assembling without spills: the one-warpgroup
// wgmma ones, and the two-blocks-per-multiprocessor Hopper candidates, which
// must start with .maxnreg 128 (65536 / (2 x 256 threads)), and the
// kv_multicast one, whose blocks run in clusters of two that multicast K/V
// (its tile program's K/V rings are cluster(2)). The float16 forms are derived
// from the bf16 files (tiledattn-derive-program), as the build derives them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/1 | FileCheck %s -DNAME=wgmma_fwd_f16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64_causal.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/2 | FileCheck %s -DNAME=wgmma_fwd_f16_d64_causal
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64.mlir -o %t/3 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64
// RUN: tiledattn-compile --experimental-wgmma %schedules/experimental/wgmma_fwd_bf16_d64_causal.mlir -o %t/4 | FileCheck %s -DNAME=wgmma_fwd_bf16_d64_causal
// RUN: not tiledattn-compile %schedules/experimental/wgmma_fwd_bf16_d64.mlir -o %t/5 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: tiledattn-compile %schedules/experimental/two_ctas_fwd_bf16_d64.mlir -o %t/6 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_fwd_bf16_d64
// RUN: FileCheck %s --check-prefix=TWO-PTX --input-file %t/6/kernel.ptx
// RUN: tiledattn-compile %schedules/experimental/two_ctas_fwd_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/7 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_fwd_f16_d64
// RUN: tiledattn-compile %schedules/experimental/two_ctas_causal_fwd_bf16_d64.mlir -o %t/9 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_causal_fwd_bf16_d64
// RUN: tiledattn-compile %schedules/experimental/two_ctas_causal_fwd_bf16_d64.mlir --derive="tiledattn-derive-program{element-type=f16}" -o %t/10 | FileCheck %s --check-prefix=TWO -DNAME=two_ctas_causal_fwd_f16_d64
// RUN: FileCheck %s --check-prefix=CAUSAL-PTX --input-file %t/9/kernel.ptx
// RUN: tiledattn-compile %schedules/experimental/kv_multicast_fwd_bf16_d128.mlir -o %t/8 | FileCheck %s --check-prefix=KVM
// RUN: FileCheck %s --check-prefix=KVM-PTX --input-file %t/8/kernel.ptx
// RUN: FileCheck %s --check-prefix=KVM-MANIFEST --input-file %t/8/manifest.json

// CHECK: [[NAME]]: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem=50176 threads=128 -> {{.*}}
// OFF: is lowered only with the experimental-wgmma option
// ctas_per_sm = 2 through the tile program (the default pipeline's path for
// it since the thirty-seventh session): a thread starts with 65536 / (2 x 256)
// registers, which the roles' setmaxnreg budgets share.
// CAUSAL-PTX: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CAUSAL-PTX: .entry two_ctas_causal_fwd_bf16_d64(
// CAUSAL-PTX-DAG: .maxnreg 128
// CAUSAL-PTX-DAG: .minnctapersm 2
// CAUSAL-PTX-DAG: setmaxnreg.dec.sync.aligned.u32 {{[[:space:]]*}}24;
// CAUSAL-PTX-DAG: setmaxnreg.inc.sync.aligned.u32 {{[[:space:]]*}}232;
// TWO: [[NAME]]: registers=128 spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=256 -> {{.*}}
// TWO-PTX: .minnctapersm 2
// TWO-PTX: .maxnreg 128
// TWO-PTX: setmaxnreg.dec.sync.aligned.u32 24
// TWO-PTX: setmaxnreg.inc.sync.aligned.u32 232
// KVM: kv_multicast_fwd_bf16_d128: registers=168 spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=384 -> {{.*}}
// KVM-PTX: .explicitcluster
// KVM-PTX-NEXT: .reqnctapercluster 2, 1, 1
// KVM-PTX: mov.u32 {{.*}}%cluster_ctarank;
// KVM-PTX: fence.mbarrier_init.release.cluster;
// KVM-PTX: barrier.cluster.arrive.relaxed.aligned;
// KVM-PTX-NEXT: barrier.cluster.wait.aligned;
// A release is a CTA-scope arrive on the peer's barrier (cluster scope
// would fence the whole GPU at every release).
// KVM-PTX: mapa.shared::cluster.u64
// KVM-PTX: mbarrier.arrive.shared::cluster.b64 _,
// KVM-PTX-NOT: mbarrier.arrive.release.cluster
// KVM-PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// KVM-PTX: barrier.cluster.arrive.relaxed.aligned;
// KVM-PTX-NEXT: barrier.cluster.wait.aligned;
// The grid covers whole clusters; K and V boxes are half blocks.
// KVM-MANIFEST: "x": "ceil_div(ceil_div(seqlen_q, block_m), 2) * 2",
// KVM-MANIFEST: "box": [
// KVM-MANIFEST-NEXT: 64,
// KVM-MANIFEST-NEXT: 128
// KVM-MANIFEST: "operand": "q"
// KVM-MANIFEST: "box": [
// KVM-MANIFEST-NEXT: 64,
// KVM-MANIFEST-NEXT: 64
// KVM-MANIFEST: "operand": "k"
// KVM-MANIFEST: "box": [
// KVM-MANIFEST-NEXT: 64,
// KVM-MANIFEST-NEXT: 64
// KVM-MANIFEST: "operand": "v"
