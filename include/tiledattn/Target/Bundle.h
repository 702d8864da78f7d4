//===- Bundle.h - Kernel bundles: PTX, cubin and manifest -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel bundle is the one thing the compiler and the runtime share: a
// directory with kernel.ptx, kernel.cubin and manifest.json (docs/Runtime.md
// lists the manifest's fields).
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_TARGET_BUNDLE_H
#define TILEDATTN_TARGET_BUNDLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "tiledattn/Dialect/TiledAttn/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tiledattn {
constexpr int kBundleFormatVersion = 1;

/// One TMA tensor map parameter of the kernel.
struct TensorMapDescription {
  std::string operand; // "q" | "k" | "v"
  int64_t boxRows = 0, boxCols = 0;
  int64_t swizzle = 0; // bytes: 0, 32, 64 or 128
};

/// What the manifest says about the kernel, read off tiledattn.sdpa before
/// lowering.
struct KernelDescription {
  std::string name;
  std::string dtype; // "f16" | "bf16"
  /// Of q and k, and of v and o.
  int64_t headDim = 0, headDimV = 0;
  bool causal = false;
  int64_t blockM = 0, blockN = 0, threads = 0;
  /// Persistent kernels launch ctasPerSm blocks per multiprocessor (at most
  /// one per tile) that loop over the tiles.
  bool persistent = false;
  /// Blocks per cluster along the query tiles (kv_multicast: 2); the grid's
  /// x is a multiple of it.
  int64_t clusterBlocks = 1;
  /// dynamic_tiles: the kernel takes a zeroed i32 tile counter after scale.
  bool dynamicTiles = false;
  int64_t ctasPerSm = 1;
  /// The key/value lengths the kernel is meant for, from the function's
  /// tiledattn.min_seqlen_k / tiledattn.max_seqlen_k (none: any length).
  std::optional<int64_t> minSeqlenK, maxSeqlenK;
  /// Set from the lowered gpu.func by readLaunchContract.
  int64_t dynamicSmemBytes = 0;
  /// split_tail: the workspace the kernel takes after scale, per block.
  int64_t workspaceBytesPerBlock = 0;
  std::vector<TensorMapDescription> tensorMaps;
  /// Tensors the kernel reads beyond attention's operands (a score_mod's
  /// ALiBi slopes, document ids), the function's arguments after scale, in
  /// order: each a tensor of `rank` dimensions and `dtype`
  /// ("f32", "i32", ...), passed as a memref after scale: contiguous, or
  /// with any strides where `strided`.
  struct Capture {
    int64_t rank = 0;
    std::string dtype;
    bool strided = false;
  };
  std::vector<Capture> captures;
  /// The tiles the kernel walks (q blocks, heads, batches) as grid rules:
  /// a tile program's tiledattn.for_each_tile bounds (tileGridRules), else
  /// the query blocks, query heads and batches of tiledattn.sdpa.
  std::array<std::string, 3> tiles = {"ceil_div(seqlen_q, block_m)", "heads_q",
                                      "batch"};
  std::string schedule; // printed #tiledattn.schedule
  /// What the kernel does to the scores beyond attention, as MLIR text: the
  /// sdpa's score_mod body, or a tile program's tiledattn.score_mod ops.
  /// Empty for plain attention; the package never picks such a kernel for
  /// a plain attention call.
  std::string scoreMod;
  /// Built without setmaxnreg for compute-sanitizer (tiledattn-compile
  /// --sanitizer-build): correct but slow, never shipped.
  bool sanitizerBuild = false;
};

/// Resources ptxas reports for the kernel.
struct PtxasReport {
  int64_t registers = 0, stackBytes = 0, spillStores = 0, spillLoads = 0,
          staticSmemBytes = 0;
  /// The codes (e.g. "C7513") of ptxas's "wgmma.mma_async instructions are
  /// serialized" notes, in log order; empty when the wgmmas pipeline.
  std::vector<std::string> wgmmaSerialized;
  /// ptxas's "(C7508) ... 'setmaxnreg' ignored; unable to determine register
  /// count at entry": the warp roles run with the launch's register count,
  /// not their budgets (tiledattn-compile then builds again with .maxnreg).
  bool setmaxnregIgnored = false;
  std::string log;
};

/// Parses the output of `ptxas -v` for one kernel into a report.
PtxasReport parsePtxasLog(StringRef log);

/// Warns on `os`, as `tool`, about what in `report` makes the kernel slow
/// although it works: spills to local memory and serialized wgmmas.
void warnAboutPtxasReport(raw_ostream &os, StringRef tool, StringRef kernel,
                          const PtxasReport &report);

/// Finds the single tiledattn.sdpa in `module` and describes its kernel.
FailureOr<KernelDescription> describeKernel(ModuleOp module);

/// Reads what the lowered gpu.func says about its launch (dynamic shared
/// memory, TMA tensor maps) into `kernel`; call after
/// convert-tiledattn-to-nvgpu.
LogicalResult readLaunchContract(ModuleOp module, KernelDescription &kernel);

/// Returns the PTX held by the gpu.binary named `name` after lowering.
FailureOr<std::string> extractPTX(ModuleOp module, StringRef name);

/// Assembles `ptxPath` into `cubinPath` for `chip` and parses the resources.
/// On failure `error` holds ptxas's output.
FailureOr<PtxasReport> runPtxas(StringRef ptxas, StringRef chip,
                                StringRef ptxPath, StringRef cubinPath,
                                std::string &error);

/// The bounds of the tiledattn.for_each_tile ops of tile program `func`
/// as grid rules (docs/Runtime.md), with `blockM` named block_m; `tiles`
/// as it is when the program walks no tiles. A bound the runtime cannot
/// compute from the launch's sizes, or loops that walk different tiles,
/// get a diagnostic.
LogicalResult tileGridRules(func::FuncOp func, int64_t blockM,
                            std::array<std::string, 3> &tiles);

/// The grid rules (x, y, z) of the manifest for `kernel` (docs/Runtime.md).
std::array<std::string, 3> gridRules(const KernelDescription &kernel);

/// Writes manifest.json into `dir`.
LogicalResult writeManifest(StringRef dir, const KernelDescription &kernel,
                            const PtxasReport &report, StringRef chip,
                            std::string &error);
} // namespace mlir::tiledattn

#endif // TILEDATTN_TARGET_BUNDLE_H
