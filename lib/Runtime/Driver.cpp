//===- Driver.cpp - The CUDA driver API, opened at run time ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Runtime/Driver.h"
#include "tiledattn/Runtime/Error.h"

#include <dlfcn.h>

#include <cstring>

using namespace tiledattn::runtime;

// cuda.h maps some names to versioned symbols (cuGetProcAddress ->
// cuGetProcAddress_v2); expanding the name before quoting it finds the symbol
// that matches the declaration.
#define TILEDATTN_QUOTE(x) #x
#define TILEDATTN_SYMBOL(x) TILEDATTN_QUOTE(x)

static DriverAPI openDriver() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(handle,
              "tiledattn: cannot open the CUDA driver library "
              "libcuda.so.1 (",
              dlerror(),
              "); launching a kernel needs an NVIDIA GPU and its driver");
  DriverAPI api;
#define TILEDATTN_DRIVER_LOAD(fn)                                              \
  api.fn =                                                                     \
      reinterpret_cast<decltype(api.fn)>(dlsym(handle, TILEDATTN_SYMBOL(fn))); \
  TORCH_CHECK(api.fn, "tiledattn: the CUDA driver has no entry point '",       \
              TILEDATTN_SYMBOL(fn), "'; the driver is older than CUDA 12");
  TILEDATTN_DRIVER_FUNCTIONS(TILEDATTN_DRIVER_LOAD)
#undef TILEDATTN_DRIVER_LOAD
  CUresult result = api.cuInit(0);
  if (result != CUDA_SUCCESS) {
    const char *name = nullptr;
    api.cuGetErrorName(result, &name);
    TORCH_CHECK(false,
                "tiledattn: cuInit failed: ", name ? name : "unknown CUresult");
  }
  return api;
}

const DriverAPI &tiledattn::runtime::driver() {
  // A failed open throws out of the initializer, so the next call retries.
  static const DriverAPI api = openDriver();
  return api;
}

std::string tiledattn::runtime::describeCUresult(CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  driver().cuGetErrorName(result, &name);
  driver().cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

std::string tiledattn::runtime::callName(const char *callText) {
  const char *paren = std::strchr(callText, '(');
  return paren ? std::string(callText, paren) : std::string(callText);
}
