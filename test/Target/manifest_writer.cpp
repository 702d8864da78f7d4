//===- manifest_writer.cpp - Drives the manifest writer on lowered IR -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// tiledattn-manifest-writer reads hand-written lowered IR (a gpu.func carrying
// the attributes convert-tiledattn-to-nvgpu attaches), runs the launch
// contract reader and writes the manifest that tiledattn-compile would, so
// that test/Target can check both without a lowering that produces every
// attribute. With --verify-diagnostics and --split-input-file it checks the
// reader's errors, as tiledattn-opt does for verifiers. With --ptxas-log it
// parses a captured `ptxas -v` log into the manifest's resources and prints
// the warnings tiledattn-compile would.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "tiledattn/Target/Bundle.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tiledattn;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputDir("o", cl::desc("directory to write to"),
                                      cl::value_desc("dir"));
static cl::opt<std::string> kernelName("kernel", cl::desc("gpu.func name"),
                                       cl::init("sdpa_fwd_bf16_d128"));
static cl::opt<std::string>
    ptxasLog("ptxas-log", cl::desc("captured ptxas -v output to report"),
             cl::value_desc("file"));
static cl::opt<bool> verifyDiagnostics("verify-diagnostics");
static cl::opt<bool> splitInputFile("split-input-file");

static LogicalResult process(std::unique_ptr<llvm::MemoryBuffer> buffer,
                             raw_ostream &os) {
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect>();
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  std::unique_ptr<SourceMgrDiagnosticVerifierHandler> verifier;
  if (verifyDiagnostics)
    verifier = std::make_unique<SourceMgrDiagnosticVerifierHandler>(sourceMgr,
                                                                    &context);
  else
    handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context);

  KernelDescription kernel;
  kernel.name = kernelName;
  kernel.dtype = "bf16";
  kernel.headDim = 128;
  kernel.blockM = 128;
  kernel.blockN = 176;
  kernel.threads = 384;
  LogicalResult result = failure();
  if (OwningOpRef<ModuleOp> module =
          parseSourceFile<ModuleOp>(sourceMgr, &context)) {
    result = readLaunchContract(*module, kernel);
    if (succeeded(result) && !outputDir.empty()) {
      std::string error;
      PtxasReport report;
      if (!ptxasLog.empty()) {
        std::unique_ptr<llvm::MemoryBuffer> log =
            openInputFile(ptxasLog, &error);
        if (!log) {
          llvm::errs() << error << "\n";
          return failure();
        }
        report = parsePtxasLog(log->getBuffer());
        warnAboutPtxasReport(llvm::errs(), "tiledattn-compile", kernel.name,
                             report);
      }
      if (failed(writeManifest(outputDir, kernel, report, "sm_90a", error))) {
        llvm::errs() << error << "\n";
        return failure();
      }
    }
  }
  if (verifier)
    return verifier->verify();
  return result;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tiledattn manifest writer test\n");
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!splitInputFile)
    return failed(process(std::move(file), llvm::outs()));
  return failed(splitAndProcessBuffer(std::move(file), process, llvm::outs()));
}
