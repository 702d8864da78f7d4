//===- ModuleCache.h - Bundles and loaded kernels, cached -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Bundles are read once per directory and CUfunctions loaded once per
// (device, bundle directory); both caches live for the process (modules are
// never unloaded, so a cached CUfunction stays valid). A bundle directory is
// treated as immutable once read: compile a changed kernel into a new one.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_MODULECACHE_H
#define TILEDATTN_RUNTIME_MODULECACHE_H

#include "tiledattn/Runtime/Driver.h"
#include "tiledattn/Runtime/Manifest.h"

#include <memory>
#include <string>

namespace tiledattn::runtime {
/// A kernel ready to launch on one device.
struct LoadedKernel {
  std::shared_ptr<const Bundle> bundle;
  CUcontext context = nullptr; // the device's primary context
  CUfunction function = nullptr;
  bool fromPtx = false;    // the cubin was rejected and the PTX JIT-compiled
  int multiprocessors = 0; // of the device, for persistent grid rules
};

/// The validated bundle in `dir`, read on first use. Needs no GPU.
std::shared_ptr<const Bundle> getBundle(const std::string &dir);

/// The kernel of `dir` loaded into `device`'s primary context, which is made
/// current. Loading is safe during stream capture: it runs in relaxed capture
/// mode and enqueues nothing.
const LoadedKernel &getKernel(const std::string &dir, int device);
} // namespace tiledattn::runtime

#endif // TILEDATTN_RUNTIME_MODULECACHE_H
