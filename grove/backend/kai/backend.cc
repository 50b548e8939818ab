#include "grove/backend/kai/backend.h"

#include <nlohmann/json.hpp>
#include <set>

#include "grove/api/names.h"
#include "grove/backend/common.h"

namespace copse::grove::backend {

namespace {

using Json = nlohmann::json;

const kube::ResourceRef kKaiPodGroups{"scheduling.run.ai", "v2alpha2", "podgroups", true};
constexpr std::string_view kQueueKey = "kai.scheduler/queue";
constexpr std::string_view kSkipPodGrouper = "kai.scheduler/skip-podgrouper";
constexpr std::string_view kPodGroupAnnotation = "pod-group-name";
constexpr std::string_view kKaiSubGroupLabel = "kai.scheduler/subgroup-name";

Json KaiTopologyConstraint(const api::GangTopologyConstraint* tc, const std::string& topology) {
  if (tc == nullptr || !tc->pack_constraint.has_value()) return nullptr;
  const auto& pack = *tc->pack_constraint;
  if (!pack.required.has_value() && !pack.preferred.has_value()) return nullptr;
  Json out = {{"topology", topology}};
  if (pack.required.has_value()) out["requiredTopologyLevel"] = *pack.required;
  if (pack.preferred.has_value()) out["preferredTopologyLevel"] = *pack.preferred;
  return out;
}

std::string QueueOf(const Labels& labels, const Labels& annotations) {
  if (auto it = labels.find(kQueueKey); it != labels.end() && !it->second.empty())
    return it->second;
  if (auto it = annotations.find(kQueueKey); it != annotations.end()) return it->second;
  return {};
}

class KaiBackend final : public SchedulerBackend {
 public:
  explicit KaiBackend(BackendContext context) : context_(std::move(context)) {}

  std::string_view Name() const override { return kKaiScheduler; }
  std::string_view SchedulerName() const override { return kKaiScheduler; }
  Status Init() override { return Status::Ok(); }

  Status SyncPodGang(const api::PodGang& gang) override {
    std::string topology;
    if (HasTopologyConstraints(gang)) topology = TopologyReference(context_, kKaiScheduler, gang);
    Json desired = Json::parse(KaiPodGroupFor(gang, topology));
    return ApplyObject(context_, kKaiPodGroups, desired);
  }

  Status OnPodGangDelete(const api::PodGang& gang) override {
    return DeleteObject(context_, kKaiPodGroups, gang.meta.namespace_, gang.meta.name);
  }

  Status PreparePod(Json& pod) const override {
    Json& labels = pod["metadata"]["labels"];
    std::string gang = labels.value(std::string(api::kLabelPodGang), "");
    std::string clique = labels.value(std::string(api::kLabelPodClique), "");
    if (gang.empty() || clique.empty()) {
      return MakeError(
          ErrorCode::kInvalid,
          "KAI scheduler requires the grove.io/podgang and grove.io/podclique pod labels");
    }
    pod["spec"]["schedulerName"] = std::string(kKaiScheduler);
    Json& annotations = pod["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = Json::object();
    annotations[std::string(kSkipPodGrouper)] = "true";
    annotations[std::string(kPodGroupAnnotation)] = gang;
    labels[std::string(kKaiSubGroupLabel)] = clique;
    return Status::Ok();
  }

  Result<Admission> ValidatePodCliqueSet(const api::PodCliqueSet& pcs) const override {
    std::string queue = QueueOf(pcs.meta.labels, pcs.meta.annotations);
    std::set<std::string> clique_queues;
    for (const auto& clique : pcs.spec.template_.cliques) {
      std::string q = QueueOf(clique.labels, clique.annotations);
      if (!q.empty()) clique_queues.insert(q);
    }
    if (!queue.empty()) {
      for (const auto& q : clique_queues) {
        if (q != queue) {
          return MakeError(ErrorCode::kInvalid,
                           "metadata.labels[kai.scheduler/queue]: KAI queue on PodCliqueSet is \"" +
                               queue + "\" but a PodClique template resolves to \"" + q + "\"");
        }
      }
      return Admission{};
    }
    if (clique_queues.empty()) {
      return MakeError(ErrorCode::kInvalid,
                       "metadata.labels[kai.scheduler/queue]: Required value: no KAI queue is "
                       "configured on PodCliqueSet " +
                           pcs.meta.namespace_ + "/" + pcs.meta.name +
                           " or its PodClique templates");
    }
    if (clique_queues.size() > 1) {
      return MakeError(ErrorCode::kInvalid,
                       "spec.template.cliques: conflicting KAI queues on PodClique templates");
    }
    return Admission{};
  }

 private:
  BackendContext context_;
};

}  // namespace

std::string KaiPodGroupFor(const api::PodGang& gang, const std::string& topology) {
  GangTree tree = BuildGangTree(gang);
  Json labels = Json::object();
  for (const auto& [k, v] : gang.meta.labels) labels[k] = v;
  labels[std::string(api::kLabelPodGang)] = gang.meta.name;
  std::string queue = QueueOf(gang.meta.labels, gang.meta.annotations);
  Json spec = {{"minMember", tree.min_member}, {"minSubGroup", tree.min_sub_group}};
  if (!queue.empty()) spec["queue"] = queue;
  if (!gang.spec.priority_class_name.empty()) {
    spec["priorityClassName"] = gang.spec.priority_class_name;
  }
  if (gang.spec.topology_constraint.has_value()) {
    Json tc = KaiTopologyConstraint(&*gang.spec.topology_constraint, topology);
    if (!tc.is_null()) spec["topologyConstraint"] = tc;
  }
  Json sub_groups = Json::array();
  for (const auto& node : tree.nodes) {
    Json sg = {{"name", node.name}};
    if (node.min_sub_group.has_value()) {
      sg["minSubGroup"] = *node.min_sub_group;
    } else {
      sg["minMember"] = node.min_member;
    }
    if (!node.parent.empty()) sg["parent"] = node.parent;
    Json tc = KaiTopologyConstraint(node.topology, topology);
    if (!tc.is_null()) sg["topologyConstraint"] = tc;
    sub_groups.push_back(std::move(sg));
  }
  spec["subGroups"] = std::move(sub_groups);
  Json annotations = {{std::string(kSkipPodGrouper), "true"}};
  Json pg = {{"apiVersion", "scheduling.run.ai/v2alpha2"},
             {"kind", "PodGroup"},
             {"metadata",
              {{"name", gang.meta.name},
               {"namespace", gang.meta.namespace_},
               {"labels", labels},
               {"annotations", annotations},
               {"ownerReferences", Json::array({GangOwnerReference(gang)})}}},
             {"spec", spec}};
  return pg.dump();
}

Result<std::unique_ptr<SchedulerBackend>> NewKaiBackend(const SchedulerProfile&,
                                                        const BackendContext& context) {
  return std::unique_ptr<SchedulerBackend>(std::make_unique<KaiBackend>(context));
}

}  // namespace copse::grove::backend
