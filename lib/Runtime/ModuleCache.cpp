//===- ModuleCache.cpp - Bundles and loaded kernels, cached ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Implements loading a bundle's cubin (or, failing that, its PTX through the
// driver JIT) into a device's primary context, and the caches around it.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Runtime/ModuleCache.h"
#include "tiledattn/Runtime/Error.h"

#include <c10/util/Exception.h>

#include <fstream>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace tiledattn::runtime;

namespace {
/// Switches this thread to relaxed capture mode, where module loading is
/// allowed while another stream is capturing a CUDA graph.
class RelaxedCaptureMode {
public:
  explicit RelaxedCaptureMode(const std::string &kernel) : kernel(kernel) {
    TILEDATTN_CU_CHECK(cuThreadExchangeStreamCaptureMode(&mode), kernel);
  }
  ~RelaxedCaptureMode() { driver().cuThreadExchangeStreamCaptureMode(&mode); }

private:
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  const std::string &kernel;
};

int deviceAttribute(CUdevice device, CUdevice_attribute attribute,
                    const std::string &kernel) {
  int value = 0;
  TILEDATTN_CU_CHECK(cuDeviceGetAttribute(&value, attribute, device), kernel);
  return value;
}

/// Checks the device can run the kernel; returns its opt-in shared memory
/// limit per block.
int checkDevice(const KernelSpec &spec, CUdevice device, int ordinal) {
  int major = deviceAttribute(
      device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, spec.kernel);
  int minor = deviceAttribute(
      device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, spec.kernel);
  // sm_90a code runs on compute capability 9.0 only (no forward
  // compatibility for the 'a' features).
  TORCH_CHECK(major == 9 && minor == 0, "tiledattn: kernel '", spec.name,
              "' targets ", spec.target,
              ", which needs a compute capability 9.0 device, but cuda:",
              ordinal, " is compute capability ", major, ".", minor);
  int optin = deviceAttribute(
      device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      spec.kernel);
  TORCH_CHECK(spec.dynamicSmemBytes <= optin, "tiledattn: kernel '", spec.name,
              "' needs ", spec.dynamicSmemBytes,
              " bytes of dynamic shared memory but cuda:", ordinal,
              " allows at most ", optin, " per block");
  return optin;
}

CUmodule loadModule(const Bundle &bundle, bool &fromPtx) {
  const KernelSpec &spec = bundle.spec;
  CUmodule module = nullptr;
  CUresult result =
      driver().cuModuleLoadData(&module, bundle.cubinImage.data());
  if (result == CUDA_SUCCESS)
    return module;
  TORCH_CHECK(result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
                  result == CUDA_ERROR_INVALID_IMAGE,
              "tiledattn: cuModuleLoadData failed for kernel '", spec.kernel,
              "': ", describeCUresult(result));

  // The cubin does not suit this device or driver; the PTX may, through the
  // driver JIT (slower to load, same code).
  TORCH_WARN("tiledattn: the cubin of kernel '", spec.name, "' did not load (",
             describeCUresult(result), "); JIT-compiling ", bundle.dir, "/",
             spec.ptx, " instead");
  std::string ptxPath = bundle.dir + "/" + spec.ptx;
  std::ifstream in(ptxPath, std::ios::binary);
  TORCH_CHECK(in.good(), "tiledattn: cannot read PTX '", ptxPath,
              "' to JIT-compile after the cubin failed to load");
  std::string ptx((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
  result =
      driver().cuModuleLoadDataEx(&module, ptx.c_str(), 2, options, values);
  TORCH_CHECK(result == CUDA_SUCCESS,
              "tiledattn: cuModuleLoadDataEx (PTX JIT) failed for kernel '",
              spec.kernel, "': ", describeCUresult(result), "\n", log);
  fromPtx = true;
  return module;
}

std::mutex bundleMutex;
std::unordered_map<std::string, std::shared_ptr<const Bundle>> bundles;

std::mutex kernelMutex;
// std::map: references to loaded kernels stay valid as the map grows.
std::map<std::pair<int, std::string>, LoadedKernel> kernels;
} // namespace

std::shared_ptr<const Bundle>
tiledattn::runtime::getBundle(const std::string &dir) {
  std::lock_guard<std::mutex> lock(bundleMutex);
  auto it = bundles.find(dir);
  if (it != bundles.end())
    return it->second;
  // A failure throws and caches nothing, so a fixed bundle loads next time.
  auto bundle = std::make_shared<const Bundle>(loadBundle(dir));
  bundles.emplace(dir, bundle);
  return bundle;
}

const LoadedKernel &tiledattn::runtime::getKernel(const std::string &dir,
                                                  int device) {
  std::lock_guard<std::mutex> lock(kernelMutex);
  auto key = std::make_pair(device, dir);
  auto it = kernels.find(key);
  if (it != kernels.end())
    return it->second;

  LoadedKernel loaded;
  loaded.bundle = getBundle(dir);
  const KernelSpec &spec = loaded.bundle->spec;
  RelaxedCaptureMode relaxed(spec.kernel);

  CUdevice cuDevice;
  TILEDATTN_CU_CHECK(cuDeviceGet(&cuDevice, device), spec.kernel);
  int smemOptin = checkDevice(spec, cuDevice, device);
  TILEDATTN_CU_CHECK(
      cuDeviceGetAttribute(&loaded.multiprocessors,
                           CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cuDevice),
      spec.kernel);
  // torch runs every device in its primary context; retain it so that it
  // outlives our modules even if torch has not touched the device yet.
  TILEDATTN_CU_CHECK(cuDevicePrimaryCtxRetain(&loaded.context, cuDevice),
                     spec.kernel);
  CUcontext current = nullptr;
  TILEDATTN_CU_CHECK(cuCtxGetCurrent(&current), spec.kernel);
  if (current != loaded.context)
    TILEDATTN_CU_CHECK(cuCtxSetCurrent(loaded.context), spec.kernel);

  CUmodule module = loadModule(*loaded.bundle, loaded.fromPtx);
  TILEDATTN_CU_CHECK(
      cuModuleGetFunction(&loaded.function, module, spec.kernel.c_str()),
      spec.kernel);
  // Querying an attribute also finishes lazy loading (CUDA_MODULE_LOADING=
  // LAZY), so the first launch, possibly under capture, loads nothing.
  int maxThreads = 0;
  TILEDATTN_CU_CHECK(cuFuncGetAttribute(&maxThreads,
                                        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                        loaded.function),
                     spec.kernel);
  TORCH_CHECK(spec.threads <= maxThreads, "tiledattn: kernel '", spec.name,
              "' launches ", spec.threads,
              " threads per block but its resource use allows at most ",
              maxThreads);
  // The 48 KiB default covers static and dynamic shared memory together:
  // a kernel with 1 byte of static and exactly 48 KiB of dynamic shared
  // memory fails to launch unless the limit is raised.
  int staticSmem = 0;
  TILEDATTN_CU_CHECK(cuFuncGetAttribute(&staticSmem,
                                        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                        loaded.function),
                     spec.kernel);
  TORCH_CHECK(staticSmem + spec.dynamicSmemBytes <= smemOptin,
              "tiledattn: kernel '", spec.name, "' needs ", staticSmem,
              " bytes of static and ", spec.dynamicSmemBytes,
              " bytes of dynamic shared memory but cuda:", device,
              " allows at most ", smemOptin, " in all per block");
  if (staticSmem + spec.dynamicSmemBytes > 48 * 1024)
    TILEDATTN_CU_CHECK(
        cuFuncSetAttribute(loaded.function,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           static_cast<int>(spec.dynamicSmemBytes)),
        spec.kernel);
  return kernels.emplace(key, std::move(loaded)).first->second;
}
