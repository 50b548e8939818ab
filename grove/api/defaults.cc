#include "grove/api/defaults.h"

namespace copse::grove::api {

void DefaultPodCliqueSet(PodCliqueSet& pcs) {
  if (pcs.meta.namespace_.empty()) pcs.meta.namespace_ = "default";
  PodCliqueSetSpec& spec = pcs.spec;
  if (!spec.update_strategy.has_value()) spec.update_strategy.emplace();
  if (spec.update_strategy->type.empty())
    spec.update_strategy->type = std::string(kRollingRecreate);

  PodCliqueSetTemplateSpec& t = spec.template_;
  if (!t.startup_type.has_value() || t.startup_type->empty()) {
    t.startup_type = std::string(kStartupAnyOrder);
  }
  if (!t.termination_delay.has_value()) {
    t.termination_delay = FormatDuration(kDefaultTerminationDelay);
  }
  if (!t.headless_service_config.has_value()) {
    t.headless_service_config = HeadlessServiceConfig{true};
  }
  for (PodCliqueTemplateSpec& clique : t.cliques) {
    if (clique.spec.replicas == 0) clique.spec.replicas = 1;
    if (!clique.spec.min_available.has_value()) clique.spec.min_available = clique.spec.replicas;
    if (clique.spec.scale_config.has_value() && !clique.spec.scale_config->min_replicas) {
      clique.spec.scale_config->min_replicas = clique.spec.replicas;
    }
  }
  for (PodCliqueScalingGroupConfig& group : t.scaling_groups) {
    if (!group.replicas.has_value()) group.replicas = 1;
    if (!group.min_available.has_value()) group.min_available = 1;
    if (group.scale_config.has_value() && !group.scale_config->min_replicas) {
      group.scale_config->min_replicas = *group.replicas;
    }
  }
}

PodCliqueSet Defaulted(const PodCliqueSet& pcs) {
  PodCliqueSet copy = pcs;
  DefaultPodCliqueSet(copy);
  return copy;
}

std::chrono::nanoseconds TerminationDelay(const PodCliqueSet& pcs) {
  const auto& text = pcs.spec.template_.termination_delay;
  if (text.has_value()) {
    auto parsed = ParseDuration(*text);
    if (parsed.ok() && parsed->count() > 0) return *parsed;
  }
  return kDefaultTerminationDelay;
}

}  // namespace copse::grove::api
