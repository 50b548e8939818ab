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

void CycleState::Write(const void* key, std::unique_ptr<PluginState> state) {
  for (auto& [k, s] : entries_) {
    if (k == key) {
      s = std::move(state);
      return;
    }
  }
  entries_.emplace_back(key, std::move(state));
}

void CycleState::Erase(const void* key) noexcept {
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
  return nullptr;
}

CycleState CycleState::Clone() const {
  CycleState copy;
  copy.entries_.reserve(entries_.size());
  for (const auto& [k, s] : entries_) copy.entries_.emplace_back(k, s ? s->Clone() : nullptr);
  copy.skip_filter_ = skip_filter_;
  copy.skip_score_ = skip_score_;
  return copy;
}

}  // namespace copse::plugins
