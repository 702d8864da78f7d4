//===- call_from_cpp.cpp - Call torch.ops.tiledattn from C++ ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A C++ program that uses the runtime's operators through libtorch's
// dispatcher, the way a model served from C++ would: load the runtime
// library, look the ops up by name, call them. On a machine without a GPU it
// validates a bundle and shows the error a CPU tensor gets; with one, it runs
// the kernel and compares it with at::scaled_dot_product_attention.
//
// Usage: tiledattn-cpp-caller BUNDLE_DIR RUNTIME_LIBRARY
//
//===----------------------------------------------------------------------===//

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <iostream>
#include <torch/cuda.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " BUNDLE_DIR RUNTIME_LIBRARY\n";
    return 2;
  }
  std::string bundle = argv[1];
  // Loading the library runs its TORCH_LIBRARY registrations.
  if (!dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
    std::cerr << "cannot load " << argv[2] << ": " << dlerror() << "\n";
    return 1;
  }
  auto &dispatcher = c10::Dispatcher::singleton();
  auto bundleInfo = dispatcher.findSchemaOrThrow("tiledattn::bundle_info", "")
                        .typed<std::string(std::string_view)>();
  auto sdpa = dispatcher.findSchemaOrThrow("tiledattn::sdpa_fwd", "")
                  .typed<std::tuple<at::Tensor, at::Tensor>(
                      const at::Tensor &, const at::Tensor &,
                      const at::Tensor &, bool, double, std::string_view)>();
  std::cout << "bundle: " << bundleInfo.call(bundle) << "\n";

  at::manual_seed(0);
  bool cuda = torch::cuda::is_available();
  auto options =
      at::TensorOptions().dtype(at::kHalf).device(cuda ? at::kCUDA : at::kCPU);
  at::Tensor q = at::randn({2, 4, 100, 64}, options);
  at::Tensor k = at::randn({2, 4, 77, 64}, options);
  at::Tensor v = at::randn({2, 4, 77, 64}, options);
  double scale = 0.125;
  try {
    auto [out, lse] = sdpa.call(q, k, v, /*is_causal=*/false, scale, bundle);
    at::Tensor ref = at::scaled_dot_product_attention(
        q.to(at::kDouble), k.to(at::kDouble), v.to(at::kDouble), {}, 0.0, false,
        scale);
    double err = (out.to(at::kDouble) - ref).abs().max().item<double>();
    std::cout << "ran on CUDA: max |out - ref| = " << err << "\n";
    return err < 1e-2 ? 0 : 1;
  } catch (const c10::Error &error) {
    std::cout << "error: " << error.what_without_backtrace() << "\n";
    return cuda ? 1 : 0; // Without a GPU the error is the expected answer.
  }
}
