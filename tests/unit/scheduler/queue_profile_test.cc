// The queue's view of a profile comes from the profile's plugins: their
// EventsToRegister (kube-scheduler v1.32's for the in-tree plugins, checked
// here against kube's list), their PreEnqueue checks (SchedulingGates among
// them) and their QueueSort; a plugin that can reject pods without
// declaring events reacts to every event (kube's default).

#include "scheduler/queue_profile.h"

#include <gtest/gtest.h>

#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::scheduler {
namespace {

using plugins::testing::PodBuilder;

std::unique_ptr<plugins::Framework> Build(plugins::Registry& registry,
                                          const plugins::Profile& profile) {
  auto fw = plugins::Framework::Create(registry, profile);
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  return fw.ok() ? std::move(fw).value() : nullptr;
}

queue::PluginId Id(const plugins::Framework& fw, std::string_view name) {
  std::optional<plugins::PluginIndex> index = fw.FindPlugin(name);
  EXPECT_TRUE(index.has_value()) << name;
  return static_cast<queue::PluginId>(index.value_or(0));
}

TEST(QueueProfile, InTreePluginsDeclareKubesEvents) {
  plugins::Registry registry;
  ASSERT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  auto fw = Build(registry, plugins::DefaultProfile());
  ASSERT_NE(fw, nullptr);
  const queue::QueueProfile profile = BuildQueueProfile(*fw);
  const queue::QueueingHintRegistry& hints = profile.hints;
  struct Case {
    std::string_view plugin;
    ClusterEvent event;
    bool interested;
  };
  // kube-scheduler v1.32's EventsToRegister, event by event (and a few that
  // each plugin must not react to).
  const Case cases[] = {
      {"NodeName", {EventResource::kNode, kActionAdd}, true},
      {"NodeName", {EventResource::kNode, kActionUpdateNodeLabel}, true},
      {"NodeName", {EventResource::kNode, kActionDelete}, false},
      {"NodeUnschedulable", {EventResource::kNode, kActionUpdateNodeTaint}, true},
      {"NodeUnschedulable", {EventResource::kNode, kActionUpdateNodeLabel}, false},
      {"NodeUnschedulable", {EventResource::kUnscheduledPod, kActionUpdatePodToleration}, true},
      {"TaintToleration", {EventResource::kNode, kActionAdd}, true},
      {"TaintToleration", {EventResource::kAssignedPod, kActionDelete}, false},
      {"NodeAffinity", {EventResource::kNode, kActionUpdateNodeLabel}, true},
      {"NodeAffinity", {EventResource::kNode, kActionUpdateNodeAllocatable}, false},
      {"NodeAffinity", {EventResource::kUnscheduledPod, kActionUpdatePodLabel}, true},
      {"NodePorts", {EventResource::kAssignedPod, kActionDelete}, true},
      {"NodePorts", {EventResource::kAssignedPod, kActionAdd}, false},
      {"NodeResourcesFit", {EventResource::kAssignedPod, kActionUpdatePodScaleDown}, true},
      {"NodeResourcesFit", {EventResource::kNode, kActionUpdateNodeAllocatable}, true},
      {"NodeResourcesFit", {EventResource::kNode, kActionUpdateNodeAnnotation}, false},
      {"NodeResourcesFit", {EventResource::kUnscheduledPod, kActionUpdatePodScaleDown}, true},
      {"PodTopologySpread", {EventResource::kAssignedPod, kActionUpdatePodLabel}, true},
      {"PodTopologySpread", {EventResource::kNode, kActionDelete}, true},
      {"PodTopologySpread", {EventResource::kUnscheduledPod, kActionUpdatePodToleration}, false},
      {"InterPodAffinity", {EventResource::kNamespace, kActionUpdate}, true},
      {"InterPodAffinity", {EventResource::kNode, kActionUpdateNodeTaint}, false},
      {"SchedulingGates",
       {EventResource::kUnscheduledPod, kActionUpdatePodSchedulingGatesEliminated},
       true},
      // Plugins that never reject a pod register nothing.
      {"PrioritySort", {EventResource::kNode, kActionAll}, false},
      {"DefaultPreemption", {EventResource::kAssignedPod, kActionAll}, false},
      {"NodeResourcesBalancedAllocation", {EventResource::kNode, kActionAll}, false},
      {"DefaultBinder", {EventResource::kNode, kActionAll}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(hints.PluginInterestedIn(Id(*fw, c.plugin), c.event), c.interested)
        << c.plugin << " " << c.event.Label();
  }
  EXPECT_TRUE(profile.cross_topology_plugins.Has(Id(*fw, "PodTopologySpread")));
}

TEST(QueueProfile, GatesAreThePreEnqueuePlugins) {
  plugins::Registry registry;
  ASSERT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  auto fw = Build(registry, plugins::DefaultProfile());
  ASSERT_NE(fw, nullptr);
  const queue::QueueProfile profile = BuildQueueProfile(*fw);
  ASSERT_EQ(profile.pre_enqueue.size(), 1u);
  const queue::PreEnqueueGate& gate = profile.pre_enqueue.front();
  EXPECT_EQ(gate.name, "SchedulingGates");
  EXPECT_EQ(gate.plugin, Id(*fw, "SchedulingGates"));
  auto pod = PodBuilder("p").Obj();
  EXPECT_EQ(gate.fn(*pod), queue::GateDecision::kAdmit);
  pod->scheduling_gates = {"example.com/wait"};
  EXPECT_EQ(gate.fn(*pod), queue::GateDecision::kGate);
}

// Rejects everything and declares no events.
class Silent final : public plugins::FilterPlugin {
 public:
  std::string_view Name() const noexcept override { return "Silent"; }
  void Filter(const plugins::CycleContext&, std::span<const NodeIndex> nodes,
              std::span<plugins::Status> out) const noexcept override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = plugins::Status::Unschedulable(1);
  }
};

// Orders by name, descending.
class ReverseName final : public plugins::QueueSortPlugin {
 public:
  std::string_view Name() const noexcept override { return "ReverseName"; }
  bool Less(const plugins::QueuedPodView& a,
            const plugins::QueuedPodView& b) const noexcept override {
    return a.pod->name > b.pod->name;
  }
};

TEST(QueueProfile, APluginWithoutDeclaredEventsReactsToEveryEventAndQueueSortIsThePlugins) {
  plugins::Registry registry;
  ASSERT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  for (auto [name, factory] : std::vector<std::pair<std::string, plugins::PluginFactory>>{
           {"Silent",
            [](const plugins::PluginArgs*) -> Result<std::unique_ptr<plugins::Plugin>> {
              return std::unique_ptr<plugins::Plugin>(std::make_unique<Silent>());
            }},
           {"ReverseName",
            [](const plugins::PluginArgs*) -> Result<std::unique_ptr<plugins::Plugin>> {
              return std::unique_ptr<plugins::Plugin>(std::make_unique<ReverseName>());
            }}}) {
    ASSERT_TRUE(registry.Register(name, factory).ok());
  }
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"Silent", 0});
  profile.plugins.queue_sort.disabled = {"PrioritySort"};
  profile.plugins.multi_point.enabled.push_back({"ReverseName", 0});
  auto fw = Build(registry, profile);
  ASSERT_NE(fw, nullptr);
  const queue::QueueProfile queue_profile = BuildQueueProfile(*fw);
  for (const ClusterEvent& event : {ClusterEvent{EventResource::kNode, kActionUpdateNodeAnnotation},
                                    ClusterEvent{EventResource::kNamespace, kActionAdd},
                                    ClusterEvent{EventResource::kAssignedPod, kActionDelete}}) {
    EXPECT_TRUE(queue_profile.hints.PluginInterestedIn(Id(*fw, "Silent"), event)) << event.Label();
  }
  const queue::QueueLessFn less = QueueSortLess(*fw);
  auto a = PodBuilder("a").Priority(100).Obj();
  auto b = PodBuilder("b").Priority(0).Obj();
  const queue::QueuedUnitView va{queue::UnitKind::kPod, nullptr, a.get(), 100, {}};
  const queue::QueuedUnitView vb{queue::UnitKind::kPod, nullptr, b.get(), 0, {}};
  EXPECT_TRUE(less(vb, va)) << "by name, whatever the priority";
  EXPECT_FALSE(less(va, vb));
}

}  // namespace
}  // namespace copse::scheduler
