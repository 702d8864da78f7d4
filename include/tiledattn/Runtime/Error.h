//===- Error.h - Error reporting for driver API calls -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_ERROR_H
#define TILEDATTN_RUNTIME_ERROR_H

#include "tiledattn/Runtime/Driver.h"

#include <c10/util/Exception.h>

#include <string>

namespace tiledattn::runtime {
/// "CUDA_ERROR_X (description)" for a driver result.
std::string describeCUresult(CUresult result);

/// "cuLaunchKernel" out of "cuLaunchKernel(f, 1, ...)".
std::string callName(const char *callText);
} // namespace tiledattn::runtime

/// Calls `driver().CALL` and fails with a TORCH_CHECK that names the call, the
/// kernel and the driver's error name. Unlike upstream's mgpu wrappers it never
/// prints and continues: a failed driver call leaves nothing worth running.
#define TILEDATTN_CU_CHECK(call, kernel)                                       \
  do {                                                                         \
    CUresult tiledattnCuResult = ::tiledattn::runtime::driver().call;          \
    TORCH_CHECK(tiledattnCuResult == CUDA_SUCCESS,                             \
                "tiledattn: ", ::tiledattn::runtime::callName(#call),          \
                " failed for kernel '", (kernel), "': ",                       \
                ::tiledattn::runtime::describeCUresult(tiledattnCuResult));    \
  } while (false)

#endif // TILEDATTN_RUNTIME_ERROR_H
