//===- KernelSpec.h - The compiler/runtime bundle contract ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel bundle is a directory with manifest.json, kernel.cubin and
// kernel.ptx. KernelSpec is manifest.json as plain data: no MLIR, torch or
// CUDA types, so the compiler (which writes it) and the runtime (which reads
// it) can both include this header. docs/Runtime.md describes every field.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_KERNELSPEC_H
#define TILEDATTN_RUNTIME_KERNELSPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace tiledattn::runtime {
/// The manifest format this runtime reads.
constexpr int64_t kManifestFormatVersion = 1;
/// The only target the shipped kernels are compiled for.
constexpr const char *kTargetSm90a = "sm_90a";
constexpr const char *kManifestFile = "manifest.json";
constexpr const char *kMaskNone = "none";
constexpr const char *kMaskCausalTopLeft = "causal_top_left";
/// sm_90 limits the manifest is checked against: threads per block, and
/// shared memory (static + dynamic) per block with the opt-in (227 KiB).
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxSharedMemoryPerBlock = 232448;
/// At most this many TMA tensor maps per kernel (q, k and v need three).
constexpr int64_t kMaxTensorMaps = 8;
/// The element types a captured tensor may have (as the compiler names
/// them: f32, ..., i64).
constexpr const char *kCaptureDtypes[] = {"f32", "f16", "bf16", "f64",
                                          "i8",  "i16", "i32",  "i64"};

/// One kernel parameter as the manifest lists it. A memref parameter expands
/// to `allocated, aligned, offset, sizes[rank], strides[rank]` at launch.
struct ParamSpec {
  std::string name;
  std::string kind;          // "memref" or a scalar type ("f32")
  int64_t rank = 0;          // memrefs only
  std::string dtype;         // memrefs only
  std::string layout;        // captures only: "" (contiguous) or "strided"
  int64_t bytesPerBlock = 0; // "zeroed_bytes_per_block" only
};

/// A TMA tensor map the kernel takes as a 128-byte by-value parameter after
/// `scale`. It describes operand `operand` ("q", "k", "v" or the output
/// "o", [B, H, S, D]) as a 4-D tiled map, dims innermost first (D, S, H, B),
/// with box (boxCols, boxRows, 1, 1) and the given swizzle span in bytes (0,
/// 32, 64 or 128). The manifest writes the box innermost first: [boxCols,
/// boxRows].
struct TensorMapSpec {
  std::string operand;
  int64_t boxCols = 0;
  int64_t boxRows = 0;
  int64_t swizzle = 0;
};

struct KernelSpec {
  int64_t formatVersion = 0;
  std::string name;   // the bundle name, e.g. sdpa_fwd_f16_d128_causal
  std::string kernel; // the entry symbol in the cubin/PTX
  std::string target; // "sm_90a"
  std::string dtype;  // "f16" or "bf16"
  int64_t headDim = 0;
  int64_t headDimV = 0;
  bool causal = false;
  std::string mask; // "none" or "causal_top_left"
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t threads = 0;
  int64_t dynamicSmemBytes = 0;
  int64_t alignmentBytes = 0;
  /// Grid rules, e.g. "ceil_div(seqlen_q, block_m)", over the variables
  /// batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, head_dim_v,
  /// block_m and block_n.
  std::string gridX, gridY, gridZ;
  std::vector<ParamSpec> params;
  /// The params after scale named capture0, capture1, ... (memrefs of any
  /// rank >= 1 and a dtype of kCaptureDtypes): tensors the kernel's
  /// score_mod reads, passed in order after scale, contiguous unless their
  /// layout is "strided" (any strides).
  std::vector<ParamSpec> captures;
  /// params ends with {"name": "tile_counter", "kind": "zeroed_i32"}: the
  /// kernel takes a pointer to one int32 that must be 0 at launch (a
  /// persistent kernel hands out tiles by atomic adds to it).
  bool tileCounter = false;
  /// params ends with {"name": "workspace", "kind": "zeroed_bytes_per_block",
  /// "bytes_per_block": N} (split_tail): the kernel takes a pointer to
  /// N * gridDim.x bytes, zero at the first launch, that it leaves zero.
  int64_t workspaceBytesPerBlock = 0;
  /// Kernel parameters after `params`, in order; empty for kernels that do
  /// not use TMA (the manifest then has no "tensor_maps" key).
  std::vector<TensorMapSpec> tensorMaps;
  std::string schedule; // informational
  std::string compiler; // informational
  std::string cubin;    // file name inside the bundle directory
  std::string ptx;      // file name inside the bundle directory
};
} // namespace tiledattn::runtime

#endif // TILEDATTN_RUNTIME_KERNELSPEC_H
