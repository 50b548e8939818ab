// The framework is the one path (issue 18.3), proven in the running scheduler
// against the embedded API server with out-of-tree plugins: the queue orders
// with the profile's QueueSort, PreEnqueue plugins gate pods and gang
// members, Bind plugins bind and PostBind runs after, the binding cycle sees
// the scheduling cycle's CycleState, PostFilter gets the injected clock's
// time, and a plugin's EventsToRegister (with its hint) decides requeueing.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <set>

#include "kube/pod_group.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/plugin.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace framework_test {

using kube::resources::kNodes;
using kube::resources::kPods;
using plugins::PluginArgs;
using plugins::PluginFactory;

// What the plugins saw, written on the scheduling loop, read by the test.
class Record {
 public:
  void Add(std::string line) {
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> Lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

template <typename T, typename... Args>
std::pair<std::string, PluginFactory> Plugin(std::string name, Args... args) {
  return {std::move(name), [=](const PluginArgs*) -> Result<std::unique_ptr<plugins::Plugin>> {
            return std::unique_ptr<plugins::Plugin>(std::make_unique<T>(args...));
          }};
}

std::string Label(const PodInfo& pod, const std::string& key) {
  auto it = pod.labels.find(key);
  return it == pod.labels.end() ? std::string() : it->second;
}

void AddNode(Cluster& cluster, const std::string& name, const std::string& cpu = "16",
             std::map<std::string, std::string> labels = {}) {
  NodeSpec node;
  node.name = name;
  node.cpu = cpu;
  node.labels = std::move(labels);
  cluster.Create(kNodes, "", NodeJson(node));
}

PodSpecOptions SimplePod(const std::string& name, std::map<std::string, std::string> labels = {}) {
  PodSpecOptions p;
  p.name = name;
  p.labels = std::move(labels);
  return p;
}

bool Bound(Cluster& cluster, const std::string& name) {
  auto pod = cluster.GetPod("default", name);
  return pod.has_value() && !pod->spec.node_name.empty();
}

std::string PodGroupJson(const std::string& name, int min_count) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" +
         std::to_string(min_count) + "}}}}";
}

PodSpecOptions GroupMember(const std::string& group, const std::string& name,
                           std::map<std::string, std::string> labels = {}) {
  PodSpecOptions p = SimplePod(name, std::move(labels));
  p.extra_spec = R"(,"schedulingGroup":{"podGroupName":")" + group + "\"}";
  return p;
}

void SetLabel(Cluster& cluster, const kube::ResourceRef& resource, const std::string& ns,
              const std::string& name, const std::string& key, const std::string& value) {
  auto patched =
      cluster.store().Patch(resource, ns, name, api::PatchType::kMerge,
                            R"({"metadata":{"labels":{")" + key + R"(":")" + value + R"("}}})");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
}

// ---------------------------------------------------------------- QueueSort

// Pods in descending name order; Reserve records the order pods are placed in.
class NameSort final : public plugins::QueueSortPlugin, public plugins::ReservePlugin {
 public:
  explicit NameSort(Record* record) : record_(record) {}
  std::string_view Name() const noexcept override { return "NameSort"; }
  bool Less(const plugins::QueuedPodView& a,
            const plugins::QueuedPodView& b) const noexcept override {
    return a.pod->name > b.pod->name;
  }
  plugins::Status Reserve(plugins::CycleState&, const PodInfo& pod, std::string_view) override {
    record_->Add(pod.name);
    return plugins::Status::Success();
  }
  void Unreserve(plugins::CycleState&, const PodInfo&, std::string_view) noexcept override {}

 private:
  Record* record_;
};

TEST(FrameworkIntegration, TheProfilesQueueSortOrdersThePops) {
  Cluster cluster;
  AddNode(cluster, "n");
  // Queued together: the informer lists them before the first pop.
  std::vector<std::string> names;
  for (const char* name : {"p-3", "p-7", "p-0", "p-9", "p-5", "p-1"}) {
    cluster.Create(kPods, "default", PodJson(SimplePod(name)));
    names.push_back(name);
  }
  Record record;
  SchedulerOptions options;
  options.out_of_tree_plugins.push_back(Plugin<NameSort>("NameSort", &record));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.queue_sort.disabled = {"PrioritySort"};
  profile.plugins.multi_point.enabled.push_back({"NameSort", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);
  ASSERT_TRUE(WaitUntil([&] { return record.Lines().size() == names.size(); }));
  std::sort(names.begin(), names.end(), std::greater<>());
  EXPECT_EQ(record.Lines(), names) << "popped by NameSort, not by priority and arrival";
  ASSERT_TRUE(WaitUntil([&] {
    return std::all_of(names.begin(), names.end(),
                       [&](const auto& n) { return Bound(cluster, n); });
  }));
}

// ---------------------------------------------------------------- PreEnqueue

// Keeps pods labelled hold=true out of the queue (and out of their group).
class HoldGate final : public plugins::PreEnqueuePlugin {
 public:
  std::string_view Name() const noexcept override { return "HoldGate"; }
  plugins::Status PreEnqueue(const PodInfo& pod) const noexcept override {
    return Label(pod, "hold") == "true" ? plugins::Status::Unresolvable(1)
                                        : plugins::Status::Success();
  }
};

TEST(FrameworkIntegration, APreEnqueuePluginKeepsPodsAndGangMembersOut) {
  Cluster cluster;
  AddNode(cluster, "n");
  SchedulerOptions options;
  options.out_of_tree_plugins.push_back(Plugin<HoldGate>("HoldGate"));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"HoldGate", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);

  cluster.Create(kPods, "default", PodJson(SimplePod("held", {{"hold", "true"}})));
  cluster.Create(kPods, "default", PodJson(SimplePod("free")));
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "free"); }));
  ASSERT_TRUE(WaitUntil([&] { return cluster.scheduler()->stats().gated_units == 1; }));
  EXPECT_FALSE(Bound(cluster, "held"));
  EXPECT_EQ(cluster.scheduler()->stats().attempts, 1u) << "the held pod cost no cycle";
  SetLabel(cluster, kPods, "default", "held", "hold", "false");
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "held"); }));

  // A held member does not count towards its group's minimum: the other
  // member is told it waits for members, and nothing binds until the hold
  // is lifted.
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("g", 2));
  cluster.Create(kPods, "default", PodJson(GroupMember("g", "g-0", {{"hold", "true"}})));
  cluster.Create(kPods, "default", PodJson(GroupMember("g", "g-1")));
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "g-1");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->message.find("waiting for members") != std::string::npos;
  }));
  EXPECT_FALSE(Bound(cluster, "g-0"));
  EXPECT_FALSE(Bound(cluster, "g-1"));
  SetLabel(cluster, kPods, "default", "g-0", "hold", "false");
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "g-0") && Bound(cluster, "g-1"); }));
}

// ---------------------------------------------------------------- Bind, PostBind

// Binds through the runtime's client (refusing pods labelled bind=refuse).
class CountingBinder final : public plugins::BindPlugin {
 public:
  explicit CountingBinder(Record* record) : record_(record) {}
  std::string_view Name() const noexcept override { return "CountingBinder"; }
  plugins::Status Bind(plugins::CycleState&, const PodInfo& pod, std::string_view node,
                       plugins::BindingClient& client) override {
    if (Label(pod, "bind") == "refuse") return plugins::Status::Error(1);
    record_->Add(pod.name);
    client.PostBinding(pod, node);
    return plugins::Status::Success();
  }

 protected:
  std::string_view ReasonText(plugins::ReasonId) const noexcept override {
    return "this pod is not bound by CountingBinder";
  }

 private:
  Record* record_;
};

class BindLog final : public plugins::PostBindPlugin {
 public:
  explicit BindLog(Record* record) : record_(record) {}
  std::string_view Name() const noexcept override { return "BindLog"; }
  void PostBind(plugins::CycleState&, const PodInfo& pod, std::string_view node) noexcept override {
    record_->Add(pod.name + "->" + std::string(node));
  }

 private:
  Record* record_;
};

TEST(FrameworkIntegration, BindPluginsBindAndPostBindRunsAfter) {
  Cluster cluster;
  AddNode(cluster, "n-a", "4");
  AddNode(cluster, "n-b", "4");
  Record binds;
  Record post_binds;
  SchedulerOptions options;
  options.out_of_tree_plugins.push_back(Plugin<CountingBinder>("CountingBinder", &binds));
  options.out_of_tree_plugins.push_back(Plugin<BindLog>("BindLog", &post_binds));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.bind.disabled = {"DefaultBinder"};
  profile.plugins.multi_point.enabled.push_back({"CountingBinder", 0});
  profile.plugins.multi_point.enabled.push_back({"BindLog", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);

  std::set<std::string> names;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "b-" + std::to_string(i);
    cluster.Create(kPods, "default", PodJson(SimplePod(name)));
    names.insert(name);
  }
  cluster.Create(kPods, "default", PodJson(SimplePod("refused", {{"bind", "refuse"}})));
  ASSERT_TRUE(WaitUntil([&] { return post_binds.Lines().size() == names.size(); }));
  std::vector<std::string> bound_by_plugin = binds.Lines();
  EXPECT_EQ(std::set<std::string>(bound_by_plugin.begin(), bound_by_plugin.end()), names);
  EXPECT_EQ(bound_by_plugin.size(), names.size()) << "one binding request per pod";
  std::set<std::string> expected_post_binds;
  for (const std::string& name : names) {
    auto pod = cluster.GetPod("default", name);
    ASSERT_TRUE(pod.has_value());
    ASSERT_FALSE(pod->spec.node_name.empty()) << name;
    expected_post_binds.insert(name + "->" + pod->spec.node_name);
  }
  std::vector<std::string> post = post_binds.Lines();
  EXPECT_EQ(std::set<std::string>(post.begin(), post.end()), expected_post_binds)
      << "PostBind after each successful bind, with the node it landed on";

  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "refused");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->reason == "SchedulerError" &&
           c->message.find("running Bind plugin") != std::string::npos;
  }));
  EXPECT_FALSE(Bound(cluster, "refused"));
  for (const std::string& line : post_binds.Lines()) {
    EXPECT_EQ(line.find("refused"), std::string::npos) << "no PostBind without a bind";
  }
}

// ---------------------------------------------------------------- CycleState

struct ProbeState : plugins::ClonableState<ProbeState> {
  std::string marker;
};

// PreFilter writes a marker of the pod's class; the binding cycle reads it.
class StateProbe final : public plugins::PreFilterPlugin,
                         public plugins::ReservePlugin,
                         public plugins::PermitPlugin,
                         public plugins::PreBindPlugin {
 public:
  explicit StateProbe(Record* record) : record_(record) {}
  std::string_view Name() const noexcept override { return "StateProbe"; }
  plugins::Status PreFilter(const PodInfo& pod, const Snapshot&, plugins::CycleState& state,
                            plugins::PreFilterResult&) const override {
    state.Emplace<ProbeState>(PreFilterKey()).marker = Marker(pod);
    return plugins::Status::Success();
  }
  plugins::Status Reserve(plugins::CycleState& state, const PodInfo& pod,
                          std::string_view) override {
    Check("reserve", state, pod);
    return plugins::Status::Success();
  }
  void Unreserve(plugins::CycleState&, const PodInfo&, std::string_view) noexcept override {}
  plugins::PermitDecision Permit(plugins::CycleState& state, const PodInfo& pod,
                                 std::string_view) override {
    Check("permit", state, pod);
    return {};
  }
  plugins::Status PreBind(plugins::CycleState& state, const PodInfo& pod,
                          std::string_view) override {
    Check("prebind", state, pod);
    return plugins::Status::Success();
  }

 private:
  // What PreFilter computes depends on the pod's class only (a pod placed
  // by reusing its class's pass sees its class's state).
  static std::string Marker(const PodInfo& pod) {
    return pod.namespace_name + "/cpu=" + std::to_string(pod.requests.Get(kResourceIdCpu));
  }
  void Check(const std::string& point, const plugins::CycleState& state, const PodInfo& pod) {
    const ProbeState* seen = state.Read<ProbeState>(PreFilterKey());
    record_->Add(point + " " + pod.name + " " +
                 (seen == nullptr               ? "missing"
                  : seen->marker == Marker(pod) ? "saw"
                                                : "other"));
  }

  Record* record_;
};

TEST(FrameworkIntegration, ReservePermitAndPreBindSeeWhatPreFilterWrote) {
  Cluster cluster;
  AddNode(cluster, "n-a", "8");
  AddNode(cluster, "n-b", "8");
  Record record;
  SchedulerOptions options;
  options.out_of_tree_plugins.push_back(Plugin<StateProbe>("StateProbe", &record));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"StateProbe", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);

  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) names.push_back("s-" + std::to_string(i));  // one pod class
  for (const std::string& name : names) cluster.Create(kPods, "default", PodJson(SimplePod(name)));
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("gang", 3));
  for (int i = 0; i < 3; ++i) {
    names.push_back("gang-" + std::to_string(i));
    cluster.Create(kPods, "default", PodJson(GroupMember("gang", names.back())));
  }
  ASSERT_TRUE(WaitUntil([&] {
    return std::all_of(names.begin(), names.end(),
                       [&](const auto& n) { return Bound(cluster, n); });
  }));
  std::set<std::string> lines;
  for (const std::string& line : record.Lines()) lines.insert(line);
  for (const std::string& name : names) {
    for (const char* point : {"reserve", "permit", "prebind"}) {
      EXPECT_TRUE(lines.contains(std::string(point) + " " + name + " saw"))
          << point << " " << name << " did not see PreFilter's state";
    }
  }
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find(" saw"), line.size() - 4) << line;
  }
  EXPECT_GT(cluster.scheduler()->stats().batched, 0u) << "a reused pass was among them";
}

// ---------------------------------------------------------------- clock

class ClockProbe final : public plugins::PostFilterPlugin {
 public:
  explicit ClockProbe(std::atomic<int64_t>* seen) : seen_(seen) {}
  std::string_view Name() const noexcept override { return "ClockProbe"; }
  plugins::PostFilterResult PostFilter(const plugins::PostFilterContext& ctx) const override {
    seen_->store(
        std::chrono::duration_cast<std::chrono::seconds>(ctx.now.time_since_epoch()).count());
    return {};
  }

 private:
  std::atomic<int64_t>* seen_;
};

TEST(FrameworkIntegration, TheCycleRunsOnTheInjectedClock) {
  Cluster cluster;
  AddNode(cluster, "n", "2");
  auto clock = std::make_shared<FakeClock>();
  std::atomic<int64_t> seen{0};
  SchedulerOptions options;
  options.clock = clock;
  options.out_of_tree_plugins.push_back(Plugin<ClockProbe>("ClockProbe", &seen));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.post_filter.disabled = {"DefaultPreemption"};
  profile.plugins.multi_point.enabled.push_back({"ClockProbe", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);
  PodSpecOptions big = SimplePod("too-big");
  big.cpu = "64";
  cluster.Create(kPods, "default", PodJson(big));
  ASSERT_TRUE(WaitUntil([&] { return seen.load() != 0; }));
  EXPECT_EQ(
      seen.load(),
      std::chrono::duration_cast<std::chrono::seconds>(clock->WallNow().time_since_epoch()).count())
      << "PostFilter's now is the scheduler's clock, not the system's";
}

// ---------------------------------------------------------------- EventsToRegister

// Fits only nodes labelled ready=yes; reacts to node label updates, and its
// hint retries a pod only when the updated node became ready.
class NeedsReadyNode final : public plugins::FilterPlugin, public plugins::EnqueueExtensions {
 public:
  std::string_view Name() const noexcept override { return "NeedsReadyNode"; }
  void Filter(const plugins::CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<plugins::Status> out) const noexcept override {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto& labels = ctx.snapshot.node_labels(nodes[i]);
      auto it = labels.find("ready");
      out[i] = it != labels.end() && it->second == "yes" ? plugins::Status::Success()
                                                         : plugins::Status::Unschedulable(1);
    }
  }
  std::vector<plugins::ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kNode, kActionUpdateNodeLabel},
             [](const PodInfo&, const EventObject&, const EventObject& new_obj) {
               const NodeInfo* node = new_obj.As<NodeInfo>();
               if (node == nullptr) return QueueingHint::kQueue;
               auto it = node->labels().find("ready");
               return it != node->labels().end() && it->second == "yes" ? QueueingHint::kQueue
                                                                        : QueueingHint::kQueueSkip;
             }}};
  }

 protected:
  std::string_view ReasonText(plugins::ReasonId) const noexcept override {
    return "node(s) not ready for the test";
  }
};

TEST(FrameworkIntegration, APluginsEventsToRegisterDecideRequeueing) {
  Cluster cluster;
  AddNode(cluster, "n", "4", {{"ready", "no"}});
  SchedulerOptions options;
  // No periodic flush rescues the pod within the test: only events do.
  options.pod_max_in_unschedulable = std::chrono::minutes(30);
  options.unschedulable_flush_interval = std::chrono::minutes(30);
  options.out_of_tree_plugins.push_back(Plugin<NeedsReadyNode>("NeedsReadyNode"));
  plugins::Profile profile = plugins::DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"NeedsReadyNode", 0});
  options.profiles = {profile};
  cluster.StartScheduler(options);
  cluster.Create(kPods, "default", PodJson(SimplePod("waits")));
  ASSERT_TRUE(WaitUntil([&] { return cluster.scheduler()->stats().unschedulable_units == 1; }));
  const uint64_t attempts = cluster.scheduler()->stats().attempts;

  // An event the plugin did not register (an annotation) requeues nothing,
  // and neither does a registered one its hint declines (ready=maybe). (A
  // window of observation: the point is that nothing happens.)
  auto patched = cluster.store().Patch(kNodes, "", "n", api::PatchType::kMerge,
                                       R"({"metadata":{"annotations":{"note":"x"}}})");
  ASSERT_TRUE(patched.ok());
  SetLabel(cluster, kNodes, "", "n", "ready", "maybe");
  EXPECT_FALSE(WaitUntil([&] { return cluster.scheduler()->stats().attempts > attempts; },
                         std::chrono::milliseconds(700)));
  EXPECT_EQ(cluster.scheduler()->stats().unschedulable_units, 1u);

  // The event and the hint that say it may help: retried and bound.
  SetLabel(cluster, kNodes, "", "n", "ready", "yes");
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "waits"); }, std::chrono::seconds(30)));
}

}  // namespace framework_test
}  // namespace copse::scheduler::testing
