//===- Manifest.h - Reading and checking kernel bundles ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Everything here runs without a GPU: a bad bundle is rejected (naming the
// file, the field, what was expected and what was found) before the driver is
// touched.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_RUNTIME_MANIFEST_H
#define TILEDATTN_RUNTIME_MANIFEST_H

#include "tiledattn/Runtime/KernelSpec.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tiledattn::runtime {
/// The problem sizes a grid rule may name.
struct GridVars {
  int64_t batch = 0;
  int64_t headsQ = 0;
  int64_t headsKv = 0;
  int64_t seqlenQ = 0;
  int64_t seqlenK = 0;
  int64_t multiprocessors = 0; // of the device the kernel launches on
};

/// A grid rule such as "ceil_div(seqlen_q, block_m)", compiled once at load:
///   expr := term ('+' term)*   term := atom ('*' atom)*
///   atom := integer | variable | ceil_div(expr, expr) | min(expr, expr)
///         | '(' expr ')'
class GridExpr {
public:
  /// Returns false and sets `error` when `text` is not a grid rule.
  bool parse(const std::string &text, std::string &error);
  int64_t evaluate(const KernelSpec &spec, const GridVars &vars) const;
  const std::string &text() const { return source; }

private:
  struct Step {
    enum Kind { Constant, Variable, Add, Mul, CeilDiv, Min } kind;
    int64_t value; // the constant or the variable's index
  };
  std::vector<Step> steps; // postfix order
  std::string source;
};

/// A validated bundle: the manifest, its grid rules and the cubin bytes.
struct Bundle {
  std::string dir;
  KernelSpec spec;
  std::array<GridExpr, 3> grid;
  std::string cubinImage;
};

/// Parses and validates manifest text; `file` names it in diagnostics.
KernelSpec parseManifest(std::string_view text, const std::string &file);

/// Checks that `image` is a complete 64-bit CUDA ELF that defines `kernel`.
void checkCubinImage(std::string_view image, const std::string &file,
                     const std::string &kernel);

/// Reads `dir`/manifest.json and the cubin it names, and checks both.
Bundle loadBundle(const std::string &dir);

/// The manifest fields as one JSON object (for tiledattn::bundle_info).
std::string toJson(const KernelSpec &spec);
} // namespace tiledattn::runtime

#endif // TILEDATTN_RUNTIME_MANIFEST_H
