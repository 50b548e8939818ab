#pragma once
// Kubernetes resource quantities ("500m", "16Gi", "1e3", "1.5"), parsed and
// formatted like k8s.io/apimachinery/pkg/api/resource.Quantity:
//   - grammar: [+-] digits [. digits] suffix, where the number may also be
//     "1." or ".5"; suffixes are decimal SI (n u m "" k M G T P E), binary SI
//     (Ki Mi Gi Ti Pi Ei) and decimal exponents (e3, E-2, e+6);
//   - the parsed suffix kind is remembered (format()) and reused on output;
//   - canonical output (CanonicalString) picks the largest suffix of that kind
//     that keeps the number an integer: "1.5Gi" -> "1536Mi", "0.1" -> "100m",
//     "1000" -> "1k", "1.5" -> "1500m", "12e6" stays "12e6"; a BinarySI value
//     below 1024 in magnitude or with a fraction is written as DecimalSI
//     ("0.5Ki" -> "512"); DecimalSI beyond "E" falls back to "e21";
//   - values finer than 1n are rounded up, away from zero ("0.9n" -> "1n");
//     BinarySI input is capped at 2^63-1 ("9Ei" -> 9223372036854775807), as the
//     Go parser does.
// Value() and MilliValue() round away from zero, like the Go methods.
//
// Deliberate differences from the Go code (all on input nobody writes on
// purpose): a number without any digit ("Gi", "-", "+", ".") is rejected where
// Go reads it as 0; exponents beyond +-1e9 and numbers with more than 38
// significant digits are rejected; results of arithmetic that need more than
// 38 significant digits are rounded away from zero; a BinarySI value of
// 1024Ei or more prints with suffix "Ei" (Go drops the suffix and the value),
// and one beyond 10^4096 prints as DecimalSI.
//
// Thread-safety: a value type.

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse {

struct QuantityInternals;  // quantity.cc

class Quantity {
 public:
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Returns kInvalid with a message naming the input for anything the Go
  // parser rejects ("1.5.5", "1e", "", " 1", "1 Gi", "1GiB", "1i", "0.1mi")
  // and for numbers without digits ("Gi", "-"). Accepts "1.", ".5", "+1".
  static Result<Quantity> Parse(std::string_view text);
  // For trusted constants in code; aborts on a bad literal.
  static Quantity MustParse(std::string_view text);

  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);

  // Integer value rounded away from zero (1.1 -> 2, -1.1 -> -2); saturates
  // at INT64 limits.
  int64_t Value() const noexcept;
  // Value * 1000 rounded away from zero; saturates at INT64 limits.
  int64_t MilliValue() const noexcept;

  // The text the API server would write for this quantity (Go's String()):
  // the canonical form, except that a parsed string the Go parser already
  // considers canonical is returned as written ("+1", "1.500k", "1E3" stay).
  // Arithmetic results and FromInt/FromMilli values always print canonically.
  std::string ToString() const;
  // Always the canonical form (Go's CanonicalizeBytes): "+1" -> "1".
  std::string CanonicalString() const;

  Format format() const noexcept { return format_; }
  bool IsZero() const noexcept { return mantissa_ == 0; }
  int Sign() const noexcept { return mantissa_ < 0 ? -1 : (mantissa_ > 0 ? 1 : 0); }

  // Exact arithmetic (see the 38-digit note above). The result keeps this
  // quantity's format, unless this quantity is zero: then it takes the format
  // of `other`, as Go's Add/Sub do ("0" + "1Gi" prints "1Gi").
  Quantity& operator+=(const Quantity& other);
  Quantity& operator-=(const Quantity& other);
  friend Quantity operator+(Quantity a, const Quantity& b) { return a += b; }
  friend Quantity operator-(Quantity a, const Quantity& b) { return a -= b; }

  // Compares numeric values (format is ignored).
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) noexcept;
  friend bool operator==(const Quantity& a, const Quantity& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }

 private:
  friend struct QuantityInternals;

  // value = mantissa_ * 10^scale_. 128-bit so that every value the API server
  // accepts in practice (up to and beyond 1Ei) is exact.
  // Invariant: mantissa_ has no trailing decimal zeros, and is 0 with scale_ 0
  // for zero; |mantissa_| <= 2^127-1.
  __int128 mantissa_ = 0;
  int32_t scale_ = 0;
  Format format_ = Format::kDecimalSI;
  // The parsed text when Go would reuse it as String(); empty otherwise.
  std::string text_;
};

// A resource name -> quantity map, as in PodSpec requests/limits and Node allocatable.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

// Well-known resource names.
inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// Integer arithmetic that saturates instead of overflowing.
int64_t SaturatingAdd(int64_t a, int64_t b) noexcept;
int64_t SaturatingSub(int64_t a, int64_t b) noexcept;
int64_t SaturatingMul(int64_t a, int64_t b) noexcept;

// The scheduler's integer view of a resource: milli-units for cpu, the
// integer value (rounded up) for everything else.
int64_t SchedulingUnits(std::string_view resource_name, const Quantity& q) noexcept;

// Parses "cpu=64,memory=512Gi,nvidia.com/gpu=8" (as in --node-shape): entries
// separated by ',', blanks around names and quantities ignored, "" gives an
// empty list. Names must be qualified names (like label keys); quantities must
// be non-negative; a name may appear once. Errors name the entry.
Result<ResourceList> ParseResourceList(std::string_view text);

}  // namespace copse
