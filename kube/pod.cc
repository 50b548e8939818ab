#include "kube/pod.h"

#include "kube/codec_json.h"
#include "kube/node.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutArray;
using codec::PutObject;
using codec::PutOpt;
using codec::PutOptObject;
using codec::Read;
using codec::ReadArray;
using codec::Reader;
using codec::ReadOpt;

namespace {

// ---------------------------------------------------------------- decoding

bool ReadPort(Reader& r, Element e, ContainerPort& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "containerPort") return Read(r, v, out.container_port);
    if (key == "protocol") return Read(r, v, out.protocol);
    if (key == "name") return Read(r, v, out.name);
    if (key == "hostPort") return Read(r, v, out.host_port);
    if (key == "hostIP") return Read(r, v, out.host_ip);
    return true;
  });
}

bool ReadResources(Reader& r, Element e, ResourceRequirements& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "requests") return Read(r, v, out.requests);
    if (key == "limits") return Read(r, v, out.limits);
    return true;
  });
}

bool ReadContainer(Reader& r, Element e, Container& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "image") return Read(r, v, out.image);
    if (key == "resources") return ReadResources(r, v, out.resources);
    if (key == "ports") return ReadArray(r, v, out.ports, ReadPort);
    if (key == "restartPolicy") return Read(r, v, out.restart_policy);
    return true;
  });
}

bool ReadPreferredSchedulingTerm(Reader& r, Element e, PreferredSchedulingTerm& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "weight") return Read(r, v, out.weight);
    if (key == "preference") return Read(r, v, out.preference);
    return true;
  });
}

bool ReadNodeAffinity(Reader& r, Element e, NodeAffinity& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") return Read(r, v, out.required);
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(r, v, out.preferred, ReadPreferredSchedulingTerm);
    }
    return true;
  });
}

bool ReadPodAffinityTerm(Reader& r, Element e, PodAffinityTerm& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "labelSelector") return Read(r, v, out.label_selector);
    if (key == "namespaces") return Read(r, v, out.namespaces);
    if (key == "namespaceSelector") return Read(r, v, out.namespace_selector);
    if (key == "topologyKey") return Read(r, v, out.topology_key);
    if (key == "matchLabelKeys") return Read(r, v, out.match_label_keys);
    if (key == "mismatchLabelKeys") return Read(r, v, out.mismatch_label_keys);
    return true;
  });
}

bool ReadWeightedPodAffinityTerm(Reader& r, Element e, WeightedPodAffinityTerm& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "weight") return Read(r, v, out.weight);
    if (key == "podAffinityTerm") return ReadPodAffinityTerm(r, v, out.term);
    return true;
  });
}

bool ReadPodAffinity(Reader& r, Element e, PodAffinity& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(r, v, out.required, ReadPodAffinityTerm);
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(r, v, out.preferred, ReadWeightedPodAffinityTerm);
    }
    return true;
  });
}

bool ReadAffinity(Reader& r, Element e, Affinity& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "nodeAffinity") return ReadOpt(r, v, out.node_affinity, ReadNodeAffinity);
    if (key == "podAffinity") return ReadOpt(r, v, out.pod_affinity, ReadPodAffinity);
    if (key == "podAntiAffinity") return ReadOpt(r, v, out.pod_anti_affinity, ReadPodAffinity);
    return true;
  });
}

bool ReadToleration(Reader& r, Element e, Toleration& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "key") return Read(r, v, out.key);
    if (key == "operator") return Read(r, v, out.op);
    if (key == "value") return Read(r, v, out.value);
    if (key == "effect") return Read(r, v, out.effect);
    if (key == "tolerationSeconds") return Read(r, v, out.toleration_seconds);
    return true;
  });
}

bool ReadTopologySpreadConstraint(Reader& r, Element e, TopologySpreadConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "maxSkew") return Read(r, v, out.max_skew);
    if (key == "topologyKey") return Read(r, v, out.topology_key);
    if (key == "whenUnsatisfiable") return Read(r, v, out.when_unsatisfiable);
    if (key == "labelSelector") return Read(r, v, out.label_selector);
    if (key == "minDomains") return Read(r, v, out.min_domains);
    if (key == "nodeAffinityPolicy") return Read(r, v, out.node_affinity_policy);
    if (key == "nodeTaintsPolicy") return Read(r, v, out.node_taints_policy);
    if (key == "matchLabelKeys") return Read(r, v, out.match_label_keys);
    return true;
  });
}

bool ReadSchedulingGate(Reader& r, Element e, std::string& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out);
    return true;
  });
}

bool ReadSchedulingGroup(Reader& r, Element e, std::optional<std::string>& out) {
  out.reset();
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "podGroupName") return Read(r, v, out);
    return true;
  });
}

bool ReadPodResourceClaim(Reader& r, Element e, PodResourceClaim& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "resourceClaimName") return Read(r, v, out.resource_claim_name);
    if (key == "resourceClaimTemplateName") return Read(r, v, out.resource_claim_template_name);
    return true;
  });
}

bool ReadPodResourceClaimStatus(Reader& r, Element e, PodResourceClaimStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "resourceClaimName") return Read(r, v, out.resource_claim_name);
    return true;
  });
}

bool ReadPodSpec(Reader& r, Element e, PodSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "containers") return ReadArray(r, v, out.containers, ReadContainer);
    if (key == "initContainers") return ReadArray(r, v, out.init_containers, ReadContainer);
    if (key == "nodeName") return Read(r, v, out.node_name);
    if (key == "schedulerName") return Read(r, v, out.scheduler_name);
    if (key == "priority") return Read(r, v, out.priority);
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "preemptionPolicy") return Read(r, v, out.preemption_policy);
    if (key == "tolerations") return ReadArray(r, v, out.tolerations, ReadToleration);
    if (key == "nodeSelector") return Read(r, v, out.node_selector);
    if (key == "affinity") return ReadOpt(r, v, out.affinity, ReadAffinity);
    if (key == "topologySpreadConstraints") {
      return ReadArray(r, v, out.topology_spread_constraints, ReadTopologySpreadConstraint);
    }
    if (key == "overhead") return Read(r, v, out.overhead);
    if (key == "resources") return ReadOpt(r, v, out.resources, ReadResources);
    if (key == "schedulingGates") return ReadArray(r, v, out.scheduling_gates, ReadSchedulingGate);
    if (key == "schedulingGroup") return ReadSchedulingGroup(r, v, out.pod_group_name);
    if (key == "hostname") return Read(r, v, out.hostname);
    if (key == "subdomain") return Read(r, v, out.subdomain);
    if (key == "resourceClaims") {
      return ReadArray(r, v, out.resource_claims, ReadPodResourceClaim);
    }
    return true;
  });
}

bool ReadPodStatus(Reader& r, Element e, PodStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "phase") return Read(r, v, out.phase);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "nominatedNodeName") return Read(r, v, out.nominated_node_name);
    if (key == "podIP") return Read(r, v, out.pod_ip);
    if (key == "hostIP") return Read(r, v, out.host_ip);
    if (key == "startTime") return Read(r, v, out.start_time);
    if (key == "resourceClaimStatuses") {
      return ReadArray(r, v, out.resource_claim_statuses, ReadPodResourceClaimStatus);
    }
    return true;
  });
}

// ---------------------------------------------------------------- encoding

void OverlayPort(Json& j, const ContainerPort& now, const ContainerPort* before) {
  Put(j, "name", now.name, Prev(before, &ContainerPort::name));
  Put(j, "hostPort", now.host_port, Prev(before, &ContainerPort::host_port));
  Put(j, "containerPort", now.container_port, Prev(before, &ContainerPort::container_port),
      Emit::kAlways);
  Put(j, "protocol", now.protocol, Prev(before, &ContainerPort::protocol));
  Put(j, "hostIP", now.host_ip, Prev(before, &ContainerPort::host_ip));
}

void OverlayResources(Json& j, const ResourceRequirements& now,
                      const ResourceRequirements* before) {
  codec::PutResourceList(j, "limits", now.limits, Prev(before, &ResourceRequirements::limits));
  codec::PutResourceList(j, "requests", now.requests,
                         Prev(before, &ResourceRequirements::requests));
}

void OverlayContainer(Json& j, const Container& now, const Container* before) {
  Put(j, "name", now.name, Prev(before, &Container::name), Emit::kAlways);
  Put(j, "image", now.image, Prev(before, &Container::image));
  PutArray(j, "ports", now.ports, Prev(before, &Container::ports), OverlayPort,
           [](const ContainerPort& a, const ContainerPort& b) {
             return a.container_port == b.container_port && a.protocol == b.protocol;
           });
  PutObject(j, "resources", [&](Json& child) {
    OverlayResources(child, now.resources, Prev(before, &Container::resources));
  });
  PutOpt(j, "restartPolicy", now.restart_policy, Prev(before, &Container::restart_policy));
}

void OverlayPreferredSchedulingTerm(Json& j, const PreferredSchedulingTerm& now,
                                    const PreferredSchedulingTerm* before) {
  Put(j, "weight", now.weight, Prev(before, &PreferredSchedulingTerm::weight), Emit::kAlways);
  Put(j, "preference", now.preference, Prev(before, &PreferredSchedulingTerm::preference),
      Emit::kAlways);
}

void OverlayNodeAffinity(Json& j, const NodeAffinity& now, const NodeAffinity* before) {
  PutOpt(j, "requiredDuringSchedulingIgnoredDuringExecution", now.required,
         Prev(before, &NodeAffinity::required));
  PutArray(j, "preferredDuringSchedulingIgnoredDuringExecution", now.preferred,
           Prev(before, &NodeAffinity::preferred), OverlayPreferredSchedulingTerm);
}

void OverlayPodAffinityTerm(Json& j, const PodAffinityTerm& now, const PodAffinityTerm* before) {
  PutOpt(j, "labelSelector", now.label_selector, Prev(before, &PodAffinityTerm::label_selector));
  Put(j, "namespaces", now.namespaces, Prev(before, &PodAffinityTerm::namespaces));
  Put(j, "topologyKey", now.topology_key, Prev(before, &PodAffinityTerm::topology_key),
      Emit::kAlways);
  PutOpt(j, "namespaceSelector", now.namespace_selector,
         Prev(before, &PodAffinityTerm::namespace_selector));
  Put(j, "matchLabelKeys", now.match_label_keys, Prev(before, &PodAffinityTerm::match_label_keys));
  Put(j, "mismatchLabelKeys", now.mismatch_label_keys,
      Prev(before, &PodAffinityTerm::mismatch_label_keys));
}

void OverlayWeightedPodAffinityTerm(Json& j, const WeightedPodAffinityTerm& now,
                                    const WeightedPodAffinityTerm* before) {
  Put(j, "weight", now.weight, Prev(before, &WeightedPodAffinityTerm::weight), Emit::kAlways);
  PutObject(j, "podAffinityTerm", [&](Json& child) {
    OverlayPodAffinityTerm(child, now.term, Prev(before, &WeightedPodAffinityTerm::term));
  });
}

void OverlayPodAffinity(Json& j, const PodAffinity& now, const PodAffinity* before) {
  PutArray(j, "requiredDuringSchedulingIgnoredDuringExecution", now.required,
           Prev(before, &PodAffinity::required), OverlayPodAffinityTerm);
  PutArray(j, "preferredDuringSchedulingIgnoredDuringExecution", now.preferred,
           Prev(before, &PodAffinity::preferred), OverlayWeightedPodAffinityTerm);
}

void OverlayAffinity(Json& j, const Affinity& now, const Affinity* before) {
  PutOptObject(j, "nodeAffinity", now.node_affinity, Prev(before, &Affinity::node_affinity),
               OverlayNodeAffinity);
  PutOptObject(j, "podAffinity", now.pod_affinity, Prev(before, &Affinity::pod_affinity),
               OverlayPodAffinity);
  PutOptObject(j, "podAntiAffinity", now.pod_anti_affinity,
               Prev(before, &Affinity::pod_anti_affinity), OverlayPodAffinity);
}

void OverlayToleration(Json& j, const Toleration& now, const Toleration* before) {
  Put(j, "key", now.key, Prev(before, &Toleration::key));
  Put(j, "operator", now.op, Prev(before, &Toleration::op));
  Put(j, "value", now.value, Prev(before, &Toleration::value));
  Put(j, "effect", now.effect, Prev(before, &Toleration::effect));
  PutOpt(j, "tolerationSeconds", now.toleration_seconds,
         Prev(before, &Toleration::toleration_seconds));
}

void OverlayTopologySpreadConstraint(Json& j, const TopologySpreadConstraint& now,
                                     const TopologySpreadConstraint* before) {
  using T = TopologySpreadConstraint;
  Put(j, "maxSkew", now.max_skew, Prev(before, &T::max_skew), Emit::kAlways);
  Put(j, "topologyKey", now.topology_key, Prev(before, &T::topology_key), Emit::kAlways);
  Put(j, "whenUnsatisfiable", now.when_unsatisfiable, Prev(before, &T::when_unsatisfiable),
      Emit::kAlways);
  PutOpt(j, "labelSelector", now.label_selector, Prev(before, &T::label_selector));
  PutOpt(j, "minDomains", now.min_domains, Prev(before, &T::min_domains));
  PutOpt(j, "nodeAffinityPolicy", now.node_affinity_policy, Prev(before, &T::node_affinity_policy));
  PutOpt(j, "nodeTaintsPolicy", now.node_taints_policy, Prev(before, &T::node_taints_policy));
  Put(j, "matchLabelKeys", now.match_label_keys, Prev(before, &T::match_label_keys));
}

void OverlaySchedulingGate(Json& j, const std::string& now, const std::string* before) {
  Put(j, "name", now, before, Emit::kAlways);
}

void PutPodGroupName(Json& spec, const std::optional<std::string>& now,
                     const std::optional<std::string>* before) {
  if (before != nullptr && *before == now) return;
  if (now.has_value()) {
    PutObject(spec, "schedulingGroup", [&](Json& group) { group["podGroupName"] = *now; });
    return;
  }
  auto it = spec.find("schedulingGroup");
  if (it == spec.end()) return;
  if (it->is_object()) it->erase("podGroupName");
  if (!it->is_object() || it->empty()) spec.erase(it);
}

void OverlayPodResourceClaim(Json& j, const PodResourceClaim& now, const PodResourceClaim* before) {
  Put(j, "name", now.name, Prev(before, &PodResourceClaim::name), Emit::kAlways);
  PutOpt(j, "resourceClaimName", now.resource_claim_name,
         Prev(before, &PodResourceClaim::resource_claim_name));
  PutOpt(j, "resourceClaimTemplateName", now.resource_claim_template_name,
         Prev(before, &PodResourceClaim::resource_claim_template_name));
}

void OverlayPodResourceClaimStatus(Json& j, const PodResourceClaimStatus& now,
                                   const PodResourceClaimStatus* before) {
  Put(j, "name", now.name, Prev(before, &PodResourceClaimStatus::name), Emit::kAlways);
  PutOpt(j, "resourceClaimName", now.resource_claim_name,
         Prev(before, &PodResourceClaimStatus::resource_claim_name));
}

bool SameName(const Container& a, const Container& b) { return a.name == b.name; }

void OverlayPodSpec(Json& j, const PodSpec& now, const PodSpec* before) {
  PutArray(j, "initContainers", now.init_containers, Prev(before, &PodSpec::init_containers),
           OverlayContainer, SameName);
  PutArray(j, "containers", now.containers, Prev(before, &PodSpec::containers), OverlayContainer,
           SameName, Emit::kAlways);
  Put(j, "nodeSelector", now.node_selector, Prev(before, &PodSpec::node_selector));
  Put(j, "nodeName", now.node_name, Prev(before, &PodSpec::node_name));
  Put(j, "hostname", now.hostname, Prev(before, &PodSpec::hostname));
  Put(j, "subdomain", now.subdomain, Prev(before, &PodSpec::subdomain));
  PutOptObject(j, "affinity", now.affinity, Prev(before, &PodSpec::affinity), OverlayAffinity);
  Put(j, "schedulerName", now.scheduler_name, Prev(before, &PodSpec::scheduler_name));
  PutArray(j, "tolerations", now.tolerations, Prev(before, &PodSpec::tolerations),
           OverlayToleration);
  Put(j, "priorityClassName", now.priority_class_name, Prev(before, &PodSpec::priority_class_name));
  PutOpt(j, "priority", now.priority, Prev(before, &PodSpec::priority));
  PutOpt(j, "preemptionPolicy", now.preemption_policy, Prev(before, &PodSpec::preemption_policy));
  codec::PutResourceList(j, "overhead", now.overhead, Prev(before, &PodSpec::overhead));
  PutArray(j, "topologySpreadConstraints", now.topology_spread_constraints,
           Prev(before, &PodSpec::topology_spread_constraints), OverlayTopologySpreadConstraint);
  PutArray(j, "schedulingGates", now.scheduling_gates, Prev(before, &PodSpec::scheduling_gates),
           OverlaySchedulingGate);
  PutOptObject(j, "resources", now.resources, Prev(before, &PodSpec::resources), OverlayResources);
  PutPodGroupName(j, now.pod_group_name, Prev(before, &PodSpec::pod_group_name));
  PutArray(j, "resourceClaims", now.resource_claims, Prev(before, &PodSpec::resource_claims),
           OverlayPodResourceClaim,
           [](const PodResourceClaim& a, const PodResourceClaim& b) { return a.name == b.name; });
}

void OverlayPodStatus(Json& j, const PodStatus& now, const PodStatus* before) {
  Put(j, "phase", now.phase, Prev(before, &PodStatus::phase));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &PodStatus::conditions));
  Put(j, "nominatedNodeName", now.nominated_node_name,
      Prev(before, &PodStatus::nominated_node_name));
  Put(j, "hostIP", now.host_ip, Prev(before, &PodStatus::host_ip));
  Put(j, "podIP", now.pod_ip, Prev(before, &PodStatus::pod_ip));
  Put(j, "startTime", now.start_time, Prev(before, &PodStatus::start_time));
  PutArray(j, "resourceClaimStatuses", now.resource_claim_statuses,
           Prev(before, &PodStatus::resource_claim_statuses), OverlayPodResourceClaimStatus,
           [](const PodResourceClaimStatus& a, const PodResourceClaimStatus& b) {
             return a.name == b.name;
           });
}

// ---------------------------------------------------------------- requests

void AddResources(ResourceList& into, const ResourceList& add) {
  for (const auto& [name, quantity] : add) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, quantity);
    } else {
      it->second += quantity;
    }
  }
}

void MaxResources(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, quantity] : other) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, quantity);
    } else if (quantity > it->second) {
      it->second = quantity;
    }
  }
}

// Requests with the defaults for resources the container does not mention.
const ResourceList& WithDefaults(const ResourceList& requests, const ResourceList& defaults,
                                 ResourceList& scratch) {
  if (defaults.empty()) return requests;
  scratch = requests;
  for (const auto& [name, quantity] : defaults) {
    if (scratch.find(name) == scratch.end()) scratch.emplace(name, quantity);
  }
  return scratch;
}

}  // namespace

bool Toleration::ToleratesTaint(const Taint& taint) const noexcept {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (op.empty() || op == "Equal") return value == taint.value;
  if (op == "Exists") return true;
  return false;
}

Result<Pod> Pod::Decode(std::string_view json) {
  return codec::DecodeObject<Pod>(json, kKind,
                                  [](Reader& r, std::string_view key, Element v, Pod& out) {
                                    if (key == "spec") return ReadPodSpec(r, v, out.spec);
                                    if (key == "status") return ReadPodStatus(r, v, out.status);
                                    return true;
                                  });
}

std::string Pod::Encode() const {
  auto same = [this](const Pod& before) { return spec == before.spec && status == before.status; };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const Pod* before) {
        PutObject(root, "spec",
                  [&](Json& j) { OverlayPodSpec(j, spec, Prev(before, &Pod::spec)); });
        PutObject(root, "status",
                  [&](Json& j) { OverlayPodStatus(j, status, Prev(before, &Pod::status)); });
      });
}

ResourceList PodRequests(const Pod& pod, const PodRequestOptions& options) {
  const ResourceList& defaults = options.non_missing_container_requests;
  ResourceList scratch;
  ResourceList requests;
  for (const Container& container : pod.spec.containers) {
    AddResources(requests, WithDefaults(container.resources.requests, defaults, scratch));
  }
  // While init container i runs, the sidecars started before it run too:
  // use(i) = own request + sum(sidecars before i); a sidecar also keeps its
  // request for the pod's lifetime, so it is added to the container sum.
  ResourceList sidecars;
  ResourceList init_peak;
  for (const Container& container : pod.spec.init_containers) {
    const ResourceList& own = WithDefaults(container.resources.requests, defaults, scratch);
    if (container.IsSidecar()) {
      AddResources(requests, own);
      AddResources(sidecars, own);
      MaxResources(init_peak, sidecars);
    } else {
      ResourceList use = own;
      AddResources(use, sidecars);
      MaxResources(init_peak, use);
    }
  }
  MaxResources(requests, init_peak);
  if (options.pod_level_resources && pod.spec.resources.has_value()) {
    for (std::string_view name : {kResourceCPU, kResourceMemory}) {
      auto it = pod.spec.resources->requests.find(name);
      if (it != pod.spec.resources->requests.end())
        requests.insert_or_assign(std::string(name), it->second);
    }
  }
  if (!options.exclude_overhead) AddResources(requests, pod.spec.overhead);
  return requests;
}

ResourceList NonZeroRequestDefaults() {
  ResourceList defaults;
  defaults.emplace(std::string(kResourceCPU), Quantity::FromMilli(100));
  defaults.emplace(std::string(kResourceMemory),
                   Quantity::FromInt(200LL * 1024 * 1024, Quantity::Format::kBinarySI));
  return defaults;
}

}  // namespace copse::kube
