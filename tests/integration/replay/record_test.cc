// copse record in-process (replay/recorder.h): an embedded API server with the
// node simulator and the copse scheduler, recorded while gangs and pods come,
// bind, end and go; then the recording is parsed and replayed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apiserver/apiserver.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "core/quantity.h"
#include "deploy/crds.h"
#include "kube/client.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "kube/workload.h"
#include "kube/yaml.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "replay/recorder.h"
#include "replay/replayer.h"
#include "replay/trace.h"
#include "scheduler/config/config.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"
#include "tests/support/paths.h"

namespace copse::replay {
namespace {

using nlohmann::json;
namespace api = copse::apiserver;
namespace fs = std::filesystem;

bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

json Pod(const std::string& name, const std::string& group, int gpus, json extra_meta = {},
         json extra_spec = {}) {
  json labels = json::object();
  if (!group.empty()) labels["scheduling.copse.dev/pod-group"] = group;
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", "team"}, {"labels", labels}}},
      {"spec",
       {{"schedulerName", "copse-scheduler"},
        {"terminationGracePeriodSeconds", 0},
        {"containers",
         json::array(
             {{{"name", "c"},
               {"image", "pause"},
               {"resources",
                {{"requests",
                  {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
                 {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}};
  if (extra_meta.is_object()) pod["metadata"].update(extra_meta);
  if (extra_spec.is_object()) pod["spec"].update(extra_spec);
  return pod;
}

json Gang(const std::string& name) {
  return {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "team"}}},
          {"spec",
           {{"minMember", 2},
            {"topologyConstraint", {{"topology", "dc"}, {"requiredTopologyLevel", "rack"}}}}}};
}

// Replays `trace` under the shipped deploy/examples/traces/pack.yaml.
Result<ConfigResult> ReplayUnderPack(const Trace& trace) {
  plugins::Registry registry;
  if (Status s = plugins::RegisterDefaultPlugins(registry); !s.ok()) return s.error();
  auto cfg = scheduler::config::LoadSchedulerConfigFile(
      std::string(COPSE_SOURCE_DIR) + "/deploy/examples/traces/pack.yaml", registry);
  if (!cfg.ok()) return cfg.error();
  ReplayConfig rc;
  rc.name = "pack.yaml";
  rc.options = scheduler::SchedulerOptionsFromConfig(*cfg);
  rc.options.parallelism = 2;
  return ReplayTrace(trace, rc, ReplayOptions());
}

class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("copse-record-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    store_ = api::NewStore();
    for (const deploy::EmbeddedFile& file : deploy::BuiltinCrds()) {
      if (!file.path.starts_with("crds/copse/")) continue;
      auto docs = kube::YamlDocumentsToJson(file.content);
      ASSERT_TRUE(docs.ok());
      for (const std::string& doc : *docs) {
        ASSERT_TRUE(store_->Create(kube::resources::kCustomResourceDefinitions, "", doc).ok());
      }
    }
    api::NodeSimulatorOptions sim;
    sim.pod_start_delay = std::chrono::milliseconds(50);
    simulator_ = std::make_unique<api::NodeSimulator>(store_, sim);
    simulator_->Start();
    api::Options server_options;
    server_options.serve_https = false;
    server_options.store = store_;
    auto server = api::ApiServer::Start(server_options);
    ASSERT_TRUE(server.ok()) << server.error().ToString();
    server_ = std::move(server).value();
    io_ = std::make_unique<kube::IoThread>(2);
  }

  void TearDown() override {
    if (scheduler_) scheduler_->Stop();
    scheduler_.reset();
    recorder_.reset();
    io_.reset();
    if (server_) server_->Stop();
    simulator_->Stop();
    fs::remove_all(dir_);
  }

  std::shared_ptr<kube::Client> NewClient() {
    kube::ClientConfig config;
    config.server = server_->http_url();
    auto client = kube::Client::Create(config, io_->executor());
    EXPECT_TRUE(client.ok());
    return client.ok() ? *client : nullptr;
  }

  void StartScheduler() {
    scheduler::SchedulerOptions o;
    o.seed = 42;
    o.pod_initial_backoff = std::chrono::milliseconds(50);
    o.pod_max_backoff = std::chrono::milliseconds(200);
    o.pod_group_max_backoff = std::chrono::milliseconds(400);
    o.unschedulable_flush_interval = std::chrono::milliseconds(500);
    o.pod_max_in_unschedulable = std::chrono::seconds(1);
    auto created = scheduler::Scheduler::Create(NewClient(), o);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    scheduler_ = std::move(created).value();
    scheduler_->Start();
    ASSERT_TRUE(scheduler_->WaitForSync(std::chrono::seconds(30)));
  }

  void Create(const kube::ResourceRef& ref, const std::string& ns, const json& object) {
    auto created = store_->Create(ref, ns, object.dump());
    ASSERT_TRUE(created.ok()) << created.error().ToString() << "\n" << object.dump();
  }

  json GetPod(const std::string& name) {
    auto got = store_->Get(kube::resources::kPods, "team", name);
    return got.ok() ? json::parse((*got)->json) : json();
  }
  std::string NodeOf(const std::string& name) {
    const json pod = GetPod(name);
    return pod.is_object() ? pod["spec"].value("nodeName", "") : "";
  }
  std::string PhaseOf(const std::string& name) {
    const json pod = GetPod(name);
    return pod.is_object() ? pod.value("status", json::object()).value("phase", "") : "";
  }
  void DeletePod(const std::string& name) {
    api::DeleteOptions del;
    del.grace_period_seconds = 0;
    ASSERT_TRUE(store_->Delete(kube::resources::kPods, "team", name, del).ok());
  }

  fs::path dir_;
  std::shared_ptr<api::Store> store_;
  std::unique_ptr<api::NodeSimulator> simulator_;
  std::unique_ptr<api::ApiServer> server_;
  std::unique_ptr<kube::IoThread> io_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<Recorder> recorder_;
};

// The events of one object, in file order.
std::vector<const TraceEvent*> EventsOf(const Trace& trace, const std::string& kind,
                                        const std::string& name) {
  std::vector<const TraceEvent*> out;
  for (const TraceEvent& e : trace.events) {
    if (e.name != name) continue;
    // bound/end lines name pods without a kind.
    if (e.kind == kind || (kind == "Pod" && e.kind.empty())) out.push_back(&e);
  }
  return out;
}

std::string Ops(const std::vector<const TraceEvent*>& events) {
  std::string out;
  for (const TraceEvent* e : events) {
    if (!out.empty()) out += ",";
    out += TraceOpName(e->op);
  }
  return out;
}

TEST_F(RecordTest, RecordsGangsBindsEndsAndDeletesAndTheRecordingReplays) {
  // Before recording: a namespace, 4 nodes in 2 racks, a PriorityClass, a
  // Topology and a pod already running on a node.
  Create(kube::resources::kNamespaces, "",
         {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}});
  auto topology = api::ParseTopology("rack=2");
  ASSERT_TRUE(topology.ok());
  auto nodes = api::MakeSyntheticNodes(
      4, *ParseResourceList("cpu=32,memory=128Gi,nvidia.com/gpu=8"), *topology);
  ASSERT_TRUE(nodes.ok());
  ASSERT_TRUE(simulator_->CreateNodes(*nodes).ok());
  std::vector<std::string> node_names;
  for (const std::string& n : *nodes) node_names.push_back(json::parse(n)["metadata"]["name"]);
  Create(kube::resources::kPriorityClasses, "",
         {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", "high"}}},
          {"value", 1000}});
  Create(kube::resources::kTopologies, "",
         {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "Topology"},
          {"metadata", {{"name", "dc"}}},
          {"spec",
           {{"levels", json::array({{{"nodeLabel", "copse.dev/rack"}},
                                    {{"nodeLabel", "kubernetes.io/hostname"}}})}}}});
  Create(kube::resources::kPods, "team", Pod("early", "", 2, {}, {{"nodeName", node_names[0]}}));
  ASSERT_TRUE(WaitUntil([&] { return PhaseOf("early") == "Running"; }));

  RecorderOptions options;
  options.out = (dir_ / "trace.jsonl").string();
  auto recorder = Recorder::Start(NewClient(), options);
  ASSERT_TRUE(recorder.ok()) << recorder.error().ToString();
  recorder_ = std::move(recorder).value();
  EXPECT_TRUE(fs::exists(options.out + ".tmp"));
  EXPECT_FALSE(fs::exists(options.out));  // complete or not at all
  StartScheduler();
  // A node's later changes are not recorded (the trace keeps it as first seen).
  ASSERT_TRUE(store_
                  ->Patch(kube::resources::kNodes, "", node_names[3], api::PatchType::kMerge,
                          R"({"metadata":{"labels":{"example.com/later":"yes"}}})")
                  .ok());

  // A pod held by a scheduling gate: written when the gate is lifted.
  Create(kube::resources::kPods, "team",
         Pod("gated", "", 1, {},
             {{"schedulingGates", json::array({{{"name", "example.com/hold"}}})}}));
  // gang-a: two 4-GPU pods that end by themselves (the simulator's kubelet).
  const json run_for = {{"annotations", {{"copse.dev/simulate-run-for", "1500ms"}}}};
  Create(kube::resources::kCopsePodGroups, "team", Gang("gang-a"));
  for (int i = 0; i < 2; ++i) {
    Create(kube::resources::kPods, "team",
           Pod("gang-a-" + std::to_string(i), "gang-a", 4, run_for));
  }
  // gang-b (high priority) runs until the recording stops.
  Create(kube::resources::kCopsePodGroups, "team", Gang("gang-b"));
  for (int i = 0; i < 2; ++i) {
    Create(kube::resources::kPods, "team",
           Pod("gang-b-" + std::to_string(i), "gang-b", 4, {}, {{"priorityClassName", "high"}}));
  }
  // A pod with env values, a secret reference and annotations outside scheduling.
  Create(
      kube::resources::kPods, "team",
      Pod("secretive", "", 1,
          {{"annotations",
            {{"team.example.com/note", "private-note-text"}, {"copse.dev/owner", "ml"}}}},
          {{"containers",
            json::array(
                {{{"name", "c"},
                  {"image", "pause"},
                  {"command", json::array({"train", "--token=cmdline-token"})},
                  {"env", json::array({{{"name", "API_KEY"}, {"value", "hunter2-value"}},
                                       {{"name", "DB_PASSWORD"},
                                        {"valueFrom",
                                         {{"secretKeyRef",
                                           {{"name", "db-credentials"}, {"key", "password"}}}}}}})},
                  {"resources",
                   {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}},
                    {"limits", {{"nvidia.com/gpu", "1"}}}}}}})},
           {"volumes",
            json::array({{{"name", "s"}, {"secret", {{"secretName", "tls-secret-name"}}}}})}}));
  // A pod no node fits: deleted while pending.
  Create(kube::resources::kPods, "team", Pod("too-big", "", 64));
  // A pod deleted while it runs.
  Create(kube::resources::kPods, "team", Pod("short", "", 1));

  ASSERT_TRUE(WaitUntil([&] {
    return !NodeOf("gang-b-0").empty() && !NodeOf("gang-b-1").empty() &&
           !NodeOf("secretive").empty() && !NodeOf("short").empty();
  }));
  ASSERT_TRUE(WaitUntil(
      [&] { return PhaseOf("gang-a-0") == "Succeeded" && PhaseOf("gang-a-1") == "Succeeded"; }));
  EXPECT_TRUE(NodeOf("too-big").empty());
  EXPECT_TRUE(NodeOf("gated").empty());
  // Once the recorder has written the creates of the 2 PodGroups and 7 pods
  // that came after the gated pod, it has seen the gated one too.
  ASSERT_TRUE(WaitUntil([&] { return recorder_->stats().create >= 9; }));
  ASSERT_TRUE(store_
                  ->Patch(kube::resources::kPods, "team", "gated", api::PatchType::kMerge,
                          R"({"spec":{"schedulingGates":null}})")
                  .ok());
  ASSERT_TRUE(WaitUntil([&] { return !NodeOf("gated").empty(); }));
  DeletePod("too-big");
  DeletePod("short");
  ASSERT_TRUE(store_->Delete(kube::resources::kCopsePodGroups, "team", "gang-a", {}).ok());
  // The recorder's watches deliver asynchronously: wait for the deletions
  // (too-big, gang-a) and the ends (gang-a's pods, short).
  ASSERT_TRUE(WaitUntil([&] {
    const RecorderStats s = recorder_->stats();
    return s.deleted >= 2 && s.end >= 3;
  }));
  const std::string gang_a_node = NodeOf("gang-a-0");

  ASSERT_TRUE(recorder_->Stop().ok());
  EXPECT_TRUE(recorder_->Stop().ok());  // idempotent
  EXPECT_FALSE(fs::exists(options.out + ".tmp"));
  std::ifstream in(options.out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string file = text.str();
  // Never written: env values, secret names, commands, foreign annotations.
  for (const char* secret : {"hunter2-value", "db-credentials", "tls-secret-name", "cmdline-token",
                             "private-note-text", "team.example.com"}) {
    EXPECT_EQ(file.find(secret), std::string::npos) << secret << " leaked into the trace";
  }

  auto parsed = ReadTraceFile(options.out);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Trace& trace = *parsed;
  EXPECT_EQ(trace.header.source, "record");
  EXPECT_FALSE(trace.header.start.empty());
  ASSERT_FALSE(trace.events.empty());
  EXPECT_GT(trace.header.duration_ms, 0);
  EXPECT_GE(trace.header.duration_ms, trace.events.back().t_ms);
  EXPECT_EQ(trace.header.duration_ms, recorder_->stats().duration_ms);

  // Init: what existed before, at t = 0, before any other line.
  std::map<std::string, int> init_kinds;
  size_t first_other = 0;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.op != TraceOp::kInit) {
      if (first_other == 0) first_other = i;
      continue;
    }
    EXPECT_EQ(first_other, 0u) << "init line " << e.kind << " " << e.name << " after events";
    EXPECT_EQ(e.t_ms, 0);
    ++init_kinds[e.kind];
    if (e.kind == "PriorityClass") init_kinds["PriorityClass " + e.name] = 1;
  }
  EXPECT_EQ(init_kinds["Node"], 4);
  EXPECT_EQ(init_kinds["PriorityClass high"], 1);  // and the server's system-* ones
  EXPECT_EQ(init_kinds["Topology"], 1);
  EXPECT_EQ(init_kinds["Pod"], 1);  // early; the others came later
  EXPECT_GE(init_kinds["Namespace"], 1);
  EXPECT_EQ(init_kinds["PodGroup"], 0);

  EXPECT_EQ(Ops(EventsOf(trace, "Node", node_names[3])), "init");
  EXPECT_EQ(file.find("example.com/later"), std::string::npos);

  // The pod that ran before: its node in the init line, bound at t = 0.
  const auto early = EventsOf(trace, "Pod", "early");
  ASSERT_EQ(Ops(early), "init,bound");
  EXPECT_EQ(json::parse(early[0]->object)["spec"]["nodeName"], node_names[0]);
  EXPECT_EQ(early[1]->t_ms, 0);
  EXPECT_EQ(early[1]->node, node_names[0]);

  for (const char* name : {"gang-a-0", "gang-a-1"}) {
    const auto ev = EventsOf(trace, "Pod", name);
    ASSERT_EQ(Ops(ev), "create,bound,end") << name;
    EXPECT_FALSE(json::parse(ev[0]->object)["spec"].contains("nodeName")) << name;
    EXPECT_GE(ev[0]->t_ms, 0);
    EXPECT_LE(ev[0]->t_ms, ev[1]->t_ms);
    EXPECT_FALSE(ev[1]->node.empty());
    // Its runtime is end - bound (it ran about 1.5 s).
    EXPECT_LE(ev[1]->t_ms, ev[2]->t_ms);
    ASSERT_TRUE(ev[0]->runtime_ms.has_value()) << name;
    EXPECT_EQ(*ev[0]->runtime_ms, ev[2]->t_ms - ev[1]->t_ms);
    EXPECT_GT(*ev[0]->runtime_ms, 0);
    EXPECT_LT(*ev[0]->runtime_ms, 30'000);
  }
  EXPECT_EQ(EventsOf(trace, "Pod", "gang-a-0")[1]->node, gang_a_node);
  for (const char* name : {"gang-b-0", "gang-b-1", "secretive"}) {
    EXPECT_EQ(Ops(EventsOf(trace, "Pod", name)), "create,bound") << name;
  }
  EXPECT_EQ(Ops(EventsOf(trace, "Pod", "too-big")), "create,delete");
  // The gated pod arrives when its gate is lifted, after the pods created after it.
  const auto gated = EventsOf(trace, "Pod", "gated");
  ASSERT_EQ(Ops(gated), "create,bound");
  EXPECT_GE(gated[0]->t_ms, EventsOf(trace, "Pod", "short")[0]->t_ms);
  EXPECT_GT(gated[0] - trace.events.data(),
            EventsOf(trace, "Pod", "short")[0] - trace.events.data());
  EXPECT_FALSE(json::parse(gated[0]->object)["spec"].contains("schedulingGates"));
  EXPECT_EQ(Ops(EventsOf(trace, "Pod", "short")), "create,bound,end");
  EXPECT_EQ(Ops(EventsOf(trace, "PodGroup", "gang-a")), "create,delete");
  EXPECT_EQ(Ops(EventsOf(trace, "PodGroup", "gang-b")), "create");
  // The reduced pod keeps what scheduling reads.
  const json secretive = json::parse(EventsOf(trace, "Pod", "secretive")[0]->object);
  EXPECT_EQ(secretive["metadata"]["annotations"], json({{"copse.dev/owner", "ml"}}));
  EXPECT_EQ(secretive["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "1");
  const json gang_b = json::parse(EventsOf(trace, "Pod", "gang-b-0")[0]->object);
  EXPECT_EQ(gang_b["spec"]["priorityClassName"], "high");
  EXPECT_EQ(gang_b["metadata"]["labels"]["scheduling.copse.dev/pod-group"], "gang-b");

  // The recording replays: both gangs placed whole, each within one rack,
  // the early pod where it was.
  Result<ConfigResult> result = ReplayUnderPack(trace);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->gangs, 2);
  EXPECT_EQ(result->gangs_placed, 2);
  EXPECT_EQ(result->gangs_one_rack, 2);
  EXPECT_EQ(result->gangs_partial, 0);
  EXPECT_EQ(result->max_nodes_over_allocatable, 0);
  std::map<std::string, Decision> decisions;
  for (const Decision& d : result->decisions) decisions[d.pod] = d;
  EXPECT_EQ(decisions["team/early"].node, node_names[0]);
  EXPECT_EQ(decisions["team/early"].bound_ms, 0);
  for (const char* name : {"gang-a-0", "gang-a-1", "gang-b-0", "gang-b-1", "secretive", "gated"}) {
    EXPECT_FALSE(decisions[std::string("team/") + name].node.empty()) << name;
  }
  EXPECT_TRUE(decisions["team/too-big"].node.empty());
}

// The kinds that come without copse's CRDs: a PodDisruptionBudget
// (policy/v1) and a KEP-4671 Workload (scheduling.k8s.io/v1alpha2), which
// exist before the recording starts, and a v1alpha2 PodGroup made from the
// Workload's template, with its three pods, which come while it records. The
// embedded API server serves both groups natively (served_versions empty).
// Each is written reduced: spec kept, status and foreign annotations not. The
// recording replays with the gang placed whole, within one rack.
TEST_F(RecordTest, RecordsBudgetsWorkloadsAndKubePodGroupsAndTheGangReplaysWhole) {
  Create(kube::resources::kNamespaces, "",
         {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}});
  auto topology = api::ParseTopology("rack=2");
  ASSERT_TRUE(topology.ok());
  auto nodes = api::MakeSyntheticNodes(
      4, *ParseResourceList("cpu=32,memory=128Gi,nvidia.com/gpu=8"), *topology);
  ASSERT_TRUE(nodes.ok());
  ASSERT_TRUE(simulator_->CreateNodes(*nodes).ok());
  const json annotations = {{"team.example.com/owner", "private-owner-text"},
                            {"copse.dev/tier", "gold"}};
  Create(kube::resources::kPodDisruptionBudgets, "team",
         {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", "guard"}, {"namespace", "team"}, {"annotations", annotations}}},
          {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "trainer"}}}}}}}});
  Create(kube::resources::kWorkloads, "team",
         {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "Workload"},
          {"metadata", {{"name", "training"}, {"namespace", "team"}, {"annotations", annotations}}},
          {"spec",
           {{"podGroupTemplates",
             json::array({{{"name", "workers"},
                           {"schedulingPolicy", {{"gang", {{"minCount", 3}}}}},
                           {"schedulingConstraints",
                            {{"topology", json::array({{{"key", "copse.dev/rack"}}})}}}}})}}}});

  RecorderOptions options;
  options.out = (dir_ / "trace.jsonl").string();
  auto recorder = Recorder::Start(NewClient(), options);
  ASSERT_TRUE(recorder.ok()) << recorder.error().ToString();
  recorder_ = std::move(recorder).value();
  StartScheduler();

  // What a workload controller does: a PodGroup from the template, then its pods.
  auto stored = store_->Get(kube::resources::kWorkloads, "team", "training");
  ASSERT_TRUE(stored.ok()) << stored.error().ToString();
  auto workload = kube::Workload::Decode((*stored)->json);
  ASSERT_TRUE(workload.ok()) << workload.error().message;
  auto group = kube::PodGroupFromTemplate(*workload, "workers", "training-workers");
  ASSERT_TRUE(group.ok()) << group.error().message;
  Create(kube::resources::kPodGroups, "team", json::parse(group->Encode()));
  const std::vector<std::string> members = {"worker-0", "worker-1", "worker-2"};
  for (const std::string& name : members) {
    Create(kube::resources::kPods, "team",
           Pod(name, "", 4, {{"labels", {{"app", "trainer"}}}},
               {{"schedulingGroup", {{"podGroupName", "training-workers"}}}}));
  }
  ASSERT_TRUE(WaitUntil([&] {
    for (const std::string& name : members) {
      if (NodeOf(name).empty()) return false;
    }
    return true;
  })) << "the live scheduler did not place the gang";
  // The recorder's watches deliver asynchronously: the pods' creates and
  // binds, and (another watch) the PodGroup's create. A recorder that misses
  // the PodGroup fails below, naming it.
  ASSERT_TRUE(WaitUntil([&] { return recorder_->stats().bound >= 3; }));
  EXPECT_TRUE(WaitUntil([&] { return recorder_->stats().create >= 4; }, std::chrono::seconds(20)))
      << "creates recorded: " << recorder_->stats().create << " of 4 (the PodGroup, 3 pods)";
  ASSERT_TRUE(recorder_->Stop().ok());

  std::ifstream in(options.out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string file = text.str();
  EXPECT_EQ(file.find("private-owner-text"), std::string::npos) << "a foreign annotation leaked";
  auto parsed = ReadTraceFile(options.out);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Trace& trace = *parsed;

  // The budget and the Workload existed at t = 0: init lines, reduced.
  const auto pdb = EventsOf(trace, "PodDisruptionBudget", "guard");
  ASSERT_EQ(Ops(pdb), "init") << "the PodDisruptionBudget is missing from the trace";
  const json pdb_object = json::parse(pdb[0]->object);
  EXPECT_EQ(pdb_object["apiVersion"], "policy/v1");
  EXPECT_EQ(pdb_object["metadata"]["namespace"], "team");
  EXPECT_EQ(pdb_object["metadata"]["annotations"], json({{"copse.dev/tier", "gold"}}));
  EXPECT_EQ(pdb_object["spec"]["minAvailable"], 2);
  EXPECT_EQ(pdb_object["spec"]["selector"]["matchLabels"]["app"], "trainer");
  EXPECT_FALSE(pdb_object.contains("status")) << pdb[0]->object;

  const auto workload_events = EventsOf(trace, "Workload", "training");
  ASSERT_EQ(Ops(workload_events), "init") << "the Workload is missing from the trace";
  const json workload_object = json::parse(workload_events[0]->object);
  EXPECT_EQ(workload_object["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(workload_object["metadata"]["annotations"], json({{"copse.dev/tier", "gold"}}));
  EXPECT_EQ(workload_object["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"],
            3);
  EXPECT_FALSE(workload_object.contains("status")) << workload_events[0]->object;

  // The PodGroup came later: a create, in scheduling.k8s.io/v1alpha2 (not
  // copse's PodGroup of the same kind), without the status the live
  // scheduler wrote.
  const auto group_events = EventsOf(trace, "PodGroup", "training-workers");
  ASSERT_EQ(Ops(group_events), "create") << "the v1alpha2 PodGroup is missing from the trace";
  EXPECT_EQ(group_events[0]->api_version, "scheduling.k8s.io/v1alpha2");
  const json group_object = json::parse(group_events[0]->object);
  EXPECT_EQ(group_object["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(group_object["spec"]["schedulingPolicy"]["gang"]["minCount"], 3);
  EXPECT_EQ(group_object["spec"]["podGroupTemplateRef"]["workload"]["workloadName"], "training");
  EXPECT_FALSE(group_object.contains("status")) << group_events[0]->object;
  int init_pdbs = 0, init_workloads = 0, init_groups = 0;
  for (const TraceEvent& e : trace.events) {
    if (e.op != TraceOp::kInit) continue;
    init_pdbs += e.kind == "PodDisruptionBudget";
    init_workloads += e.kind == "Workload";
    init_groups += e.kind == "PodGroup";
  }
  EXPECT_EQ(init_pdbs, 1);
  EXPECT_EQ(init_workloads, 1);
  EXPECT_EQ(init_groups, 0);

  for (const std::string& name : members) {
    const auto ev = EventsOf(trace, "Pod", name);
    ASSERT_EQ(Ops(ev), "create,bound") << name;
    const json pod = json::parse(ev[0]->object);
    EXPECT_EQ(pod["spec"]["schedulingGroup"]["podGroupName"], "training-workers") << name;
    EXPECT_EQ(pod["metadata"]["labels"]["app"], "trainer") << name;
    EXPECT_FALSE(pod["spec"].contains("nodeName")) << name;
  }

  // The replay places the gang whole, in one rack (the template's
  // constraint), with the budget live.
  Result<ConfigResult> result = ReplayUnderPack(trace);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->gangs, 1);
  EXPECT_EQ(result->gangs_placed, 1);
  EXPECT_EQ(result->gangs_partial, 0);
  EXPECT_EQ(result->gangs_one_rack, 1);
  EXPECT_EQ(result->pods, 3);
  EXPECT_EQ(result->pods_placed, 3);
  EXPECT_EQ(result->victims, 0);
  EXPECT_EQ(result->max_nodes_over_allocatable, 0);
  for (const Decision& d : result->decisions) EXPECT_FALSE(d.node.empty()) << d.pod;
}

TEST_F(RecordTest, AnUnwritableFileOrAnUnreachableServerIsAClearErrorAndLeavesNothing) {
  RecorderOptions options;
  options.out = (dir_ / "no-such-dir" / "trace.jsonl").string();
  auto bad_path = Recorder::Start(NewClient(), options);
  ASSERT_FALSE(bad_path.ok());
  EXPECT_EQ(bad_path.error().code, ErrorCode::kInvalid);
  EXPECT_NE(bad_path.error().message.find("no-such-dir/trace.jsonl.tmp"), std::string::npos)
      << bad_path.error().message;

  // A port nothing listens on (the server's, once stopped).
  const std::string url = server_->http_url();
  server_->Stop();
  server_.reset();
  kube::ClientConfig config;
  config.server = url;
  config.timeout = std::chrono::seconds(2);
  auto client = kube::Client::Create(config, io_->executor());
  ASSERT_TRUE(client.ok());
  options.out = (dir_ / "trace.jsonl").string();
  auto unreachable = Recorder::Start(*client, options);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_NE(unreachable.error().code, ErrorCode::kInvalid);
  EXPECT_NE(unreachable.error().message.find("discovery"), std::string::npos)
      << unreachable.error().message;
  EXPECT_FALSE(fs::exists(options.out));
  EXPECT_FALSE(fs::exists(options.out + ".tmp"));
}

}  // namespace
}  // namespace copse::replay
