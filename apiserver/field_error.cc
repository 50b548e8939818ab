#include "apiserver/field_error.h"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

namespace copse::apiserver {

using nlohmann::json;

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
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
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string GoRepr(const json& value) {
  if (value.is_string()) return GoQuote(value.get_ref<const std::string&>());
  if (value.is_null()) return "null";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// field.ErrorType's String() and its Status cause reason.
struct TypeText {
  FieldError::Type type;
  std::string_view text;
  std::string_view reason;
};
constexpr std::array<TypeText, 7> kTypes = {{
    {FieldError::Type::kRequired, "Required value", "FieldValueRequired"},
    {FieldError::Type::kInvalid, "Invalid value", "FieldValueInvalid"},
    {FieldError::Type::kNotSupported, "Unsupported value", "FieldValueNotSupported"},
    {FieldError::Type::kDuplicate, "Duplicate value", "FieldValueDuplicate"},
    {FieldError::Type::kForbidden, "Forbidden", "FieldValueForbidden"},
    {FieldError::Type::kTooMany, "Too many", "FieldValueTooMany"},
    {FieldError::Type::kTooLong, "Too long", "FieldValueTooLong"},
}};

const TypeText& TextOf(FieldError::Type type) {
  for (const TypeText& t : kTypes) {
    if (t.type == type) return t;
  }
  return kTypes[1];
}

}  // namespace

std::string_view FieldError::Reason(Type type) { return TextOf(type).reason; }

std::string FieldError::Message() const {
  std::string out = field + ": " + std::string(TextOf(type).text);
  const bool shows_value =
      type != Type::kRequired && type != Type::kForbidden && type != Type::kTooLong;
  if (shows_value) out += ": " + value;
  if (!detail.empty()) out += ": " + detail;
  return out;
}

FieldError FieldError::Required(std::string field, std::string detail) {
  return FieldError{Type::kRequired, std::move(field), {}, std::move(detail)};
}

FieldError FieldError::Invalid(std::string field, const json& value, std::string detail) {
  return FieldError{Type::kInvalid, std::move(field), GoRepr(value), std::move(detail)};
}

FieldError FieldError::NotSupported(std::string field, const json& value,
                                    const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  return FieldError{Type::kNotSupported, std::move(field), GoRepr(value), std::move(detail)};
}

FieldError FieldError::Duplicate(std::string field, const json& value) {
  return FieldError{Type::kDuplicate, std::move(field), GoRepr(value), {}};
}

FieldError FieldError::Forbidden(std::string field, std::string detail) {
  return FieldError{Type::kForbidden, std::move(field), {}, std::move(detail)};
}

FieldError FieldError::TooMany(std::string field, int64_t actual, int64_t max) {
  return FieldError{Type::kTooMany, std::move(field), std::to_string(actual),
                    "must have at most " + std::to_string(max) + (max == 1 ? " item" : " items")};
}

FieldError FieldError::TooLong(std::string field, int64_t max_bytes) {
  return FieldError{
      Type::kTooLong,
      std::move(field),
      {},
      "may not be more than " + std::to_string(max_bytes) + (max_bytes == 1 ? " byte" : " bytes")};
}

std::string_view CauseReasonOfMessage(std::string_view message_after_field) {
  // Longest texts first where one is a prefix of another (none are today).
  for (const TypeText& t : kTypes) {
    if (message_after_field.starts_with(t.text)) return t.reason;
  }
  static constexpr std::pair<std::string_view, std::string_view> kMore[] = {
      {"Not found", "FieldValueNotFound"},
      {"Internal error", "InternalError"},
      {"Too short", "FieldValueTooShort"},
      {"Too few", "FieldValueTooFew"},
  };
  for (const auto& [text, reason] : kMore) {
    if (message_after_field.starts_with(text)) return reason;
  }
  return "FieldValueInvalid";
}

}  // namespace copse::apiserver
