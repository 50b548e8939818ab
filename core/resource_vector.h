#pragma once
// Resources as dense integer vectors indexed by an interned resource id.
//
//   ResourceNames names;                               // cpu, memory, ephemeral-storage, pods
//   ResourceId gpu = *names.Intern("nvidia.com/gpu");  // extended: registered on first sight
//   Result<ResourceVector> v = ResourceVector::FromResourceList(requests, names);
//   v->Get(kResourceIdCpu);                            // milli-CPU
//
// Units are the scheduler's (SchedulingUnits in core/quantity.h): milli-units
// for cpu, the integer value rounded up for everything else.
//
// Thread-safety: ResourceNames is safe to use from any thread (Intern takes a
// mutex; lookups read an append-only table without locking). ResourceVector is
// a value type.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/quantity.h"
#include "core/result.h"

namespace copse {

using ResourceId = uint8_t;

// At most this many distinct resource names per process (the four built-ins
// included). Fixed so that vectors never allocate and a 64-bit mask can name
// any subset of resources.
inline constexpr size_t kMaxResources = 32;

inline constexpr ResourceId kResourceIdCpu = 0;
inline constexpr ResourceId kResourceIdMemory = 1;
inline constexpr ResourceId kResourceIdEphemeralStorage = 2;
inline constexpr ResourceId kResourceIdPods = 3;
inline constexpr ResourceId kNumBuiltinResources = 4;

// core/v1 helper IsExtendedResourceName: a domain-prefixed name outside
// kubernetes.io/ that does not start with "requests." (e.g. nvidia.com/gpu).
bool IsExtendedResourceName(std::string_view name) noexcept;

// Interns resource names to dense ids. Ids 0..3 are cpu, memory,
// ephemeral-storage and pods; later names get the next free id. Ids are never
// reused, so a ResourceVector built against one table stays valid forever.
class ResourceNames {
 public:
  ResourceNames();
  ResourceNames(const ResourceNames&) = delete;
  ResourceNames& operator=(const ResourceNames&) = delete;

  // The id of `name`, registering it if new. kInvalid when the table is full.
  Result<ResourceId> Intern(std::string_view name);
  std::optional<ResourceId> Find(std::string_view name) const noexcept;
  // The name of a registered id ("" for an unregistered one).
  std::string_view Name(ResourceId id) const noexcept;
  bool IsExtended(ResourceId id) const noexcept;
  // Number of registered names; every registered id is < size().
  size_t size() const noexcept { return size_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::array<std::string, kMaxResources> names_;
  std::array<bool, kMaxResources> extended_{};
  std::atomic<size_t> size_{0};
};

// One int64 per resource id; ids beyond size() read as zero.
class ResourceVector {
 public:
  ResourceVector() = default;

  // Converts a ResourceList (requests, allocatable) to scheduling units,
  // interning unknown names. Errors when the name table is full.
  static Result<ResourceVector> FromResourceList(const ResourceList& list, ResourceNames& names);

  int64_t Get(ResourceId id) const noexcept { return id < size_ ? values_[id] : 0; }
  void Set(ResourceId id, int64_t value) noexcept;
  // Saturating add.
  void Add(ResourceId id, int64_t delta) noexcept;
  ResourceVector& operator+=(const ResourceVector& other) noexcept;
  ResourceVector& operator-=(const ResourceVector& other) noexcept;

  // One past the highest id ever set; loops over [0, size()) see every value.
  size_t size() const noexcept { return size_; }
  bool IsZero() const noexcept;
  // Bit i set when value i is non-zero.
  uint64_t NonZeroMask() const noexcept;

  friend bool operator==(const ResourceVector& a, const ResourceVector& b) noexcept;

 private:
  std::array<int64_t, kMaxResources> values_{};
  uint8_t size_ = 0;
};

}  // namespace copse
