// RUN: tiledattn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(gpu.module(tiledattn-mark-tensor-map-params))'

// A kernel whose tiledattn.tensor_maps does not match its trailing
// parameters is an error, not a silently mislabelled parameter.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'llvm.func' op lists 3 tensor maps in tiledattn.tensor_maps but has only 2 parameters}}
    llvm.func @more_maps_than_params(%k: !llvm.ptr, %v: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "k", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{'llvm.func' op expected tensor-map parameter #1 to be a pointer, but got 'f32'}}
    llvm.func @map_param_not_a_pointer(%out: !llvm.ptr, %scale: f32, %k: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel, tiledattn.tensor_maps = [
          {operand = "k", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "v", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      llvm.return
    }
  }
}
