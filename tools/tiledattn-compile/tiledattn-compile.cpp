//===- tiledattn-compile.cpp - Schedule file to kernel bundle ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads a schedule file (one func.func holding one tiledattn.sdpa), runs
// tiledattn-to-ptx-pipeline, assembles the PTX with ptxas and writes a
// kernel bundle: kernel.ptx, kernel.cubin, manifest.json. Every failure is
// a diagnostic and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"
#include "tiledattn/InitAllTiledAttn.h"
#include "tiledattn/Pipelines/Pipelines.h"
#include "tiledattn/Target/Bundle.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include <cstdlib>

using namespace mlir;
using namespace mlir::tiledattn;
namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<schedule.mlir>"), cl::Required);
static cl::opt<std::string> outputDir("o",
                                      cl::desc("bundle directory to write"),
                                      cl::value_desc("dir"), cl::Required);
static cl::opt<std::string> chip("chip", cl::desc("target GPU"),
                                 cl::init("sm_90a"));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas to assemble with"),
                                      cl::init(TILEDATTN_PTXAS_PATH));
static cl::opt<bool> quiet("quiet", cl::desc("print nothing on success"));
static cl::opt<bool> experimentalWgmma(
    "experimental-wgmma",
    cl::desc("lower mma = wgmma schedules (not yet checked on a GPU)"));
static cl::opt<bool> sanitizerBuild(
    "sanitizer-build",
    cl::desc("leave out setmaxnreg, for runs under compute-sanitizer "
             "(docs/Testing.md); slower, never ship it"));

static cl::opt<std::string>
    derive("derive",
           cl::desc("passes run on the program first, to derive a form of it: "
                    "tiledattn-derive-program{element-type=f16 head-dim=96}"),
           cl::init(""));

static int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tiledattn-compile") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerDeriveProgramPass(); // what --derive may name
  cl::ParseCommandLineOptions(argc, argv,
                              "tiledattn-compile: schedule file -> kernel "
                              "bundle (PTX, cubin, manifest)\n");
  if (chip != "sm_90a" && chip != "sm_90")
    return fail("--chip: expected sm_90a or sm_90 (the kernels use Hopper "
                "features), but got '" +
                chip + "'");

  DialectRegistry registry;
  registerAllTiledAttnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic's location and caret point into the schedule the user wrote;
  // MLIR's default note after it, the whole function in generic form, would
  // bury them (hundreds of lines for a tile program).
  context.printOpOnDiagnostic(false);

  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  // The program as written, then the form --derive asks for.
  auto parse = [&]() -> OwningOpRef<ModuleOp> {
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module || derive.empty())
      return module; // The parser or verifier reported why it failed.
    PassManager pm(&context);
    std::string parseError;
    llvm::raw_string_ostream errors(parseError);
    if (failed(parsePassPipeline(derive, pm, errors))) {
      fail("--derive: expected a pass pipeline, but got '" + derive +
           "': " + parseError);
      return nullptr;
    }
    if (failed(pm.run(*module)))
      return nullptr;
    return module;
  };
  OwningOpRef<ModuleOp> module = parse();
  if (!module)
    return 1;

  FailureOr<KernelDescription> kernel = describeKernel(*module);
  if (failed(kernel))
    return 1;
  kernel->sanitizerBuild = sanitizerBuild;

  // The same passes as tiledattn-to-ptx-pipeline, run in two halves so that
  // the launch contract (dynamic shared memory) can be read off the
  // gpu.func before it is serialized.
  TiledAttnToPTXOptions options;
  options.chip = chip;
  options.experimentalWgmma = experimentalWgmma;
  options.registerBudgets = !sanitizerBuild;
  // The math functions of score_mod bodies (math.tanh, ...) become calls
  // into libdevice: link the one of ptxas's toolkit, so that the bundle
  // does not depend on CUDA_HOME being set.
  SmallString<128> libdevice(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(ptxasPath.getValue())));
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (llvm::sys::fs::exists(libdevice))
    options.libdevice = libdevice.str().str();
  SmallString<128> ptxPath(outputDir), cubinPath(outputDir);
  llvm::sys::path::append(ptxPath, "kernel.ptx");
  llvm::sys::path::append(cubinPath, "kernel.cubin");
  // The module through both halves of the pipeline into kernel.ptx, then
  // ptxas; `description` gets the launch contract.
  std::string error;
  auto build = [&](ModuleOp module,
                   KernelDescription &description) -> FailureOr<PtxasReport> {
    PassManager toNVGPU(&context);
    buildTiledAttnToNVGPUPipeline(toNVGPU, options);
    if (failed(toNVGPU.run(module)) ||
        failed(readLaunchContract(module, description)))
      return failure();
    PassManager toPTX(&context);
    buildNVGPUToPTXPipeline(toPTX, options);
    if (failed(toPTX.run(module)))
      return failure();
    FailureOr<std::string> ptx = extractPTX(module, description.name);
    if (failed(ptx))
      return failure();
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      fail("cannot create '" + outputDir + "': " + ec.message());
      return failure();
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec) {
      fail("cannot write '" + ptxPath + "': " + ec.message());
      return failure();
    }
    os << *ptx;
    os.close();
    if (!llvm::sys::fs::can_execute(ptxasPath)) {
      fail("--ptxas: '" + ptxasPath +
           "' is not an executable ptxas (install the CUDA toolkit or "
           "pass --ptxas=PATH)");
      return failure();
    }
    FailureOr<PtxasReport> report =
        runPtxas(ptxasPath, chip, ptxPath, cubinPath, error);
    if (failed(report))
      fail("ptxas rejected the PTX of '" + description.name + "':\n" + error);
    return report;
  };
  KernelDescription described = *kernel;
  FailureOr<PtxasReport> report = build(*module, described);
  if (failed(report))
    return 1;
  // ptxas drops setmaxnreg where it cannot tell the registers a thread
  // starts with: then the roles' budgets are not what the program says, so
  // build it again declaring that count (lower-roles' entry-registers).
  if (!sanitizerBuild && report->setmaxnregIgnored) {
    options.entryRegisters = true;
    OwningOpRef<ModuleOp> again = parse();
    described = *kernel;
    if (!again || failed(report = build(*again, described)))
      return 1;
  }
  *kernel = described;
  if (failed(writeManifest(outputDir, *kernel, *report, chip, error)))
    return fail(error);
  if (!quiet)
    llvm::outs() << llvm::formatv(
        "{0}: registers={1} spill_stores={2} spill_loads={3} stack={4} "
        "smem={5} threads={6} -> {7}\n",
        kernel->name, report->registers, report->spillStores,
        report->spillLoads, report->stackBytes,
        report->staticSmemBytes + kernel->dynamicSmemBytes, kernel->threads,
        outputDir);
  if (!sanitizerBuild) // Which spills, as every warp keeps the launch's count.
    warnAboutPtxasReport(llvm::errs(), "tiledattn-compile", kernel->name,
                         *report);
  return 0;
}
