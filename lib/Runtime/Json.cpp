//===- Json.cpp - Strict JSON for manifests, on nlohmann/json -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cstdio>
#include <limits>
#include <set>
#include <vector>

using namespace tiledattn::runtime;

namespace {
constexpr size_t kMaxDepth = 64;

/// Thrown from the parser callback to stop at a structural error that
/// nlohmann's parser accepts.
struct Rejected {
  std::string what;
};

/// Follows the parse through nlohmann's callback events: the containers
/// open around the current value (for a path in diagnostics) and the keys
/// each object has seen so far.
class Tracker {
public:
  bool operator()(int, nlohmann::ordered_json::parse_event_t event,
                  json::Value &parsed) {
    using Event = nlohmann::ordered_json::parse_event_t;
    switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (frames.size() >= kMaxDepth)
        throw Rejected{"nesting deeper than " + std::to_string(kMaxDepth) +
                       " levels"};
      frames.push_back({event == Event::array_start, {}, {}, 0});
      break;
    case Event::key: {
      Frame &top = frames.back();
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!top.keys.insert(key).second)
        throw Rejected{"duplicate key " + json::quote(key) + " in " +
                       innermostObject()};
      top.key = key;
      break;
    }
    case Event::object_end:
    case Event::array_end:
      frames.pop_back();
      elementDone();
      break;
    case Event::value:
      elementDone();
      break;
    }
    return true;
  }

private:
  struct Frame {
    bool isArray;
    std::set<std::string> keys;
    std::string key;
    size_t index;
  };

  void elementDone() {
    if (!frames.empty() && frames.back().isArray)
      ++frames.back().index;
  }

  /// Where the innermost open object is, as the manifest checks name
  /// fields: the object at 'grid', at 'tensor_maps[1]'.
  std::string innermostObject() const {
    if (frames.size() <= 1)
      return "the top-level object";
    std::string out;
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      if (frames[i].isArray)
        out += "[" + std::to_string(frames[i].index) + "]";
      else
        out += (out.empty() ? "" : ".") + frames[i].key;
    }
    return "the object at '" + out + "'";
  }

  std::vector<Frame> frames;
};

/// `text` with every byte that is not part of valid UTF-8 written as \xNN:
/// nlohmann quotes the bytes it last read as they are, and a message that is
/// not UTF-8 reaches Python as a UnicodeDecodeError instead of the error.
std::string validUtf8(const std::string &text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
    unsigned char lead = byte(i);
    size_t length = lead < 0x80           ? 1
                    : (lead >> 5) == 0x6  ? 2
                    : (lead >> 4) == 0xE  ? 3
                    : (lead >> 3) == 0x1E ? 4
                                          : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (byte(i + k) >> 6) == 0x2;
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (valid && length == 2)
      valid = lead >= 0xC2;
    if (valid && length == 3)
      valid = !(lead == 0xE0 && byte(i + 1) < 0xA0) &&
              !(lead == 0xED && byte(i + 1) >= 0xA0);
    if (valid && length == 4)
      valid = lead <= 0xF4 && !(lead == 0xF0 && byte(i + 1) < 0x90) &&
              !(lead == 0xF4 && byte(i + 1) >= 0x90);
    if (!valid) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", lead);
      out += escaped;
      ++i;
      continue;
    }
    out.append(text, i, length);
    i += length;
  }
  return out;
}

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1,
/// column 22: syntax error while parsing object key - unexpected '}';
/// expected string literal" as "line 1, column 22: unexpected '}'; expected
/// a string key". Where nlohmann names one of two acceptable tokens after a
/// member or an element, both are named.
std::string describeParseError(const std::string &what, std::string_view text) {
  std::string message = what;
  // "[json.exception.<kind>.<id>] "
  if (message.rfind("[json.exception.", 0) == 0 &&
      message.find("] ") != std::string::npos)
    message = message.substr(message.find("] ") + 2);
  for (const char *prefix : {"parse error at ", "parse error: "}) {
    if (message.rfind(prefix, 0) == 0) {
      message = message.substr(std::string(prefix).size());
      break;
    }
  }
  std::string position;
  size_t colon = message.find(": ");
  if (message.rfind("line ", 0) == 0 && colon != std::string::npos) {
    position = message.substr(0, colon + 2);
    message = message.substr(colon + 2);
  }
  std::string context;
  const std::string syntax = "syntax error while parsing ";
  size_t dash = message.find(" - ");
  if (message.rfind(syntax, 0) == 0 && dash != std::string::npos) {
    context = message.substr(syntax.size(), dash - syntax.size());
    message = message.substr(dash + 3);
  }
  auto replaceEnd = [&](const std::string &tail, const std::string &with) {
    if (message.size() >= tail.size() &&
        message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
      message.replace(message.size() - tail.size(), tail.size(), with);
  };
  if (context == "object key")
    replaceEnd("expected string literal", "expected a string key");
  else if (context == "object")
    replaceEnd("expected '}'", "expected ',' or '}' in an object");
  else if (context == "array")
    replaceEnd("expected ']'", "expected ',' or ']' in an array");
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    message += text.empty() ? " (the file is empty)" : " (the file is blank)";
  return position + message;
}
} // namespace

bool json::parse(std::string_view text, Value &out, std::string &error) {
  // nlohmann skips a UTF-8 byte order mark; RFC 8259 forbids writing one,
  // and Python's json (the package's registry) rejects it.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) {
    error = "line 1, column 1: a byte order mark (U+FEFF) before the JSON "
            "text; manifests are UTF-8 without one";
    out = Value();
    return false;
  }
  Tracker tracker;
  try {
    out = Value::parse(
        text.begin(), text.end(),
        [&tracker](int depth, Value::parse_event_t event, Value &parsed) {
          return tracker(depth, event, parsed);
        });
    return true;
  } catch (const Rejected &rejected) {
    error = rejected.what;
  } catch (const nlohmann::ordered_json::exception &e) {
    // parse_error, and out_of_range for a number too large for a double
    // ("1e999").
    error = validUtf8(describeParseError(e.what(), text));
  }
  out = Value();
  return false;
}

const json::Value *json::find(const Value &object, const std::string &key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool json::isInteger(const Value &value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>() <=
           static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return value.is_number_integer();
}

const char *json::kindName(const Value &value) {
  if (value.is_null())
    return "null";
  if (value.is_boolean())
    return "boolean";
  if (value.is_number())
    return isInteger(value) ? "integer" : "number";
  if (value.is_string())
    return "string";
  if (value.is_array())
    return "array";
  if (value.is_object())
    return "object";
  return "value";
}

std::string json::summary(const Value &value) {
  if (value.is_null())
    return "null";
  if (value.is_boolean())
    return value.get<bool>() ? "true" : "false";
  if (value.is_number()) {
    if (isInteger(value))
      return std::to_string(value.get<int64_t>());
    return std::to_string(value.get<double>());
  }
  if (value.is_string()) {
    const std::string &s = value.get_ref<const std::string &>();
    return quote(s.size() > 60 ? s.substr(0, 60) + "..." : s);
  }
  if (value.is_array())
    return "an array of " + std::to_string(value.size()) + " elements";
  if (value.is_object())
    return "an object";
  return "a value";
}

std::string json::quote(std::string_view s) {
  return Value(std::string(s))
      .dump(-1, ' ', false, Value::error_handler_t::replace);
}

std::string json::dump(const Value &value) {
  return value.dump(-1, ' ', false, Value::error_handler_t::replace);
}
