#include "scheduler/convert.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <utility>

#include "core/quantity.h"
#include "kube/codec.h"

namespace copse::scheduler {
namespace {

Error FieldError(std::string_view field, std::string_view message) {
  return MakeError(ErrorCode::kInvalid, std::string(field) + ": " + std::string(message));
}

PodAffinityTerm ToTerm(const kube::PodAffinityTerm& in) {
  PodAffinityTerm out;
  out.label_selector = in.label_selector;
  out.namespaces = in.namespaces;
  out.namespace_selector = in.namespace_selector;
  out.topology_key = in.topology_key;
  out.match_label_keys = in.match_label_keys;
  out.mismatch_label_keys = in.mismatch_label_keys;
  return out;
}

Result<Toleration> ToToleration(const kube::Toleration& in, size_t i) {
  Toleration out;
  out.key = in.key;
  out.value = in.value;
  if (in.op.empty() || in.op == "Equal") {
    out.op = TolerationOperator::kEqual;
  } else if (in.op == "Exists") {
    out.op = TolerationOperator::kExists;
  } else {
    return FieldError("spec.tolerations[" + std::to_string(i) + "].operator",
                      "Unsupported value: \"" + in.op + "\"");
  }
  if (!in.effect.empty()) {
    Result<TaintEffect> effect = ParseTaintEffect(in.effect);
    if (!effect.ok()) {
      return FieldError("spec.tolerations[" + std::to_string(i) + "].effect",
                        "Unsupported value: \"" + in.effect + "\"");
    }
    out.effect = *effect;
  }
  return out;
}

Result<NodeInclusionPolicy> ToPolicy(const std::optional<std::string>& value,
                                     NodeInclusionPolicy fallback, std::string_view field) {
  if (!value.has_value() || value->empty()) return fallback;
  if (*value == "Honor") return NodeInclusionPolicy::kHonor;
  if (*value == "Ignore") return NodeInclusionPolicy::kIgnore;
  return FieldError(field, "Unsupported value: \"" + *value + "\"");
}

}  // namespace

bool IsTerminal(const kube::Pod& pod) noexcept {
  return pod.status.phase == kube::kPodSucceeded || pod.status.phase == kube::kPodFailed;
}

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  if (text.size() < 20) return std::nullopt;
  std::string s(text);
  int year, month, day, hour, minute, second;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  auto t = std::chrono::system_clock::from_time_t(timegm(&tm));
  size_t pos = static_cast<size_t>(consumed);
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t nanos = 0;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) {
        nanos = nanos * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    while (digits++ < 9) nanos *= 10;
    t += std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::nanoseconds(nanos));
  }
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    auto offset = std::chrono::hours(oh) + std::chrono::minutes(om);
    t = s[pos] == '+' ? t - offset : t + offset;
  } else if (pos >= s.size() || (s[pos] != 'Z' && s[pos] != 'z')) {
    return std::nullopt;
  }
  return t;
}

Result<std::shared_ptr<const PodInfo>> ToPodInfo(const kube::Pod& pod, ResourceNames& names) {
  auto info = std::make_shared<PodInfo>();
  info->namespace_name = pod.meta.namespace_;
  info->name = pod.meta.name;
  info->uid = pod.meta.uid;
  info->labels = pod.meta.labels;
  info->priority = pod.spec.priority.value_or(0);
  if (pod.spec.preemption_policy.has_value()) {
    if (*pod.spec.preemption_policy == "Never") {
      info->preemption_policy = PreemptionPolicy::kNever;
    } else if (*pod.spec.preemption_policy != "PreemptLowerPriority") {
      return FieldError("spec.preemptionPolicy",
                        "Unsupported value: \"" + *pod.spec.preemption_policy + "\"");
    }
  }
  info->scheduler_name =
      pod.spec.scheduler_name.empty() ? "default-scheduler" : pod.spec.scheduler_name;

  Result<ResourceVector> requests = ResourceVector::FromResourceList(kube::PodRequests(pod), names);
  if (!requests.ok()) return FieldError("spec.containers[*].resources", requests.error().message);
  info->requests = std::move(requests).value();
  kube::PodRequestOptions non_zero;
  non_zero.non_missing_container_requests = kube::NonZeroRequestDefaults();
  ResourceList scoring = kube::PodRequests(pod, non_zero);
  if (auto it = scoring.find("cpu"); it != scoring.end()) {
    info->non_zero_cpu_milli = it->second.MilliValue();
  }
  if (auto it = scoring.find("memory"); it != scoring.end()) {
    info->non_zero_memory = it->second.Value();
  }

  info->node_selector = pod.spec.node_selector;
  if (pod.spec.affinity.has_value()) {
    const kube::Affinity& affinity = *pod.spec.affinity;
    if (affinity.node_affinity.has_value()) {
      info->required_node_affinity = affinity.node_affinity->required;
      for (const kube::PreferredSchedulingTerm& term : affinity.node_affinity->preferred) {
        info->preferred_node_affinity.push_back({term.weight, term.preference});
      }
    }
    if (affinity.pod_affinity.has_value()) {
      for (const auto& term : affinity.pod_affinity->required) {
        info->required_affinity.push_back(ToTerm(term));
      }
      for (const auto& term : affinity.pod_affinity->preferred) {
        info->preferred_affinity.push_back({term.weight, ToTerm(term.term)});
      }
    }
    if (affinity.pod_anti_affinity.has_value()) {
      for (const auto& term : affinity.pod_anti_affinity->required) {
        info->required_anti_affinity.push_back(ToTerm(term));
      }
      for (const auto& term : affinity.pod_anti_affinity->preferred) {
        info->preferred_anti_affinity.push_back({term.weight, ToTerm(term.term)});
      }
    }
  }
  for (size_t i = 0; i < pod.spec.tolerations.size(); ++i) {
    Result<Toleration> toleration = ToToleration(pod.spec.tolerations[i], i);
    if (!toleration.ok()) return std::move(toleration).error();
    info->tolerations.push_back(std::move(toleration).value());
  }
  auto add_ports = [&](const std::vector<kube::Container>& containers,
                       std::string_view field) -> Status {
    for (size_t c = 0; c < containers.size(); ++c) {
      for (size_t p = 0; p < containers[c].ports.size(); ++p) {
        const kube::ContainerPort& port = containers[c].ports[p];
        if (port.host_port <= 0) continue;
        Result<Protocol> protocol = ParseProtocol(port.protocol);
        if (!protocol.ok()) {
          return FieldError(std::string(field) + "[" + std::to_string(c) + "].ports[" +
                                std::to_string(p) + "].protocol",
                            "Unsupported value: \"" + port.protocol + "\"");
        }
        info->host_ports.push_back(HostPort::Make(port.host_ip, *protocol, port.host_port));
      }
    }
    return Status::Ok();
  };
  if (Status s = add_ports(pod.spec.containers, "spec.containers"); !s.ok()) return s.error();
  // Restartable init containers (sidecars) keep their ports for the pod's life.
  {
    std::vector<kube::Container> sidecars;
    for (const kube::Container& c : pod.spec.init_containers) {
      if (c.IsSidecar()) sidecars.push_back(c);
    }
    if (Status s = add_ports(sidecars, "spec.initContainers"); !s.ok()) return s.error();
  }

  for (size_t i = 0; i < pod.spec.topology_spread_constraints.size(); ++i) {
    const kube::TopologySpreadConstraint& in = pod.spec.topology_spread_constraints[i];
    std::string field = "spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    TopologySpreadConstraint out;
    out.max_skew = in.max_skew;
    out.topology_key = in.topology_key;
    if (in.when_unsatisfiable == "ScheduleAnyway") {
      out.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
    } else if (in.when_unsatisfiable.empty() || in.when_unsatisfiable == "DoNotSchedule") {
      out.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
    } else {
      return FieldError(field + ".whenUnsatisfiable",
                        "Unsupported value: \"" + in.when_unsatisfiable + "\"");
    }
    out.label_selector = in.label_selector;
    out.min_domains = in.min_domains.value_or(1);
    Result<NodeInclusionPolicy> affinity_policy = ToPolicy(
        in.node_affinity_policy, NodeInclusionPolicy::kHonor, field + ".nodeAffinityPolicy");
    if (!affinity_policy.ok()) return std::move(affinity_policy).error();
    Result<NodeInclusionPolicy> taints_policy =
        ToPolicy(in.node_taints_policy, NodeInclusionPolicy::kIgnore, field + ".nodeTaintsPolicy");
    if (!taints_policy.ok()) return std::move(taints_policy).error();
    out.node_affinity_policy = *affinity_policy;
    out.node_taints_policy = *taints_policy;
    out.match_label_keys = in.match_label_keys;
    info->topology_spread_constraints.push_back(std::move(out));
  }

  info->resource_claims.reserve(pod.spec.resource_claims.size());
  for (const kube::PodResourceClaim& in : pod.spec.resource_claims) {
    PodClaimRef ref;
    ref.name = in.name;
    if (in.resource_claim_name.has_value()) {
      ref.claim_name = *in.resource_claim_name;
    } else if (in.resource_claim_template_name.has_value()) {
      ref.from_template = true;
      ref.state = PodClaimRef::State::kNotCreated;
      for (const kube::PodResourceClaimStatus& status : pod.status.resource_claim_statuses) {
        if (status.name != in.name) continue;
        if (status.resource_claim_name.has_value()) {
          ref.claim_name = *status.resource_claim_name;
          ref.state = PodClaimRef::State::kResolved;
        } else {
          ref.state = PodClaimRef::State::kNotNeeded;
        }
        break;
      }
    } else {
      ref.state = PodClaimRef::State::kInvalid;
    }
    info->resource_claims.push_back(std::move(ref));
  }

  info->scheduling_gates = pod.spec.scheduling_gates;
  if (pod.spec.pod_group_name.has_value() && !pod.spec.pod_group_name->empty()) {
    info->group_kind = PodInfo::GroupKind::kWorkloadPodGroup;
    info->pod_group = *pod.spec.pod_group_name;
  } else if (auto it = pod.meta.labels.find(kCopsePodGroupLabel); it != pod.meta.labels.end()) {
    info->group_kind = PodInfo::GroupKind::kCopsePodGroup;
    info->pod_group = it->second;
  }
  if (auto it = pod.meta.labels.find(kCopseSubGroupLabel); it != pod.meta.labels.end()) {
    info->sub_group = it->second;
  }
  info->node_name = pod.spec.node_name;
  info->nominated_node_name = pod.status.nominated_node_name;
  if (!pod.status.start_time.empty()) info->start_time = ParseRfc3339(pod.status.start_time);
  info->terminating = pod.meta.deletion_timestamp.has_value();
  if (info->terminating) {
    const kube::Condition* target =
        kube::FindCondition(pod.status.conditions, kConditionDisruptionTarget);
    info->terminating_by_preemption = target != nullptr && target->status == "True" &&
                                      target->reason == kReasonPreemptionByScheduler;
  }
  if (Status s = info->Finalize(); !s.ok()) return s.error();
  return std::shared_ptr<const PodInfo>(std::move(info));
}

Status ApplyNode(const kube::Node& node, ResourceNames& names, NodeInfo& info) {
  info.SetLabels(node.meta.labels);
  Result<ResourceVector> allocatable =
      ResourceVector::FromResourceList(node.status.allocatable, names);
  if (!allocatable.ok()) return FieldError("status.allocatable", allocatable.error().message);
  info.SetAllocatable(*allocatable);
  std::vector<Taint> taints;
  taints.reserve(node.spec.taints.size());
  for (size_t i = 0; i < node.spec.taints.size(); ++i) {
    const kube::Taint& in = node.spec.taints[i];
    Result<TaintEffect> effect = ParseTaintEffect(in.effect);
    if (!effect.ok()) {
      return FieldError("spec.taints[" + std::to_string(i) + "].effect",
                        "Unsupported value: \"" + in.effect + "\"");
    }
    taints.push_back({in.key, in.value, *effect});
  }
  info.SetTaints(std::move(taints));
  info.SetUnschedulable(node.spec.unschedulable);
  return Status::Ok();
}

PodDisruptionBudgetInfo ToPdbInfo(const kube::PodDisruptionBudget& pdb) {
  PodDisruptionBudgetInfo out;
  out.namespace_name = pdb.meta.namespace_;
  out.name = pdb.meta.name;
  out.selector = pdb.spec.selector;
  out.disruptions_allowed = pdb.status.disruptions_allowed;
  for (const auto& [pod_name, when] : pdb.status.disrupted_pods) {
    out.disrupted_pods.push_back(pod_name);
  }
  std::sort(out.disrupted_pods.begin(), out.disrupted_pods.end());
  return out;
}

}  // namespace copse::scheduler
