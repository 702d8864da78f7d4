// RUN: tiledattn-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(tiledattn-mark-tensor-map-params))' | FileCheck %s

// The last N parameters of a kernel whose tiledattn.tensor_maps lists N maps
// become 128-byte, 64-byte-aligned grid constants (a CUtensorMap passed by
// value); the parameters before them and kernels without the attribute keep
// theirs.

// CHECK-LABEL: llvm.func @three_maps
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: f32,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-LABEL: llvm.func @no_maps
// CHECK-NOT: llvm.byval
// CHECK-NOT: nvvm.grid_constant
// CHECK: llvm.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @three_maps(%out: !llvm.ptr, %scale: f32, %q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr)
        attributes {gpu.kernel, nvvm.kernel, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "k", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      llvm.return
    }
    llvm.func @no_maps(%out: !llvm.ptr, %a: !llvm.ptr, %b: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// Only the trailing parameters count: with one map, the first pointer of two
// stays a plain pointer. Every parameter being a tensor map is fine too.

// CHECK-LABEL: llvm.func @one_map
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-LABEL: llvm.func @only_maps
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @one_map(%out: !llvm.ptr, %q: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 64 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      llvm.return
    }
    llvm.func @only_maps(%k: !llvm.ptr, %v: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, tiledattn.tensor_maps = [
          {operand = "k", box_rows = 64 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 64 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      llvm.return
    }
  }
}
