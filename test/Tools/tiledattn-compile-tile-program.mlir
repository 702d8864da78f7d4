// REQUIRES: ptxas
// RUN: rm -rf %t.from-schedule %t.from-program
// RUN: tiledattn-compile %s -o %t.from-schedule | FileCheck %s --check-prefix=SUMMARY
// RUN: tiledattn-opt %s --tiledattn-tile-sdpa > %t.program.mlir
// RUN: tiledattn-compile --quiet %t.program.mlir -o %t.from-program
// RUN: cmp %t.from-schedule/kernel.ptx %t.from-program/kernel.ptx
// RUN: cmp %t.from-schedule/manifest.json %t.from-program/manifest.json
// RUN: FileCheck %s --input-file %t.from-program/manifest.json
// RUN: FileCheck %s --check-prefix=MAPS --input-file %t.from-program/manifest.json
// RUN: rm -rf %t.alibi && tiledattn-compile --quiet %schedules/tile_ir/alibi_fwd_f16_d64_causal.mlir -o %t.alibi
// RUN: FileCheck %s --check-prefix=SCORE-MOD --input-file %t.alibi/manifest.json
// RUN: FileCheck %s --check-prefix=PLAIN --input-file %t.from-program/manifest.json

// A producer = tma schedule compiled through its tile program: straight
// from the schedule, or from the program that
// `tiledattn-opt --tiledattn-tile-sdpa` prints, which a kernel researcher
// edits and compiles the same way. Both give the same bundle: the program's
// function carries what the manifest needs (tiledattn.schedule,
// tiledattn.causal).

!head = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func @tile_program_f16_d64_causal(%q: !head, %k: !head, %v: !head, %o: !head, %lse: !lse,
                                       %scale: f32) {
  tiledattn.sdpa %q, %k, %v, %scale into %o, %lse causal
      schedule(#tiledattn.schedule<block_m = 192, block_n = 128, num_stages = 2,
                                   warps = 16, mma = wgmma, producer = tma,
                                   swizzle = 128, consumer_warpgroups = 3,
                                   consumer_regs = 160, pingpong = true>)
      : !head, !head, !head, !head, !lse
  return
}

// Dynamic: 1024 (alignment pad) + Q 192 x 64 x 2 + 2 stages x (K + V) x
// 128 x 64 x 2 = 91136.
// SUMMARY: tile_program_f16_d64_causal: registers={{[0-9]+}} spill_stores=0 spill_loads=0 stack=0 smem={{[0-9]+}} threads=512 -> {{.*}}

// CHECK-DAG: "name": "tile_program_f16_d64_causal"
// CHECK-DAG: "dtype": "f16"
// CHECK-DAG: "head_dim": 64
// CHECK-DAG: "causal": true
// CHECK-DAG: "mask": "causal_top_left"
// CHECK-DAG: "block_m": 192
// CHECK-DAG: "threads": 512
// CHECK-DAG: "dynamic_smem_bytes": 91136
// CHECK-DAG: "x": "ceil_div(seqlen_q, block_m)"
// CHECK-DAG: "spill_stores": 0

// One tensor map for Q (192-row boxes) and one each for K and V (128).
// MAPS: "tensor_maps": [
// MAPS-NEXT: {
// MAPS-NEXT: "box": [
// MAPS-NEXT: 64,
// MAPS-NEXT: 192
// MAPS: "operand": "q"
// MAPS: 128
// MAPS: "operand": "k"
// MAPS: 128
// MAPS: "operand": "v"

// An sdpa with a score_mod: its manifest records the body, so that the
// package never picks the kernel for plain attention.
// SCORE-MOD: "score_mod": "^bb0(%arg6: f32, %arg7: index, %arg8: index, %arg9: index, %arg10: index):\n
// SCORE-MOD-SAME: math.exp2
// PLAIN-NOT: score_mod

// Head dim 192 with value head dim 128: the manifest says both head dims.
// RUN: rm -rf %t.d192 && tiledattn-compile --quiet %schedules/sdpa_fwd_bf16_d192_dv128_causal.mlir -o %t.d192
// RUN: FileCheck %s --check-prefix=D192 --input-file %t.d192/manifest.json
// D192: "causal": true,
// D192: "head_dim": 192,
// D192-NEXT: "head_dim_v": 128,
// D192: "spill_stores": 0,
