// REQUIRES: ptxas
// A score_mod that reads a tensor (ALiBi slopes): the kernel takes it after
// scale as a memref descriptor, the manifest lists it as capture0, and the
// tile program that tiledattn-opt prints compiles to the same kernel.
// RUN: rm -rf %t.sdpa %t.program
// RUN: tiledattn-compile --quiet %S/Inputs/captured-tensor.mlir -o %t.sdpa
// RUN: tiledattn-opt %S/Inputs/captured-tensor.mlir --tiledattn-tile-sdpa > %t.program.mlir
// RUN: tiledattn-compile --quiet %t.program.mlir -o %t.program
// RUN: cmp %t.sdpa/kernel.ptx %t.program/kernel.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file %t.sdpa/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.sdpa/kernel.ptx

// MANIFEST:      "name": "scale"
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT:   "dtype": "f32",
// MANIFEST-NEXT:   "kind": "memref",
// MANIFEST-NEXT:   "name": "capture0",
// MANIFEST-NEXT:   "rank": 1
// MANIFEST-NEXT: }
// MANIFEST-NEXT: ],

// After scale (param 53, the five rank-4 and rank-3 descriptors before it),
// the slopes' descriptor: allocated and aligned pointers, offset, size,
// stride; then the tensor maps.
// PTX:      .param .f32 captured_param_53,
// PTX-NEXT: .param .u64 .ptr .align 1 captured_param_54,
// PTX-NEXT: .param .u64 .ptr .align 1 captured_param_55,
// PTX-NEXT: .param .u64 captured_param_56,
// PTX-NEXT: .param .u64 captured_param_57,
// PTX-NEXT: .param .u64 captured_param_58,
// PTX-NEXT: .param .align 64 .b8 captured_param_59[128],
// The slope is read through the aligned pointer.
// PTX: ld.param.b64 {{.*}}[captured_param_55];
// PTX: ld.global.b32

// With any strides (strided<[?], offset: ?>: a broadcast view, a slice), the
// manifest says so and the runtime passes the tensor's strides as they are.
// RUN: sed 's/memref<?xf32>/memref<?xf32, strided<[?], offset: ?>>/g' %S/Inputs/captured-tensor.mlir > %t.strided.mlir
// RUN: rm -rf %t.strided && tiledattn-compile --quiet %t.strided.mlir -o %t.strided
// RUN: FileCheck %s --check-prefix=STRIDED --input-file %t.strided/manifest.json
// STRIDED:      "name": "scale"
// STRIDED:      "kind": "memref",
// STRIDED-NEXT: "layout": "strided",
// STRIDED-NEXT: "name": "capture0",
