// RUN: tiledattn-opt %s --pass-pipeline='builtin.module(gpu.module(tiledattn-approximate-math))' | FileCheck %s
// RUN: tiledattn-opt %s --pass-pipeline='builtin.module(gpu.module(tiledattn-approximate-math,convert-gpu-to-nvvm))' | FileCheck %s --check-prefix=NVVM

// An f32 math.tanh with fastmath<afn> becomes llvm.intr.tanh with afn
// (tanh.approx.f32 in PTX); without afn, or on f64, it stays math.tanh and
// convert-gpu-to-nvvm calls libdevice as before.

gpu.module @kernels {
  // CHECK-LABEL: func.func @approximate
  // CHECK: %[[T:.*]] = llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  // CHECK: return %[[T]]
  // NVVM-LABEL: llvm.func @approximate
  // NVVM: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>}
  // NVVM-NOT: llvm.call @__nv_tanhf
  func.func @approximate(%x: f32) -> f32 {
    %t = math.tanh %x fastmath<afn> : f32
    return %t : f32
  }

  // CHECK-LABEL: func.func @also_fast
  // CHECK: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>}
  func.func @also_fast(%x: f32) -> f32 {
    %t = math.tanh %x fastmath<fast> : f32
    return %t : f32
  }

  // CHECK-LABEL: func.func @exact
  // CHECK: math.tanh %{{.*}} : f32
  // NVVM-LABEL: llvm.func @exact
  // NVVM: llvm.call @__nv_tanhf
  func.func @exact(%x: f32) -> f32 {
    %t = math.tanh %x : f32
    return %t : f32
  }

  // CHECK-LABEL: func.func @f64
  // CHECK: math.tanh %{{.*}} fastmath<afn> : f64
  func.func @f64(%x: f64) -> f64 {
    %t = math.tanh %x fastmath<afn> : f64
    return %t : f64
  }
}
