#pragma once
// Conversions from API objects (kube/) to the scheduler's JSON-free model
// (core/): Pod -> PodInfo, Node -> NodeInfo fields, PodDisruptionBudget ->
// PodDisruptionBudgetInfo. Errors name the field of the object that could not
// be converted (a bad quantity, an invalid selector, a toleration effect).
//
// Thread-safety: pure functions; ResourceNames interning is thread-safe.

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/resource_vector.h"
#include "core/result.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_disruption_budget.h"

namespace copse::scheduler {

// The condition type kube-scheduler writes on preemption victims.
inline constexpr std::string_view kConditionDisruptionTarget = "DisruptionTarget";
inline constexpr std::string_view kReasonPreemptionByScheduler = "PreemptionByScheduler";
inline constexpr std::string_view kCopsePodGroupLabel = "scheduling.copse.dev/pod-group";
inline constexpr std::string_view kCopseSubGroupLabel = "scheduling.copse.dev/subgroup";

// A finalized PodInfo. Priority is spec.priority (the API server's Priority
// admission resolves priorityClassName; a pod without it has priority 0).
Result<std::shared_ptr<const PodInfo>> ToPodInfo(const kube::Pod& pod, ResourceNames& names);

// Sets name-independent node fields (labels, allocatable, taints,
// unschedulable) on `info`.
Status ApplyNode(const kube::Node& node, ResourceNames& names, NodeInfo& info);

PodDisruptionBudgetInfo ToPdbInfo(const kube::PodDisruptionBudget& pdb);

// Parses RFC 3339 ("2026-11-22T00:30:00Z", fractional seconds and numeric
// offsets accepted).
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

// A pod that has finished (Succeeded or Failed) no longer uses its node.
bool IsTerminal(const kube::Pod& pod) noexcept;

}  // namespace copse::scheduler
