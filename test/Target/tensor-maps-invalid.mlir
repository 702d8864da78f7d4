// RUN: tiledattn-manifest-writer %s --split-input-file --verify-diagnostics

// Every way a tiledattn.tensor_maps attribute can be wrong is an error on the
// gpu.func, before a manifest is written.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{expected tiledattn.tensor_maps to be an array of dictionaries, but got "q"}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = "q"} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected a dictionary, but got 1 : i64}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [1 : i64]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[1]: expected operand = "q", "k", "v" or "o", but got "lse"}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64},
          {operand = "lse", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected operand = "q", "k", "v" or "o", but the entry has no operand}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected box_rows to be an integer in [1, 256], but got 512 : i64}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "k", box_rows = 512 : i64, box_cols = 64 : i64, swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected box_cols to be an integer in [1, 256], but got "64"}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "k", box_rows = 128 : i64, box_cols = "64", swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected swizzle = 0, 32, 64 or 128, but got 96}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "v", box_rows = 128 : i64, box_cols = 64 : i64, swizzle = 96 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected box_cols * 2 bytes to equal the swizzle span 128, but got box_cols = 128 (256 bytes)}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 128 : i64, swizzle = 128 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected box_cols * 2 bytes to be a multiple of 16, but got box_cols = 12}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 12 : i64, swizzle = 0 : i64}]} {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{tiledattn.tensor_maps[0]: expected swizzle to be an integer in [0, 128], but the entry has no swizzle}}
    gpu.func @sdpa_fwd_bf16_d128() kernel attributes {
        tiledattn.dynamic_smem_bytes = 0 : i64, tiledattn.tensor_maps = [
          {operand = "q", box_rows = 128 : i64, box_cols = 64 : i64}]} {
      gpu.return
    }
  }
}
