// RUN: rm -rf %t && mkdir -p %t
// RUN: tiledattn-manifest-writer %s -o %t --ptxas-log=%S/Inputs/ptxas-wgmma-serialized.log 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: FileCheck %s --check-prefix=SERIALIZED --input-file %t/manifest.json
// RUN: rm -rf %t.clean && mkdir -p %t.clean
// RUN: tiledattn-manifest-writer %s -o %t.clean --ptxas-log=%S/Inputs/ptxas-clean.log 2>&1 | FileCheck %s --check-prefix=CLEAN --allow-empty
// RUN: FileCheck %s --check-prefix=CLEAN-MANIFEST --input-file %t.clean/manifest.json
// RUN: rm -rf %t.c7508 && mkdir -p %t.c7508
// RUN: tiledattn-manifest-writer %s -o %t.c7508 --ptxas-log=%S/Inputs/ptxas-setmaxnreg-ignored.log 2>&1 | FileCheck %s --check-prefix=C7508
// RUN: FileCheck %s --check-prefix=C7508-MANIFEST --input-file %t.c7508/manifest.json

// tiledattn-compile reads ptxas -v: when ptxas says it serializes the
// wgmma instructions (a "(C75xx) Potential Performance Loss: wgmma.mma_async
// instructions are serialized ..." line; the code names the reason and
// differs between causes and ptxas versions) it warns, naming the code, and
// the manifest records "wgmma_serialized": true. The logs are ptxas 13
// output: Inputs/ptxas-wgmma-serialized.log for hand-written PTX that
// reads an accumulator between two wgmmas (C7514), Inputs/ptxas-clean.log
// for the D=128 bf16 TMA kernel.

// WARN: tiledattn-compile: warning: sdpa_fwd_bf16_d128: ptxas serializes the wgmma instructions (C7514), which costs much of their speed; see ptxas -v output
// WARN-NOT: spills
// SERIALIZED: "resources": {
// SERIALIZED: "registers": 34,
// SERIALIZED: "spill_stores": 0,
// SERIALIZED: "wgmma_serialized": true

// CLEAN-NOT: warning
// CLEAN-MANIFEST: "resources": {
// CLEAN-MANIFEST: "registers": 168,
// CLEAN-MANIFEST: "setmaxnreg_ignored": false
// CLEAN-MANIFEST: "wgmma_serialized": false

// When ptxas drops setmaxnreg ("(C7508) ... 'setmaxnreg' ignored; unable to
// determine register count at entry", Inputs/ptxas-setmaxnreg-ignored.log:
// ptxas 13 on the head dim 64 backward preprocess without .maxnreg) the
// roles run with the launch's count: a warning, and the manifest says so
// (tiledattn-compile builds such a kernel again with .maxnreg).
// C7508: tiledattn-compile: warning: sdpa_fwd_bf16_d128: ptxas ignored setmaxnreg (C7508: it cannot tell the registers a thread starts with), so the warp roles keep the launch's count instead of their budgets
// C7508-MANIFEST: "registers": 46,
// C7508-MANIFEST: "setmaxnreg_ignored": true

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 164864 : i64,
        tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "k", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}
