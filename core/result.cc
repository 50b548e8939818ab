#include "core/result.h"

namespace copse {

std::string_view ErrorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalid:
      return "Invalid";
    case ErrorCode::kUnauthorized:
      return "Unauthorized";
    case ErrorCode::kForbidden:
      return "Forbidden";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kGone:
      return "Gone";
    case ErrorCode::kTooManyRequests:
      return "TooManyRequests";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kTls:
      return "TLS";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Error::ToString() const {
  std::string out(ErrorCodeName(code));
  out += ": ";
  out += message;
  return out;
}

}  // namespace copse
