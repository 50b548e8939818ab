#include "apiserver/json_text.h"

#include <simdjson.h>

#include <charconv>
#include <cstdint>

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

// Builds `out` from a simdjson element; false for what nlohmann must parse
// itself (floats, integers beyond 64 bits).
bool Convert(simdjson::dom::element e, json& out) {
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
    case Type::OBJECT: {
      out = json::object();
      auto& object = out.get_ref<json::object_t&>();
      for (auto field : simdjson::dom::object(e)) {
        // A repeated key keeps its last value, as nlohmann's parser does.
        if (!Convert(field.value, object[std::string(field.key)])) return false;
      }
      return true;
    }
    case Type::ARRAY: {
      out = json::array();
      auto& array = out.get_ref<json::array_t&>();
      simdjson::dom::array elements(e);
      array.reserve(elements.size());
      for (auto child : elements) {
        array.emplace_back();
        if (!Convert(child, array.back())) return false;
      }
      return true;
    }
    case Type::STRING:
      out = std::string(std::string_view(e));
      return true;
    case Type::INT64: {
      const int64_t v = int64_t(e);
      // nlohmann parses a number without a sign as number_unsigned.
      if (v >= 0) {
        out = static_cast<uint64_t>(v);
      } else {
        out = v;
      }
      return true;
    }
    case Type::UINT64:
      out = uint64_t(e);
      return true;
    case Type::BOOL:
      out = bool(e);
      return true;
    case Type::NULL_VALUE:
      out = nullptr;
      return true;
    default:
      return false;  // DOUBLE, BIGINT
  }
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 (Unicode's
// well-formed byte sequences: no overlongs, surrogates or code points beyond
// U+10FFFF; nlohmann's decoder accepts exactly these).
size_t Utf8Length(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return k < s.size() && at(k) >= lo && at(k) <= hi;
  };
  const unsigned c = at(i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

// Appends `s` quoted and escaped as nlohmann does with ensure_ascii off;
// false (and `out` unchanged) when `s` is not valid UTF-8.
bool AppendString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t mark = out.size();
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        out.resize(mark);
        return false;
      }
      i += n;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
  return true;
}

void AppendNlohmann(std::string& out, const json& value) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendKey(std::string& out, const std::string& key) {
  if (!AppendString(out, key)) AppendNlohmann(out, json(key));
}

template <typename Int>
void AppendInt(std::string& out, Int v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

nlohmann::json ParseJson(std::string_view text) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS) {
    json out;
    if (Convert(root, out)) return out;
  }
  return json::parse(text);
}

void AppendJson(std::string& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      const auto& object = value.get_ref<const json::object_t&>();
      out.push_back('{');
      bool first = true;
      for (const auto& [key, child] : object) {
        if (!first) out.push_back(',');
        first = false;
        AppendKey(out, key);
        out.push_back(':');
        AppendJson(out, child);
      }
      out.push_back('}');
      return;
    }
    case json::value_t::array: {
      const auto& array = value.get_ref<const json::array_t&>();
      out.push_back('[');
      for (size_t i = 0; i < array.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendJson(out, array[i]);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::string: {
      const auto& s = value.get_ref<const json::string_t&>();
      if (!AppendString(out, s)) AppendNlohmann(out, value);
      return;
    }
    case json::value_t::number_integer:
      AppendInt(out, value.get<int64_t>());
      return;
    case json::value_t::number_unsigned:
      AppendInt(out, value.get<uint64_t>());
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::null:
      out += "null";
      return;
    default:
      AppendNlohmann(out, value);
      return;  // floats, binary, discarded
  }
}

std::string DumpJson(const json& value) {
  // Written into a reused buffer, then copied once at its final size.
  thread_local std::string buffer;
  buffer.clear();
  AppendJson(buffer, value);
  return buffer;
}

}  // namespace copse::apiserver
