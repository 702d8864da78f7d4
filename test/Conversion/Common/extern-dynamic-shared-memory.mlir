// RUN: tiledattn-opt %s --pass-pipeline='builtin.module(gpu.module(tiledattn-extern-dynamic-shared-memory))' | FileCheck %s
// RUN: tiledattn-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm,tiledattn-extern-dynamic-shared-memory))' | FileCheck %s --check-prefix=NVVM

// The zero-length shared array of the dynamic shared memory becomes
// external (PTX: .extern .shared ... []), after the static variables; other
// shared globals (the mbarriers, a sized array) and zero-length arrays in
// global memory keep their linkage.

// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global private @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.mlir.global internal @zero_length_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global private @__mbarrier() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @zero_length_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}

// What upstream's lowering of gpu.dynamic_shared_memory makes, made extern.
// NVVM-LABEL: gpu.module @lowered
// NVVM: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// NVVM: llvm.func @kernel
// NVVM: llvm.mlir.addressof @__dynamic_shmem__0
gpu.module @lowered {
  gpu.func @kernel(%byte: i8) kernel {
    %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %c0 = arith.constant 0 : index
    memref.store %byte, %smem[%c0] : memref<?xi8, #gpu.address_space<workgroup>>
    gpu.return
  }
}
