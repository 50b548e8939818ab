// The runner with fake plugins: PreFilter result intersection, errors,
// score range checks and the binding-cycle extension points.

#include <gtest/gtest.h>

#include "plugins/framework/framework.h"
#include "plugins/priority_sort/priority_sort.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::FixedRandom;
using testing::PodBuilder;
using testing::TestNow;

constexpr ReasonId kBoom = 1;

class FakePreFilter final : public PreFilterPlugin {
 public:
  FakePreFilter(std::string name, std::optional<std::vector<NodeIndex>> nodes)
      : name_(std::move(name)), nodes_(nodes) {}
  std::string_view Name() const noexcept override { return name_; }
  Status PreFilter(const PodInfo&, const Snapshot&, CycleState&,
                   PreFilterResult& result) const override {
    result.nodes = nodes_;
    return Status::Success();
  }

 private:
  std::string name_;
  std::optional<std::vector<NodeIndex>> nodes_;
};

class FakeFilter final : public FilterPlugin {
 public:
  FakeFilter(std::string name, Code code) : name_(std::move(name)), code_(code) {}
  std::string_view Name() const noexcept override { return name_; }
  void Filter(const CycleContext&, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = Status::Make(code_, kBoom);
  }

 protected:
  std::string_view ReasonText(ReasonId r) const noexcept override {
    return r == kBoom ? "boom" : "";
  }

 private:
  std::string name_;
  Code code_;
};

class FakeScore final : public ScorePlugin {
 public:
  explicit FakeScore(int64_t score) : score_(score) {}
  std::string_view Name() const noexcept override { return "FakeScore"; }
  Status Score(const CycleContext&, std::span<const NodeIndex> nodes,
               std::span<int64_t> out) const noexcept override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = score_ + static_cast<int64_t>(nodes[i]);
    return Status::Success();
  }

 private:
  int64_t score_;
};

class FakeBinding final : public ReservePlugin, public PermitPlugin, public BindPlugin {
 public:
  FakeBinding(std::string name, std::vector<std::string>* log, Status reserve,
              PermitDecision permit, Status bind)
      : name_(std::move(name)), log_(log), reserve_(reserve), permit_(permit), bind_(bind) {}
  std::string_view Name() const noexcept override { return name_; }
  Status Reserve(CycleState&, const PodInfo&, std::string_view node) override {
    log_->push_back("reserve " + name_ + " " + std::string(node));
    return reserve_;
  }
  void Unreserve(CycleState&, const PodInfo&, std::string_view) noexcept override {
    log_->push_back("unreserve " + name_);
  }
  PermitDecision Permit(CycleState&, const PodInfo&, std::string_view) override { return permit_; }
  Status Bind(CycleState&, const PodInfo& pod, std::string_view node,
              BindingClient& client) override {
    if (bind_.IsSuccess()) client.PostBinding(pod, node);
    return bind_;
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  Status reserve_;
  PermitDecision permit_;
  Status bind_;
};

// Records the bindings Bind plugins ask for (the runtime's would POST them).
class RecordingBindingClient final : public BindingClient {
 public:
  void PostBinding(const PodInfo& pod, std::string_view node) override {
    requests.push_back(pod.name + "->" + std::string(node));
  }
  std::vector<std::string> requests;
};

template <typename T, typename... Args>
PluginFactory Factory(Args... args) {
  return [=](const PluginArgs*) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>(args...));
  };
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_.Register("PrioritySort", &PrioritySort::Create).ok());
    profile_.plugins.multi_point.enabled = {{"PrioritySort", 0}};
    for (int i = 0; i < 3; ++i) c_.AddNode("n" + std::to_string(i));
  }
  void Add(const std::string& name, PluginFactory f, int32_t weight = 0) {
    ASSERT_TRUE(registry_.Register(name, std::move(f)).ok());
    profile_.plugins.multi_point.enabled.push_back({name, weight});
  }
  std::unique_ptr<Framework> Build() {
    Result<std::unique_ptr<Framework>> fw = Framework::Create(registry_, profile_);
    EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
    return std::move(*fw);
  }
  ScheduleResult Schedule(const Framework& fw) {
    CycleState state;
    Workspace ws;
    FixedRandom random(0);
    return fw.SchedulePod(*PodBuilder("p").Obj(), c_.snapshot(), state, ws, random, {}, TestNow());
  }
  Registry registry_;
  Profile profile_;
  Cluster c_;
};

TEST_F(RunnerTest, PreFilterResultsIntersect) {
  Add("FakeB", Factory<FakePreFilter>(std::string("FakeB"), std::optional<std::vector<NodeIndex>>(
                                                                std::vector<NodeIndex>{1, 2})));
  Add("FakeA", Factory<FakePreFilter>(std::string("FakeA"), std::optional<std::vector<NodeIndex>>(
                                                                std::vector<NodeIndex>{0, 1})));
  Add("Reject", Factory<FakeFilter>(std::string("Reject"), Code::kUnschedulable));
  auto fw = Build();
  ScheduleResult r = Schedule(*fw);
  EXPECT_EQ(r.evaluated_nodes, 1u);
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 boom, 2 node(s) didn't satisfy plugin(s) [FakeA FakeB].");
}

TEST_F(RunnerTest, PreFilterResultsConflict) {
  Add("FakeB", Factory<FakePreFilter>(std::string("FakeB"), std::optional<std::vector<NodeIndex>>(
                                                                std::vector<NodeIndex>{2})));
  Add("FakeA", Factory<FakePreFilter>(std::string("FakeA"), std::optional<std::vector<NodeIndex>>(
                                                                std::vector<NodeIndex>{0})));
  EXPECT_EQ(
      Schedule(*Build()).message,
      "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakeA FakeB] simultaneously.");
}

TEST_F(RunnerTest, PreFilterResultEmpty) {
  Add("FakeA", Factory<FakePreFilter>(std::string("FakeA"), std::optional<std::vector<NodeIndex>>(
                                                                std::vector<NodeIndex>{})));
  EXPECT_EQ(Schedule(*Build()).message,
            "0/3 nodes are available: node(s) didn't satisfy plugin FakeA.");
}

TEST_F(RunnerTest, FilterErrorAbortsTheCycle) {
  Add("Broken", Factory<FakeFilter>(std::string("Broken"), Code::kError));
  ScheduleResult r = Schedule(*Build());
  EXPECT_EQ(r.code, Code::kError);
  EXPECT_EQ(r.message, "running Filter plugin \"Broken\": boom");
}

TEST_F(RunnerTest, ScoresOutOfRangeAreErrors) {
  Add("FakeScore", Factory<FakeScore>(int64_t{99}));
  ScheduleResult r = Schedule(*Build());
  EXPECT_EQ(r.code, Code::kError);
  EXPECT_EQ(r.message,
            "running Score plugins: plugin \"FakeScore\" returns an invalid score 101, it should "
            "in the range of [0, 100] "
            "after normalizing");
}

TEST_F(RunnerTest, ScoresAreWeighted) {
  Add("FakeScore", Factory<FakeScore>(int64_t{10}), /*weight=*/3);
  auto fw = Build();
  EXPECT_EQ(fw->ScoreWeight("FakeScore"), 3);
  EXPECT_EQ(Schedule(*fw).node, std::optional<NodeIndex>(2));  // 10 + node index: the last is best
}

// Concurrent filter chunks may finish in any order: when the last chunks of
// the walk fill the quota first, the earlier ones (skipped then) must still
// be filtered, and the result is the sequential walk's. Here the "pool"
// runs the chunks last to first.
TEST_F(RunnerTest, ParallelFilterInAnyChunkOrderFindsTheSequentialNodes) {
  for (int i = 3; i < 40; ++i) c_.AddNode("n" + std::to_string(i));
  Add("FakeScore", Factory<FakeScore>(int64_t{0}));
  auto fw = Build();
  auto run = [&](bool reverse_pool) {
    ScheduleOptions options;
    options.chunk_size = 4;
    options.num_feasible_to_find = 6;
    options.start_index = 5;
    options.keep_raw_scores = true;
    if (reverse_pool) {
      options.parallel_for = [](size_t count, const std::function<void(size_t)>& body) {
        for (size_t i = count; i-- > 0;) body(i);
      };
    }
    CycleState state;
    Workspace ws;
    FixedRandom random(0);
    ScheduleResult r = fw->SchedulePod(*PodBuilder("p").Obj(), c_.snapshot(), state, ws, random,
                                       options, TestNow());
    return std::make_pair(r, ws.feasible);
  };
  auto [sequential, sequential_nodes] = run(false);
  auto [parallel, parallel_nodes] = run(true);
  ASSERT_EQ(parallel.code, Code::kSuccess) << parallel.message;
  EXPECT_EQ(parallel.feasible_nodes, 6u);
  EXPECT_EQ(parallel_nodes, sequential_nodes);
  // The walk starts at node 5: nodes 5..10 are the first six.
  EXPECT_EQ(parallel_nodes, (std::vector<NodeIndex>{5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(parallel.node, sequential.node);
}

TEST_F(RunnerTest, BindingCycle) {
  std::vector<std::string> log;
  Add("R1",
      Factory<FakeBinding>(std::string("R1"), &log, Status::Success(),
                           PermitDecision{Status::Make(Code::kWait), std::chrono::seconds(10)},
                           Status::Skip()));
  Add("R2", Factory<FakeBinding>(std::string("R2"), &log, Status::Success(),
                                 PermitDecision{Status::Make(Code::kWait), std::chrono::seconds(5)},
                                 Status::Success()));
  auto fw = Build();
  CycleState state;
  auto pod = PodBuilder("p").Obj();
  EXPECT_TRUE(fw->RunReserve(state, *pod, "n1").IsSuccess());
  EXPECT_EQ(log, (std::vector<std::string>{"reserve R1 n1", "reserve R2 n1"}));
  PermitDecision permit = fw->RunPermit(state, *pod, "n1");
  EXPECT_EQ(permit.status.code, Code::kWait);
  EXPECT_EQ(permit.timeout, std::chrono::seconds(5));
  RecordingBindingClient client;
  Status bind = fw->RunBind(state, *pod, "n1", client);
  EXPECT_TRUE(bind.IsSuccess());
  EXPECT_EQ(bind.plugin, *fw->FindPlugin("R2"));
  EXPECT_EQ(client.requests, (std::vector<std::string>{"p->n1"})) << "R1 skipped, R2 asked once";
}

TEST_F(RunnerTest, FailedReserveUnreservesEverythingInReverse) {
  std::vector<std::string> log;
  Add("R1", Factory<FakeBinding>(std::string("R1"), &log, Status::Success(), PermitDecision{},
                                 Status::Skip()));
  Add("R2", Factory<FakeBinding>(std::string("R2"), &log, Status::Unschedulable(kBoom),
                                 PermitDecision{Status::Unschedulable(kBoom), {}}, Status::Skip()));
  auto fw = Build();
  CycleState state;
  auto pod = PodBuilder("p").Obj();
  Status s = fw->RunReserve(state, *pod, "n0");
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.plugin, *fw->FindPlugin("R2"));
  EXPECT_EQ(log, (std::vector<std::string>{"reserve R1 n0", "reserve R2 n0", "unreserve R2",
                                           "unreserve R1"}));
  EXPECT_EQ(fw->RunPermit(state, *pod, "n0").status.code, Code::kUnschedulable);
  RecordingBindingClient client;
  EXPECT_TRUE(fw->RunBind(state, *pod, "n0", client).IsSkip());
  EXPECT_TRUE(client.requests.empty());
}

}  // namespace
}  // namespace copse::plugins
