//===- Manifest.cpp - Reading and checking kernel bundles -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Implements manifest.json parsing and validation, the grid rule evaluator
// and the cubin header check.
//
//===----------------------------------------------------------------------===//

#include "tiledattn/Runtime/Manifest.h"

#include "Json.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace tiledattn::runtime;

namespace {
constexpr const char *kGridVariables[] = {
    "batch",    "heads_q",    "heads_kv", "seqlen_q", "seqlen_k",
    "head_dim", "head_dim_v", "block_m",  "block_n",  "multiprocessors"};

std::string readFile(const std::string &path, const char *what) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in.good(), "tiledattn: cannot read ", what, " '", path,
              "': ", std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Typed access to the top-level manifest object; every failure names the
/// file, the field, what was expected and what was found.
class FieldReader {
public:
  FieldReader(const json::Value &root, const std::string &file)
      : root(root), file(file) {}

  [[noreturn]] void mismatch(const std::string &field,
                             const std::string &expected,
                             const std::string &found) const {
    TORCH_CHECK(false, "tiledattn: ", file, ": field '", field, "': expected ",
                expected, " but found ", found);
    __builtin_unreachable();
  }

  const json::Value &get(const std::string &field, const json::Value &in,
                         const std::string &path) const {
    const json::Value *value = json::find(in, field);
    TORCH_CHECK(value, "tiledattn: ", file, ": missing required field '", path,
                "'");
    return *value;
  }

  std::string string(const std::string &field) const {
    return stringIn(root, field, field);
  }
  std::string stringIn(const json::Value &in, const std::string &field,
                       const std::string &path) const {
    const json::Value &value = get(field, in, path);
    if (!value.is_string())
      mismatch(path, "a string", describe(value));
    return value.get<std::string>();
  }
  std::string optionalString(const std::string &field) const {
    if (!json::find(root, field))
      return "";
    return string(field);
  }

  int64_t integer(const std::string &field, int64_t min) const {
    return integerIn(root, field, field, min);
  }
  int64_t integerIn(const json::Value &in, const std::string &field,
                    const std::string &path, int64_t min) const {
    const json::Value &value = get(field, in, path);
    std::string expected = min == 0   ? "a non-negative integer"
                           : min == 1 ? "a positive integer"
                                      : "an integer >= " + std::to_string(min);
    if (!json::isInteger(value))
      mismatch(path, expected, describe(value));
    int64_t integer = value.get<int64_t>();
    if (integer < min)
      mismatch(path, expected, std::to_string(integer));
    return integer;
  }

  bool boolean(const std::string &field) const {
    const json::Value &value = get(field, root, field);
    if (!value.is_boolean())
      mismatch(field, "true or false", describe(value));
    return value.get<bool>();
  }

  static std::string describe(const json::Value &value) {
    if (value.is_array() || value.is_object() || value.is_null())
      return json::summary(value);
    return std::string(json::kindName(value)) + " " + json::summary(value);
  }

  const json::Value &root;
  const std::string &file;
};

std::string oneOf(std::initializer_list<const char *> names) {
  std::string out;
  size_t i = 0;
  for (const char *name : names) {
    if (i++)
      out += i == names.size() ? " or " : ", ";
    out += json::quote(name);
  }
  return out;
}

void parseParams(const FieldReader &reader, KernelSpec &spec) {
  const json::Value &params = reader.get("params", reader.root, "params");
  if (!params.is_array())
    reader.mismatch("params", "an array", FieldReader::describe(params));
  for (size_t i = 0; i < params.size(); ++i) {
    const json::Value &param = params[i];
    std::string path = "params[" + std::to_string(i) + "]";
    if (!param.is_object())
      reader.mismatch(path, "an object", FieldReader::describe(param));
    ParamSpec p;
    p.name = reader.stringIn(param, "name", path + ".name");
    p.kind = reader.stringIn(param, "kind", path + ".kind");
    if (p.kind == "memref") {
      p.rank = reader.integerIn(param, "rank", path + ".rank", 1);
      p.dtype = reader.stringIn(param, "dtype", path + ".dtype");
      if (json::find(param, "layout"))
        p.layout = reader.stringIn(param, "layout", path + ".layout");
    }
    if (p.kind == "zeroed_bytes_per_block")
      p.bytesPerBlock = reader.integerIn(param, "bytes_per_block",
                                         path + ".bytes_per_block", 1);
    spec.params.push_back(std::move(p));
  }

  // The runtime launches exactly one signature; anything else is a bundle
  // for a different runtime.
  struct Expected {
    const char *name;
    const char *kind;
    int64_t rank;
    std::string dtype;
  };
  const Expected expected[] = {
      {"q", "memref", 4, spec.dtype}, {"k", "memref", 4, spec.dtype},
      {"v", "memref", 4, spec.dtype}, {"o", "memref", 4, spec.dtype},
      {"lse", "memref", 3, "f32"},    {"scale", "f32", 0, ""}};
  auto render = [](const std::string &name, const std::string &kind,
                   int64_t rank, const std::string &dtype) {
    if (kind != "memref")
      return name + ": " + kind;
    return name + ": memref rank " + std::to_string(rank) + " " + dtype;
  };
  std::string expectedText, foundText;
  for (const Expected &e : expected)
    expectedText += (expectedText.empty() ? "" : ", ") +
                    render(e.name, e.kind, e.rank, e.dtype);
  for (const ParamSpec &p : spec.params)
    foundText += (foundText.empty() ? "" : ", ") +
                 render(p.name, p.kind, p.rank, p.dtype);
  // Then the tensors a score_mod reads (capture0, capture1, ...), and
  // optionally last a tile counter, zero whenever a launch starts, or a
  // workspace of bytes_per_block per block, zero at the first launch.
  size_t numParams = spec.params.size();
  for (size_t i = std::size(expected); i < numParams; ++i) {
    const ParamSpec &p = spec.params[i];
    std::string name = "capture" + std::to_string(spec.captures.size());
    if (p.name != name)
      break;
    std::string path = "params[" + std::to_string(i) + "]";
    if (p.kind != "memref")
      reader.mismatch(path + ".kind", "\"memref\" (a captured tensor)",
                      json::quote(p.kind));
    if (std::find_if(std::begin(kCaptureDtypes), std::end(kCaptureDtypes),
                     [&](const char *d) { return p.dtype == d; }) ==
        std::end(kCaptureDtypes)) {
      std::string allowed;
      for (const char *d : kCaptureDtypes)
        allowed += (allowed.empty() ? "" : ", ") + json::quote(d);
      reader.mismatch(path + ".dtype", "one of " + allowed,
                      json::quote(p.dtype));
    }
    if (!p.layout.empty() && p.layout != "strided")
      reader.mismatch(path + ".layout",
                      "\"strided\" (any strides) or no layout (contiguous)",
                      json::quote(p.layout));
    spec.captures.push_back(p);
  }
  size_t numFixed = std::size(expected) + spec.captures.size();
  auto extraIs = [&](const char *name, const char *kind) {
    return numParams == numFixed + 1 && spec.params.back().name == name &&
           spec.params.back().kind == kind;
  };
  if (extraIs("tile_counter", "zeroed_i32")) {
    spec.tileCounter = true;
    --numParams;
  } else if (extraIs("workspace", "zeroed_bytes_per_block")) {
    spec.workspaceBytesPerBlock = spec.params.back().bytesPerBlock;
    --numParams;
  }
  bool same = numParams == numFixed;
  for (size_t i = 0; same && i < std::size(expected); ++i) {
    const ParamSpec &p = spec.params[i];
    const Expected &e = expected[i];
    same = p.name == e.name && p.kind == e.kind && p.layout.empty() &&
           (p.kind != "memref" || (p.rank == e.rank && p.dtype == e.dtype));
  }
  if (!same)
    reader.mismatch("params",
                    "[" + expectedText +
                        "] (then the captured tensors capture0, capture1, "
                        "..., and optionally tile_counter: zeroed_i32 or "
                        "workspace: zeroed_bytes_per_block)",
                    "[" + foundText + "]");
}

/// The optional "tensor_maps" array: one TMA tensor map per entry, each
/// {"operand": "q"|"k"|"v"|"o", "box": [cols, rows], "swizzle": 0|32|64|128}
/// ("o" is the output, for kernels that store it by TMA).
void parseTensorMaps(const FieldReader &reader, KernelSpec &spec) {
  const json::Value *maps = json::find(reader.root, "tensor_maps");
  if (!maps)
    return;
  if (!maps->is_array())
    reader.mismatch("tensor_maps", "an array of tensor maps",
                    FieldReader::describe(*maps));
  if (static_cast<int64_t>(maps->size()) > kMaxTensorMaps)
    reader.mismatch("tensor_maps",
                    "at most " + std::to_string(kMaxTensorMaps) +
                        " tensor maps",
                    std::to_string(maps->size()));
  // Both dtypes are 16-bit.
  constexpr int64_t kElementBytes = 2;
  for (size_t i = 0; i < maps->size(); ++i) {
    const json::Value &map = (*maps)[i];
    std::string path = "tensor_maps[" + std::to_string(i) + "]";
    if (!map.is_object())
      reader.mismatch(path, "an object with operand, box and swizzle",
                      FieldReader::describe(map));
    for (const auto &member : map.items()) {
      const std::string &key = member.key();
      if (key != "operand" && key != "box" && key != "swizzle")
        reader.mismatch(path,
                        "only the keys \"operand\", \"box\" and "
                        "\"swizzle\"",
                        "key " + json::quote(key));
    }
    TensorMapSpec t;
    t.operand = reader.stringIn(map, "operand", path + ".operand");
    if (t.operand != "q" && t.operand != "k" && t.operand != "v" &&
        t.operand != "o")
      reader.mismatch(path + ".operand", oneOf({"q", "k", "v", "o"}),
                      json::quote(t.operand));

    const json::Value &box = reader.get("box", map, path + ".box");
    if (!box.is_array() || box.size() != 2)
      reader.mismatch(path + ".box",
                      "an array [box_cols, box_rows] of two integers",
                      FieldReader::describe(box));
    int64_t *extents[] = {&t.boxCols, &t.boxRows};
    for (size_t d = 0; d < 2; ++d) {
      const json::Value &extent = box[d];
      std::string at = path + ".box[" + std::to_string(d) + "]";
      if (!json::isInteger(extent))
        reader.mismatch(at, "an integer in [1, 256]",
                        FieldReader::describe(extent));
      int64_t value = extent.get<int64_t>();
      if (value < 1 || value > 256)
        reader.mismatch(at, "an integer in [1, 256] (the TMA box limit)",
                        std::to_string(value));
      *extents[d] = value;
    }

    t.swizzle = reader.integerIn(map, "swizzle", path + ".swizzle", 0);
    if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 &&
        t.swizzle != 128)
      reader.mismatch(path + ".swizzle", "0, 32, 64 or 128 (bytes)",
                      std::to_string(t.swizzle));
    // The kernel's shared-memory tiles are rows of exactly one swizzle span;
    // without swizzling TMA needs whole 16-byte chunks.
    int64_t innerBytes = t.boxCols * kElementBytes;
    std::string inner = "box[0] = " + std::to_string(t.boxCols) + " " +
                        spec.dtype +
                        " elements = " + std::to_string(innerBytes) + " bytes";
    if (t.swizzle > 0 && innerBytes != t.swizzle)
      reader.mismatch(path + ".box[0]",
                      "an inner box of " + std::to_string(t.swizzle) +
                          " bytes (the swizzle span, " +
                          std::to_string(t.swizzle / kElementBytes) + " " +
                          spec.dtype + " elements)",
                      inner);
    if (t.swizzle == 0 && innerBytes % 16 != 0)
      reader.mismatch(path + ".box[0]",
                      "an inner box that is a multiple of 16 bytes", inner);
    spec.tensorMaps.push_back(std::move(t));
  }
}

/// A file name inside the bundle directory.
std::string bundleFile(const FieldReader &reader, const std::string &field) {
  std::string name = reader.string(field);
  if (name.empty() ||
      name.find_first_of(std::string("/\0", 2)) != std::string::npos ||
      name == "." || name == "..")
    reader.mismatch(field, "a file name inside the bundle directory",
                    json::quote(name));
  return name;
}
} // namespace

//===----------------------------------------------------------------------===//
// GridExpr
//===----------------------------------------------------------------------===//

namespace {
class GridParser {
public:
  GridParser(const std::string &text, std::vector<std::pair<int, int64_t>> &out)
      : text(text), out(out) {}

  bool run(std::string &error) {
    bool ok = parseExpr();
    skipSpace();
    if (ok && pos != text.size())
      ok = fail("unexpected '" + text.substr(pos) + "'");
    if (!ok)
      error = errorText;
    return ok;
  }

  // Step kinds, in GridExpr::Step::Kind order.
  enum { Constant, Variable, Add, Mul, CeilDiv, Min };

private:
  bool fail(const std::string &what) {
    errorText = what;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool eat(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseExpr() {
    if (!parseTerm())
      return false;
    while (eat('+')) {
      if (!parseTerm())
        return false;
      out.push_back({Add, 0});
    }
    return true;
  }
  bool parseTerm() {
    if (!parseAtom())
      return false;
    while (eat('*')) {
      if (!parseAtom())
        return false;
      out.push_back({Mul, 0});
    }
    return true;
  }
  bool parseAtom() {
    skipSpace();
    if (eat('(')) {
      if (!parseExpr())
        return false;
      return eat(')') || fail("expected ')'");
    }
    size_t start = pos;
    if (pos < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[pos]))) {
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      if (pos - start > 9)
        return fail("integer '" + text.substr(start, pos - start) +
                    "' is too large");
      out.push_back({Constant, std::stoll(text.substr(start, pos - start))});
      return true;
    }
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    std::string word = text.substr(start, pos - start);
    if (word.empty())
      return fail(pos < text.size() ? "unexpected '" + text.substr(pos) + "'"
                                    : "unexpected end of the rule");
    if (word == "ceil_div" || word == "min") {
      if (!eat('('))
        return fail("expected '(' after " + word);
      if (!parseExpr())
        return false;
      if (!eat(','))
        return fail("expected ',' in " + word);
      if (!parseExpr())
        return false;
      if (!eat(')'))
        return fail("expected ')' after " + word + " arguments");
      out.push_back({word == "min" ? Min : CeilDiv, 0});
      return true;
    }
    for (size_t i = 0; i < std::size(kGridVariables); ++i) {
      if (word == kGridVariables[i]) {
        out.push_back({Variable, static_cast<int64_t>(i)});
        return true;
      }
    }
    std::string known;
    for (const char *name : kGridVariables)
      known += std::string(known.empty() ? "" : ", ") + name;
    return fail("unknown variable '" + word + "' (expected one of " + known +
                ", an integer, ceil_div(a, b) or min(a, b))");
  }

  const std::string &text;
  std::vector<std::pair<int, int64_t>> &out;
  size_t pos = 0;
  std::string errorText;
};
} // namespace

bool GridExpr::parse(const std::string &text, std::string &error) {
  std::vector<std::pair<int, int64_t>> postfix;
  if (!GridParser(text, postfix).run(error))
    return false;
  steps.clear();
  for (auto [kind, value] : postfix)
    steps.push_back({static_cast<Step::Kind>(kind), value});
  source = text;
  return true;
}

int64_t GridExpr::evaluate(const KernelSpec &spec, const GridVars &vars) const {
  const int64_t values[] = {vars.batch,          vars.headsQ,  vars.headsKv,
                            vars.seqlenQ,        vars.seqlenK, spec.headDim,
                            spec.headDimV,       spec.blockM,  spec.blockN,
                            vars.multiprocessors};
  static_assert(std::size(values) == std::size(kGridVariables));
  std::vector<int64_t> stack;
  for (const Step &step : steps) {
    if (step.kind == Step::Constant) {
      stack.push_back(step.value);
      continue;
    }
    if (step.kind == Step::Variable) {
      stack.push_back(values[step.value]);
      continue;
    }
    int64_t rhs = stack.back();
    stack.pop_back();
    int64_t &lhs = stack.back();
    if (step.kind == Step::Add)
      lhs += rhs;
    else if (step.kind == Step::Mul)
      lhs *= rhs;
    else if (step.kind == Step::Min)
      lhs = std::min(lhs, rhs);
    else {
      TORCH_CHECK(rhs > 0, "tiledattn: kernel '", spec.name, "': grid rule '",
                  source, "' divides by ", rhs);
      lhs = (lhs + rhs - 1) / rhs;
    }
  }
  return stack.back();
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

KernelSpec tiledattn::runtime::parseManifest(std::string_view text,
                                             const std::string &file) {
  json::Value root;
  std::string error;
  TORCH_CHECK(json::parse(text, root, error), "tiledattn: ", file,
              ": not valid JSON: ", error);
  TORCH_CHECK(root.is_object(), "tiledattn: ", file,
              ": expected a JSON object at the top level but found ",
              FieldReader::describe(root));
  FieldReader reader(root, file);
  KernelSpec spec;

  // The version comes first: a newer format may change everything else.
  spec.formatVersion = reader.integer("format_version", 0);
  if (spec.formatVersion != kManifestFormatVersion)
    reader.mismatch("format_version", std::to_string(kManifestFormatVersion),
                    std::to_string(spec.formatVersion) +
                        " (this runtime reads format version " +
                        std::to_string(kManifestFormatVersion) + " only)");

  spec.name = reader.string("name");
  spec.kernel = reader.string("kernel");
  if (spec.kernel.empty())
    reader.mismatch("kernel", "a non-empty symbol name", "\"\"");
  spec.target = reader.string("target");
  if (spec.target != kTargetSm90a)
    reader.mismatch("target", json::quote(kTargetSm90a),
                    json::quote(spec.target));
  spec.dtype = reader.string("dtype");
  if (spec.dtype != "f16" && spec.dtype != "bf16")
    reader.mismatch("dtype", oneOf({"f16", "bf16"}), json::quote(spec.dtype));
  spec.headDim = reader.integer("head_dim", 1);
  spec.headDimV = reader.integer("head_dim_v", 1);
  spec.causal = reader.boolean("causal");
  spec.mask = reader.string("mask");
  if (spec.mask != kMaskNone && spec.mask != kMaskCausalTopLeft)
    reader.mismatch("mask", oneOf({kMaskNone, kMaskCausalTopLeft}),
                    json::quote(spec.mask));
  if (spec.causal != (spec.mask == kMaskCausalTopLeft))
    reader.mismatch("mask",
                    json::quote(spec.causal ? kMaskCausalTopLeft : kMaskNone) +
                        " since field 'causal' is " +
                        (spec.causal ? "true" : "false"),
                    json::quote(spec.mask));
  spec.blockM = reader.integer("block_m", 1);
  spec.blockN = reader.integer("block_n", 1);
  spec.threads = reader.integer("threads", 1);
  if (spec.threads > kMaxThreadsPerBlock)
    reader.mismatch("threads",
                    "at most " + std::to_string(kMaxThreadsPerBlock) +
                        " threads per block",
                    std::to_string(spec.threads));
  spec.dynamicSmemBytes = reader.integer("dynamic_smem_bytes", 0);
  if (spec.dynamicSmemBytes > kMaxSharedMemoryPerBlock)
    reader.mismatch("dynamic_smem_bytes",
                    "at most " + std::to_string(kMaxSharedMemoryPerBlock) +
                        " bytes (227 KiB, the sm_90 limit per block)",
                    std::to_string(spec.dynamicSmemBytes));
  spec.alignmentBytes = reader.integer("alignment_bytes", 1);
  if ((spec.alignmentBytes & (spec.alignmentBytes - 1)) != 0 ||
      spec.alignmentBytes > 256)
    reader.mismatch("alignment_bytes", "a power of two no larger than 256",
                    std::to_string(spec.alignmentBytes));

  const json::Value &grid = reader.get("grid", root, "grid");
  if (!grid.is_object())
    reader.mismatch("grid", "an object with x, y and z rules",
                    FieldReader::describe(grid));
  std::string *rules[] = {&spec.gridX, &spec.gridY, &spec.gridZ};
  const char *axes[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    std::string path = std::string("grid.") + axes[i];
    *rules[i] = reader.stringIn(grid, axes[i], path);
    GridExpr expr;
    if (!expr.parse(*rules[i], error))
      reader.mismatch(path, "a grid rule",
                      json::quote(*rules[i]) + ": " + error);
  }

  parseParams(reader, spec);
  parseTensorMaps(reader, spec);
  spec.schedule = reader.optionalString("schedule");
  spec.compiler = reader.optionalString("compiler");
  spec.cubin = bundleFile(reader, "cubin");
  spec.ptx = bundleFile(reader, "ptx");
  return spec;
}

void tiledattn::runtime::checkCubinImage(std::string_view image,
                                         const std::string &file,
                                         const std::string &kernel) {
  // Enough of the ELF64 header to know the file is whole; the driver's own
  // diagnostics for a damaged image are a bare CUDA_ERROR_INVALID_IMAGE.
  constexpr size_t kHeaderSize = 64;
  constexpr uint16_t kMachineCuda = 190; // EM_CUDA
  TORCH_CHECK(image.size() >= 4 && std::memcmp(image.data(),
                                               "\x7f"
                                               "ELF",
                                               4) == 0,
              "tiledattn: ", file,
              ": not a cubin: expected the ELF magic 7f 45 4c 46 at the start "
              "but found ",
              image.size() < 4
                  ? "a file of " + std::to_string(image.size()) + " bytes"
                  : "other bytes");
  TORCH_CHECK(image.size() >= kHeaderSize, "tiledattn: ", file,
              ": truncated cubin: expected at least ", kHeaderSize,
              " bytes of ELF header but found ", image.size());
  auto read = [&](size_t offset, size_t size) {
    uint64_t value = 0;
    std::memcpy(&value, image.data() + offset, size); // little-endian host
    return value;
  };
  TORCH_CHECK(image[4] == 2 && image[5] == 1, "tiledattn: ", file,
              ": not a cubin: expected a little-endian 64-bit ELF");
  uint64_t machine = read(18, 2);
  TORCH_CHECK(machine == kMachineCuda, "tiledattn: ", file,
              ": not a cubin: expected ELF machine ", kMachineCuda,
              " (EM_CUDA) but found ", machine);
  // Offsets are 64-bit and the table sizes at most 65535 * 65535, so the
  // sum is computed without wrapping around (an offset near 2^64 would).
  auto tableEnd = [&](size_t offsetAt, size_t entrySizeAt, size_t countAt) {
    uint64_t offset = read(offsetAt, 8);
    uint64_t size = read(entrySizeAt, 2) * read(countAt, 2);
    return offset > UINT64_MAX - size ? UINT64_MAX : offset + size;
  };
  uint64_t end = std::max(tableEnd(32, 54, 56), tableEnd(40, 58, 60));
  TORCH_CHECK(end <= image.size(), "tiledattn: ", file,
              ": truncated cubin: its headers end at byte ",
              end == UINT64_MAX ? std::string("2^64 or beyond")
                                : std::to_string(end),
              " but the file has ", image.size(), " bytes");
  // A whole entry of a string table: "\0<kernel>\0", not the tail of
  // another name (".text.<kernel>" or a longer symbol).
  std::string symbol = std::string(1, '\0') + kernel + '\0';
  TORCH_CHECK(image.find(symbol) != std::string_view::npos, "tiledattn: ", file,
              ": the cubin does not define kernel '", kernel,
              "' named by the manifest");
}

Bundle tiledattn::runtime::loadBundle(const std::string &dir) {
  Bundle bundle;
  bundle.dir = dir;
  std::string manifestPath = dir + "/" + kManifestFile;
  bundle.spec =
      parseManifest(readFile(manifestPath, "bundle manifest"), manifestPath);
  const KernelSpec &spec = bundle.spec;
  std::string error;
  bundle.grid[0].parse(spec.gridX, error);
  bundle.grid[1].parse(spec.gridY, error);
  bundle.grid[2].parse(spec.gridZ, error);
  std::string cubinPath = dir + "/" + spec.cubin;
  bundle.cubinImage = readFile(cubinPath, "cubin");
  checkCubinImage(bundle.cubinImage, cubinPath, spec.kernel);
  return bundle;
}

std::string tiledattn::runtime::toJson(const KernelSpec &spec) {
  json::Value out;
  out["format_version"] = spec.formatVersion;
  out["name"] = spec.name;
  out["kernel"] = spec.kernel;
  out["target"] = spec.target;
  out["dtype"] = spec.dtype;
  out["head_dim"] = spec.headDim;
  out["head_dim_v"] = spec.headDimV;
  out["causal"] = spec.causal;
  out["mask"] = spec.mask;
  out["block_m"] = spec.blockM;
  out["block_n"] = spec.blockN;
  out["threads"] = spec.threads;
  out["dynamic_smem_bytes"] = spec.dynamicSmemBytes;
  out["alignment_bytes"] = spec.alignmentBytes;
  out["grid"] = {{"x", spec.gridX}, {"y", spec.gridY}, {"z", spec.gridZ}};
  json::Value &params = out["params"] = json::Value::array();
  for (const ParamSpec &p : spec.params) {
    json::Value param = {{"name", p.name}, {"kind", p.kind}};
    if (p.kind == "memref") {
      param["rank"] = p.rank;
      param["dtype"] = p.dtype;
      if (!p.layout.empty())
        param["layout"] = p.layout;
    }
    params.push_back(std::move(param));
  }
  if (!spec.tensorMaps.empty()) {
    json::Value &maps = out["tensor_maps"] = json::Value::array();
    for (const TensorMapSpec &t : spec.tensorMaps)
      maps.push_back({{"operand", t.operand},
                      {"box", {t.boxCols, t.boxRows}},
                      {"swizzle", t.swizzle}});
  }
  out["schedule"] = spec.schedule;
  out["compiler"] = spec.compiler;
  out["cubin"] = spec.cubin;
  out["ptx"] = spec.ptx;
  return json::dump(out);
}
