#include "grove/backend/kube/backend.h"

#include <nlohmann/json.hpp>

#include "grove/api/names.h"
#include "grove/backend/common.h"
#include "grove/backend/copse/backend.h"
#include "grove/backend/kai/backend.h"

namespace copse::grove::backend {

namespace {

using Json = nlohmann::json;

const kube::ResourceRef kWorkloads{"scheduling.k8s.io", "v1alpha2", "workloads", true};
const kube::ResourceRef kPodGroups{"scheduling.k8s.io", "v1alpha2", "podgroups", true};
constexpr std::string_view kTemplateName = "gang";

bool AnyRequired(const std::optional<api::TopologyConstraint>& tc) {
  return tc.has_value() && !tc->RequiredDomain().empty();
}
bool AnyPreferred(const std::optional<api::TopologyConstraint>& tc) {
  return tc.has_value() && !tc->PreferredDomain().empty();
}

class KubeBackend final : public SchedulerBackend {
 public:
  KubeBackend(BackendContext context, bool gang) : context_(std::move(context)), gang_(gang) {}

  std::string_view Name() const override { return kKubeScheduler; }
  std::string_view SchedulerName() const override { return kDefaultSchedulerName; }
  Status Init() override { return Status::Ok(); }

  Status SyncPodGang(const api::PodGang& gang) override {
    if (!gang_) return Status::Ok();
    GangTree tree = BuildGangTree(gang);
    Json labels = Json::object();
    for (const auto& [k, v] : gang.meta.labels) labels[k] = v;
    labels[std::string(api::kLabelPodGang)] = gang.meta.name;
    Json policy = {{"gang", {{"minCount", tree.min_member}}}};
    Json constraints = nullptr;
    if (gang.spec.topology_constraint && gang.spec.topology_constraint->pack_constraint &&
        gang.spec.topology_constraint->pack_constraint->required) {
      constraints = {
          {"topologyConstraints",
           Json::array(
               {{{"topologyKey", *gang.spec.topology_constraint->pack_constraint->required}}})}};
    }
    Json tmpl = {{"name", kTemplateName}, {"schedulingPolicy", policy}};
    if (!constraints.is_null()) tmpl["schedulingConstraints"] = constraints;
    if (!gang.spec.priority_class_name.empty())
      tmpl["priorityClassName"] = gang.spec.priority_class_name;
    Json meta = {{"name", gang.meta.name},
                 {"namespace", gang.meta.namespace_},
                 {"labels", labels},
                 {"ownerReferences", Json::array({GangOwnerReference(gang)})}};
    Json workload = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                     {"kind", "Workload"},
                     {"metadata", meta},
                     {"spec", {{"podGroupTemplates", Json::array({tmpl})}}}};
    if (Status s = ApplyObject(context_, kWorkloads, workload); !s.ok()) return s;
    Json pg_spec = {
        {"podGroupTemplateRef",
         {{"workload",
           {{"workloadName", gang.meta.name}, {"podGroupTemplateName", kTemplateName}}}}},
        {"schedulingPolicy", policy}};
    if (!constraints.is_null()) pg_spec["schedulingConstraints"] = constraints;
    if (!gang.spec.priority_class_name.empty()) {
      pg_spec["priorityClassName"] = gang.spec.priority_class_name;
    }
    Json pod_group = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                      {"kind", "PodGroup"},
                      {"metadata", meta},
                      {"spec", pg_spec}};
    return ApplyObject(context_, kPodGroups, pod_group);
  }

  Status OnPodGangDelete(const api::PodGang& gang) override {
    if (!gang_) return Status::Ok();
    if (Status s = DeleteObject(context_, kPodGroups, gang.meta.namespace_, gang.meta.name);
        !s.ok()) {
      return s;
    }
    return DeleteObject(context_, kWorkloads, gang.meta.namespace_, gang.meta.name);
  }

  Status PreparePod(Json& pod) const override {
    Json& spec = pod["spec"];
    if (!spec.contains("schedulerName") || spec["schedulerName"].get<std::string>().empty()) {
      spec["schedulerName"] = std::string(kDefaultSchedulerName);
    }
    if (gang_) {
      std::string gang = pod["metadata"]["labels"].value(std::string(api::kLabelPodGang), "");
      if (gang.empty()) {
        return MakeError(ErrorCode::kInvalid,
                         "kube-scheduler backend needs the grove.io/podgang label");
      }
      spec["schedulingGroup"] = {{"podGroupName", gang}};
    }
    return Status::Ok();
  }

  Result<Admission> ValidatePodCliqueSet(const api::PodCliqueSet& pcs) const override {
    Admission admission;
    const auto& t = pcs.spec.template_;
    bool required = AnyRequired(t.topology_constraint);
    bool preferred = AnyPreferred(t.topology_constraint);
    bool nested = false;
    for (const auto& c : t.cliques) nested = nested || c.topology_constraint.has_value();
    for (const auto& g : t.scaling_groups) nested = nested || g.topology_constraint.has_value();
    if (!gang_) {
      bool any_required = required;
      for (const auto& c : t.cliques)
        any_required = any_required || AnyRequired(c.topology_constraint);
      for (const auto& g : t.scaling_groups) {
        any_required = any_required || AnyRequired(g.topology_constraint);
      }
      if (any_required) {
        return MakeError(ErrorCode::kInvalid,
                         "spec.template.topologyConstraint: Forbidden: the kube-scheduler backend "
                         "cannot honour required topology packing without GangScheduling");
      }
      admission.ignored.push_back(
          "GangScheduling requested but not supported by this backend: workload scheduled "
          "without gang guarantees");
    }
    if (preferred) {
      admission.ignored.push_back(
          "preferred topology packing is not supported by the kube-scheduler backend");
    }
    if (nested) {
      admission.ignored.push_back(
          "PodClique and PodCliqueScalingGroup topology constraints are not supported by the "
          "kube-scheduler backend");
    }
    return admission;
  }

 private:
  BackendContext context_;
  bool gang_;
};

}  // namespace

Result<std::unique_ptr<SchedulerBackend>> NewKubeBackend(const SchedulerProfile& profile,
                                                         const BackendContext& context) {
  bool gang = false;
  if (profile.config.has_value()) {
    auto config = ParseKubeSchedulerConfig(*profile.config, "config");
    if (!config.ok()) return config.error();
    gang = config->gang_scheduling.value_or(false);
  }
  return std::unique_ptr<SchedulerBackend>(std::make_unique<KubeBackend>(context, gang));
}

void RegisterBuiltinBackends(Registry& registry) {
  registry.Register(std::string(kKubeScheduler), NewKubeBackend);
  registry.Register(std::string(kKaiScheduler), NewKaiBackend);
  registry.Register(std::string(kCopseScheduler), NewCopseBackend);
}

}  // namespace copse::grove::backend
