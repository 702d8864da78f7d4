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
#include <cmath>
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
  auto sdpa =
      dispatcher.findSchemaOrThrow("tiledattn::sdpa_fwd", "")
          .typed<std::tuple<at::Tensor, at::Tensor>(
              const at::Tensor &, const at::Tensor &, const at::Tensor &, bool,
              double, std::string_view, std::optional<at::TensorList>)>();
  std::cout << "bundle: " << bundleInfo.call(bundle) << "\n";

  at::manual_seed(0);
  bool cuda = torch::cuda::is_available();
  auto options =
      at::TensorOptions().dtype(at::kHalf).device(cuda ? at::kCUDA : at::kCPU);
  int64_t b = 2, h = 4, sq = 100, sk = 77, d = 64;
  at::Tensor q = at::randn({b, h, sq, d}, options);
  at::Tensor k = at::randn({b, h, sk, d}, options);
  at::Tensor v = at::randn({b, h, sk, d}, options);
  double scale = 0.125;
  // NaN blocks of the outputs' sizes, freed: the caching allocator hands
  // them to the op's outputs, so an element the kernel does not write stays
  // NaN. The pointers say whether the outputs really are those blocks.
  const void *poisonedOut = nullptr, *poisonedLse = nullptr;
  if (cuda) {
    at::Tensor out = at::full({b, h, sq, d}, NAN, options);
    at::Tensor lse = at::full({b, h, sq}, NAN, options.dtype(at::kFloat));
    poisonedOut = out.data_ptr();
    poisonedLse = lse.data_ptr();
  }
  try {
    auto [out, lse] = sdpa.call(q, k, v, /*is_causal=*/false, scale, bundle,
                                /*captures=*/std::nullopt);
    // FlashAttention's criterion: within twice the error of torch's own
    // half-precision SDPA, both against float64, plus a noise floor.
    at::Tensor q64 = q.to(at::kDouble), k64 = k.to(at::kDouble),
               v64 = v.to(at::kDouble);
    at::Tensor ref =
        at::scaled_dot_product_attention(q64, k64, v64, {}, 0.0, false, scale);
    at::Tensor low =
        at::scaled_dot_product_attention(q, k, v, {}, 0.0, false, scale);
    at::Tensor refLse =
        at::logsumexp(at::matmul(q64, k64.transpose(-1, -2)) * scale, -1);
    double err = (out.to(at::kDouble) - ref).abs().max().item<double>();
    double errLow = (low.to(at::kDouble) - ref).abs().max().item<double>();
    double errLse = (lse.to(at::kDouble) - refLse).abs().max().item<double>();
    bool written =
        out.data_ptr() == poisonedOut && lse.data_ptr() == poisonedLse &&
        out.isfinite().all().item<bool>() && lse.isfinite().all().item<bool>();
    bool ok = written && err <= 2 * errLow + 1e-5 && errLse <= 1e-3;
    std::cout << "ran on CUDA: max |out - ref| = " << err
              << " (torch half: " << errLow << "), max |lse - ref| = " << errLse
              << (written ? "" : ", outputs not all written")
              << (ok ? ": ok" : ": WRONG") << "\n";
    return ok ? 0 : 1;
  } catch (const c10::Error &error) {
    std::cout << "error: " << error.what_without_backtrace() << "\n";
    return cuda ? 1 : 0; // Without a GPU the error is the expected answer.
  }
}
