// Chaos, bounded: `copse run` as its own process against `copse local
// --no-scheduler`, killed with SIGKILL at random points while 200 gangs
// arrive and bind (20 rounds, restarted each time; most rounds killed while
// a gang is being placed and bound); and `copse local
// --data-dir` itself killed and restarted under a running scheduler, whose
// watches are cut and, resumed from before the crash, answered 410 Gone (its
// informers relist). Afterwards: no gang is partly bound, no node holds more
// than its allocatable of any resource (cpu, memory, pod count, and any other
// the pods request), every gang that fits is bound, and the gangs that
// cannot fit have nothing bound. The kills must land while binds are under
// way (counted per round), or the test would prove nothing.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/quantity.h"
#include "tests/integration/apiserver/http_helper.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::e2e {
namespace {

using apiserver::testing::HttpClient;
using nlohmann::json;

constexpr int kNodes = 20;
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
        COPSE_BINARY, "run", "--kubeconfig", kubeconfig, "--no-leader-elect", "--bind-address",
        "127.0.0.1", "--secure-port", "0"});
  }
  bool use_data_dir;
};

json PodGroup(const std::string& name) {
  return {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"minMember", kGangSize}}}};
}

json Member(const std::string& gang, int i, int milli_cpu, int round) {
  json pod = {
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
  if (round >= 0) pod["metadata"]["labels"]["chaos-round"] = std::to_string(round);
  return pod;
}

// `round` >= 0: the members are labelled chaos-round=<round>.
void CreateGang(HttpClient& http, const std::string& name, int milli_cpu, int round = -1) {
  auto g =
      http.Post("/apis/scheduling.copse.dev/v1alpha1/namespaces/default/podgroups", PodGroup(name));
  ASSERT_EQ(g.status, 201) << g.body;
  for (int i = 0; i < kGangSize; ++i) {
    auto p = http.Post("/api/v1/namespaces/default/pods", Member(name, i, milli_cpu, round));
    ASSERT_EQ(p.status, 201) << p.body;
  }
}

int64_t Milli(const json& quantity) {
  auto q = Quantity::Parse(quantity.is_string() ? quantity.get<std::string>() : quantity.dump());
  EXPECT_TRUE(q.ok()) << quantity;
  return q.ok() ? q->MilliValue() : 0;
}

// Resource name -> milli-units; "pods" counts pods (1000 each).
using Resources = std::map<std::string, int64_t>;

struct Placement {
  std::map<std::string, int> bound_per_gang;  // gang -> members bound
  std::map<std::string, int> members_per_gang;
  std::map<std::string, Resources> requested_per_node;  // what the bound pods request
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
    Resources& requested = out.requested_per_node[node];
    requested["pods"] += 1000;
    for (const auto& c : pod["spec"]["containers"]) {
      if (!c.contains("resources") || !c["resources"].contains("requests")) continue;
      for (const auto& [name, quantity] : c["resources"]["requests"].items()) {
        requested[name] += Milli(quantity);
      }
    }
  }
  return out;
}

// Node -> its allocatable, as the API server has it.
std::map<std::string, Resources> ReadAllocatable(HttpClient& http) {
  std::map<std::string, Resources> out;
  auto listed = http.Get("/api/v1/nodes");
  EXPECT_EQ(listed.status, 200) << listed.body;
  const json list = listed.Json();
  for (const auto& node : list["items"]) {
    Resources& allocatable = out[node["metadata"]["name"].get<std::string>()];
    for (const auto& [name, quantity] : node["status"]["allocatable"].items()) {
      allocatable[name] = Milli(quantity);
    }
  }
  return out;
}

// The invariants; `fitting` gangs must all be bound, `too_big` none.
void CheckInvariants(const Placement& p, int fitting, const std::vector<std::string>& too_big,
                     const std::map<std::string, Resources>& allocatable) {
  int complete = 0;
  for (const auto& [gang, members] : p.members_per_gang) {
    const int bound = p.bound_per_gang.count(gang) ? p.bound_per_gang.at(gang) : 0;
    EXPECT_TRUE(bound == 0 || bound == members)
        << gang << " is partial: " << bound << "/" << members;
    if (bound == members) ++complete;
  }
  for (const auto& gang : too_big) EXPECT_EQ(p.bound_per_gang.count(gang), 0u) << gang;
  EXPECT_EQ(complete, fitting);
  // Every resource the bound pods request, pod count included, within each
  // node's allocatable (a resource the node lacks has allocatable 0).
  std::set<std::string> checked;
  for (const auto& [node, requested] : p.requested_per_node) {
    ASSERT_TRUE(allocatable.count(node)) << "pods bound to unknown node " << node;
    const Resources& has = allocatable.at(node);
    for (const auto& [name, milli] : requested) {
      if (milli == 0) continue;
      checked.insert(name);
      const int64_t limit = has.count(name) ? has.at(name) : 0;
      EXPECT_LE(milli, limit) << node << " is over its allocatable " << name;
    }
  }
  // Not vacuous: the members request cpu and memory, and every pod counts.
  if (complete > 0) {
    EXPECT_TRUE(checked.count("cpu") && checked.count("memory") && checked.count("pods"));
  }
}

// Pods of round `round` that are bound.
int RoundBound(HttpClient& http, int round) {
  auto listed = http.Get("/api/v1/namespaces/default/pods?labelSelector=chaos-round%3D" +
                         std::to_string(round));
  EXPECT_EQ(listed.status, 200) << listed.body;
  const json list = listed.Json();
  int bound = 0;
  for (const auto& pod : list["items"]) bound += !pod["spec"].value("nodeName", "").empty();
  return bound;
}

// Polls until at least `pods` of round `round` are bound.
bool WaitForRoundBound(HttpClient& http, int round, int pods, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (RoundBound(http, round) >= pods) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return false;
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
  constexpr int kGangsPerRound = kGangs / kRounds;
  // The scheduler binds a gang within a millisecond or two of its last
  // member's arrival: killed at a random time after a round's gangs have
  // arrived, it has nearly always bound them all. So three rounds in four
  // are killed while their gangs arrive: once the scheduler has bound some
  // of the round, one more gang arrives and the kill follows its last
  // member within a millisecond or so, while that gang is being placed and
  // bound. Every fourth round keeps the random kill up to 1.5 s after the
  // round's arrivals.
  std::uniform_int_distribution<int> mid_after_gangs(2, kGangsPerRound - 1);
  std::uniform_int_distribution<int> mid_delay_us(0, 1500);
  // Per round: the round's pods bound after the kill, and created by then.
  std::vector<std::pair<int, int>> at_kill;
  int killed_with_binds_outstanding = 0;
  for (int round = 0; round < kRounds; ++round) {
    auto scheduler = cluster.StartScheduler();
    const bool mid = round % 4 != 3;
    const int kill_after = mid ? mid_after_gangs(rng) : kGangsPerRound;
    int g = 0;
    const auto create_next = [&] {
      CreateGang(http, "gang-" + std::to_string(round * kGangsPerRound + g), kMemberMilliCpu,
                 round);
      ++g;
    };
    while (g < kill_after - (mid ? 1 : 0)) create_next();
    if (mid) {
      EXPECT_TRUE(WaitForRoundBound(http, round, 1, std::chrono::seconds(30)))
          << "round " << round << ": nothing bound; " << scheduler->seen();
      create_next();
      std::this_thread::sleep_for(std::chrono::microseconds(mid_delay_us(rng)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms(rng)));
    }
    scheduler->KillHard();  // the kill point
    scheduler->Wait();
    // What the killed scheduler got bound (a bind it sent just before the
    // kill may still land, so this may count one or two late).
    const int bound = RoundBound(http, round);
    const int created = kGangSize * g;
    at_kill.emplace_back(bound, created);
    if (bound < created) ++killed_with_binds_outstanding;
    // The rest of the round's gangs arrive with no scheduler running.
    while (g < kGangsPerRound) create_next();
  }
  std::string kills;
  for (const auto& [bound, created] : at_kill) {
    kills += " " + std::to_string(bound) + "/" + std::to_string(created);
  }
  std::cout << "chaos: the round's pods bound/created at each kill:" << kills << " ("
            << killed_with_binds_outstanding << " with binds outstanding)" << std::endl;
  SCOPED_TRACE("the round's pods bound/created at each kill:" + kills);
  // The kills must land while binds are under way (pods created and not yet
  // bound by the killed scheduler), not only before or after them.
  EXPECT_GE(killed_with_binds_outstanding, 5) << "kills that landed with binds outstanding";
  auto scheduler = cluster.StartScheduler();
  const bool bound = WaitForBound(http, kGangs, std::chrono::seconds(60));
  scheduler->Drain();
  EXPECT_TRUE(bound) << scheduler->seen();
  // Leave the scheduler running a little past the last bind: nothing more
  // may be bound (the too-big gangs stay whole-or-nothing).
  CheckInvariants(ReadPlacement(http), kGangs, too_big, ReadAllocatable(http));
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
  CheckInvariants(ReadPlacement(http), kGangs, {}, ReadAllocatable(http));
  // The scheduler process lived through it: not exited (kill(pid, 0) would
  // also succeed for an exited child not yet reaped).
  scheduler->Drain();
  int wstatus = 0;
  EXPECT_EQ(::waitpid(scheduler->pid(), &wstatus, WNOHANG), 0)
      << "the scheduler exited (status " << wstatus << "): " << scheduler->seen();
}

}  // namespace
}  // namespace copse::e2e
