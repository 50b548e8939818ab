#pragma once
// Profiles: copse's scheduling profiles, one plugins::Framework per
// spec.schedulerName, and the ownership rule built on them (issue 14): a pod
// is copse's when its schedulerName names one of these profiles. Everything
// copse writes about a pod (conditions, events, nominations, preemption) is
// for its own pods only.
//
// Thread-safety: immutable once created; any thread may read.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod_info.h"
#include "core/result.h"
#include "plugins/framework/framework.h"
#include "plugins/framework/profile.h"
#include "plugins/framework/registry.h"

namespace copse::scheduler {

class Profiles {
 public:
  // Builds a framework per profile; errors name the profile ("profiles[1]
  // (gpu-scheduler): ..."). Every profile needs a Bind plugin (the pod could
  // not be bound otherwise), and all of them the same QueueSort (one queue).
  static Result<Profiles> Create(const plugins::Registry& registry,
                                 const std::vector<plugins::Profile>& profiles);

  std::optional<size_t> IndexOf(std::string_view scheduler_name) const noexcept;
  bool Owns(const PodInfo& pod) const noexcept { return IndexOf(pod.scheduler_name).has_value(); }
  plugins::Framework& at(size_t index) const noexcept { return *frameworks_[index]; }
  size_t size() const noexcept { return frameworks_.size(); }
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<plugins::Framework>> frameworks_;
};

}  // namespace copse::scheduler
