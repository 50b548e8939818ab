// `copse local --record` and `copse record` as users run them: the binary,
// with the machine's kubectl creating and deleting pods.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "replay/trace.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::e2e {
namespace record_cli_test {

using nlohmann::json;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

std::string PodYaml(const std::string& name, const std::string& extra_container = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  annotations:\n    team.example.com/ticket: private-ticket-42\n"
         "spec:\n  schedulerName: copse-scheduler\n  terminationGracePeriodSeconds: 0\n"
         "  containers:\n  - name: c\n    image: pause\n" +
         extra_container +
         "    resources:\n      requests:\n        cpu: 100m\n        nvidia.com/gpu: 1\n"
         "      limits:\n        nvidia.com/gpu: 1\n";
}

// The events of one pod, by op name, in file order.
std::string PodOps(const replay::Trace& trace, const std::string& name) {
  std::string out;
  for (const replay::TraceEvent& e : trace.events) {
    if (e.name != name || (!e.kind.empty() && e.kind != "Pod")) continue;
    if (!out.empty()) out += ",";
    out += replay::TraceOpName(e.op);
  }
  return out;
}

class RecordCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HaveKubectl()) << "kubectl is required for this test";
    dir_ = fs::temp_directory_path() / ("copse-record-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    kubeconfig_ = (dir_ / "kubeconfig").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Process> StartLocal(std::vector<std::string> extra) {
    std::vector<std::string> argv = {COPSE_BINARY,
                                     "local",
                                     "--port",
                                     "0",
                                     "--http-port",
                                     "0",
                                     "--kubeconfig-out",
                                     kubeconfig_,
                                     "--nodes",
                                     "3",
                                     "--node-shape",
                                     "cpu=8,memory=32Gi,nvidia.com/gpu=4",
                                     "--pod-ready-delay-ms",
                                     "100",
                                     "--no-grove",
                                     "--no-controllers"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto local = std::make_unique<Process>(argv);
    EXPECT_TRUE(local->WaitForLine("copse local: ready", std::chrono::seconds(30)))
        << local->seen();
    return local;
  }

  CommandResult Kubectl(std::vector<std::string> args, const std::string& in = {}) {
    std::vector<std::string> argv = {"kubectl",
                                     "--kubeconfig",
                                     kubeconfig_,
                                     "--cache-dir",
                                     (dir_ / "kubectl-cache").string(),
                                     "--request-timeout",
                                     "20s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, in);
  }

  // Every named pod has a node (as kubectl sees it).
  bool AllBound(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      CommandResult r = Kubectl({"get", "pod", name, "-o", "jsonpath={.spec.nodeName}"});
      if (r.exit_code != 0 || r.out.empty()) return false;
    }
    return true;
  }

  fs::path dir_;
  std::string kubeconfig_;
};

TEST_F(RecordCliTest, LocalRecordWritesTheClusterHistory) {
  const fs::path trace_path = dir_ / "local.jsonl";
  auto local = StartLocal({"--record", trace_path.string()});
  ASSERT_NE(local->seen().find("recording to"), std::string::npos) << local->seen();

  const std::string secret_env =
      "    env:\n    - name: TOKEN\n      value: env-secret-value\n"
      "    - name: DB\n      valueFrom:\n        secretKeyRef:\n          name: db-secret-name\n"
      "          key: password\n";
  for (int i = 0; i < 3; ++i) {
    const std::string name = "rec-" + std::to_string(i);
    CommandResult r =
        Kubectl({"apply", "-f", "-"}, PodYaml(name, i == 0 ? secret_env : std::string()));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  ASSERT_TRUE(WaitUntil([&] { return AllBound({"rec-0", "rec-1", "rec-2"}); }));
  CommandResult del = Kubectl({"delete", "pod", "rec-2", "--wait=true"});
  ASSERT_EQ(del.exit_code, 0) << del.out;
  // Lines reach the .tmp file as they are recorded: stop once rec-2's end is there.
  const fs::path tmp = trace_path.string() + ".tmp";
  ASSERT_TRUE(WaitUntil([&] {
    return ReadAll(tmp).find(R"("name":"rec-2","namespace":"default","op":"end")") !=
           std::string::npos;
  })) << ReadAll(tmp);
  EXPECT_FALSE(fs::exists(trace_path));

  local->Kill();
  EXPECT_EQ(local->Wait(), 0) << local->seen();
  EXPECT_NE(local->seen().find("copse local: recorded"), std::string::npos) << local->seen();
  EXPECT_FALSE(fs::exists(tmp));
  const std::string file = ReadAll(trace_path);
  for (const char* secret : {"env-secret-value", "db-secret-name", "private-ticket-42"}) {
    EXPECT_EQ(file.find(secret), std::string::npos) << secret << " leaked: " << file;
  }
  auto trace = replay::ReadTraceFile(trace_path.string());
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->header.source, "record");
  EXPECT_GT(trace->header.duration_ms, 0);
  int init_nodes = 0;
  for (const replay::TraceEvent& e : trace->events) {
    if (e.op == replay::TraceOp::kInit && e.kind == "Node") ++init_nodes;
  }
  EXPECT_EQ(init_nodes, 3);
  EXPECT_EQ(PodOps(*trace, "rec-0"), "create,bound");
  EXPECT_EQ(PodOps(*trace, "rec-1"), "create,bound");
  EXPECT_EQ(PodOps(*trace, "rec-2"), "create,bound,end");
}

TEST_F(RecordCliTest, RecordCommandFollowsACluster) {
  auto local = StartLocal({});
  const fs::path trace_path = dir_ / "cluster.jsonl";
  // The pod exists before recording: an init line, bound at t = 0.
  ASSERT_EQ(Kubectl({"apply", "-f", "-"}, PodYaml("before")).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return AllBound({"before"}); }));
  Process record(
      {COPSE_BINARY, "record", "--kubeconfig", kubeconfig_, "--out", trace_path.string()});
  ASSERT_TRUE(record.WaitForLine("copse record: recording", std::chrono::seconds(30)))
      << record.seen();
  ASSERT_EQ(Kubectl({"apply", "-f", "-"}, PodYaml("during")).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return AllBound({"during"}); }));
  const fs::path tmp = trace_path.string() + ".tmp";
  ASSERT_TRUE(WaitUntil([&] {
    return ReadAll(tmp).find(R"("name":"during","namespace":"default","node")") !=
           std::string::npos;
  })) << ReadAll(tmp);
  record.Kill();
  EXPECT_EQ(record.Wait(), 0) << record.seen();
  EXPECT_NE(record.seen().find("copse record: wrote"), std::string::npos) << record.seen();
  auto trace = replay::ReadTraceFile(trace_path.string());
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(PodOps(*trace, "before"), "init,bound");
  EXPECT_EQ(PodOps(*trace, "during"), "create,bound");

  // --duration ends the recording by itself.
  const fs::path timed = dir_ / "timed.jsonl";
  CommandResult r = RunCommand({COPSE_BINARY, "record", "--kubeconfig", kubeconfig_, "--out",
                                timed.string(), "--duration", "1s"},
                               {}, std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto timed_trace = replay::ReadTraceFile(timed.string());
  ASSERT_TRUE(timed_trace.ok()) << timed_trace.error().message;
  EXPECT_GE(timed_trace->header.duration_ms, 1000);
  EXPECT_EQ(PodOps(*timed_trace, "during"), "init,bound");
}

TEST_F(RecordCliTest, BadFlagsAndAnUnreachableServerNameTheFlag) {
  CommandResult r = RunCommand({COPSE_BINARY, "record", "--out", (dir_ / "x.jsonl").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--kubeconfig"), std::string::npos) << r.out;

  // A cluster nobody serves: port 1 on loopback refuses connections.
  const std::string nowhere = (dir_ / "nowhere.kubeconfig").string();
  std::ofstream(nowhere) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                            "    server: http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n"
                            "    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n"
                            "  user: {}\n";
  r = RunCommand({COPSE_BINARY, "record", "--kubeconfig", nowhere});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--out"), std::string::npos) << r.out;
  r = RunCommand({COPSE_BINARY, "record", "--kubeconfig", nowhere, "--out",
                  (dir_ / "x.jsonl").string(), "--duration", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--duration"), std::string::npos) << r.out;

  r = RunCommand(
      {COPSE_BINARY, "record", "--kubeconfig", nowhere, "--out", (dir_ / "x.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--kubeconfig"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("http://127.0.0.1:1"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl"));
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl.tmp"));

  r = RunCommand({COPSE_BINARY, "local", "--port", "0", "--http-port", "0", "--kubeconfig-out",
                  kubeconfig_, "--record", (dir_ / "missing" / "t.jsonl").string()});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--record"), std::string::npos) << r.out;
}

}  // namespace record_cli_test
}  // namespace copse::e2e
