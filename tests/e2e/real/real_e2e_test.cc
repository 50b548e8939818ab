// copse against a real kube-apiserver (upstream v1.20.2, etcd 3.4) with the
// real kube-scheduler beside it, as deployed: `copse run` and `copse grove`
// use the token users copse-scheduler and copse-grove, bound to the roles of
// deploy/manifests (not system:masters). v1.20 serves PodDisruptionBudgets
// only as policy/v1beta1 and no scheduling.k8s.io/v1alpha2.
//
// One cluster for the suite: 2 racks x 2 nodes of 4 cpu, 16Gi, 20 pods and
// 2 GPUs. Each test works in its own namespace and removes its pods at the
// end (no controller-manager runs, so nothing else would). No kubelet runs
// either: where a pod must go (a preemption victim), the test removes it as
// a kubelet would once it is terminating.

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/real/real_cluster.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace real_e2e_test {

using json = nlohmann::json;

const std::string kSource = COPSE_SOURCE_DIR;

// Short lease times so that failover takes seconds.
constexpr const char* kCopseConfig = R"(apiVersion: copse.dev/v1alpha1
kind: CopseSchedulerConfiguration
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceNamespace: kube-system
  resourceName: copse-scheduler
opsServer:
  bindAddress: 127.0.0.1
  port: 0
)";

// A `copse run` process as deployed (its user, its role, leader election).
struct CopseRun {
  std::unique_ptr<Process> process;
  std::string ops_url;
  std::string identity;  // set once it leads
};

std::unique_ptr<CopseRun> StartCopseRun(RealCluster& cluster, const std::string& kubeconfig,
                                        std::vector<std::string> extra = {}) {
  auto run = std::make_unique<CopseRun>();
  const std::string config = cluster.WriteFile("copse-scheduler.yaml", kCopseConfig);
  std::vector<std::string> argv = {COPSE_BINARY, "run",  "--kubeconfig", kubeconfig,
                                   "--config",   config, "--ops-port",   "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  run->process = std::make_unique<Process>(argv);
  if (!run->process->WaitForLine("copse run: ops server http://", std::chrono::seconds(30))) {
    ADD_FAILURE() << "copse run did not start:\n" << run->process->seen();
    return run;
  }
  std::smatch m;
  const std::string& seen = run->process->seen();
  if (std::regex_search(seen, m, std::regex("ops server (http://[0-9.:]+)"))) run->ops_url = m[1];
  cluster.Watch(run->process.get());
  return run;
}

// Waits for "leading as <identity>" in the process's output.
bool WaitLeading(RealCluster& cluster, CopseRun& run, std::chrono::seconds timeout) {
  const bool ok = Eventually(
      cluster, [&] { return run.process->seen().find("; scheduling") != std::string::npos; },
      timeout);
  std::smatch m;
  const std::string& seen = run.process->seen();
  if (std::regex_search(seen, m, std::regex("leading as (\\S+); scheduling"))) run.identity = m[1];
  return ok;
}

std::string Curl(const std::string& url) {
  CommandResult r =
      RunCommand({"curl", "-s", "--max-time", "5", url}, {}, std::chrono::seconds(10));
  return r.out;
}

std::string PodYaml(const std::string& ns, const std::string& name, const std::string& scheduler,
                    const std::string& cpu, const std::string& extra_spec = "",
                    const std::string& labels = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\n  labels: {app: e2e" + (labels.empty() ? "" : ", " + labels) +
         "}\nspec:\n  schedulerName: " + scheduler +
         "\n  containers:\n  - name: main\n    image: registry.k8s.io/pause:3.10\n"
         "    resources:\n      requests: {cpu: \"" +
         cpu + "\", memory: 64Mi}\n" + extra_spec;
}

class RealClusterE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new RealCluster();
    if (!cluster_->error().empty()) return;
    for (const char* rack : {"rack-a", "rack-b"}) {
      CommandResult nodes = cluster_->AddNodes(
          rack, 2, std::string("topology.kubernetes.io/zone=zone-1,copse.dev/rack=") + rack,
          "cpu=4,memory=16Gi,pods=20,nvidia.com/gpu=2");
      if (nodes.exit_code != 0) {
        setup_error_ = "nodes: " + nodes.out;
        return;
      }
    }
    CommandResult objects = cluster_->Apply(R"(
apiVersion: scheduling.copse.dev/v1alpha1
kind: Topology
metadata: {name: dc}
spec:
  levels:
  - nodeLabel: topology.kubernetes.io/zone
  - nodeLabel: copse.dev/rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
)");
    if (objects.exit_code != 0) {
      setup_error_ = "topology and priority classes: " + objects.out;
      return;
    }
    copse_ = StartCopseRun(*cluster_, cluster_->scheduler_kubeconfig()).release();
    if (!WaitLeading(*cluster_, *copse_, std::chrono::seconds(30))) {
      setup_error_ = "copse run did not take the lease:\n" + copse_->process->seen();
    }
  }

  static void TearDownTestSuite() {
    if (copse_ != nullptr) cluster_->Unwatch(copse_->process.get());
    delete copse_;
    copse_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(cluster_->error().empty()) << cluster_->error();
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    ns_ = std::string("e2e-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : ns_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ns_ = ns_.substr(0, 60);
    CommandResult created = cluster_->Kubectl({"create", "namespace", ns_});
    ASSERT_EQ(created.exit_code, 0) << created.out;
  }

  void TearDown() override {
    if (ns_.empty()) return;
    // What a test made, gone at once (no kubelet confirms graceful deletes).
    cluster_->Kubectl(
        {"delete", "podgroups.scheduling.copse.dev", "--all", "-n", ns_, "--wait=false"});
    cluster_->Kubectl({"delete", "pods", "--all", "-n", ns_, "--grace-period=0", "--force"});
    // A group's finalizer is copse's to remove once its members are gone.
    Eventually(
        *cluster_,
        [&] {
          json groups = cluster_->GetJson({"podgroups.scheduling.copse.dev", "-n", ns_});
          return groups.is_object() && groups["items"].empty();
        },
        std::chrono::seconds(30));
  }

  json Pods(const std::string& selector = "") {
    std::vector<std::string> args = {"pods", "-n", ns_};
    if (!selector.empty()) {
      args.push_back("-l");
      args.push_back(selector);
    }
    return cluster_->GetJson(args);
  }

  void ExpectNothingOverAllocatable() {
    json nodes = cluster_->GetJson({"nodes"});
    json pods = cluster_->GetJson({"pods", "-A"});
    ASSERT_TRUE(nodes.is_object() && pods.is_object());
    for (const std::string& v : OverAllocatable(nodes, pods)) ADD_FAILURE() << v;
  }

  static RealCluster* cluster_;
  static CopseRun* copse_;
  static std::string setup_error_;
  std::string ns_;
};

RealCluster* RealClusterE2E::cluster_ = nullptr;
CopseRun* RealClusterE2E::copse_ = nullptr;
std::string RealClusterE2E::setup_error_;

// The token user copse runs as is not an admin: it may do what its role
// grants and nothing else.
TEST_F(RealClusterE2E, CopseRunsWithItsDeployedRoleOnly) {
  auto can = [&](const std::string& user, const std::vector<std::string>& what) {
    std::vector<std::string> args = {"auth", "can-i"};
    args.insert(args.end(), what.begin(), what.end());
    args.push_back("--as=" + user);
    CommandResult r = cluster_->Kubectl(args);
    return r.out.find("yes") != std::string::npos;
  };
  EXPECT_TRUE(can("copse-scheduler", {"create", "pods", "--subresource=binding", "-n", ns_}));
  EXPECT_TRUE(can("copse-scheduler", {"list", "poddisruptionbudgets.policy"}));
  EXPECT_TRUE(can("copse-scheduler", {"update", "leases/copse-scheduler", "-n", "kube-system"}));
  EXPECT_FALSE(can("copse-scheduler", {"update", "leases/other", "-n", "kube-system"}));
  EXPECT_FALSE(can("copse-scheduler", {"create", "pods", "-n", ns_}));
  EXPECT_FALSE(can("copse-scheduler", {"get", "secrets", "-n", ns_}));
  EXPECT_TRUE(can("copse-grove", {"create", "pods", "-n", ns_}));
  EXPECT_FALSE(can("copse-grove", {"create", "pods", "--subresource=binding", "-n", ns_}));
}

// v1.20 has no policy/v1 and no scheduling.k8s.io/v1alpha2: copse uses
// policy/v1beta1 budgets without a word, and says once what it does without
// v1alpha2.
TEST_F(RealClusterE2E, OnV120CopseUsesWhatTheServerServes) {
  const std::string& log = copse_->process->seen();
  EXPECT_EQ(log.find("poddisruptionbudgets"), std::string::npos) << log;
  const std::string line = "the API server serves no scheduling.k8s.io/v1alpha2 podgroups";
  const size_t first = log.find(line);
  EXPECT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(line, first + 1), std::string::npos) << "said once:\n" << log;
  const std::string ready = Curl(copse_->ops_url + "/readyz?verbose");
  EXPECT_NE(ready.find("[+]informers-synced ok"), std::string::npos) << ready;
  EXPECT_NE(ready.find("readyz check passed"), std::string::npos) << ready;
}

TEST_F(RealClusterE2E, PlainPodsOfBothSchedulersAreBoundEachByItsOwn) {
  ASSERT_EQ(cluster_
                ->Apply(PodYaml(ns_, "by-kube", "default-scheduler", "100m") + "---\n" +
                        PodYaml(ns_, "by-copse", "copse-scheduler", "100m"))
                .exit_code,
            0);
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    json pods = Pods();
    int bound = 0;
    for (const json& p : pods.value("items", json::array()))
      bound += p["spec"].contains("nodeName");
    return bound == 2;
  })) << Pods().dump();
  // Who bound each: the Scheduled event's reporter.
  std::map<std::string, std::string> reporter;
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    json events = cluster_->GetJson({"events", "-n", ns_});
    for (const json& e : events.value("items", json::array())) {
      if (e.value("reason", "") != "Scheduled") continue;
      std::string who = e.value("reportingComponent", "");
      if (who.empty() && e.contains("source")) who = e["source"].value("component", "");
      reporter[e["involvedObject"].value("name", "")] = who;
    }
    return reporter.size() == 2;
  })) << cluster_->GetJson({"events", "-n", ns_}).dump();
  EXPECT_EQ(reporter["by-kube"], "default-scheduler");
  EXPECT_EQ(reporter["by-copse"], "copse-scheduler");
  ExpectNothingOverAllocatable();
}

std::string CopseGangYaml(const std::string& ns, const std::string& name, int members,
                          const std::string& cpu, const std::string& topology) {
  std::string out =
      "apiVersion: scheduling.copse.dev/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " + name +
      "\n  namespace: " + ns + "\nspec:\n  minMember: " + std::to_string(members) + "\n" + topology;
  for (int i = 0; i < members; ++i) {
    out += "---\n" + PodYaml(ns, name + "-" + std::to_string(i), "copse-scheduler", cpu, "",
                             "scheduling.copse.dev/pod-group: " + name);
  }
  return out;
}

// Four 2-cpu members with a required rack: all in one rack (a rack has 8 cpu).
TEST_F(RealClusterE2E, ACopseGangWithARequiredRackLandsInOneRack) {
  ASSERT_EQ(cluster_
                ->Apply(CopseGangYaml(ns_, "racked", 4, "2",
                                      "  topologyConstraint: {topology: dc, "
                                      "requiredTopologyLevel: rack}\n"))
                .exit_code,
            0);
  json pods;
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    pods = Pods("scheduling.copse.dev/pod-group=racked");
    int bound = 0;
    for (const json& p : pods.value("items", json::array()))
      bound += p["spec"].contains("nodeName");
    return bound == 4;
  })) << pods.dump();
  std::set<std::string> racks;
  for (const json& p : pods["items"]) {
    const std::string node = p["spec"]["nodeName"];
    racks.insert(node.substr(0, node.rfind('-')));  // rack-a-1 -> rack-a
  }
  EXPECT_EQ(racks.size(), 1u) << pods.dump();
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    json group = cluster_->GetJson({"podgroups.scheduling.copse.dev", "racked", "-n", ns_});
    return Condition(group, "PodGroupScheduled").value("status", "") == "True";
  }));
  ExpectNothingOverAllocatable();
}

// Five 4-cpu members on 16 cpu: nobody is bound, and the group says why.
TEST_F(RealClusterE2E, AGangLargerThanTheClusterStaysWholeAndUnbound) {
  ASSERT_EQ(cluster_->Apply(CopseGangYaml(ns_, "huge", 5, "4", "")).exit_code, 0);
  json group;
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    group = cluster_->GetJson({"podgroups.scheduling.copse.dev", "huge", "-n", ns_});
    return Condition(group, "PodGroupScheduled").value("status", "") == "False";
  })) << group.dump();
  const json c = Condition(group, "PodGroupScheduled");
  EXPECT_EQ(c["reason"], "Unschedulable") << c.dump();
  EXPECT_FALSE(c.value("message", "").empty()) << c.dump();
  // Each member is told too, and none is bound.
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    json pods = Pods("scheduling.copse.dev/pod-group=huge");
    int told = 0;
    for (const json& p : pods.value("items", json::array())) {
      told += Condition(p, "PodScheduled").value("status", "") == "False";
    }
    return told == 5;
  }));
  for (const json& p : Pods("scheduling.copse.dev/pod-group=huge")["items"]) {
    EXPECT_FALSE(p["spec"].contains("nodeName")) << p["metadata"]["name"] << " is bound";
  }
  ExpectNothingOverAllocatable();
}

// rack-a-1 full of four 1-cpu low pods; a 2-cpu high pod for that node
// evicts two of them (DisruptionTarget, then deletion), and binds once they
// are gone.
TEST_F(RealClusterE2E, AHighPriorityCopsePodPreemptsLowerOnes) {
  const std::string pin = "  nodeSelector: {kubernetes.io/hostname: rack-a-1}\n";
  std::string lows;
  for (int i = 0; i < 4; ++i) {
    lows += PodYaml(ns_, "low-" + std::to_string(i), "copse-scheduler", "1",
                    pin + "  priorityClassName: e2e-low\n") +
            "---\n";
  }
  ASSERT_EQ(cluster_->Apply(lows).exit_code, 0);
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    int bound = 0;
    for (const json& p : Pods().value("items", json::array()))
      bound += p["spec"].contains("nodeName");
    return bound == 4;
  }));
  ASSERT_EQ(cluster_
                ->Apply(PodYaml(ns_, "high", "copse-scheduler", "2",
                                pin + "  priorityClassName: e2e-high\n"))
                .exit_code,
            0);
  // The victims: marked, then deleted (terminating: no kubelet confirms).
  std::set<std::string> victims;
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    victims.clear();
    for (const json& p : Pods().value("items", json::array())) {
      if (!p["metadata"].contains("deletionTimestamp")) continue;
      EXPECT_EQ(Condition(p, "DisruptionTarget").value("reason", ""), "PreemptionByScheduler")
          << p.dump();
      victims.insert(p["metadata"]["name"]);
    }
    return victims.size() == 2;
  })) << Pods().dump();
  for (const std::string& v : victims) EXPECT_TRUE(v.starts_with("low-")) << v;
  for (const std::string& v : victims) {
    // As the kubelet would once the containers stopped.
    CommandResult gone =
        cluster_->Kubectl({"delete", "pod", v, "-n", ns_, "--grace-period=0", "--force"});
    ASSERT_EQ(gone.exit_code, 0) << gone.out;
  }
  ASSERT_TRUE(Eventually(*cluster_, [&] {
    json high = cluster_->GetJson({"pod", "high", "-n", ns_});
    return high.is_object() && high["spec"].value("nodeName", "") == "rack-a-1";
  })) << Pods().dump();
  int lows_left = 0;
  for (const json& p : Pods().value("items", json::array())) {
    lows_left += std::string(p["metadata"]["name"]).starts_with("low-");
  }
  EXPECT_EQ(lows_left, 2);
  ExpectNothingOverAllocatable();
}

// A copse run without the rights to list nodes never syncs: after 10 s its
// log names the informer and the error, and so does /readyz?verbose.
TEST_F(RealClusterE2E, AnUnsyncedInformerIsNamedWithItsError) {
  // The Grove operator's user may not list nodes.
  auto run = StartCopseRun(*cluster_, cluster_->grove_kubeconfig(), {"--no-leader-elect"});
  ASSERT_FALSE(run->ops_url.empty());
  const std::string want = "informer not synced: v1 nodes: not synced (last error: Forbidden";
  EXPECT_TRUE(Eventually(
      *cluster_, [&] { return run->process->seen().find(want) != std::string::npos; },
      std::chrono::seconds(30)))
      << run->process->seen();
  const std::string ready = Curl(run->ops_url + "/readyz?verbose");
  EXPECT_NE(ready.find("[-]informers-synced failed: informers have not synced: [v1 nodes: not "
                       "synced (last error: Forbidden"),
            std::string::npos)
      << ready;
  cluster_->Unwatch(run->process.get());
}

// The Lease names the leader; a second copse run waits, and takes over
// within the lease duration after the first is killed with SIGKILL.
TEST_F(RealClusterE2E, TheLeaseFailsOverToASecondCopseRun) {
  json lease = cluster_->GetJson({"lease", "copse-scheduler", "-n", "kube-system"});
  ASSERT_TRUE(lease.is_object());
  EXPECT_EQ(lease["spec"]["holderIdentity"], copse_->identity);
  const int transitions = lease["spec"].value("leaseTransitions", 0);

  auto second = StartCopseRun(*cluster_, cluster_->scheduler_kubeconfig());
  ASSERT_TRUE(second->process->WaitForLine(
      "waiting for the leader lease kube-system/copse-scheduler", std::chrono::seconds(10)))
      << second->process->seen();
  // A follower is ready to take over.
  EXPECT_EQ(Curl(second->ops_url + "/readyz"), "ok");

  cluster_->Unwatch(copse_->process.get());
  copse_->process->KillHard();
  copse_->process->Wait();
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitLeading(*cluster_, *second, std::chrono::seconds(30))) << second->process->seen();
  const auto took = std::chrono::steady_clock::now() - killed;
  EXPECT_LT(took, std::chrono::seconds(10)) << "lease duration is 4 s";
  lease = cluster_->GetJson({"lease", "copse-scheduler", "-n", "kube-system"});
  EXPECT_EQ(lease["spec"]["holderIdentity"], second->identity);
  EXPECT_EQ(lease["spec"].value("leaseTransitions", 0), transitions + 1);
  delete copse_;
  copse_ = second.release();

  // The new leader schedules.
  ASSERT_EQ(cluster_->Apply(PodYaml(ns_, "after-failover", "copse-scheduler", "100m")).exit_code,
            0);
  EXPECT_TRUE(Eventually(*cluster_, [&] {
    json pod = cluster_->GetJson({"pod", "after-failover", "-n", ns_});
    return pod.is_object() && pod["spec"].contains("nodeName");
  }));
  EXPECT_TRUE(Eventually(*cluster_, [&] { return Curl(copse_->ops_url + "/readyz") == "ok"; }));
}

// `copse grove` as the copse-grove user: the PodCliqueSet of
// deploy/examples/grove/simple1.yaml gets its nine pods, and copse binds
// them. Its webhook is off: the API server (with no service network) could
// not call it.
TEST_F(RealClusterE2E, CopseGroveRunsAPodCliqueSetWhosePodsAreScheduled) {
  std::vector<std::string> argv = {COPSE_BINARY,
                                   "grove",
                                   "--kubeconfig",
                                   cluster_->grove_kubeconfig(),
                                   "--leader-elect",
                                   "--lease-namespace",
                                   "copse-system",
                                   "--namespace",
                                   ns_};
  Process grove(argv);
  cluster_->Watch(&grove);
  ASSERT_TRUE(grove.WaitForLine("copse grove: operator running", std::chrono::seconds(30)))
      << grove.seen();
  CommandResult applied = cluster_->Kubectl(
      {"apply", "-n", ns_, "-f", kSource + "/deploy/examples/grove/simple1.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  json pods;
  EXPECT_TRUE(Eventually(
      *cluster_,
      [&] {
        pods = Pods();
        int bound = 0;
        for (const json& p : pods.value("items", json::array()))
          bound += p["spec"].contains("nodeName");
        return pods.value("items", json::array()).size() == 9 && bound == 9;
      },
      std::chrono::seconds(90)))
      << pods.dump() << "\n"
      << grove.seen();
  for (const json& p : pods.value("items", json::array())) {
    EXPECT_EQ(p["spec"]["schedulerName"], "copse-scheduler") << p["metadata"]["name"];
  }
  json lease = cluster_->GetJson({"lease", "copse-grove", "-n", "copse-system"});
  EXPECT_TRUE(lease.is_object() && lease["spec"].value("holderIdentity", "") != "") << lease.dump();
  ExpectNothingOverAllocatable();
  cluster_->Unwatch(&grove);
  // Its objects go with the namespace's pods; the operator stops first so
  // that it does not make them again.
  grove.Kill();
  grove.Wait();
  cluster_->Kubectl({"delete", "podcliquesets.grove.io", "--all", "-n", ns_, "--wait=false"});
}

}  // namespace real_e2e_test
}  // namespace copse::e2e
