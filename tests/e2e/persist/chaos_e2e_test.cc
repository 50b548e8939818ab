// Chaos, bounded: `copse run` as its own process against `copse local
// --no-scheduler`, killed with SIGKILL at random points while 200 gangs
// arrive and bind (20 rounds, restarted each time); and `copse local
// --data-dir` itself killed and restarted under a running scheduler, whose
// watches are cut and, resumed from before the crash, answered 410 Gone (its
// informers relist). Afterwards: no gang is partly bound, no node holds more
// than its allocatable, every gang that fits is bound, and the gangs that
// cannot fit have nothing bound.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/apiserver/http_helper.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::e2e {
namespace {

using apiserver::testing::HttpClient;
using nlohmann::json;

constexpr int kNodes = 20;
constexpr int kNodeMilliCpu = 16000;
constexpr int kGangSize = 3;
constexpr int kMemberMilliCpu = 500;  // 200 gangs of 3 fit with room to spare
constexpr int kTooBigMilliCpu = 20000;

uint16_t FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct Cluster {
  std::string dir;
  std::string kubeconfig;  // plain HTTP on a fixed port: valid across restarts
  uint16_t http_port = 0;
  std::unique_ptr<Process> local;

  explicit Cluster(bool data_dir) : use_data_dir(data_dir) {
    char tmpl[] = "/tmp/copse-chaos-XXXXXX";
    dir = mkdtemp(tmpl);
    http_port = FreePort();
    kubeconfig = dir + "/http.kubeconfig";
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                                 "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:"
                              << http_port
                              << "\ncontexts:\n- name: c\n  context:\n    cluster: c\n"
                                 "    user: u\nusers:\n- name: u\n  user: {}\n";
  }
  ~Cluster() {
    local.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  bool Start() {
    std::vector<std::string> argv = {COPSE_BINARY,
                                     "local",
                                     "--port",
                                     "0",
                                     "--http-port",
                                     std::to_string(http_port),
                                     "--no-token",
                                     "--no-scheduler",
                                     "--no-grove",
                                     "--no-controllers",
                                     "--nodes",
                                     std::to_string(kNodes),
                                     "--node-shape",
                                     "cpu=16,memory=64Gi,pods=110",
                                     "--pod-ready-delay-ms",
                                     "100",
                                     "--kubeconfig-out",
                                     dir + "/kubeconfig"};
    if (use_data_dir) {
      argv.push_back("--data-dir");
      argv.push_back(dir + "/data");
    }
    local = std::make_unique<Process>(argv);
    const bool ready = local->WaitForLine("copse local: ready", std::chrono::seconds(30));
    if (!ready) ADD_FAILURE() << local->seen();
    return ready;
  }
  std::unique_ptr<Process> StartScheduler() {
    return std::make_unique<Process>(std::vector<std::string>{
        COPSE_BINARY, "run", "--kubeconfig", kubeconfig, "--no-leader-elect", "--ops-port", "0"});
  }
  bool use_data_dir;
};

json PodGroup(const std::string& name) {
  return {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"minMember", kGangSize}}}};
}

json Member(const std::string& gang, int i, int milli_cpu) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", gang + "-" + std::to_string(i)},
        {"namespace", "default"},
        {"labels", {{"scheduling.copse.dev/pod-group", gang}}}}},
      {"spec",
       {{"schedulerName", "copse-scheduler"},
        {"containers",
         json::array({{{"name", "main"},
                       {"image", "registry.k8s.io/pause:3.10"},
                       {"resources",
                        {{"requests",
                          {{"cpu", std::to_string(milli_cpu) + "m"}, {"memory", "64Mi"}}}}}}})}}}};
}

void CreateGang(HttpClient& http, const std::string& name, int milli_cpu) {
  auto g =
      http.Post("/apis/scheduling.copse.dev/v1alpha1/namespaces/default/podgroups", PodGroup(name));
  ASSERT_EQ(g.status, 201) << g.body;
  for (int i = 0; i < kGangSize; ++i) {
    auto p = http.Post("/api/v1/namespaces/default/pods", Member(name, i, milli_cpu));
    ASSERT_EQ(p.status, 201) << p.body;
  }
}

int64_t MilliCpu(const std::string& q) {
  if (q.ends_with("m")) return std::stoll(q.substr(0, q.size() - 1));
  return static_cast<int64_t>(std::stod(q) * 1000);
}

struct Placement {
  std::map<std::string, int> bound_per_gang;  // gang -> members bound
  std::map<std::string, int> members_per_gang;
  std::map<std::string, int64_t> milli_cpu_per_node;
};

Placement ReadPlacement(HttpClient& http) {
  Placement out;
  auto listed = http.Get("/api/v1/namespaces/default/pods");
  EXPECT_EQ(listed.status, 200) << listed.body;
  const json list = listed.Json();  // named: a temporary's items would dangle in the loop
  for (const auto& pod : list["items"]) {
    const std::string gang = pod["metadata"]["labels"].value("scheduling.copse.dev/pod-group", "");
    if (gang.empty()) continue;
    ++out.members_per_gang[gang];
    const std::string node = pod["spec"].value("nodeName", "");
    if (node.empty()) continue;
    ++out.bound_per_gang[gang];
    for (const auto& c : pod["spec"]["containers"]) {
      out.milli_cpu_per_node[node] += MilliCpu(c["resources"]["requests"]["cpu"]);
    }
  }
  return out;
}

// The invariants; `fitting` gangs must all be bound, `too_big` none.
void CheckInvariants(const Placement& p, int fitting, const std::vector<std::string>& too_big) {
  int complete = 0;
  for (const auto& [gang, members] : p.members_per_gang) {
    const int bound = p.bound_per_gang.count(gang) ? p.bound_per_gang.at(gang) : 0;
    EXPECT_TRUE(bound == 0 || bound == members)
        << gang << " is partial: " << bound << "/" << members;
    if (bound == members) ++complete;
  }
  for (const auto& gang : too_big) EXPECT_EQ(p.bound_per_gang.count(gang), 0u) << gang;
  EXPECT_EQ(complete, fitting);
  for (const auto& [node, milli] : p.milli_cpu_per_node) {
    EXPECT_LE(milli, kNodeMilliCpu) << node << " is over its allocatable cpu";
  }
}

bool WaitForBound(HttpClient& http, int gangs, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    Placement p = ReadPlacement(http);
    int complete = 0;
    for (const auto& [gang, bound] : p.bound_per_gang) complete += bound == kGangSize;
    if (complete >= gangs) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

TEST(ChaosE2E, CopseRunKilledAtRandomPointsWhile200GangsBindLeavesNoPartialGang) {
  Cluster cluster(/*data_dir=*/false);
  ASSERT_TRUE(cluster.Start());
  HttpClient http(cluster.http_port);
  const std::vector<std::string> too_big = {"too-big-0", "too-big-1"};
  for (const auto& g : too_big) CreateGang(http, g, kTooBigMilliCpu);

  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> kill_after_ms(0, 1500);
  constexpr int kRounds = 20;
  constexpr int kGangs = 200;
  for (int round = 0; round < kRounds; ++round) {
    auto scheduler = cluster.StartScheduler();
    // 10 more gangs arrive while this scheduler starts and binds.
    for (int g = 0; g < kGangs / kRounds; ++g) {
      CreateGang(http, "gang-" + std::to_string(round * (kGangs / kRounds) + g), kMemberMilliCpu);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms(rng)));  // the kill point
    scheduler->KillHard();
    scheduler->Wait();
  }
  auto scheduler = cluster.StartScheduler();
  const bool bound = WaitForBound(http, kGangs, std::chrono::seconds(60));
  scheduler->Drain();
  EXPECT_TRUE(bound) << scheduler->seen();
  // Leave the scheduler running a little past the last bind: nothing more
  // may be bound (the too-big gangs stay whole-or-nothing).
  CheckInvariants(ReadPlacement(http), kGangs, too_big);
}

TEST(ChaosE2E, ApiServerKilledAndRestartedUnderARunningScheduler) {
  Cluster cluster(/*data_dir=*/true);
  ASSERT_TRUE(cluster.Start());
  auto scheduler = cluster.StartScheduler();
  constexpr int kGangs = 60;
  {
    HttpClient http(cluster.http_port);
    for (int g = 0; g < kGangs / 2; ++g)
      CreateGang(http, "a-" + std::to_string(g), kMemberMilliCpu);
  }
  // Kill the API server mid-way through those binds, then restart it on the
  // same data and port; the scheduler's watches were cut and its resumes
  // are from before the crash (410 Gone: it must relist).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the kill point
  cluster.local->KillHard();
  cluster.local->Wait();
  ASSERT_TRUE(cluster.Start());
  HttpClient http(cluster.http_port);
  for (int g = 0; g < kGangs / 2; ++g) CreateGang(http, "b-" + std::to_string(g), kMemberMilliCpu);
  const bool bound = WaitForBound(http, kGangs, std::chrono::seconds(60));
  scheduler->Drain();
  EXPECT_TRUE(bound) << scheduler->seen();
  CheckInvariants(ReadPlacement(http), kGangs, {});
  // The scheduler process lived through it.
  scheduler->Drain();
  EXPECT_EQ(::kill(scheduler->pid(), 0), 0) << scheduler->seen();
}

}  // namespace
}  // namespace copse::e2e
