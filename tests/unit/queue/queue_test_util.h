#pragma once
// Helpers for queue tests: pod and node builders and a pop-then-reject driver.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "queue/scheduling_queue.h"

namespace copse::queue::testing {

inline constexpr std::string_view kNamespace = "default";

struct PodSpec {
  std::string name;
  int32_t priority = 0;
  Labels labels = {};
  std::string namespace_name = std::string(kNamespace);
};

inline std::shared_ptr<PodInfo> NewPod(PodSpec spec) {
  auto pod = std::make_shared<PodInfo>();
  pod->namespace_name = std::move(spec.namespace_name);
  pod->name = std::move(spec.name);
  pod->uid = "uid-" + pod->namespace_name + "-" + pod->name;
  pod->priority = spec.priority;
  pod->labels = std::move(spec.labels);
  return pod;
}

inline std::shared_ptr<const PodInfo> MakePod(std::string name, int32_t priority = 0,
                                              Labels labels = {}) {
  return NewPod({std::move(name), priority, std::move(labels)});
}

// A copy of `pod` edited by `edit` (a new version from the informer).
template <typename Edit>
std::shared_ptr<const PodInfo> Edited(const std::shared_ptr<const PodInfo>& pod, Edit edit) {
  auto copy = std::make_shared<PodInfo>(*pod);
  edit(*copy);
  return copy;
}

inline std::shared_ptr<const NodeInfo> MakeNode(std::string name, Labels labels = {}) {
  auto node = std::make_shared<NodeInfo>(std::move(name));
  node->SetLabels(std::move(labels));
  return node;
}

inline UnitKey Key(std::string_view name) { return UnitKey::ForPod(kNamespace, name); }

inline QueueLocation LocationOf(const SchedulingQueue& queue, std::string_view name) {
  const std::optional<QueuedUnit> unit = queue.Find(Key(name));
  return unit ? unit->location : QueueLocation::kNone;
}

// Pops the head, which must be `expected`, and hands it back rejected.
inline QueueLocation PopAndReject(SchedulingQueue& queue, std::string_view expected,
                                  const Rejection& rejection) {
  std::optional<PoppedUnit> popped = queue.Pop();
  EXPECT_TRUE(popped.has_value()) << "nothing to pop, expected " << expected;
  if (!popped) return QueueLocation::kNone;
  EXPECT_EQ(popped->pod().name, expected);
  return queue.AddUnschedulableIfNotPresent(popped->key(), popped->cycle, rejection);
}

// Names in pop order until activeQ is empty.
inline std::vector<std::string> DrainNames(SchedulingQueue& queue) {
  std::vector<std::string> names;
  while (std::optional<PoppedUnit> popped = queue.Pop()) {
    names.push_back(popped->pod().name);
    queue.Done(popped->key());
  }
  return names;
}

}  // namespace copse::queue::testing
