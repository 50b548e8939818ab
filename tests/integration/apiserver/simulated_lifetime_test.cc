// The node simulator's simulated pod lifetimes (copse.dev/simulate-run-for,
// copse.dev/simulate-exit-code), driven by a FakeClock in the store.

#include "apiserver/node_simulator.h"
#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

class SimulatedLifetime : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions store_options;
    store_options.clock = clock_;
    store_ = NewStore(store_options);
    NodeSimulatorOptions options;
    options.pod_start_delay = std::chrono::seconds(1);
    options.poll_interval = std::chrono::milliseconds(2);
    options.manage_disruption_budgets = false;
    sim_ = std::make_unique<NodeSimulator>(store_, options);
    sim_->Start();
    json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}};
    ASSERT_TRUE(sim_->CreateNodes({node.dump()}).ok());
    ASSERT_TRUE(WaitFor([&] {
      auto n = store_->Get(resources::kNodes, "", "n1");
      return n.ok() && (*n)->json.find("KubeletReady") != std::string::npos;
    }));
  }
  void TearDown() override { sim_->Stop(); }

  // A pod bound to n1 with the given annotations, started (Running, unless
  // it ends at once).
  void StartPod(const std::string& name, const json& annotations, const std::string& restart = "",
                const std::string& phase = "Running") {
    json pod = MakePod(name);
    pod["metadata"]["annotations"] = annotations;
    pod["spec"]["nodeName"] = "n1";
    pod["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "busybox"}});
    if (!restart.empty()) pod["spec"]["restartPolicy"] = restart;
    const uint64_t awaiting = sim_->pods_awaiting_start();
    auto created = store_->Create(resources::kPods, "default", pod.dump());
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    // The start is timed from the fake now before time moves.
    ASSERT_TRUE(WaitFor([&] { return sim_->pods_awaiting_start() >= awaiting + 1; }));
    clock_->Advance(std::chrono::seconds(1));
    ASSERT_TRUE(WaitFor([&] { return Phase(name) == phase; }));
  }

  json Pod(const std::string& name) {
    auto p = store_->Get(resources::kPods, "default", name);
    return p.ok() ? json::parse((*p)->json) : json();
  }
  std::string Phase(const std::string& name) {
    json p = Pod(name);
    return p.is_object() ? p["status"].value("phase", "") : std::string();
  }
  std::string Condition(const json& pod, const std::string& type) {
    for (const auto& c : pod["status"]["conditions"]) {
      if (c["type"] == type) return c["status"];
    }
    return "";
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::shared_ptr<Store> store_;
  std::unique_ptr<NodeSimulator> sim_;
};

TEST_F(SimulatedLifetime, PodSucceedsAfterItsRunTime) {
  StartPod("short", {{"copse.dev/simulate-run-for", "30s"}});
  clock_->Advance(std::chrono::seconds(29));
  // Nothing may end it before its time: give the simulator its chance to act.
  const uint64_t finished = sim_->pods_finished();
  EXPECT_FALSE(
      WaitFor([&] { return Phase("short") != "Running"; }, std::chrono::milliseconds(200)));
  EXPECT_EQ(sim_->pods_finished(), finished);
  clock_->Advance(std::chrono::seconds(2));
  ASSERT_TRUE(WaitFor([&] { return Phase("short") == "Succeeded"; }));
  json pod = Pod("short");
  EXPECT_EQ(Condition(pod, "Ready"), "False");
  EXPECT_EQ(Condition(pod, "ContainersReady"), "False");
  ASSERT_EQ(pod["status"]["containerStatuses"].size(), 2u);
  for (const auto& c : pod["status"]["containerStatuses"]) {
    EXPECT_EQ(c["state"]["terminated"]["exitCode"], 0) << c.dump();
    EXPECT_EQ(c["state"]["terminated"]["reason"], "Completed");
    EXPECT_FALSE(c["ready"].get<bool>());
  }
  EXPECT_EQ(sim_->pods_finished(), finished + 1);
}

TEST_F(SimulatedLifetime, NonZeroExitCodeFailsThePodWhateverItsRestartPolicy) {
  StartPod("crash",
           {{"copse.dev/simulate-run-for", "1m30s"}, {"copse.dev/simulate-exit-code", "3"}},
           "Always");
  clock_->Advance(std::chrono::seconds(91));
  ASSERT_TRUE(WaitFor([&] { return Phase("crash") == "Failed"; }));
  json pod = Pod("crash");
  for (const auto& c : pod["status"]["containerStatuses"]) {
    EXPECT_EQ(c["state"]["terminated"]["exitCode"], 3);
    EXPECT_EQ(c["state"]["terminated"]["reason"], "Error");
  }
}

TEST_F(SimulatedLifetime, PodsWithoutTheAnnotationRunOn) {
  StartPod("forever", json::object());
  StartPod("marked", {{"copse.dev/simulate-run-for", "10s"}});
  clock_->Advance(std::chrono::hours(1));
  ASSERT_TRUE(WaitFor([&] { return Phase("marked") == "Succeeded"; }));
  // The pod without a lifetime was seen at the same time and is still running.
  EXPECT_EQ(Phase("forever"), "Running");
  EXPECT_EQ(Condition(Pod("forever"), "Ready"), "True");
}

TEST_F(SimulatedLifetime, AFinishedPodIsDeletedAtOnce) {
  StartPod("done", {{"copse.dev/simulate-run-for", "0s"}}, "", "Succeeded");
  auto deleted = store_->Delete(resources::kPods, "default", "done");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(deleted->removed);
}

TEST_F(SimulatedLifetime, BadAnnotationsAreRefusedNamingThem) {
  for (const auto& [annotations, needle] : std::vector<std::pair<json, std::string>>{
           {{{"copse.dev/simulate-run-for", "soon"}},
            "metadata.annotations[copse.dev/simulate-run-for]"},
           {{{"copse.dev/simulate-run-for", "-5s"}},
            "metadata.annotations[copse.dev/simulate-run-for]"},
           {{{"copse.dev/simulate-run-for", "5s"}, {"copse.dev/simulate-exit-code", "256"}},
            "metadata.annotations[copse.dev/simulate-exit-code]"},
           {{{"copse.dev/simulate-exit-code", "1"}}, "only with copse.dev/simulate-run-for"}}) {
    json pod = MakePod("bad");
    pod["metadata"]["annotations"] = annotations;
    auto created = store_->Create(resources::kPods, "default", pod.dump());
    ASSERT_FALSE(created.ok()) << annotations.dump();
    EXPECT_EQ(created.error().http_status, 422);
    EXPECT_NE(created.error().message.find(needle), std::string::npos) << created.error().message;
    EXPECT_FALSE(store_->Get(resources::kPods, "default", "bad").ok());
  }
}

}  // namespace
}  // namespace copse::apiserver::testing
