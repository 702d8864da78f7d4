//===- TensorMap.cpp - TMA tensor maps for kernel operands ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Implements the checks TMA puts on an operand and the computation of
// cuTensorMapEncodeTiled's arguments (no GPU needed), and the encoding itself.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Runtime/TensorMap.h"
#include "tiledattn/Runtime/Error.h"

#include "Json.h"

#include <c10/util/Exception.h>

#include <sstream>

using namespace tiledattn::runtime;

namespace {
constexpr const char *kOp = "tiledattn.sdpa_fwd";
/// TMA's alignment of the global address and of the strides, in bytes.
constexpr int64_t kTmaAlignment = 16;
constexpr int64_t kMaxGlobalDim = int64_t(1) << 32;    // exclusive
constexpr int64_t kMaxGlobalStride = int64_t(1) << 40; // exclusive, bytes

template <typename Array>
std::string list(const Array &values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

CUtensorMapSwizzle swizzleMode(int64_t bytes) {
  switch (bytes) {
  case 128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  case 64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case 32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  default:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

const char *swizzleName(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
  case CU_TENSOR_MAP_SWIZZLE_128B:
    return "CU_TENSOR_MAP_SWIZZLE_128B";
  case CU_TENSOR_MAP_SWIZZLE_64B:
    return "CU_TENSOR_MAP_SWIZZLE_64B";
  case CU_TENSOR_MAP_SWIZZLE_32B:
    return "CU_TENSOR_MAP_SWIZZLE_32B";
  default:
    return "CU_TENSOR_MAP_SWIZZLE_NONE";
  }
}
} // namespace

TensorMapParams
tiledattn::runtime::tensorMapParams(const KernelSpec &spec,
                                    const TensorMapSpec &map,
                                    const OperandView &operand) {
  const std::string &name = operand.name;
  const char *why = " for its TMA tensor map";
  TORCH_CHECK(operand.elementSize == 2, kOp, ": expected '", name,
              "' to have 2-byte elements (", spec.dtype, ")", why, " but got ",
              operand.elementSize, "-byte elements");
  TORCH_CHECK(operand.address % kTmaAlignment == 0, kOp, ": expected '", name,
              "' to be ", kTmaAlignment, "-byte aligned", why,
              " but its data pointer is 0x", std::hex, operand.address,
              std::dec);
  TORCH_CHECK(operand.strides[3] == 1, kOp, ": expected '", name,
              "' to have stride 1 in its last dimension", why,
              " but got strides ", list(operand.strides));
  int64_t perAlignment = kTmaAlignment / operand.elementSize;
  for (int d = 0; d < 3; ++d)
    TORCH_CHECK(operand.strides[d] % perAlignment == 0, kOp,
                ": expected the strides of '", name,
                "' in dims 0 to 2 to be multiples of ", perAlignment,
                " elements (", kTmaAlignment, " bytes)", why,
                " but got strides ", list(operand.strides));
  for (int d = 0; d < 4; ++d)
    TORCH_CHECK(operand.sizes[d] >= 1 && operand.sizes[d] < kMaxGlobalDim, kOp,
                ": expected every dimension of '", name, "' to be in [1, 2^32)",
                why, " but got shape ", list(operand.sizes));
  for (int d = 0; d < 3; ++d)
    TORCH_CHECK(operand.strides[d] >= 0 &&
                    operand.strides[d] < kMaxGlobalStride / operand.elementSize,
                kOp, ": expected the strides of '", name,
                "' to be below 2^40 bytes", why, " but got strides ",
                list(operand.strides), " (", operand.elementSize,
                "-byte elements)");

  TensorMapParams p;
  p.operand = map.operand;
  p.dataType = spec.dtype == "bf16" ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                    : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.globalAddress = reinterpret_cast<void *>(operand.address);
  // [B, H, S, D] -> innermost first (D, S, H, B).
  for (int d = 0; d < 4; ++d)
    p.globalDim[d] = static_cast<cuuint64_t>(operand.sizes[3 - d]);
  for (int d = 0; d < 3; ++d)
    p.globalStrides[d] =
        static_cast<cuuint64_t>(operand.strides[2 - d] * operand.elementSize);
  p.boxDim = {static_cast<cuuint32_t>(map.boxCols),
              static_cast<cuuint32_t>(map.boxRows), 1, 1};
  p.swizzle = swizzleMode(map.swizzle);
  return p;
}

void tiledattn::runtime::encodeTensorMap(const TensorMapParams &p,
                                         const KernelSpec &spec,
                                         CUtensorMap &out) {
  CUresult result = driver().cuTensorMapEncodeTiled(
      &out, p.dataType, p.rank, p.globalAddress, p.globalDim.data(),
      p.globalStrides.data(), p.boxDim.data(), p.elementStrides.data(),
      p.interleave, p.swizzle, p.l2Promotion, p.oobFill);
  TORCH_CHECK(result == CUDA_SUCCESS,
              "tiledattn: cuTensorMapEncodeTiled failed for operand '",
              p.operand, "' of kernel '", spec.kernel,
              "': ", describeCUresult(result), "; arguments: ", toJson(p));
}

std::string tiledattn::runtime::toJson(const TensorMapParams &p) {
  // The driver's enum names where the value is the one the runtime uses.
  auto named = [](int value, int expected, const char *name) {
    return value == expected ? json::Value(name) : json::Value(value);
  };
  json::Value out;
  out["operand"] = p.operand;
  out["data_type"] = p.dataType == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                         ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"
                         : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  out["rank"] = p.rank;
  out["global_address"] = reinterpret_cast<uintptr_t>(p.globalAddress);
  out["global_dim"] = p.globalDim;
  out["global_strides"] = p.globalStrides;
  out["box_dim"] = p.boxDim;
  out["element_strides"] = p.elementStrides;
  out["interleave"] = named(p.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            "CU_TENSOR_MAP_INTERLEAVE_NONE");
  out["swizzle"] = swizzleName(p.swizzle);
  out["l2_promotion"] = named(p.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              "CU_TENSOR_MAP_L2_PROMOTION_L2_256B");
  out["oob_fill"] = named(p.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                          "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE");
  return json::dump(out);
}
