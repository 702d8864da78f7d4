//===- Json.h - A minimal strict JSON reader --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Enough JSON for manifest.json: RFC 8259 syntax, no extensions, duplicate
// keys rejected. Neither torch nor the CUDA toolkit ships a JSON library we
// can include, and the manifest is small.
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_RUNTIME_JSON_H
#define TILEDATTN_LIB_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiledattn::runtime::json {
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false; // an integer literal that fits in int64_t
  int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  /// The member `key` of an object, or null.
  const Value *find(std::string_view key) const;
  /// "string", "integer", "object", ... for diagnostics.
  const char *kindName() const;
  /// A short rendering of the value for "but found ..." diagnostics.
  std::string summary() const;
};

/// Parses `text`. On failure returns false and sets `error` to
/// "line L, column C: <what>".
bool parse(std::string_view text, Value &out, std::string &error);

/// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);
} // namespace tiledattn::runtime::json

#endif // TILEDATTN_LIB_RUNTIME_JSON_H
