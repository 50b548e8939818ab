#pragma once
// OperatorConfiguration's `scheduler` block and the backend manager of
// GREP-375.
//
// Configuration (YAML or JSON, as in upstream's OperatorConfiguration):
//   scheduler:
//     profiles:
//     - name: kube-scheduler | kai-scheduler | copse-scheduler
//       config: {...}          # per-backend type; kube-scheduler: {GangScheduling: bool}
//       default: true
//
// Rules (spec 000):
//   - kube-scheduler is always enabled, whether or not a profile names it;
//   - other backends are enabled by naming them in a profile;
//   - the default backend is the profile with default: true; none marked:
//     kube-scheduler; two marked: the configuration is rejected;
//   - `scheduler` omitted or `profiles: []`: only kube-scheduler is active,
//     so only PodCliqueSets whose pods use schedulerName "" or
//     "default-scheduler" are admitted;
//   - a workload picks its backend by its pods' schedulerName; an empty
//     schedulerName means the default backend.
// copse ships with copse-scheduler as the default (CopseConfiguration()).
//
// Thread-safety: a BackendManager is immutable after Initialize.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "grove/api/validation.h"
#include "grove/backend/backend.h"

namespace copse::grove::backend {

struct SchedulerProfile {
  std::string name;
  std::optional<std::string> config;  // JSON object text; nullopt when absent
  bool is_default = false;            // "default"
};

struct SchedulerConfiguration {
  // nullopt: the `scheduler` block (or `profiles`) was omitted.
  std::optional<std::vector<SchedulerProfile>> profiles;
};

// kube-scheduler's per-backend configuration (KubeSchedulerConfig).
struct KubeSchedulerConfig {
  std::optional<bool> gang_scheduling;  // "GangScheduling"
};

// Parses an OperatorConfiguration document (YAML or JSON) and returns its
// `scheduler` block; other top-level fields are ignored. Errors are kInvalid
// and name the field ("scheduler.profiles[1].name: ...").
Result<SchedulerConfiguration> ParseOperatorConfiguration(std::string_view text);
// Checks names, duplicates, the single default and each profile's config type.
Status ValidateSchedulerConfiguration(const SchedulerConfiguration& config);
Result<KubeSchedulerConfig> ParseKubeSchedulerConfig(std::string_view json, std::string_view field);
// copse's shipped configuration: profiles [{name: copse-scheduler, default: true}].
SchedulerConfiguration CopseConfiguration();

using BackendFactory = std::function<Result<std::unique_ptr<SchedulerBackend>>(
    const SchedulerProfile& profile, const BackendContext& context)>;

// Name -> factory. Built-in backends are registered explicitly by
// RegisterBuiltinBackends (no static initialisers).
class Registry {
 public:
  void Register(std::string name, BackendFactory factory);
  const BackendFactory* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, BackendFactory, std::less<>> factories_;
};

// kube-scheduler, kai-scheduler, copse-scheduler.
void RegisterBuiltinBackends(Registry& registry);

class BackendManager {
 public:
  // Validates `config`, creates kube-scheduler plus every profile's backend
  // and calls Init() on each. Called once at operator start-up.
  static Result<std::unique_ptr<BackendManager>> Initialize(const SchedulerConfiguration& config,
                                                            const BackendContext& context,
                                                            const Registry& registry);

  // The enabled backend named `name`, or nullptr.
  SchedulerBackend* Get(std::string_view name) const;
  SchedulerBackend& GetDefault() const;
  // The backend for pods with `scheduler_name` ("" = the default backend), or
  // nullptr when no enabled backend answers to it.
  SchedulerBackend* ForSchedulerName(std::string_view scheduler_name) const;
  // Names of enabled backends, sorted.
  std::vector<std::string> Enabled() const;
  // Validation's view of the backends: the default's schedulerName and which
  // schedulerNames have an enabled backend (topology lookup left unset).
  api::ValidationContext ValidationContext() const;

 private:
  std::map<std::string, std::unique_ptr<SchedulerBackend>, std::less<>> backends_;
  SchedulerBackend* default_ = nullptr;
};

}  // namespace copse::grove::backend
