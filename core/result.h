#pragma once
// Error values for the edges of copse (network, JSON, config, user input).
//
// Expected failures are values: functions return `Result<T>` (or `Status` when
// there is no value). Broken invariants are CHECKs (core/check.h) and abort.
// Scheduling outcomes are neither: they are plugin statuses (plugins/framework).
//
// Thread-safety: plain values, no shared state.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace copse {

// Mirrors the HTTP/Kubernetes error classes copse needs to tell apart.
enum class ErrorCode : uint8_t {
  kInvalid,          // bad input (400/422): the message names the field
  kUnauthorized,     // 401
  kForbidden,        // 403
  kNotFound,         // 404
  kConflict,         // 409: stale resourceVersion or already exists
  kAlreadyExists,    // 409 with reason AlreadyExists
  kGone,             // 410: watch resourceVersion too old
  kTooManyRequests,  // 429 (e.g. eviction blocked by a PodDisruptionBudget)
  kTimeout,          // a deadline expired
  kUnavailable,      // connection refused/reset, 5xx
  kTls,              // TLS handshake or certificate verification failed
  kInternal,         // anything else
};

std::string_view ErrorCodeName(ErrorCode code) noexcept;

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  int http_status = 0;  // 0 when the error did not come from HTTP
  std::string reason;   // Kubernetes Status.reason when known (e.g. "Conflict")

  std::string ToString() const;  // "<CodeName>: message"
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message), 0, {}};
}

// A value or an Error. `ok()` tells which; `value()` on an error aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error, for operations without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace copse
