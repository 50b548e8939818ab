#pragma once
// Kubernetes resource quantities ("500m", "16Gi", "1e3", "1.5"), parsed and
// formatted exactly like k8s.io/apimachinery/pkg/api/resource.Quantity:
//   - suffixes: decimal SI (n u m "" k M G T P E), binary SI (Ki Mi Gi Ti Pi Ei),
//     decimal exponent (e3, E-2);
//   - canonical output keeps the parsed format and picks the largest suffix
//     that keeps the value an integer ("1.5Gi" -> "1536Mi", "0.1" -> "100m",
//     "1000" -> "1k" is *not* done for DecimalSI input "1000": see ToString);
//   - values finer than 1n are rounded up (as the API server does).
// Value() and MilliValue() round up, like the Go methods of the same names.
//
// Thread-safety: a value type.

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse {

class Quantity {
 public:
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Returns kInvalid with a message naming the input for anything the API
  // server rejects ("1.5.5", "Gi", "-", "1e", "", "1 Gi", ...).
  static Result<Quantity> Parse(std::string_view text);
  // For trusted constants in code; aborts on a bad literal.
  static Quantity MustParse(std::string_view text);

  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);

  // Integer value rounded up (ceil); saturates at INT64 limits.
  int64_t Value() const noexcept;
  // Value * 1000 rounded up (ceil); saturates at INT64 limits.
  int64_t MilliValue() const noexcept;

  // Canonical form, as the API server would serialise this quantity.
  std::string ToString() const;

  Format format() const noexcept { return format_; }
  bool IsZero() const noexcept { return mantissa_ == 0; }
  int Sign() const noexcept { return mantissa_ < 0 ? -1 : (mantissa_ > 0 ? 1 : 0); }

  // Exact arithmetic; the result keeps this quantity's format.
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
  // value = mantissa_ * 10^scale_. 128-bit so that every value the API server
  // accepts in practice (up to and beyond 1Ei) is exact.
  __int128 mantissa_ = 0;
  int32_t scale_ = 0;
  Format format_ = Format::kDecimalSI;
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

// Parses "cpu=64,memory=512Gi,nvidia.com/gpu=8" (as in --node-shape). Errors name the entry.
Result<ResourceList> ParseResourceList(std::string_view text);

}  // namespace copse
