//===- TensorMap.h - TMA tensor maps for kernel operands --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel whose manifest lists "tensor_maps" takes one CUtensorMap per entry
// as a 128-byte by-value parameter after `scale`. tensorMapParams checks an
// operand against what TMA requires and computes the arguments of
// cuTensorMapEncodeTiled; it needs no GPU (CPU tests call it through
// tiledattn::tensor_map_info). encodeTensorMap hands them to the driver.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_TENSORMAP_H
#define TILEDATTN_RUNTIME_TENSORMAP_H

#include "tiledattn/Runtime/KernelSpec.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

namespace tiledattn::runtime {
/// An operand as TMA sees it: a [B, H, S, D] tensor of 16-bit elements,
/// sizes and strides in elements.
struct OperandView {
  std::string name; // "q", "k" or "v", for diagnostics
  uintptr_t address = 0;
  std::array<int64_t, 4> sizes{};
  std::array<int64_t, 4> strides{};
  int64_t elementSize = 0;
};

/// The arguments of cuTensorMapEncodeTiled, innermost dimension first.
struct TensorMapParams {
  std::string operand;
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  static constexpr cuuint32_t rank = 4;
  void *globalAddress = nullptr;
  std::array<cuuint64_t, 4> globalDim{};     // (D, S, H, B)
  std::array<cuuint64_t, 3> globalStrides{}; // bytes, for S, H, B
  std::array<cuuint32_t, 4> boxDim{};        // (box_cols, box_rows, 1, 1)
  std::array<cuuint32_t, 4> elementStrides{1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

/// Checks `operand` against what TMA requires (16-byte aligned data pointer,
/// strides of dims 0..2 multiples of 16 bytes, unit stride in dim 3, sizes
/// below 2^32, strides below 2^40 bytes) and computes the encoding of `map`
/// of kernel `spec`. Fails with a TORCH_CHECK naming the operand, what was
/// expected and what was given; touches no driver.
TensorMapParams tensorMapParams(const KernelSpec &spec,
                                const TensorMapSpec &map,
                                const OperandView &operand);

/// Encodes `params` with cuTensorMapEncodeTiled into `out` (64-byte aligned).
/// Fails with the driver's CUresult, naming the operand and the kernel.
void encodeTensorMap(const TensorMapParams &params, const KernelSpec &spec,
                     CUtensorMap &out);

/// `params` as a JSON object (for tiledattn::tensor_map_info).
std::string toJson(const TensorMapParams &params);
} // namespace tiledattn::runtime

#endif // TILEDATTN_RUNTIME_TENSORMAP_H
