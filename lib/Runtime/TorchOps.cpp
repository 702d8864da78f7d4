//===- TorchOps.cpp - torch.ops.tiledattn ---------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Registers the tiledattn torch operators: sdpa_fwd (a CUDA kernel that
// checks its tensors against the bundle's manifest and launches on the current
// stream, plus a Meta kernel for fake tensors and torch.compile) and
// bundle_info (validates a bundle without a GPU).
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Runtime/Error.h"
#include "tiledattn/Runtime/ModuleCache.h"
#include "tiledattn/Runtime/TensorMap.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>

using namespace tiledattn::runtime;

namespace {
constexpr const char *kOp = "tiledattn.sdpa_fwd";

struct NamedTensor {
  const char *name;
  const at::Tensor &tensor;
};

at::ScalarType scalarType(const std::string &dtype) {
  return dtype == "bf16" ? at::kBFloat16 : at::kHalf;
}

std::string shapeOf(const at::Tensor &t) {
  std::ostringstream os;
  os << t.sym_sizes();
  return os.str();
}

void checkRank(const NamedTensor &t) {
  TORCH_CHECK(t.tensor.defined(), kOp, ": expected '", t.name,
              "' to be a tensor but got None");
  TORCH_CHECK(
      t.tensor.dim() == 4, kOp, ": expected '", t.name,
      "' to be a 4-D tensor [batch, heads, seqlen, head_dim] but got a ",
      t.tensor.dim(), "-D tensor of shape ", shapeOf(t.tensor));
}

void checkDevice(const NamedTensor &t, const at::Tensor &q) {
  TORCH_CHECK(t.tensor.is_cuda(), kOp, ": expected '", t.name,
              "' to be a CUDA tensor but got a tensor on ", t.tensor.device());
  TORCH_CHECK(t.tensor.device() == q.device(), kOp, ": expected '", t.name,
              "' on ", q.device(), " (the device of 'q') but got ",
              t.tensor.device());
}

/// Checks everything the manifest fixes about the inputs; the kernel trusts
/// these and reads out of bounds if they are wrong.
void checkInputs(const Bundle &bundle, const at::Tensor &q, const at::Tensor &k,
                 const at::Tensor &v, bool isCausal, double scale) {
  const KernelSpec &spec = bundle.spec;
  const NamedTensor all[] = {{"q", q}, {"k", k}, {"v", v}};
  for (const NamedTensor &t : all) {
    TORCH_CHECK(t.tensor.scalar_type() == scalarType(spec.dtype), kOp,
                ": expected '", t.name, "' to have dtype ",
                scalarType(spec.dtype), " (bundle '", spec.name,
                "' is compiled for ", spec.dtype, ") but got ",
                t.tensor.scalar_type());
    TORCH_CHECK(t.tensor.stride(3) == 1, kOp, ": expected '", t.name,
                "' to have stride 1 in its last dimension but got strides ",
                t.tensor.strides());
  }
  TORCH_CHECK(q.size(3) == spec.headDim, kOp,
              ": expected 'q' to have head dim ", spec.headDim, " (bundle '",
              spec.name, "') but got ", q.size(3));
  TORCH_CHECK(k.size(3) == spec.headDim, kOp,
              ": expected 'k' to have head dim ", spec.headDim, " (bundle '",
              spec.name, "') but got ", k.size(3));
  TORCH_CHECK(v.size(3) == spec.headDimV, kOp,
              ": expected 'v' to have head dim ", spec.headDimV, " (bundle '",
              spec.name, "') but got ", v.size(3));
  TORCH_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0), kOp,
              ": expected 'q', 'k' and 'v' to have the same batch size but "
              "got ",
              q.size(0), ", ", k.size(0), " and ", v.size(0));
  TORCH_CHECK(v.size(1) == k.size(1) && v.size(2) == k.size(2), kOp,
              ": expected 'v' to have the heads and sequence length of 'k' "
              "but got shapes ",
              shapeOf(k), " and ", shapeOf(v));
  for (const NamedTensor &t : all)
    TORCH_CHECK(t.tensor.numel() > 0, kOp, ": expected '", t.name,
                "' to be non-empty but got shape ", shapeOf(t.tensor));
  TORCH_CHECK(q.size(1) % k.size(1) == 0, kOp,
              ": expected the heads of 'q' to be a multiple of the heads of "
              "'k' but got ",
              q.size(1), " and ", k.size(1));
  TORCH_CHECK(isCausal == spec.causal, kOp, ": is_causal is ",
              isCausal ? "true" : "false", " but bundle '", spec.name,
              "' has mask '", spec.mask, "'");
  TORCH_CHECK(std::isfinite(scale), kOp, ": expected a finite 'scale' but got ",
              scale);
  int64_t elementsPerAlignment =
      std::max<int64_t>(1, spec.alignmentBytes / q.element_size());
  for (const NamedTensor &t : all) {
    auto address = reinterpret_cast<uintptr_t>(t.tensor.data_ptr());
    TORCH_CHECK(address % spec.alignmentBytes == 0, kOp, ": expected '", t.name,
                "' to be ", spec.alignmentBytes,
                "-byte aligned but its data pointer is 0x", std::hex, address,
                std::dec, " (storage offset ", t.tensor.storage_offset(), ")");
    for (int d = 0; d < 3; ++d)
      TORCH_CHECK(t.tensor.stride(d) % elementsPerAlignment == 0, kOp,
                  ": expected the strides of '", t.name,
                  "' to be multiples of ", elementsPerAlignment, " elements (",
                  spec.alignmentBytes, "-byte alignment) but got strides ",
                  t.tensor.strides());
  }
}

/// The torch dtypes a captured tensor of the manifest's `dtype` may have:
/// the compiler's integers are signless, so a score_mod reads int8, uint8
/// and bool alike as i8 (its ops say how).
bool captureDtypeMatches(const std::string &dtype, at::ScalarType type) {
  if (dtype == "i8")
    return type == at::kChar || type == at::kByte || type == at::kBool;
  at::ScalarType expected = dtype == "f32"    ? at::kFloat
                            : dtype == "f16"  ? at::kHalf
                            : dtype == "bf16" ? at::kBFloat16
                            : dtype == "f64"  ? at::kDouble
                            : dtype == "i16"  ? at::kShort
                            : dtype == "i32"  ? at::kInt
                                              : at::kLong;
  return type == expected;
}

/// Checks the tensors a bundle's score_mod reads against its manifest:
/// how many, and each one's device, dtype, rank and layout (the kernel
/// indexes it, without bounds checks, as a contiguous array unless the
/// manifest says "strided").
void checkCaptures(const KernelSpec &spec, at::TensorList captures,
                   const at::Tensor &q) {
  auto list = [&] {
    std::string text;
    for (const ParamSpec &p : spec.captures)
      text += (text.empty() ? "" : ", ") + p.name + ": " + p.dtype + " rank " +
              std::to_string(p.rank);
    return text.empty() ? std::string("none") : text;
  };
  TORCH_CHECK(captures.size() == spec.captures.size(), kOp, ": expected ",
              spec.captures.size(), " captured tensors (bundle '", spec.name,
              "' reads ", list(), ") but got ", captures.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    const at::Tensor &t = captures[i];
    const ParamSpec &p = spec.captures[i];
    std::string name = "captures[" + std::to_string(i) + "]";
    TORCH_CHECK(t.defined(), kOp, ": expected '", name,
                "' to be a tensor but got None");
    checkDevice({name.c_str(), t}, q);
    TORCH_CHECK(captureDtypeMatches(p.dtype, t.scalar_type()), kOp,
                ": expected '", name, "' to have dtype ", p.dtype, " (bundle '",
                spec.name, "' reads ", p.name, " as ", p.dtype, ") but got ",
                t.scalar_type());
    TORCH_CHECK(t.dim() == p.rank, kOp, ": expected '", name, "' to be a ",
                p.rank, "-D tensor (bundle '", spec.name, "') but got a ",
                t.dim(), "-D tensor of shape ", shapeOf(t));
    TORCH_CHECK(p.layout == "strided" || t.is_contiguous(), kOp, ": expected '",
                name, "' to be contiguous (bundle '", spec.name, "' reads ",
                p.name, " without strides) but got strides ", t.strides(),
                " for shape ", shapeOf(t), " (call .contiguous())");
  }
}

/// The operand a tensor map describes, as TMA sees it.
OperandView operandView(const std::string &name, const at::Tensor &t) {
  OperandView view;
  view.name = name;
  view.address = reinterpret_cast<uintptr_t>(t.data_ptr());
  for (int d = 0; d < 4; ++d) {
    view.sizes[d] = t.size(d);
    view.strides[d] = t.stride(d);
  }
  view.elementSize = t.element_size();
  return view;
}

/// Checks q, k and v against what the bundle's tensor maps need and computes
/// each map's encoding, in kernel-parameter order; needs no GPU.
/// The output the kernel writes, [B, H, Sq, head_dim_v] like q.
at::Tensor emptyOutput(const KernelSpec &spec, const at::Tensor &q) {
  return at::empty({q.size(0), q.size(1), q.size(2), spec.headDimV},
                   q.options());
}

std::vector<TensorMapParams>
tensorMapParams(const KernelSpec &spec, const at::Tensor &q,
                const at::Tensor &k, const at::Tensor &v, const at::Tensor &o) {
  std::vector<TensorMapParams> params;
  for (const TensorMapSpec &map : spec.tensorMaps) {
    const at::Tensor &t = map.operand == "q"   ? q
                          : map.operand == "k" ? k
                          : map.operand == "v" ? v
                                               : o;
    params.push_back(tensorMapParams(spec, map, operandView(map.operand, t)));
  }
  return params;
}

/// Kernel parameters in launch order: each memref expands to (allocated,
/// aligned, offset, sizes..., strides...), as MLIR's memref descriptor does;
/// tensor maps come last, each passed by value (kernelParams points at a
/// 64-byte aligned CUtensorMap).
class KernelArgs {
public:
  void addTensorMap(const TensorMapParams &params, const KernelSpec &spec) {
    TORCH_CHECK(numTensorMaps < tensorMaps.size(), kOp, ": kernel '", spec.name,
                "' takes more than ", tensorMaps.size(), " tensor maps");
    CUtensorMap &map = tensorMaps[numTensorMaps++];
    encodeTensorMap(params, spec, map);
    args.push_back(&map);
  }
  void addMemref(const at::Tensor &t) {
    void *&ptr = pointers.emplace_back(t.data_ptr());
    args.push_back(&ptr); // allocated
    args.push_back(&ptr); // aligned
    addInt(0);            // offset: data_ptr already includes it
    for (int64_t size : t.sizes())
      addInt(size);
    for (int64_t stride : t.strides())
      addInt(stride);
  }
  void addPointer(void *value) {
    args.push_back(&pointers.emplace_back(value));
  }
  void addFloat(float value) { args.push_back(&floats.emplace_back(value)); }
  void **data() { return args.data(); }
  size_t size() const { return args.size(); }

private:
  void addInt(int64_t value) { args.push_back(&ints.emplace_back(value)); }
  // args holds pointers into these: deques, which never move an element
  // they hold when they grow (captured tensors add memrefs of any rank).
  std::deque<void *> pointers;
  std::deque<int64_t> ints;
  std::deque<float> floats;
  std::array<CUtensorMap, kMaxTensorMaps> tensorMaps{};
  size_t numTensorMaps = 0;
  std::vector<void *> args;
};

/// Scratch memory that kernels leave zero where it matters when they end:
/// the int32 a dynamic_tiles kernel counts its tiles on (its last tile puts
/// it back to 0), split_tail's workspace (its merging blocks zero the
/// flags). One zeroed buffer per stream, kind and `layout` serves every
/// launch on it (launches on one stream never overlap) without a memset
/// each. The layout matters for the workspace: only its flags go back to 0,
/// the slots keep the last launch's partial O, and where the flags sit
/// depends on the slot size and the grid; a kernel of another layout would
/// take that O for raised flags and merge before its pieces are written
/// (the twenty-fifth session found this). A stream being captured into a
/// CUDA graph gets a fresh zero instead (a memset node in the graph): the
/// graph may be replayed on another stream, next to launches that use this
/// stream's buffer.
enum class Scratch { TileCounter, Workspace };
at::Tensor zeroedPerStream(const at::Tensor &q, Scratch kind,
                           at::ScalarType dtype, int64_t numel,
                           int64_t layout) {
  at::TensorOptions options = q.options().dtype(dtype);
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
      c10::cuda::CaptureStatus::None)
    return at::zeros({numel}, options);
  static std::mutex mutex;
  // Never destroyed: freeing device memory at exit races CUDA's teardown.
  static auto &buffers =
      *new std::map<std::tuple<int, cudaStream_t, Scratch, int64_t, int64_t>,
                    at::Tensor>();
  cudaStream_t stream =
      c10::cuda::getCurrentCUDAStream(q.device().index()).stream();
  std::lock_guard<std::mutex> lock(mutex);
  at::Tensor &buffer =
      buffers[{q.device().index(), stream, kind, layout, numel}];
  if (!buffer.defined())
    buffer = at::zeros({numel}, options);
  return buffer;
}

/// Launches the bundle on q, k, v, with `out` and `lse` its o and lse
/// arguments (written by a forward kernel; a backward program may read
/// them), on the current stream of q's device. The caller checked the
/// tensors against the bundle and made q's device current.
void launchBundle(const std::string &dir, const Bundle &bundle,
                  const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
                  const at::Tensor &out, const at::Tensor &lse, double scale,
                  at::TensorList captures) {
  const KernelSpec &spec = bundle.spec;
  int64_t batch = q.size(0), headsQ = q.size(1), seqlenQ = q.size(2);
  // Checked before the driver is touched, like everything above.
  std::vector<TensorMapParams> maps = tensorMapParams(spec, q, k, v, out);

  const LoadedKernel &kernel = getKernel(dir, q.device().index());
  // The guard made the device's primary context current; a caller that
  // pushed another context gets the primary one back, as cudaSetDevice does.
  CUcontext current = nullptr;
  TILEDATTN_CU_CHECK(cuCtxGetCurrent(&current), spec.kernel);
  if (current != kernel.context)
    TILEDATTN_CU_CHECK(cuCtxSetCurrent(kernel.context), spec.kernel);

  GridVars vars{batch,   headsQ,    k.size(1),
                seqlenQ, k.size(2), kernel.multiprocessors};
  int64_t grid[3];
  const int64_t limits[3] = {std::numeric_limits<int32_t>::max(), 65535, 65535};
  const char *axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    grid[i] = bundle.grid[i].evaluate(spec, vars);
    TORCH_CHECK(grid[i] >= 1 && grid[i] <= limits[i], kOp, ": grid ", axes[i],
                " = ", bundle.grid[i].text(), " = ", grid[i],
                " is outside the CUDA limit [1, ", limits[i], "] for shape q ",
                shapeOf(q), ", k ", shapeOf(k));
  }

  KernelArgs args;
  for (const at::Tensor *t :
       std::initializer_list<const at::Tensor *>{&q, &k, &v, &out, &lse})
    args.addMemref(*t);
  args.addFloat(static_cast<float>(scale));
  for (const at::Tensor &t : captures)
    args.addMemref(t);
  at::Tensor tileCounter, workspace;
  if (spec.tileCounter) {
    tileCounter = zeroedPerStream(q, Scratch::TileCounter, at::kInt, 1,
                                  /*layout=*/0);
    args.addPointer(tileCounter.data_ptr());
  }
  if (spec.workspaceBytesPerBlock) {
    // Bytes per block and grid fix where the flags are (a slot per block
    // and consumer warpgroup, the flags after all of them).
    workspace = zeroedPerStream(q, Scratch::Workspace, at::kByte,
                                spec.workspaceBytesPerBlock * grid[0],
                                /*layout=*/spec.workspaceBytesPerBlock);
    args.addPointer(workspace.data_ptr());
  }
  // Encoding needs the current context, made current above.
  for (const TensorMapParams &map : maps)
    args.addTensorMap(map, spec);
  CUstream stream =
      c10::cuda::getCurrentCUDAStream(q.device().index()).stream();
  TILEDATTN_CU_CHECK(
      cuLaunchKernel(kernel.function, static_cast<unsigned>(grid[0]),
                     static_cast<unsigned>(grid[1]),
                     static_cast<unsigned>(grid[2]),
                     static_cast<unsigned>(spec.threads), 1, 1,
                     static_cast<unsigned>(spec.dynamicSmemBytes), stream,
                     args.data(), nullptr),
      spec.kernel);
}

/// Registered for CPU too, where it fails at the device check with a message
/// in our voice rather than the dispatcher's "could not run".
std::tuple<at::Tensor, at::Tensor>
sdpaFwdCUDA(const at::Tensor &query, const at::Tensor &k, const at::Tensor &v,
            bool isCausal, double scale, c10::string_view bundleDir,
            std::optional<at::TensorList> maybeCaptures) {
  at::TensorList captures = maybeCaptures.value_or(at::TensorList());
  for (const NamedTensor &t :
       {NamedTensor{"q", query}, NamedTensor{"k", k}, NamedTensor{"v", v}}) {
    checkRank(t);
    checkDevice(t, query);
  }
  // Everything below runs on q's device, which need not be the current one
  // (tensors on cuda:1 while cuda:0 is current): the guard makes it current
  // (and its primary context) before anything allocates, loads or launches.
  c10::cuda::CUDAGuard guard(query.device());
  std::string dir(bundleDir);
  std::shared_ptr<const Bundle> bundle = getBundle(dir);
  checkInputs(*bundle, query, k, v, isCausal, scale);
  checkCaptures(bundle->spec, captures, query);
  const KernelSpec &spec = bundle->spec;
  int64_t batch = query.size(0), headsQ = query.size(1),
          seqlenQ = query.size(2);
  // The results first: a caller's allocator sees them as for any scale.
  at::Tensor out = emptyOutput(spec, query);
  at::Tensor lse =
      at::empty({batch, headsQ, seqlenQ}, query.options().dtype(at::kFloat));
  // The kernels mask with -inf before scaling and shift each row by its
  // largest score, which holds for scale > 0 only. A negative scale gives
  // the same scores as -scale on -q (negation is exact); scale 0 makes every
  // score 0 (where -inf * 0 would be NaN), as q * 0 with scale 1 does (a NaN
  // or inf in q stays NaN, as in torch's SDPA).
  at::Tensor q = query;
  if (scale < 0) {
    q = query.neg();
    scale = -scale;
    checkInputs(*bundle, q, k, v, isCausal, scale);
  } else if (scale == 0) {
    q = query.mul(0);
    scale = 1.0;
    checkInputs(*bundle, q, k, v, isCausal, scale);
  }
  launchBundle(dir, *bundle, q, k, v, out, lse, scale, captures);
  return {out, lse};
}

/// run_bundle: the bundle on given o and lse, which it may read as well as
/// write (a backward program reads dO as o and the forward's lse), and on
/// captures it may write (the backward's gradients). No scale rewriting:
/// the kernel takes `scale` as it is, which must be positive.
void runBundleCUDA(const at::Tensor &q, const at::Tensor &k,
                   const at::Tensor &v, const at::Tensor &o,
                   const at::Tensor &lse, double scale,
                   c10::string_view bundleDir,
                   std::optional<at::TensorList> maybeCaptures) {
  constexpr const char *op = "tiledattn.run_bundle";
  at::TensorList captures = maybeCaptures.value_or(at::TensorList());
  for (const NamedTensor &t : {NamedTensor{"q", q}, NamedTensor{"k", k},
                               NamedTensor{"v", v}, NamedTensor{"o", o}}) {
    checkRank(t);
    checkDevice(t, q);
  }
  checkDevice({"lse", lse}, q);
  c10::cuda::CUDAGuard guard(q.device());
  std::string dir(bundleDir);
  std::shared_ptr<const Bundle> bundle = getBundle(dir);
  const KernelSpec &spec = bundle->spec;
  TORCH_CHECK(scale > 0 && std::isfinite(scale), op,
              ": expected 'scale' to be positive and finite, but got ", scale);
  checkInputs(*bundle, q, k, v, spec.causal, scale);
  checkCaptures(spec, captures, q);
  std::vector<int64_t> oShape{q.size(0), q.size(1), q.size(2), spec.headDimV};
  TORCH_CHECK(o.sizes() == at::IntArrayRef(oShape) &&
                  o.scalar_type() == q.scalar_type(),
              op, ": expected 'o' of shape ", at::IntArrayRef(oShape),
              " and dtype ", q.scalar_type(), ", but got ", shapeOf(o), " ",
              o.scalar_type());
  std::vector<int64_t> lseShape{q.size(0), q.size(1), q.size(2)};
  TORCH_CHECK(lse.sizes() == at::IntArrayRef(lseShape) &&
                  lse.scalar_type() == at::kFloat,
              op, ": expected 'lse' of shape ", at::IntArrayRef(lseShape),
              " and dtype float32, but got ", shapeOf(lse), " ",
              lse.scalar_type());
  launchBundle(dir, *bundle, q, k, v, o, lse, scale, captures);
}

/// Shapes only, with symbolic sizes, for fake tensors and torch.compile. The
/// bundle is not read: its head_dim_v equals v's last dimension when the CUDA
/// kernel's checks pass.
std::tuple<at::Tensor, at::Tensor>
sdpaFwdMeta(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
            bool isCausal, double scale, c10::string_view bundleDir,
            std::optional<at::TensorList> /*captures: the kernel's only*/) {
  for (const NamedTensor &t :
       {NamedTensor{"q", q}, NamedTensor{"k", k}, NamedTensor{"v", v}})
    checkRank(t);
  TORCH_CHECK(
      k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
      kOp, ": expected 'q', 'k' and 'v' to have the same dtype but got ",
      q.scalar_type(), ", ", k.scalar_type(), " and ", v.scalar_type());
  at::Tensor out = at::empty_symint(
      {q.sym_size(0), q.sym_size(1), q.sym_size(2), v.sym_size(3)},
      q.options());
  at::Tensor lse =
      at::empty_symint({q.sym_size(0), q.sym_size(1), q.sym_size(2)},
                       q.options().dtype(at::kFloat));
  return {out, lse};
}

std::string bundleInfo(c10::string_view bundleDir) {
  return toJson(getBundle(std::string(bundleDir))->spec);
}

/// The cuTensorMapEncodeTiled arguments sdpa_fwd would use for these inputs,
/// as a JSON array, after the same checks; on any device, without a GPU.
std::string tensorMapInfo(const at::Tensor &q, const at::Tensor &k,
                          const at::Tensor &v, c10::string_view bundleDir) {
  for (const NamedTensor &t :
       {NamedTensor{"q", q}, NamedTensor{"k", k}, NamedTensor{"v", v}})
    checkRank(t);
  std::shared_ptr<const Bundle> bundle = getBundle(std::string(bundleDir));
  const KernelSpec &spec = bundle->spec;
  checkInputs(*bundle, q, k, v, spec.causal, 1.0);
  std::string out = "[";
  for (const TensorMapParams &map :
       tensorMapParams(spec, q, k, v, emptyOutput(spec, q)))
    out += (out.size() > 1 ? ", " : "") + toJson(map);
  return out + "]";
}
} // namespace

// sdpa_fwd_no_grad is sdpa_fwd without the autograd kernel that
// tiledattn.backward registers (in Python, as torch.library does): the
// package calls it for eager calls that need no gradient, which then skip
// that kernel's Python (a third of a small call's host time).
TORCH_LIBRARY(tiledattn, m) {
#define TILEDATTN_SDPA_SCHEMA(name)                                            \
  name "(Tensor q, Tensor k, Tensor v, bool is_causal, float scale, "          \
       "str bundle, Tensor[]? captures=None) -> (Tensor out, Tensor lse)"
  m.def(TILEDATTN_SDPA_SCHEMA("sdpa_fwd"), {at::Tag::pt2_compliant_tag});
  m.def(TILEDATTN_SDPA_SCHEMA("sdpa_fwd_no_grad"),
        {at::Tag::pt2_compliant_tag});
#undef TILEDATTN_SDPA_SCHEMA
  m.def("run_bundle(Tensor q, Tensor k, Tensor v, Tensor(a!) o, "
        "Tensor(b!) lse, float scale, str bundle, Tensor(c!)[]? captures=None) "
        "-> ()");
  m.def("bundle_info(str bundle) -> str", &bundleInfo);
  m.def("tensor_map_info(Tensor q, Tensor k, Tensor v, str bundle) -> str",
        &tensorMapInfo);
}

TORCH_LIBRARY_IMPL(tiledattn, CUDA, m) {
  m.impl("sdpa_fwd", &sdpaFwdCUDA);
  m.impl("sdpa_fwd_no_grad", &sdpaFwdCUDA);
  m.impl("run_bundle", &runBundleCUDA);
}

TORCH_LIBRARY_IMPL(tiledattn, CPU, m) {
  m.impl("sdpa_fwd", &sdpaFwdCUDA);
  m.impl("sdpa_fwd_no_grad", &sdpaFwdCUDA);
  m.impl("run_bundle", &runBundleCUDA);
}

TORCH_LIBRARY_IMPL(tiledattn, Meta, m) {
  m.impl("sdpa_fwd", &sdpaFwdMeta);
  m.impl("sdpa_fwd_no_grad", &sdpaFwdMeta);
}
