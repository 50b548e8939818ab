#include "grove/backend/copse/backend.h"

#include <nlohmann/json.hpp>

#include "grove/api/names.h"
#include "grove/backend/common.h"
#include "kube/controller/sync.h"

namespace copse::grove::backend {

namespace {

using Json = nlohmann::json;

const kube::ResourceRef kCopsePodGroups{"scheduling.copse.dev", "v1alpha1", "podgroups", true};
const kube::ResourceRef kCopseTopologies{"scheduling.copse.dev", "v1alpha1", "topologies", false};
constexpr std::string_view kPodGroupLabel = "scheduling.copse.dev/pod-group";
constexpr std::string_view kCopseSubGroupLabel = "scheduling.copse.dev/subgroup";

Json CopseTopologyConstraint(const api::GangTopologyConstraint* tc, const std::string& topology) {
  if (tc == nullptr || !tc->pack_constraint.has_value()) return nullptr;
  const auto& pack = *tc->pack_constraint;
  if (!pack.required.has_value() && !pack.preferred.has_value()) return nullptr;
  Json out = Json::object();
  if (!topology.empty()) out["topology"] = topology;
  if (pack.required.has_value()) out["requiredTopologyLevel"] = *pack.required;
  if (pack.preferred.has_value()) out["preferredTopologyLevel"] = *pack.preferred;
  return out;
}

class CopseBackend final : public SchedulerBackend {
 public:
  explicit CopseBackend(BackendContext context) : context_(std::move(context)) {}

  std::string_view Name() const override { return kCopseScheduler; }
  std::string_view SchedulerName() const override { return kCopseScheduler; }
  Status Init() override { return Status::Ok(); }

  Status SyncPodGang(const api::PodGang& gang) override {
    std::string topology;
    if (HasTopologyConstraints(gang)) {
      topology = TopologyReference(context_, kCopseScheduler, gang);
      if (Status s = EnsureTopology(gang, topology); !s.ok()) return s;
    }
    Json desired = Json::parse(CopsePodGroupFor(gang, topology));
    return ApplyObject(context_, kCopsePodGroups, desired);
  }

  Status OnPodGangDelete(const api::PodGang& gang) override {
    // Owner references let the garbage collector do it; deleting here too
    // keeps a backend switch from leaving a stale gang behind.
    return DeleteObject(context_, kCopsePodGroups, gang.meta.namespace_, gang.meta.name);
  }

  Status PreparePod(Json& pod) const override {
    Json& labels = pod["metadata"]["labels"];
    std::string gang = labels.value(std::string(api::kLabelPodGang), "");
    std::string clique = labels.value(std::string(api::kLabelPodClique), "");
    if (gang.empty() || clique.empty()) {
      return MakeError(ErrorCode::kInvalid,
                       "copse-scheduler backend needs the grove.io/podgang and grove.io/podclique "
                       "labels on the pod");
    }
    pod["spec"]["schedulerName"] = std::string(kCopseScheduler);
    labels[std::string(kPodGroupLabel)] = gang;
    labels[std::string(kCopseSubGroupLabel)] = clique;
    return Status::Ok();
  }

  Result<Admission> ValidatePodCliqueSet(const api::PodCliqueSet&) const override {
    return Admission{};
  }

 private:
  // A copse Topology named `name` with the binding's levels, unless it exists.
  Status EnsureTopology(const api::PodGang& gang, const std::string& name) {
    if (name.empty() || !context_.topology) return Status::Ok();
    auto it = gang.meta.annotations.find(api::kAnnotationTopologyName);
    if (it == gang.meta.annotations.end()) return Status::Ok();
    auto binding = context_.topology(it->second);
    if (!binding.has_value()) return Status::Ok();
    Json levels = Json::array();
    for (const auto& level : binding->spec.levels) levels.push_back({{"nodeLabel", level.key}});
    Json topology = {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
                     {"kind", "Topology"},
                     {"metadata", {{"name", name}}},
                     {"spec", {{"levels", levels}}}};
    kube::Client& client = *context_.client;
    Result<std::string> created =
        kube::controller::Await(client, client.Create(kCopseTopologies, "", topology.dump()));
    if (created.ok() || created.error().code == ErrorCode::kAlreadyExists) return Status::Ok();
    return created.error();
  }

  BackendContext context_;
};

}  // namespace

std::string CopsePodGroupFor(const api::PodGang& gang, const std::string& topology) {
  GangTree tree = BuildGangTree(gang);
  Json labels = Json::object();
  for (const auto& [k, v] : gang.meta.labels) labels[k] = v;
  labels[std::string(api::kLabelPodGang)] = gang.meta.name;
  Json spec = {{"minMember", tree.min_member}, {"minSubGroup", tree.min_sub_group}};
  if (!gang.spec.priority_class_name.empty()) {
    spec["priorityClassName"] = gang.spec.priority_class_name;
  }
  if (gang.spec.topology_constraint.has_value()) {
    Json tc = CopseTopologyConstraint(&*gang.spec.topology_constraint, topology);
    if (!tc.is_null()) spec["topologyConstraint"] = tc;
  }
  Json sub_groups = Json::array();
  for (const auto& node : tree.nodes) {
    Json sg = {{"name", node.name}, {"minMember", node.min_member}};
    if (!node.parent.empty()) sg["parent"] = node.parent;
    if (node.min_sub_group.has_value()) sg["minSubGroup"] = *node.min_sub_group;
    Json tc = CopseTopologyConstraint(node.topology, topology);
    if (!tc.is_null()) sg["topologyConstraint"] = tc;
    sub_groups.push_back(std::move(sg));
  }
  spec["subGroups"] = std::move(sub_groups);
  Json pg = {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
             {"kind", "PodGroup"},
             {"metadata",
              {{"name", gang.meta.name},
               {"namespace", gang.meta.namespace_},
               {"labels", labels},
               {"ownerReferences", Json::array({GangOwnerReference(gang)})}}},
             {"spec", spec}};
  return pg.dump();
}

Result<std::unique_ptr<SchedulerBackend>> NewCopseBackend(const SchedulerProfile&,
                                                          const BackendContext& context) {
  return std::unique_ptr<SchedulerBackend>(std::make_unique<CopseBackend>(context));
}

}  // namespace copse::grove::backend
