// Topology-aware gang scheduling end to end against the embedded API server
// with copse's CRDs (scheduling.copse.dev PodGroup and Topology): random
// gangs with required rack packing on a zone/block/rack topology, spec 002's
// elastic replicas (minSubGroup) with per-subgroup status, validation errors
// that name the field on the pods and as Warning events on the PodGroup, and
// a group waiting for its Topology to exist.

#include "kube/topology.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "kube/pod_group.h"
#include "kube/yaml.h"
#include "scheduler/cache.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace topology_test {

using kube::resources::kCopsePodGroups;
using kube::resources::kNodes;
using kube::resources::kPods;

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kBlock = "copse.dev/block";
constexpr const char* kRack = "copse.dev/rack";

std::string TopologyJson(const std::string& name) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"Topology","metadata":{"name":")" +
         name + R"("},"spec":{"levels":[{"nodeLabel":")" + kZone + R"("},{"nodeLabel":")" + kBlock +
         R"("},{"nodeLabel":")" + kRack + R"("}]}})";
}

std::string GroupJson(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":)" + spec + "}";
}

PodSpecOptions Member(const std::string& group, const std::string& name, const std::string& cpu,
                      const std::string& sub_group = "") {
  PodSpecOptions p;
  p.name = name;
  p.cpu = cpu;
  p.memory = "64Mi";
  p.labels["gang"] = group;
  p.labels["scheduling.copse.dev/pod-group"] = group;
  if (!sub_group.empty()) p.labels["scheduling.copse.dev/subgroup"] = sub_group;
  return p;
}

// zones x blocks x racks x nodes, `cpu` each; labels as `copse local --topology`.
void AddTopologyNodes(Cluster& cluster, int zones, int blocks, int racks, int nodes,
                      const std::string& cpu) {
  for (int z = 1; z <= zones; ++z) {
    for (int b = 1; b <= blocks; ++b) {
      for (int r = 1; r <= racks; ++r) {
        for (int n = 1; n <= nodes; ++n) {
          const std::string zb = std::to_string(z) + "-" + std::to_string(b);
          const std::string zbr = zb + "-" + std::to_string(r);
          NodeSpec node;
          node.name = "n-" + zbr + "-" + std::to_string(n);
          node.cpu = cpu;
          node.labels = {{kZone, "zone-" + std::to_string(z)},
                         {kBlock, "block-" + zb},
                         {kRack, "rack-" + zbr}};
          cluster.Create(kNodes, "", NodeJson(node));
        }
      }
    }
  }
}

std::optional<kube::CopsePodGroup> GetGroup(Cluster& cluster, const std::string& name) {
  auto got = cluster.store().Get(kCopsePodGroups, "default", name);
  if (!got.ok()) return std::nullopt;
  auto group = kube::CopsePodGroup::Decode((*got)->json);
  if (!group.ok()) return std::nullopt;
  return std::move(group).value();
}

const kube::Condition* Scheduled(const kube::CopsePodGroup& group) {
  return kube::FindCondition(group.status.conditions, kube::kPodGroupScheduled);
}

struct Bound {
  int count = 0;
  std::set<std::string> racks;
  std::map<std::string, int> by_sub_group;
};

std::map<std::string, Bound> BoundPerGang(Cluster& cluster) {
  std::map<std::string, std::string> rack_of;
  for (const kube::Node& node : cluster.Nodes()) {
    auto it = node.meta.labels.find(kRack);
    if (it != node.meta.labels.end()) rack_of[node.meta.name] = it->second;
  }
  std::map<std::string, Bound> out;
  for (const kube::Pod& pod : cluster.Pods()) {
    auto g = pod.meta.labels.find("gang");
    if (g == pod.meta.labels.end() || pod.spec.node_name.empty() ||
        pod.meta.deletion_timestamp.has_value()) {
      continue;
    }
    Bound& b = out[g->second];
    ++b.count;
    b.racks.insert(rack_of[pod.spec.node_name]);
    auto sg = pod.meta.labels.find("scheduling.copse.dev/subgroup");
    if (sg != pod.meta.labels.end()) ++b.by_sub_group[sg->second];
  }
  return out;
}

// Events recorded about the object `kind`/`name`: reason -> messages.
std::multimap<std::string, std::string> EventsAbout(Cluster& cluster, const std::string& kind,
                                                    const std::string& name) {
  std::multimap<std::string, std::string> out;
  auto list = cluster.store().List(kube::resources::kEvents, {});
  if (!list.ok()) return out;
  for (const auto& item : list->items) {
    nlohmann::json event = nlohmann::json::parse(item->json, nullptr, false);
    if (event.is_discarded()) continue;
    const nlohmann::json& involved = event.value("involvedObject", nlohmann::json::object());
    if (involved.value("kind", "") != kind || involved.value("name", "") != name) continue;
    if (kind == "PodGroup" && involved.value("apiVersion", "") != "scheduling.copse.dev/v1alpha1") {
      continue;
    }
    out.emplace(event.value("reason", ""), event.value("message", ""));
  }
  return out;
}

std::multimap<std::string, std::string> GroupEvents(Cluster& cluster, const std::string& name) {
  return EventsAbout(cluster, "PodGroup", name);
}

// Whether pod `name` got a FailedScheduling event containing `text`. (Events
// are appended; the PodScheduled condition is overwritten by asynchronous
// patches that may land out of order, so the events are what a test can
// rely on for the history of messages.)
bool FailedSchedulingSays(Cluster& cluster, const std::string& name, const std::string& text) {
  auto events = EventsAbout(cluster, "Pod", name);
  auto [begin, end] = events.equal_range("FailedScheduling");
  for (auto it = begin; it != end; ++it) {
    if (it->second.find(text) != std::string::npos) return true;
  }
  return false;
}

// (a) Random gangs, each required in one rack, on 2 zones x 2 blocks x 4
// racks x 4 nodes of 4 cpu (16 cpu per rack, 256 in all, for ~500 asked):
// every bound gang is whole and in one rack, the rest wait with 0 bound,
// gangs larger than a rack never bind, and the invariants hold.
TEST(TopologyIntegration, RandomGangsPackIntoOneRack) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  cluster.Create(kube::resources::kTopologies, "", TopologyJson("dc"));
  AddTopologyNodes(cluster, 2, 2, 4, 4, "4");
  cluster.StartScheduler();
  std::mt19937 rng(17);
  std::map<std::string, int> size_of;
  std::map<std::string, int> cpu_of;
  for (int g = 0; g < 60; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    const int size = 2 + static_cast<int>(rng() % 9);
    const int cpu = 1 + static_cast<int>(rng() % 2);
    size_of[name] = size;
    cpu_of[name] = cpu;
    cluster.Create(
        kCopsePodGroups, "default",
        GroupJson(
            name,
            R"({"minMember":)" + std::to_string(size) +
                R"(,"topologyConstraint":{"topology":"dc","requiredTopologyLevel":"rack"}})"));
    for (int i = 0; i < size; ++i) {
      cluster.Create(kPods, "default",
                     PodJson(Member(name, name + "-" + std::to_string(i), std::to_string(cpu))));
    }
  }
  // Quiescent: nothing assumed, and every group's condition agrees with its
  // bound members (True exactly when the gang is whole).
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (cluster.scheduler()->stats().assumed_pods != 0) return false;
        const auto bound = BoundPerGang(cluster);
        for (const auto& [name, size] : size_of) {
          auto group = GetGroup(cluster, name);
          const kube::Condition* c = group ? Scheduled(*group) : nullptr;
          const int n = bound.contains(name) ? bound.at(name).count : 0;
          if (c == nullptr || (c->status == "True") != (n >= size)) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
  const auto bound = BoundPerGang(cluster);
  int placed = 0;
  int waiting = 0;
  for (const auto& [name, size] : size_of) {
    const int n = bound.contains(name) ? bound.at(name).count : 0;
    auto group = GetGroup(cluster, name);
    ASSERT_TRUE(group.has_value());
    if (n == 0) {
      ++waiting;
      EXPECT_EQ(Scheduled(*group)->status, "False") << name;
      EXPECT_NE(Scheduled(*group)->message.find("best rack"), std::string::npos)
          << name << ": " << Scheduled(*group)->message;
      continue;
    }
    ++placed;
    EXPECT_EQ(n, size) << name << " is all-or-nothing";
    EXPECT_EQ(bound.at(name).racks.size(), 1u) << name << " spans racks";
    EXPECT_LE(size * cpu_of[name], 16) << name << " is larger than a rack yet bound";
    EXPECT_EQ(group->status.scheduled, n) << name;
    // Running once the node simulator has made the members Ready.
    EXPECT_TRUE(group->status.phase == "Scheduled" || group->status.phase == "Running")
        << name << ": " << group->status.phase;
  }
  EXPECT_GT(placed, 10);
  EXPECT_GT(waiting, 0);
}

// (c) Spec 002: 4 prefill replicas x 8 pods, minSubGroup 3, each replica in
// one rack, room for 3 (three racks of 8 cpu): 24 bound, the fourth replica
// pending, per-subgroup counts in the status.
TEST(TopologyIntegration, ElasticReplicasBindTheMinimumAndReportPerSubGroup) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  cluster.Create(kube::resources::kTopologies, "", TopologyJson("dc"));
  AddTopologyNodes(cluster, 1, 1, 3, 2, "4");
  cluster.StartScheduler();
  std::string sub_groups;
  for (int r = 0; r < 4; ++r) {
    sub_groups += std::string(r > 0 ? "," : "") + R"({"name":"prefill-)" + std::to_string(r) +
                  R"(","minMember":8,"topologyConstraint":{"requiredTopologyLevel":"rack"}})";
  }
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "prefill",
          R"({"minMember":24,"minSubGroup":3,"topologyConstraint":{"topology":"dc"},"subGroups":[)" +
              sub_groups + "]}"));
  for (int r = 0; r < 4; ++r) {
    const std::string sg = "prefill-" + std::to_string(r);
    for (int i = 0; i < 8; ++i) {
      cluster.Create(kPods, "default",
                     PodJson(Member("prefill", sg + "-" + std::to_string(i), "1", sg)));
    }
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto group = GetGroup(cluster, "prefill");
    return group && Scheduled(*group) && Scheduled(*group)->status == "True" &&
           group->status.scheduled == 24 && group->status.sub_groups.size() == 4 &&
           group->status.sub_groups[2].scheduled == 8;
  }));
  const auto bound = BoundPerGang(cluster);
  ASSERT_TRUE(bound.contains("prefill"));
  EXPECT_EQ(bound.at("prefill").count, 24);
  EXPECT_EQ(bound.at("prefill").by_sub_group,
            (std::map<std::string, int>{{"prefill-0", 8}, {"prefill-1", 8}, {"prefill-2", 8}}));
  auto group = GetGroup(cluster, "prefill");
  ASSERT_TRUE(group.has_value());
  EXPECT_TRUE(group->status.phase == "Scheduled" || group->status.phase == "Running")
      << group->status.phase;
  ASSERT_EQ(group->status.sub_groups.size(), 4u);
  EXPECT_EQ(group->status.sub_groups[0].name, "prefill-0");
  EXPECT_EQ(group->status.sub_groups[0].scheduled, 8);
  EXPECT_EQ(group->status.sub_groups[3].name, "prefill-3");
  EXPECT_EQ(group->status.sub_groups[3].scheduled, 0);
  // The optional replica's pods wait, saying why.
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "prefill-3-0");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->status == "False";
  }));
  auto pod = cluster.GetPod("default", "prefill-3-0");
  EXPECT_TRUE(pod->spec.node_name.empty());
  EXPECT_NE(PodScheduledCondition(*pod)->message.find("prefill-3"), std::string::npos)
      << PodScheduledCondition(*pod)->message;
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

// The optional replica's pods arrive after the minimum was bound: they are
// placed when they are all there, in one rack of the gang's block.
TEST(TopologyIntegration, LateOptionalReplicaJoinsTheGang) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  cluster.Create(kube::resources::kTopologies, "", TopologyJson("dc"));
  AddTopologyNodes(cluster, 1, 2, 2, 2, "8");  // 2 blocks x 2 racks x 16 cpu
  cluster.StartScheduler();
  std::string sub_groups;
  for (int r = 0; r < 4; ++r) {
    sub_groups += std::string(r > 0 ? "," : "") + R"({"name":"prefill-)" + std::to_string(r) +
                  R"(","minMember":8,"topologyConstraint":{"requiredTopologyLevel":"rack"}})";
  }
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "late",
          R"({"minMember":24,"minSubGroup":3,"topologyConstraint":{"topology":"dc","requiredTopologyLevel":"block"},"subGroups":[)" +
              sub_groups + "]}"));
  auto add_replica = [&](int r) {
    const std::string sg = "prefill-" + std::to_string(r);
    for (int i = 0; i < 8; ++i) {
      cluster.Create(kPods, "default",
                     PodJson(Member("late", "late-" + sg + "-" + std::to_string(i), "1", sg)));
    }
  };
  for (int r = 0; r < 3; ++r) add_replica(r);
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGang(cluster)["late"].count == 24; }));
  add_replica(3);
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGang(cluster)["late"].count == 32; }));
  const Bound bound = BoundPerGang(cluster)["late"];
  EXPECT_EQ(bound.by_sub_group.at("prefill-3"), 8);
  std::set<std::string> blocks;
  for (const std::string& rack : bound.racks) blocks.insert(rack.substr(0, rack.rfind('-')));
  EXPECT_EQ(blocks.size(), 1u) << "the whole gang stays in one block";

  // The same shape created all at once: the group is ready at 24 observed
  // pods, so its first cycle may see only part of the fourth replica, which
  // then waits for its members (retried after backoff) and joins.
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "eager",
          R"({"minMember":24,"minSubGroup":3,"topologyConstraint":{"topology":"dc","requiredTopologyLevel":"block"},"subGroups":[)" +
              sub_groups + "]}"));
  for (int r = 0; r < 4; ++r) {
    const std::string sg = "prefill-" + std::to_string(r);
    for (int i = 0; i < 8; ++i) {
      cluster.Create(kPods, "default",
                     PodJson(Member("eager", "eager-" + sg + "-" + std::to_string(i), "1", sg)));
    }
  }
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGang(cluster)["eager"].count == 32; }))
      << BoundPerGang(cluster)["eager"].count << " bound";
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

// (d) A PodGroup that fails spec 002's rules: members get PodScheduled=False
// naming the field, the PodGroup a Warning event; nothing binds. The store
// checks only the CRD's schema here, as a kube-apiserver does (copse's own
// API server refuses such a group at create).
TEST(TopologyIntegration, ValidationErrorsNameTheField) {
  api::StoreOptions schema_only;
  schema_only.gang_rules = false;
  Cluster cluster({}, true, schema_only);
  InstallCopseCrds(cluster);
  AddTopologyNodes(cluster, 1, 1, 1, 2, "8");
  cluster.StartScheduler();
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "bad",
          R"({"minMember":2,"minSubGroup":3,"subGroups":[{"name":"a","minMember":1},{"name":"b","minMember":1}]})"));
  cluster.Create(kPods, "default", PodJson(Member("bad", "bad-a", "1", "a")));
  cluster.Create(kPods, "default", PodJson(Member("bad", "bad-b", "1", "b")));
  const std::string why =
      "scheduling.copse.dev/v1alpha1 PodGroup default/bad is invalid: spec.minSubGroup: Invalid "
      "value: 3: must be <= 2 (the number of direct child subgroups)";
  ASSERT_TRUE(WaitUntil([&] {
    return FailedSchedulingSays(cluster, "bad-a", why) &&
           FailedSchedulingSays(cluster, "bad-b", why);
  }));
  auto pod = cluster.GetPod("default", "bad-a");
  ASSERT_NE(PodScheduledCondition(*pod), nullptr);
  EXPECT_EQ(PodScheduledCondition(*pod)->status, "False");
  ASSERT_TRUE(WaitUntil([&] {
    auto events = GroupEvents(cluster, "bad");
    auto it = events.find("InvalidSpec");
    return it != events.end() && it->second.find("spec.minSubGroup") != std::string::npos;
  }));
  EXPECT_TRUE(cluster.GetPod("default", "bad-b")->spec.node_name.empty());

  // A minMember above what the subgroups hold (spec 002: the sum of their
  // minMember) would wait forever: InvalidSpec, naming the field.
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "big",
          R"({"minMember":3,"subGroups":[{"name":"a","minMember":1},{"name":"b","minMember":1}]})"));
  for (const char* sg : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) {
      cluster.Create(
          kPods, "default",
          PodJson(Member("big", "big-" + std::string(sg) + "-" + std::to_string(i), "1", sg)));
    }
  }
  const std::string too_big =
      "scheduling.copse.dev/v1alpha1 PodGroup default/big is invalid: spec.minMember: Invalid "
      "value: 3: must be <= 2 (the pods its 2 subgroups hold: the sum of their minMember)";
  ASSERT_TRUE(WaitUntil([&] { return FailedSchedulingSays(cluster, "big-a-0", too_big); }));
  ASSERT_TRUE(WaitUntil([&] {
    auto events = GroupEvents(cluster, "big");
    auto it = events.find("InvalidSpec");
    return it != events.end() && it->second.find("spec.minMember") != std::string::npos;
  }));
  EXPECT_EQ(BoundPerGang(cluster)["big"].count, 0);
}

// An unknown Topology is reported on the members (naming the field) until the
// Topology is created; then the gang schedules into one rack. A consistency
// warning (spec 002) is a Warning event, not an error.
TEST(TopologyIntegration, GroupWaitsForItsTopologyAndWarnsAboutConsistency) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  AddTopologyNodes(cluster, 1, 1, 2, 2, "4");
  cluster.StartScheduler();
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "later",
          R"({"minMember":4,"topologyConstraint":{"topology":"dc2","requiredTopologyLevel":"rack"}})"));
  for (int i = 0; i < 4; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("later", "later-" + std::to_string(i), "1")));
  }
  const std::string why = "spec.topologyConstraint.topology: Not found: \"dc2\"";
  ASSERT_TRUE(WaitUntil([&] {
    auto group = GetGroup(cluster, "later");
    const kube::Condition* c = group ? Scheduled(*group) : nullptr;
    return c != nullptr && c->status == "False" && c->message.find(why) != std::string::npos &&
           FailedSchedulingSays(cluster, "later-0", why);
  }));
  EXPECT_EQ(BoundPerGang(cluster)["later"].count, 0);
  ASSERT_TRUE(WaitUntil([&] {
    auto events = GroupEvents(cluster, "later");
    return events.count("InvalidSpec") > 0;
  }));
  cluster.Create(kube::resources::kTopologies, "", TopologyJson("dc2"));
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGang(cluster)["later"].count == 4; }));
  EXPECT_EQ(BoundPerGang(cluster)["later"].racks.size(), 1u);

  // minMember 6 is more than the 4 its two required subgroups need (of
  // three, which hold 6): legal (spare pods make it up), with a Warning event.
  cluster.Create(
      kCopsePodGroups, "default",
      GroupJson(
          "odd",
          R"({"minMember":6,"minSubGroup":2,"subGroups":[{"name":"x","minMember":2},{"name":"y","minMember":2},{"name":"z","minMember":2}]})"));
  for (int i = 0; i < 3; ++i) {
    cluster.Create(kPods, "default",
                   PodJson(Member("odd", "odd-x-" + std::to_string(i), "500m", "x")));
    cluster.Create(kPods, "default",
                   PodJson(Member("odd", "odd-y-" + std::to_string(i), "500m", "y")));
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto events = GroupEvents(cluster, "odd");
    auto it = events.find("InconsistentSpec");
    return it != events.end() &&
           it->second.find("spec.minMember: 6 is more than the 4 pods") != std::string::npos;
  }));
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGang(cluster)["odd"].count == 6; }));
}

}  // namespace topology_test
}  // namespace copse::scheduler::testing
