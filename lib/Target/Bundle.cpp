//===- Bundle.cpp - Kernel bundles: PTX, cubin and manifest -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Target/Bundle.h"
#include "tiledattn/Runtime/KernelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "tiledattn/Dialect/TiledAttn/IR/TiledAttnOps.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tiledattn;

/// What the manifest says of a kernel that runs `schedule` on operands
/// typed like tiledattn.sdpa's, whose Q and V have types `q` and `v`.
static KernelDescription describe(StringRef name, MemRefType q, MemRefType v,
                                  bool causal, ScheduleAttr s,
                                  Operation *func) {
  KernelDescription k;
  k.name = name.str();
  k.dtype = q.getElementType().isBF16() ? "bf16" : "f16";
  k.headDim = q.getShape()[3];
  k.headDimV = v.getShape()[3];
  k.causal = causal;
  k.blockM = s.getBlockM();
  k.blockN = s.getBlockN();
  k.threads = s.getNumThreads();
  k.persistent = s.getPersistent();
  k.clusterBlocks = s.getKvMulticast() ? 2 : 1;
  k.dynamicTiles = s.getDynamicTiles();
  k.ctasPerSm = s.getCtasPerSm();
  // The dialect's attribute verifier has checked them.
  if (auto min = func->getAttrOfType<IntegerAttr>(kMinSeqlenKAttrName))
    k.minSeqlenK = min.getInt();
  if (auto max = func->getAttrOfType<IntegerAttr>(kMaxSeqlenKAttrName))
    k.maxSeqlenK = max.getInt();
  llvm::raw_string_ostream os(k.schedule);
  os << Attribute(s);
  return k;
}

/// The manifest's name for a capture's element type, or "" for one the
/// runtime cannot pass (torch has no such dtype, or MLIR would lower it to
/// another width than torch stores).
static std::string captureDtype(Type element) {
  std::string name;
  if (element.isBF16())
    name = "bf16";
  else if (isa<FloatType>(element))
    name = "f" + std::to_string(element.getIntOrFloatBitWidth());
  else if (element.isSignlessInteger())
    name = "i" + std::to_string(element.getIntOrFloatBitWidth());
  // The runtime's list (KernelSpec.h), so that the two never disagree.
  return llvm::is_contained(::tiledattn::runtime::kCaptureDtypes, name) ? name
                                                                        : "";
}

/// Arguments from #6 on are tensors a score_mod reads (captured tensors):
/// memrefs of dynamic sizes, in the identity layout (the runtime passes a
/// contiguous tensor) or strided with every stride and the offset dynamic
/// (any strides: a broadcast mask's zero strides, a slice).
static LogicalResult describeCaptures(FunctionOpInterface func,
                                      KernelDescription &k) {
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (i < 6)
      continue;
    auto fail = [&, i = i, type = type]() {
      return func.emitOpError("takes argument #")
             << i << " (" << type
             << ") after scale, a tensor its score_mod reads: expected ";
    };
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      return fail() << "a memref";
    std::string dtype = captureDtype(memref.getElementType());
    if (dtype.empty())
      return fail() << "an element type a torch tensor holds ("
                    << llvm::join(
                           llvm::ArrayRef(::tiledattn::runtime::kCaptureDtypes),
                           ", ")
                    << "), but got " << memref.getElementType();
    bool strided = false;
    if (!memref.getLayout().isIdentity()) {
      auto layout = dyn_cast<StridedLayoutAttr>(memref.getLayout());
      strided = layout && ShapedType::isDynamic(layout.getOffset()) &&
                llvm::all_of(layout.getStrides(), ShapedType::isDynamic);
      if (!strided)
        return fail() << "the identity layout (a contiguous tensor) or "
                         "strided<[?, ...], offset: ?> (any strides), but got "
                      << memref.getLayout();
    }
    if (!memref.hasRank() || memref.getRank() < 1 ||
        !llvm::all_of(memref.getShape(), ShapedType::isDynamic))
      return fail() << "dynamic sizes of rank 1 or more (?x...; the "
                       "runtime passes the tensor's sizes)";
    k.captures.push_back({memref.getRank(), dtype, strided});
  }
  return success();
}

/// A tile program (written by hand, or by tiledattn-tile-sdpa and edited):
/// its function's tiledattn.schedule sets the launch, tiledattn.causal says
/// what it computes, and it takes tiledattn.sdpa's operands.
static FailureOr<KernelDescription> describeTileProgram(func::FuncOp func) {
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  if (!schedule)
    return func.emitOpError("is a tile program (")
           << kKernelAttrName << ") without " << kScheduleAttrName
           << ", which sets its launch (block_m, warps)";
  FunctionType type = func.getFunctionType();
  auto fail = [&](unsigned i, StringRef expected) {
    return func.emitOpError("a tile program takes tiledattn.sdpa's operands "
                            "(q, k, v, o, lse, scale): expected argument #")
           << i << " to be " << expected << ", but got " << type.getInput(i);
  };
  if (type.getNumInputs() < 6)
    return func.emitOpError("a tile program takes tiledattn.sdpa's operands "
                            "(q, k, v, o, lse, scale), then the tensors its "
                            "score_mod reads, but it has ")
           << type.getNumInputs() << " arguments";
  auto q = dyn_cast<MemRefType>(type.getInput(0));
  if (!q || q.getRank() != 4 || ShapedType::isDynamic(q.getShape()[3]) ||
      !(q.getElementType().isBF16() || q.getElementType().isF16()))
    return fail(0, "a 4-D memref of bf16 or f16 with a static head dim");
  if (type.getInput(1) != q)
    return fail(1, "of q's type");
  // V and O may have a head dim of their own.
  auto v = dyn_cast<MemRefType>(type.getInput(2));
  if (!v || v.getRank() != 4 || ShapedType::isDynamic(v.getShape()[3]) ||
      v.getElementType() != q.getElementType())
    return fail(2, "a 4-D memref of q's element type with a static head dim");
  if (type.getInput(3) != v)
    return fail(3, "of v's type");
  auto lse = dyn_cast<MemRefType>(type.getInput(4));
  if (!lse || lse.getRank() != 3 || !lse.getElementType().isF32())
    return fail(4, "a 3-D memref of f32");
  if (!type.getInput(5).isF32())
    return fail(5, "f32");
  KernelDescription k = describe(
      func.getName(), q, v, func->hasAttr(kCausalAttrName), schedule, func);
  if (failed(describeCaptures(func, k)) ||
      failed(tileGridRules(func, k.blockM, k.tiles)))
    return failure();
  llvm::raw_string_ostream os(k.scoreMod);
  func.walk([&](ScoreModOp mod) {
    mod->print(os, OpPrintingFlags().useLocalScope());
    os << "\n";
  });
  return k;
}

/// The manifest lists the kernel's parameters as the sdpa op's operands
/// (q, k, v, o, lse, scale; docs/Runtime.md), then the tensors its score_mod
/// reads, and the runtime passes just those: a function that passes its
/// operands in another order would be launched with the wrong ones. (An op
/// nested deeper gets the lowering's diagnostic, which names that first.)
static LogicalResult checkKernelArguments(SdpaOp op, FunctionOpInterface func) {
  Value expected[] = {op.getQ(), op.getK(),   op.getV(),
                      op.getO(), op.getLse(), op.getScale()};
  constexpr StringLiteral names[] = {"q", "k", "v", "o", "lse", "scale"};
  auto error = [&] {
    return func.emitOpError(
        "expected a kernel's function to take its tiledattn.sdpa's "
        "operands q, k, v, o, lse and scale, in that order (then the tensors "
        "its score_mod reads), but ");
  };
  if (func.getNumArguments() < 6)
    return error() << "it has " << func.getNumArguments() << " arguments";
  for (auto [i, arg] : llvm::enumerate(func.getArguments().take_front(6)))
    if (arg != expected[i])
      return error() << "argument #" << i << " (" << arg.getType()
                     << ") is not the op's " << names[i];
  return success();
}

FailureOr<KernelDescription> mlir::tiledattn::describeKernel(ModuleOp module) {
  SmallVector<SdpaOp> ops;
  module.walk([&](SdpaOp op) { ops.push_back(op); });
  SmallVector<func::FuncOp> programs;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr(kKernelAttrName))
      programs.push_back(f);
  });
  if (ops.size() + programs.size() != 1) {
    InFlightDiagnostic diag =
        module.emitError("expected exactly one tiledattn.sdpa, or one tile "
                         "program (a func.func marked ")
        << kKernelAttrName << "), in a kernel bundle's input, but found "
        << ops.size() << " sdpa ops and " << programs.size()
        << " tile programs";
    return diag;
  }
  if (!programs.empty())
    return describeTileProgram(programs.front());
  SdpaOp op = ops.front();
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return op.emitOpError("expected to be inside a function");
  if (op->getParentOp() == func.getOperation() &&
      failed(checkKernelArguments(op, func)))
    return failure();
  KernelDescription k =
      describe(func.getName(), op.getQ().getType(), op.getV().getType(),
               op.getCausal(), op.getSchedule(), func);
  if (failed(describeCaptures(func, k)))
    return failure();
  // What the kernel does beyond attention: never picked for a plain call.
  llvm::raw_string_ostream os(k.scoreMod);
  if (!op.getScoreMod().empty())
    op.getScoreMod().front().print(os);
  if (!op.getMaskMod().empty()) {
    os << "mask_mod\n";
    op.getMaskMod().front().print(os);
  }
  if (op.getBlockMap())
    os << "block_map\n";
  if (!op.getKvRows().empty()) {
    os << "kv_rows";
    if (std::optional<int64_t> span = op.getKvSpan())
      os << " span " << *span;
    os << "\n";
    op.getKvRows().front().print(os);
  }
  return k;
}

/// Reads the tensor maps the lowering attached to `func`, checking what the
/// runtime will check of the manifest (docs/Runtime.md), so that a bad
/// attribute fails here, at its source, rather than at load.
static LogicalResult readTensorMaps(gpu::GPUFuncOp func,
                                    KernelDescription &kernel) {
  Attribute attr = func->getAttr(kTensorMapsAttrName);
  if (!attr)
    return success();
  auto maps = dyn_cast<ArrayAttr>(attr);
  if (!maps)
    return func.emitOpError("expected ")
           << kTensorMapsAttrName << " to be an array of dictionaries, but got "
           << attr;
  if (maps.size() > 8)
    return func.emitOpError("expected at most 8 entries in ")
           << kTensorMapsAttrName << ", but got " << maps.size();
  // Both dtypes are 16-bit.
  constexpr int64_t elementBytes = 2;
  for (auto [i, entry] : llvm::enumerate(maps)) {
    auto map = dyn_cast<DictionaryAttr>(entry);
    auto fail = [&, i = i]() {
      return func.emitOpError()
             << kTensorMapsAttrName << "[" << i << "]: expected ";
    };
    if (!map)
      return fail() << "a dictionary, but got " << entry;
    // "but got ..." for a key of the entry, or "but it has none".
    auto got = [&](StringRef key) {
      std::string text;
      llvm::raw_string_ostream os(text);
      if (Attribute value = map.get(key))
        os << "but got " << value;
      else
        os << "but the entry has no " << key;
      return text;
    };
    TensorMapDescription t;
    auto operand = map.getAs<StringAttr>("operand");
    if (!operand ||
        !llvm::is_contained({"q", "k", "v", "o"}, operand.getValue()))
      return fail() << "operand = \"q\", \"k\", \"v\" or \"o\", "
                    << got("operand");
    t.operand = operand.getValue().str();
    for (auto [key, value, max] : {std::tuple<StringRef, int64_t *, int64_t>{
                                       "box_rows", &t.boxRows, 256},
                                   {"box_cols", &t.boxCols, 256},
                                   {"swizzle", &t.swizzle, 128}}) {
      auto integer = map.getAs<IntegerAttr>(key);
      if (!integer || integer.getInt() < (key == "swizzle" ? 0 : 1) ||
          integer.getInt() > max)
        return fail() << key << " to be an integer in ["
                      << (key == "swizzle" ? 0 : 1) << ", " << max << "], "
                      << got(key);
      *value = integer.getInt();
    }
    if (!llvm::is_contained({0, 32, 64, 128}, t.swizzle))
      return fail() << "swizzle = 0, 32, 64 or 128, but got " << t.swizzle;
    int64_t innerBytes = t.boxCols * elementBytes;
    if (t.swizzle > 0 && innerBytes != t.swizzle)
      return fail() << "box_cols * 2 bytes to equal the swizzle span "
                    << t.swizzle << ", but got box_cols = " << t.boxCols << " ("
                    << innerBytes << " bytes)";
    if (t.swizzle == 0 && innerBytes % 16 != 0)
      return fail() << "box_cols * 2 bytes to be a multiple of 16, but got "
                       "box_cols = "
                    << t.boxCols;
    kernel.tensorMaps.push_back(std::move(t));
  }
  return success();
}

LogicalResult mlir::tiledattn::readLaunchContract(ModuleOp module,
                                                  KernelDescription &kernel) {
  gpu::GPUFuncOp func;
  module.walk([&](gpu::GPUFuncOp f) {
    if (f.getName() == kernel.name && f.isKernel())
      func = f;
  });
  if (!func)
    return module.emitError("expected a gpu.func kernel @")
           << kernel.name << " after convert-tiledattn-to-nvgpu";
  auto smem = func->getAttrOfType<IntegerAttr>(kDynamicSmemAttrName);
  if (!smem)
    return func.emitOpError("expected a ")
           << kDynamicSmemAttrName
           << " attribute from convert-tiledattn-to-nvgpu";
  kernel.dynamicSmemBytes = smem.getInt();
  if (auto workspace =
          func->getAttrOfType<IntegerAttr>(kWorkspaceBytesAttrName))
    kernel.workspaceBytesPerBlock = workspace.getInt();
  return readTensorMaps(func, kernel);
}

FailureOr<std::string> mlir::tiledattn::extractPTX(ModuleOp module,
                                                   StringRef name) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>(name);
  if (!binary)
    return module.emitError("expected a gpu.binary @")
           << name << " after lowering, but found none";
  for (Attribute a : binary.getObjects()) {
    auto object = dyn_cast<gpu::ObjectAttr>(a);
    if (object && object.getFormat() == gpu::CompilationTarget::Assembly)
      return object.getObject().getValue().str();
  }
  return binary.emitOpError("expected a PTX (format = isa) object");
}

/// First integer captured by `pattern` in `text`, or 0.
static int64_t capture(StringRef text, StringRef pattern) {
  SmallVector<StringRef> groups;
  llvm::Regex re(pattern);
  if (!re.match(text, &groups) || groups.size() < 2)
    return 0;
  int64_t v = 0;
  groups[1].getAsInteger(10, v);
  return v;
}

FailureOr<PtxasReport>
mlir::tiledattn::runPtxas(StringRef ptxas, StringRef chip, StringRef ptxPath,
                          StringRef cubinPath, std::string &error) {
  SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("tiledattn-ptxas", "log", logPath)) {
    error = "cannot create a temporary file for ptxas output";
    return failure();
  }
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas,   arch, "-O3",    "-v",
                                 ptxPath, "-o", cubinPath};
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  PtxasReport report;
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    report.log = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(logPath);
  if (rc != 0) {
    error = execError.empty() ? report.log : execError;
    if (error.empty())
      error = "ptxas exited with code " + std::to_string(rc);
    return failure();
  }
  std::string log = std::move(report.log);
  return parsePtxasLog(log);
}

PtxasReport mlir::tiledattn::parsePtxasLog(StringRef log) {
  PtxasReport report;
  report.log = log.str();
  report.registers = capture(log, "Used ([0-9]+) registers");
  report.stackBytes = capture(log, "([0-9]+) bytes stack frame");
  report.spillStores = capture(log, "([0-9]+) bytes spill stores");
  report.spillLoads = capture(log, "([0-9]+) bytes spill loads");
  report.staticSmemBytes = capture(log, "([0-9]+) bytes smem");
  // "ptxas info : (C7513) Potential Performance Loss: wgmma.mma_async
  // instructions are serialized due to ...". The code names the reason
  // (C7511 registers, C7515 accumulators defined by other instructions, ...)
  // and any of them costs the same: every wgmma waits for the one before.
  llvm::Regex serialized("\\((C[0-9]+)\\).*wgmma\\.mma_async instructions "
                         "are serialized");
  report.setmaxnregIgnored = log.contains("(C7508)");
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef> groups;
    if (serialized.match(line, &groups) &&
        !llvm::is_contained(report.wgmmaSerialized, groups[1]))
      report.wgmmaSerialized.push_back(groups[1].str());
  }
  return report;
}

void mlir::tiledattn::warnAboutPtxasReport(raw_ostream &os, StringRef tool,
                                           StringRef kernel,
                                           const PtxasReport &report) {
  // Spills go to local memory on every loop iteration: the bundle works but
  // is slow, which a schedule author wants to hear about at once.
  if (report.spillStores || report.spillLoads)
    llvm::WithColor::warning(os, tool)
        << kernel << " spills " << report.spillStores
        << " bytes to local memory and reloads " << report.spillLoads
        << " (registers " << report.registers
        << "); a smaller block_n or block_m usually removes the spills\n";
  // Serialized wgmmas wait for each other instead of filling the tensor
  // cores' pipeline, which can halve the kernel's speed.
  if (!report.wgmmaSerialized.empty())
    llvm::WithColor::warning(os, tool)
        << kernel << ": ptxas serializes the wgmma instructions ("
        << llvm::join(report.wgmmaSerialized, ", ")
        << "), which costs much of their speed; see ptxas -v output\n";
  // Dropped budgets: the consumers keep the launch's count and may spill.
  if (report.setmaxnregIgnored)
    llvm::WithColor::warning(os, tool)
        << kernel << ": ptxas ignored setmaxnreg (C7508: it cannot tell the "
        << "registers a thread starts with), so the warp roles keep the "
        << "launch's count instead of their budgets\n";
}

std::array<std::string, 3>
mlir::tiledattn::gridRules(const KernelDescription &k) {
  auto [x, y, z] = k.tiles;
  if (k.clusterBlocks > 1) { // Whole clusters: the x tiles, rounded up.
    std::string n = std::to_string(k.clusterBlocks);
    return {"ceil_div(" + x + ", " + n + ") * " + n, y, z};
  }
  if (!k.persistent)
    return {x, y, z};
  // One block per tile at most; the kernel strides over the tiles.
  std::string blocks = "multiprocessors";
  if (k.ctasPerSm > 1)
    blocks += " * " + std::to_string(k.ctasPerSm);
  return {"min(" + x + " * " + y + " * " + z + ", " + blocks + ")", "1", "1"};
}

LogicalResult mlir::tiledattn::writeManifest(StringRef dir,
                                             const KernelDescription &k,
                                             const PtxasReport &report,
                                             StringRef chip,
                                             std::string &error) {
  using llvm::json::Array;
  using llvm::json::Object;
  auto memref = [&](StringRef name, int64_t rank, StringRef dtype) {
    return Object{{"name", name.str()},
                  {"kind", "memref"},
                  {"rank", rank},
                  {"dtype", dtype.str()}};
  };
  std::array<std::string, 3> grid = gridRules(k);
  Array params{
      memref("q", 4, k.dtype), memref("k", 4, k.dtype),
      memref("v", 4, k.dtype), memref("o", 4, k.dtype),
      memref("lse", 3, "f32"), Object{{"name", "scale"}, {"kind", "f32"}}};
  for (auto [i, capture] : llvm::enumerate(k.captures)) {
    Object param =
        memref("capture" + std::to_string(i), capture.rank, capture.dtype);
    if (capture.strided) // else contiguous
      param["layout"] = "strided";
    params.push_back(std::move(param));
  }
  if (k.dynamicTiles) // One i32 in global memory, zero at launch.
    params.push_back(Object{{"name", "tile_counter"}, {"kind", "zeroed_i32"}});
  if (k.workspaceBytesPerBlock) // split_tail, zero at the first launch.
    params.push_back(Object{{"name", "workspace"},
                            {"kind", "zeroed_bytes_per_block"},
                            {"bytes_per_block", k.workspaceBytesPerBlock}});
  Object manifest{
      {"format_version", kBundleFormatVersion},
      {"name", k.name},
      {"kernel", k.name},
      {"target", chip},
      {"dtype", k.dtype},
      {"head_dim", k.headDim},
      {"head_dim_v", k.headDimV},
      {"causal", k.causal},
      {"mask", k.causal ? "causal_top_left" : "none"},
      {"block_m", k.blockM},
      {"block_n", k.blockN},
      {"threads", k.threads},
      {"dynamic_smem_bytes", k.dynamicSmemBytes},
      // Fragment loads and stores move element pairs (4 bytes); TMA needs
      // 16-byte aligned addresses and strides.
      {"alignment_bytes", k.tensorMaps.empty() ? 4 : 16},
      {"grid", Object{{"x", grid[0]}, {"y", grid[1]}, {"z", grid[2]}}},
      {"params", std::move(params)},
      {"schedule", k.schedule},
      {"compiler",
       "tiledattn " TILEDATTN_VERSION " (LLVM " LLVM_VERSION_STRING ")"},
      {"cubin", "kernel.cubin"},
      {"ptx", "kernel.ptx"},
      {"resources",
       Object{{"registers", report.registers},
              {"spill_stores", report.spillStores},
              {"spill_loads", report.spillLoads},
              {"stack_bytes", report.stackBytes},
              {"static_smem_bytes", report.staticSmemBytes},
              {"wgmma_serialized", !report.wgmmaSerialized.empty()},
              {"setmaxnreg_ignored", report.setmaxnregIgnored}}}};
  if (k.sanitizerBuild)
    manifest["sanitizer_build"] = true;
  if (!k.scoreMod.empty())
    manifest["score_mod"] = k.scoreMod;
  if (k.minSeqlenK)
    manifest["min_seqlen_k"] = *k.minSeqlenK;
  if (k.maxSeqlenK)
    manifest["max_seqlen_k"] = *k.maxSeqlenK;
  if (!k.tensorMaps.empty()) {
    Array maps;
    for (const TensorMapDescription &t : k.tensorMaps)
      maps.push_back(Object{{"operand", t.operand},
                            {"box", Array{t.boxCols, t.boxRows}},
                            {"swizzle", t.swizzle}});
    manifest["tensor_maps"] = std::move(maps);
  }
  SmallString<128> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str().str() + ": " + ec.message();
    return failure();
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return success();
}
