#include "core/resource_vector.h"

#include <algorithm>

namespace copse {

bool IsExtendedResourceName(std::string_view name) noexcept {
  // Native resources have no domain, or live under kubernetes.io/.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.substr(0, 9) == "requests.") return false;
  return true;
}

ResourceNames::ResourceNames() {
  names_[kResourceIdCpu] = std::string(kResourceCPU);
  names_[kResourceIdMemory] = std::string(kResourceMemory);
  names_[kResourceIdEphemeralStorage] = std::string(kResourceEphemeralStorage);
  names_[kResourceIdPods] = std::string(kResourcePods);
  size_.store(kNumBuiltinResources, std::memory_order_release);
}

Result<ResourceId> ResourceNames::Intern(std::string_view name) {
  if (auto id = Find(name)) return *id;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = size_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    if (names_[i] == name) return static_cast<ResourceId>(i);
  }
  if (n >= kMaxResources) {
    return MakeError(ErrorCode::kInvalid, "resource \"" + std::string(name) + "\": more than " +
                                              std::to_string(kMaxResources) +
                                              " distinct resource names");
  }
  names_[n] = std::string(name);
  extended_[n] = IsExtendedResourceName(name);
  size_.store(n + 1, std::memory_order_release);
  return static_cast<ResourceId>(n);
}

std::optional<ResourceId> ResourceNames::Find(std::string_view name) const noexcept {
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    if (names_[i] == name) return static_cast<ResourceId>(i);
  }
  return std::nullopt;
}

std::string_view ResourceNames::Name(ResourceId id) const noexcept {
  return id < size() ? std::string_view(names_[id]) : std::string_view();
}

bool ResourceNames::IsExtended(ResourceId id) const noexcept {
  return id < size() && extended_[id];
}

Result<ResourceVector> ResourceVector::FromResourceList(const ResourceList& list,
                                                        ResourceNames& names) {
  ResourceVector v;
  for (const auto& [name, quantity] : list) {
    Result<ResourceId> id = names.Intern(name);
    if (!id.ok()) return std::move(id).error();
    v.Set(*id, SchedulingUnits(name, quantity));
  }
  return v;
}

void ResourceVector::Set(ResourceId id, int64_t value) noexcept {
  if (id >= kMaxResources) return;
  values_[id] = value;
  if (id >= size_) size_ = static_cast<uint8_t>(id + 1);
}

void ResourceVector::Add(ResourceId id, int64_t delta) noexcept {
  if (id >= kMaxResources) return;
  Set(id, SaturatingAdd(Get(id), delta));
}

ResourceVector& ResourceVector::operator+=(const ResourceVector& other) noexcept {
  for (size_t i = 0; i < other.size_; ++i) {
    if (other.values_[i] != 0) Add(static_cast<ResourceId>(i), other.values_[i]);
  }
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& other) noexcept {
  for (size_t i = 0; i < other.size_; ++i) {
    if (other.values_[i] != 0)
      Set(static_cast<ResourceId>(i),
          SaturatingSub(Get(static_cast<ResourceId>(i)), other.values_[i]));
  }
  return *this;
}

bool ResourceVector::IsZero() const noexcept {
  return std::all_of(values_.begin(), values_.begin() + size_, [](int64_t v) { return v == 0; });
}

uint64_t ResourceVector::NonZeroMask() const noexcept {
  uint64_t mask = 0;
  for (size_t i = 0; i < size_; ++i) {
    if (values_[i] != 0) mask |= uint64_t{1} << i;
  }
  return mask;
}

bool operator==(const ResourceVector& a, const ResourceVector& b) noexcept {
  const size_t n = std::max(a.size_, b.size_);
  for (size_t i = 0; i < n; ++i) {
    if (a.Get(static_cast<ResourceId>(i)) != b.Get(static_cast<ResourceId>(i))) return false;
  }
  return true;
}

}  // namespace copse
