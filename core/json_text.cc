#include "core/json_text.h"

namespace copse {

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
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
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xF]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

bool JsonDepthExceeds(std::string_view text, size_t limit) noexcept {
  // Each level needs an opening byte: shorter text cannot be too deep.
  if (text.size() <= limit) return false;
  size_t depth = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p++;
    if (c == '"') {
      // Skip the string: up to the closing quote that no backslash escapes.
      while (p < end) {
        const char s = *p++;
        if (s == '\\') {
          if (p < end) ++p;
        } else if (s == '"') {
          break;
        }
      }
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
    }
  }
  return false;
}

}  // namespace copse
