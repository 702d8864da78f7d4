// RUN: rm -rf %t && mkdir -p %t && tiledattn-manifest-writer %s -o %t
// RUN: FileCheck %s --input-file %t/manifest.json
// RUN: rm -rf %t.none && mkdir -p %t.none && tiledattn-manifest-writer %s -o %t.none --kernel=no_tma
// RUN: FileCheck %s --check-prefix=NONE --input-file %t.none/manifest.json

// The manifest writer copies tiledattn.tensor_maps off the lowered gpu.func
// into "tensor_maps", box innermost first ([box_cols, box_rows]), and asks
// for 16-byte alignment, which TMA needs. Kernels without the attribute get
// no key and keep 4-byte alignment.

// CHECK:      "alignment_bytes": 16,
// CHECK:      "dynamic_smem_bytes": 204800,
// CHECK:      "tensor_maps": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "box": [
// CHECK-NEXT:       64,
// CHECK-NEXT:       128
// CHECK-NEXT:     ],
// CHECK-NEXT:     "operand": "q",
// CHECK-NEXT:     "swizzle": 128
// CHECK-NEXT:   },
// CHECK-NEXT:   {
// CHECK-NEXT:     "box": [
// CHECK-NEXT:       64,
// CHECK-NEXT:       176
// CHECK-NEXT:     ],
// CHECK-NEXT:     "operand": "k",
// CHECK-NEXT:     "swizzle": 128
// CHECK-NEXT:   },
// CHECK-NEXT:   {
// CHECK-NEXT:     "box": [
// CHECK-NEXT:       32,
// CHECK-NEXT:       176
// CHECK-NEXT:     ],
// CHECK-NEXT:     "operand": "v",
// CHECK-NEXT:     "swizzle": 64
// CHECK-NEXT:   }
// CHECK-NEXT: ],
// CHECK:      "threads": 384

// NONE:     "alignment_bytes": 4,
// NONE-NOT: "tensor_maps"

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 204800 : i64,
        tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "k", box_rows = 176 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 176 : i64, box_cols = 32 : i64, swizzle = 64 : i64}]} {
      gpu.return
    }
    gpu.func @no_tma() kernel attributes {tiledattn.dynamic_smem_bytes = 98304 : i64} {
      gpu.return
    }
  }
}
