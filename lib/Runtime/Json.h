//===- Json.h - Strict JSON for manifests, on nlohmann/json -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// manifest.json is read with nlohmann/json (Debian's nlohmann-json3-dev,
// header only): RFC 8259 syntax, no extensions. On top of it, duplicate keys
// are rejected (nlohmann keeps the last) and nesting is limited, and its
// diagnostics are put in the runtime's voice ("line L, column C: ...").
//
//===----------------------------------------------------------------------===//

#ifndef TILEDATTN_LIB_RUNTIME_JSON_H
#define TILEDATTN_LIB_RUNTIME_JSON_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace tiledattn::runtime::json {
/// Objects keep their keys in document order, so diagnostics name the first
/// offending key as the file has it.
using Value = nlohmann::ordered_json;

/// Parses `text`. On failure returns false and sets `error` to
/// "line L, column C: <what>" (or "duplicate key ... in ..." /
/// "nesting deeper than 64 levels ...").
bool parse(std::string_view text, Value &out, std::string &error);

/// The member `key` of an object, or null.
const Value *find(const Value &object, const std::string &key);

/// An integer literal that fits in int64_t.
bool isInteger(const Value &value);

/// "string", "integer", "object", ... for diagnostics.
const char *kindName(const Value &value);

/// A short rendering of the value for "but found ..." diagnostics.
std::string summary(const Value &value);

/// `s` as a JSON string literal, quotes included (invalid UTF-8 replaced).
std::string quote(std::string_view s);

/// `value` as compact JSON text.
std::string dump(const Value &value);
} // namespace tiledattn::runtime::json

#endif // TILEDATTN_LIB_RUNTIME_JSON_H
