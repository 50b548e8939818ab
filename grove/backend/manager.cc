#include "grove/backend/manager.h"

#include <nlohmann/json.hpp>
#include <set>

#include "grove/api/yaml.h"

namespace copse::grove::backend {

namespace {

using Json = nlohmann::json;

Error Invalid(std::string field, std::string message) {
  return MakeError(ErrorCode::kInvalid, field + ": " + message);
}

bool IsKnownBackend(std::string_view name) {
  return name == kKubeScheduler || name == kKaiScheduler || name == kCopseScheduler;
}

std::string Supported() {
  return "supported values: \"copse-scheduler\", \"kai-scheduler\", \"kube-scheduler\"";
}

// Configs of backends without options: an object with no fields.
Status ValidateEmptyConfig(const std::string& json, const std::string& field) {
  Json config = Json::parse(json, nullptr, false);
  if (!config.is_object()) return Invalid(field, "must be an object");
  for (auto it = config.begin(); it != config.end(); ++it) {
    return Invalid(field + "." + it.key(), "unknown field");
  }
  return Status::Ok();
}

}  // namespace

Result<KubeSchedulerConfig> ParseKubeSchedulerConfig(std::string_view text,
                                                     std::string_view field_view) {
  std::string field(field_view);
  Json config = Json::parse(text, nullptr, false);
  if (!config.is_object()) return Invalid(field, "must be an object");
  KubeSchedulerConfig out;
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (it.key() == "GangScheduling") {
      if (it->is_null()) continue;
      if (!it->is_boolean()) return Invalid(field + ".GangScheduling", "expected boolean");
      out.gang_scheduling = it->get<bool>();
    } else {
      return Invalid(field + "." + it.key(), "unknown field");
    }
  }
  return out;
}

Result<SchedulerConfiguration> ParseOperatorConfiguration(std::string_view text) {
  auto docs = api::YamlToJsonDocuments(text);
  if (!docs.ok()) return docs.error();
  SchedulerConfiguration out;
  if (docs->empty()) return out;
  Json root = Json::parse(docs->front(), nullptr, false);
  if (!root.is_object()) return Invalid("<root>", "expected an object");
  auto scheduler = root.find("scheduler");
  if (scheduler == root.end() || scheduler->is_null()) return out;
  if (!scheduler->is_object()) return Invalid("scheduler", "expected an object");
  for (auto it = scheduler->begin(); it != scheduler->end(); ++it) {
    if (it.key() != "profiles") return Invalid("scheduler." + it.key(), "unknown field");
  }
  auto profiles = scheduler->find("profiles");
  if (profiles == scheduler->end() || profiles->is_null()) return out;
  if (!profiles->is_array()) return Invalid("scheduler.profiles", "expected an array");
  out.profiles.emplace();
  for (size_t i = 0; i < profiles->size(); ++i) {
    const Json& p = (*profiles)[i];
    std::string field = "scheduler.profiles[" + std::to_string(i) + "]";
    if (!p.is_object()) return Invalid(field, "expected an object");
    SchedulerProfile profile;
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string& key = it.key();
      if (key == "name") {
        if (!it->is_string()) return Invalid(field + ".name", "expected string");
        profile.name = it->get<std::string>();
      } else if (key == "config") {
        if (it->is_null()) continue;
        if (!it->is_object()) return Invalid(field + ".config", "expected an object");
        profile.config = it->dump();
      } else if (key == "default") {
        if (!it->is_boolean()) return Invalid(field + ".default", "expected boolean");
        profile.is_default = it->get<bool>();
      } else {
        return Invalid(field + "." + key, "unknown field");
      }
    }
    out.profiles->push_back(std::move(profile));
  }
  if (Status s = ValidateSchedulerConfiguration(out); !s.ok()) return s.error();
  return out;
}

Status ValidateSchedulerConfiguration(const SchedulerConfiguration& config) {
  if (!config.profiles.has_value()) return Status::Ok();
  std::set<std::string> seen;
  int defaults = 0;
  for (size_t i = 0; i < config.profiles->size(); ++i) {
    const SchedulerProfile& p = (*config.profiles)[i];
    std::string field = "scheduler.profiles[" + std::to_string(i) + "]";
    if (p.name.empty()) return Invalid(field + ".name", "Required value");
    if (!IsKnownBackend(p.name)) {
      return Invalid(field + ".name", "Unsupported value: \"" + p.name + "\": " + Supported());
    }
    if (!seen.insert(p.name).second) {
      return Invalid(field + ".name", "Duplicate value: \"" + p.name + "\"");
    }
    if (p.is_default && ++defaults > 1) {
      return Invalid(field + ".default", "only one profile may be the default");
    }
    if (p.config.has_value()) {
      if (p.name == kKubeScheduler) {
        auto parsed = ParseKubeSchedulerConfig(*p.config, field + ".config");
        if (!parsed.ok()) return parsed.error();
      } else if (Status s = ValidateEmptyConfig(*p.config, field + ".config"); !s.ok()) {
        return s;
      }
    }
  }
  return Status::Ok();
}

SchedulerConfiguration CopseConfiguration() {
  SchedulerConfiguration config;
  config.profiles.emplace();
  SchedulerProfile copse;
  copse.name = std::string(kCopseScheduler);
  copse.is_default = true;
  config.profiles->push_back(copse);
  return config;
}

void Registry::Register(std::string name, BackendFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

const BackendFactory* Registry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : factories_) out.push_back(name);
  return out;
}

Result<std::unique_ptr<BackendManager>> BackendManager::Initialize(
    const SchedulerConfiguration& config, const BackendContext& context, const Registry& registry) {
  if (Status s = ValidateSchedulerConfiguration(config); !s.ok()) return s.error();
  std::vector<SchedulerProfile> profiles;
  if (config.profiles.has_value()) profiles = *config.profiles;
  bool has_kube = false;
  for (const auto& p : profiles) has_kube = has_kube || p.name == kKubeScheduler;
  if (!has_kube) {
    SchedulerProfile kube;
    kube.name = std::string(kKubeScheduler);
    profiles.push_back(kube);  // always enabled
  }
  auto manager = std::unique_ptr<BackendManager>(new BackendManager());
  for (const auto& p : profiles) {
    const BackendFactory* factory = registry.Find(p.name);
    if (factory == nullptr) {
      return MakeError(ErrorCode::kInvalid,
                       "scheduler backend \"" + p.name + "\" is not registered");
    }
    auto backend = (*factory)(p, context);
    if (!backend.ok()) return backend.error();
    if (Status s = (*backend)->Init(); !s.ok()) {
      return MakeError(s.error().code,
                       "initialising scheduler backend \"" + p.name + "\": " + s.error().message);
    }
    SchedulerBackend* raw = backend->get();
    manager->backends_[p.name] = std::move(backend).value();
    if (p.is_default) manager->default_ = raw;
  }
  if (manager->default_ == nullptr) manager->default_ = manager->Get(kKubeScheduler);
  return manager;
}

SchedulerBackend* BackendManager::Get(std::string_view name) const {
  auto it = backends_.find(name);
  return it == backends_.end() ? nullptr : it->second.get();
}

SchedulerBackend& BackendManager::GetDefault() const { return *default_; }

SchedulerBackend* BackendManager::ForSchedulerName(std::string_view scheduler_name) const {
  if (scheduler_name.empty()) return default_;
  for (const auto& [name, backend] : backends_) {
    if (backend->SchedulerName() == scheduler_name) return backend.get();
  }
  return nullptr;
}

api::ValidationContext BackendManager::ValidationContext() const {
  api::ValidationContext v;
  v.default_scheduler_name = std::string(default_->SchedulerName());
  v.scheduler_enabled = [this](std::string_view name) { return ForSchedulerName(name) != nullptr; };
  return v;
}

std::vector<std::string> BackendManager::Enabled() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : backends_) out.push_back(name);
  return out;
}

}  // namespace copse::grove::backend
