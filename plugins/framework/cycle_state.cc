#include "plugins/framework/cycle_state.h"

namespace copse::plugins {

std::string_view CodeName(Code code) noexcept {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

CycleState::CycleState(std::shared_ptr<const CycleState> base) : base_(std::move(base)) {
  if (base_ != nullptr) {
    skip_filter_ = base_->skip_filter_;
    skip_score_ = base_->skip_score_;
  }
}

std::pair<const void*, std::unique_ptr<PluginState>>* CycleState::OwnEntry(
    const void* key) noexcept {
  for (auto& entry : entries_) {
    if (entry.first == key) return &entry;
  }
  return nullptr;
}

void CycleState::Write(const void* key, std::unique_ptr<PluginState> state) {
  if (auto* entry = OwnEntry(key)) {
    entry->second = std::move(state);
    return;
  }
  entries_.emplace_back(key, std::move(state));
}

void CycleState::Erase(const void* key) {
  if (base_ != nullptr && base_->Find(key) != nullptr) {
    Write(key, nullptr);  // hides the base's entry
    return;
  }
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return;
    }
  }
}

const PluginState* CycleState::Find(const void* key) const noexcept {
  for (const auto& [k, s] : entries_) {
    if (k == key) return s.get();
  }
  return base_ != nullptr ? base_->Find(key) : nullptr;
}

PluginState* CycleState::FindMutable(const void* key) {
  if (auto* entry = OwnEntry(key)) return entry->second.get();
  const PluginState* inherited = base_ != nullptr ? base_->Find(key) : nullptr;
  if (inherited == nullptr) return nullptr;
  entries_.emplace_back(key, inherited->Clone());
  return entries_.back().second.get();
}

CycleState CycleState::Clone() const {
  if (base_ == nullptr) {  // the common case (preemption dry runs): a plain copy
    CycleState copy;
    copy.entries_.reserve(entries_.size());
    for (const auto& [k, s] : entries_) copy.entries_.emplace_back(k, s ? s->Clone() : nullptr);
    copy.skip_filter_ = skip_filter_;
    copy.skip_score_ = skip_score_;
    return copy;
  }
  CycleState copy = base_->Clone();
  for (const auto& [k, s] : entries_) {
    if (s != nullptr) {
      copy.Write(k, s->Clone());
    } else {
      copy.Erase(k);
    }
  }
  copy.skip_filter_ = skip_filter_;
  copy.skip_score_ = skip_score_;
  return copy;
}

}  // namespace copse::plugins
