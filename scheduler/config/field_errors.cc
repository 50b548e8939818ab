#include "scheduler/config/field_errors.h"

#include <cstdio>

#include "core/check.h"

namespace copse::scheduler::config {

std::string Quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
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
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void FieldErrors::Invalid(std::string_view path, std::string_view value, std::string_view detail) {
  std::string m(path);
  m += ": Invalid value: ";
  m += value;
  if (!detail.empty()) {
    m += ": ";
    m += detail;
  }
  messages_.push_back(std::move(m));
}

void FieldErrors::Invalid(std::string_view path, int64_t value, std::string_view detail) {
  Invalid(path, std::to_string(value), detail);
}

void FieldErrors::Required(std::string_view path, std::string_view detail) {
  std::string m(path);
  m += ": Required value";
  if (!detail.empty()) {
    m += ": ";
    m += detail;
  }
  messages_.push_back(std::move(m));
}

void FieldErrors::Duplicate(std::string_view path, std::string_view value) {
  std::string m(path);
  m += ": Duplicate value: ";
  m += value;
  messages_.push_back(std::move(m));
}

void FieldErrors::NotSupported(std::string_view path, std::string_view value,
                               std::initializer_list<std::string_view> supported) {
  std::string m(path);
  m += ": Unsupported value: ";
  m += value;
  if (supported.size() != 0) {
    m += ": supported values: ";
    bool first = true;
    for (std::string_view s : supported) {
      if (!first) m += ", ";
      first = false;
      m += Quote(s);
    }
  }
  messages_.push_back(std::move(m));
}

void FieldErrors::NotFound(std::string_view path, std::string_view value) {
  std::string m(path);
  m += ": Not found: ";
  m += value;
  messages_.push_back(std::move(m));
}

void FieldErrors::Forbidden(std::string_view path, std::string_view detail) {
  std::string m(path);
  m += ": Forbidden: ";
  m += detail;
  messages_.push_back(std::move(m));
}

void FieldErrors::Add(std::string message) { messages_.push_back(std::move(message)); }

Error FieldErrors::ToError() const {
  COPSE_CHECK(!messages_.empty()) << "FieldErrors::ToError without errors";
  if (messages_.size() == 1) return MakeError(ErrorCode::kInvalid, messages_.front());
  std::string m = "[";
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (i != 0) m += ", ";
    m += messages_[i];
  }
  m += "]";
  return MakeError(ErrorCode::kInvalid, std::move(m));
}

}  // namespace copse::scheduler::config
