//===- Json.cpp - Strict JSON for manifests, on nlohmann/json -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Json.h"

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

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1,
/// column 22: syntax error while parsing object key - unexpected '}';
/// expected string literal" as "line 1, column 22: unexpected '}'; expected
/// a string key". Where nlohmann names one of two acceptable tokens after a
/// member or an element, both are named.
std::string describeParseError(const std::string &what, std::string_view text) {
  std::string message = what;
  for (const char *prefix : {"parse error at ", "parse error: "}) {
    size_t at = message.find(prefix);
    if (at != std::string::npos) {
      message = message.substr(at + std::string(prefix).size());
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
  } catch (const nlohmann::ordered_json::parse_error &e) {
    error = describeParseError(e.what(), text);
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
