//===- Driver.h - The CUDA driver API, opened at run time -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libcuda.so.1 is dlopen'ed on first use rather than linked, so that the
// runtime library loads on machines without a driver (CPU CI validates bundles
// and traces fake tensors with it) and links no particular stub.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_DRIVER_H
#define TILEDATTN_RUNTIME_DRIVER_H

#include <cuda.h>

namespace tiledattn::runtime {
#define TILEDATTN_DRIVER_FUNCTIONS(X)                                          \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuThreadExchangeStreamCaptureMode)

/// Entry points of the driver. The members are declared with the types from
/// cuda.h, so a call through them is checked like a direct call.
struct DriverAPI {
#define TILEDATTN_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  TILEDATTN_DRIVER_FUNCTIONS(TILEDATTN_DRIVER_MEMBER)
#undef TILEDATTN_DRIVER_MEMBER
};

/// The driver, opened and cuInit'ed once. Fails with a TORCH_CHECK when
/// libcuda.so.1 or one of its entry points is missing.
const DriverAPI &driver();
} // namespace tiledattn::runtime

#endif // TILEDATTN_RUNTIME_DRIVER_H
