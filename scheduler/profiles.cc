#include "scheduler/profiles.h"

#include <utility>

#include "plugins/framework/framework.h"

namespace copse::scheduler {

Result<Profiles> Profiles::Create(const plugins::Registry& registry,
                                  const std::vector<plugins::Profile>& profiles) {
  Profiles out;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const std::string where =
        "profiles[" + std::to_string(i) + "] (" + profiles[i].scheduler_name + "): ";
    Result<std::unique_ptr<plugins::Framework>> fw =
        plugins::Framework::Create(registry, profiles[i]);
    if (!fw.ok()) return MakeError(fw.error().code, where + fw.error().message);
    if ((*fw)->PluginNames(plugins::ExtensionPoint::kBind).empty()) {
      return MakeError(ErrorCode::kInvalid,
                       where +
                           "plugins.bind: Required value: at least one Bind plugin "
                           "(DefaultBinder) is needed to bind pods");
    }
    if (!out.frameworks_.empty() &&
        (*fw)->PluginNames(plugins::ExtensionPoint::kQueueSort) !=
            out.frameworks_.front()->PluginNames(plugins::ExtensionPoint::kQueueSort)) {
      return MakeError(ErrorCode::kInvalid,
                       where +
                           "plugins.queueSort: Invalid value: every profile must use the "
                           "same QueueSort plugin as profiles[0] (the queue is shared)");
    }
    out.frameworks_.push_back(std::move(fw).value());
  }
  return out;
}

std::optional<size_t> Profiles::IndexOf(std::string_view scheduler_name) const noexcept {
  for (size_t i = 0; i < frameworks_.size(); ++i) {
    if (frameworks_[i]->scheduler_name() == scheduler_name) return i;
  }
  return std::nullopt;
}

std::vector<std::string> Profiles::names() const {
  std::vector<std::string> names;
  names.reserve(frameworks_.size());
  for (const auto& fw : frameworks_) names.push_back(fw->scheduler_name());
  return names;
}

}  // namespace copse::scheduler
