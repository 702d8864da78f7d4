//===- Json.cpp - A minimal strict JSON reader ----------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace tiledattn::runtime::json;

namespace {
/// Recursive descent over the text; the first error wins.
class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  bool parseDocument(Value &out, std::string &error) {
    skipSpace();
    if (parseValue(out, /*depth=*/0)) {
      skipSpace();
      if (pos != text.size())
        fail("unexpected text after the top-level value");
    }
    if (failed)
      error = errorText;
    return !failed;
  }

private:
  bool fail(const std::string &what) {
    if (failed)
      return false;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    errorText = "line " + std::to_string(line) + ", column " +
                std::to_string(column) + ": " + what;
    failed = true;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth > 64)
      return fail("nesting deeper than 64 levels");
    if (pos >= text.size())
      return fail("unexpected end of input, expected a value");
    char c = text[pos];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      out.kind = Value::Kind::String;
      return parseString(out.string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (consume("true")) {
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return true;
    }
    if (consume("false")) {
      out.kind = Value::Kind::Bool;
      out.boolean = false;
      return true;
    }
    if (consume("null")) {
      out.kind = Value::Kind::Null;
      return true;
    }
    return fail(std::string("unexpected character '") + c +
                "', expected a value");
  }

  bool parseObject(Value &out, int depth) {
    out.kind = Value::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (!parseString(key))
        return false;
      if (out.find(key))
        return fail("duplicate key \"" + key + "\"");
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after key \"" + key + "\"");
      ++pos;
      skipSpace();
      Value member;
      if (!parseValue(member, depth + 1))
        return false;
      out.object.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  bool parseArray(Value &out, int depth) {
    out.kind = Value::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      Value element;
      if (!parseValue(element, depth + 1))
        return false;
      out.array.push_back(std::move(element));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  bool parseHex4(unsigned &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        return fail("invalid hex digit in a \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated string");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code = 0;
        if (!parseHex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00) {
          unsigned low = 0;
          if (!consume("\\u") || !parseHex4(low) || low < 0xDC00 ||
              low >= 0xE000)
            return fail("unpaired surrogate in a \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code < 0xE000) {
          return fail("unpaired surrogate in a \\u escape");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(Value &out) {
    size_t start = pos;
    bool integral = true;
    if (text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - first;
    };
    size_t intStart = pos;
    size_t intDigits = digits();
    if (intDigits == 0)
      return fail("expected a digit");
    if (intDigits > 1 && text[intStart] == '0')
      return fail("leading zero in a number");
    if (pos < text.size() && text[pos] == '.') {
      integral = false;
      ++pos;
      if (digits() == 0)
        return fail("expected a digit after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      integral = false;
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("expected a digit in the exponent");
    }
    std::string literal(text.substr(start, pos - start));
    out.kind = Value::Kind::Number;
    out.number = std::strtod(literal.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long v = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == 0) {
        out.isInteger = true;
        out.integer = v;
      }
    }
    return true;
  }

  std::string_view text;
  size_t pos = 0;
  bool failed = false;
  std::string errorText;
};
} // namespace

const Value *Value::find(std::string_view key) const {
  for (const auto &[name, value] : object)
    if (name == key)
      return &value;
  return nullptr;
}

const char *Value::kindName() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return isInteger ? "integer" : "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "value";
}

std::string Value::summary() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return boolean ? "true" : "false";
  case Kind::Number:
    if (isInteger)
      return std::to_string(integer);
    return std::to_string(number);
  case Kind::String:
    return quote(string.size() > 60 ? string.substr(0, 60) + "..." : string);
  case Kind::Array:
    return "an array of " + std::to_string(array.size()) + " elements";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

bool tiledattn::runtime::json::parse(std::string_view text, Value &out,
                                     std::string &error) {
  out = Value();
  return Parser(text).parseDocument(out, error);
}

std::string tiledattn::runtime::json::quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}
