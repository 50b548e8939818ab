// Quality scenario (issue 21): how many gangs copse places on small GPU
// clusters, against the exact optimum and a first-fit baseline.
//
//   quality   200 seeded instances (SplitMix64, seed kQualitySeed + i): 8-16
//             nodes of 8 GPUs (cpu 64, memory 512Gi) spread evenly over 4-8
//             racks (label copse.dev/rack); 6-12 gangs of 2-8 pods asking
//             1-8 GPUs each (cpu 1, memory 1Gi; the same for every pod of a
//             gang); 40% of the gangs require one rack. No priorities.
//             Per instance, end to end: a fresh embedded API server, copse's
//             scheduler connected to it over loopback HTTP with the default
//             profile (no config), the copse Topology `quality` (rack >
//             hostname), and:
//               1. every pod created over HTTP (copse PodGroup members,
//                  label scheduling.copse.dev/pod-group), then a wait until
//                  the scheduler has seen them all (it marks each as waiting
//                  for its PodGroup);
//               2. the PodGroups (scheduling.copse.dev/v1alpha1, minMember
//                  = every pod; rack gangs with requiredTopologyLevel rack)
//                  created over HTTP back to back: all gangs at once;
//               3. a wait until every gang is bound whole or its PodGroup
//                  reports phase Unschedulable (capacity only shrinks, so it
//                  cannot fit later).
//             The model of the same instance (topology/gang_packing.h) gives
//             the exact optimum (branch and bound) and first fit in
//             submission order.
//             Figures: copse_ratio / first_fit_ratio (mean over instances of
//             gangs placed / the optimum's; 1 when the optimum is 0),
//             gangs_placed / gangs_offered (copse, over every instance),
//             instances where copse is at the optimum and below first fit,
//             stranded_accelerators (free GPUs on nodes where no pod of a
//             pending gang fits: at the end, and averaged over the run (after
//             every bind), each a mean over instances) for copse, first fit
//             and the optimum's placement, and violations of the invariants
//             (a gang bound in part, a rack gang over two racks, a node over
//             8 GPUs; must be 0), and last_bind_ms (from the PodGroups
//             created to the last bind, mean over instances). --pods N runs
//             N instances.
//   quality-burst  the same with the scheduler's gang burst window at 100 ms
//             (SchedulerOptions::gang_burst_window): the gangs of an instance
//             are ordered before placement instead of first come, first
//             served; last_bind_ms shows what the window costs in waiting.
//             Targets: copse_ratio >= 0.95; copse >= first fit on every
//             instance; no violation; every optimum proven.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "bench/harness.h"
#include "bench/pod_watch.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "kube/client.h"
#include "kube/object.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "scheduler/scheduler.h"
#include "topology/gang_packing.h"

namespace copse::bench {
namespace quality_bench {
namespace {

namespace api = copse::apiserver;
using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using topology::PackingGang;
using topology::PackingNode;

constexpr const char* kNamespace = "bench";
constexpr const char* kTopologyName = "quality";
constexpr const char* kRackLabel = "copse.dev/rack";
constexpr const char* kGpu = "nvidia.com/gpu";
constexpr int32_t kGpusPerNode = 8;
constexpr uint64_t kQualitySeed = 0x9a11'7e21;
constexpr int64_t kDefaultInstances = 200;
// quality-burst's gang burst window: the PodGroups of an instance are
// created within a few milliseconds; this leaves room on a loaded machine.
constexpr Clock::Duration kBurstWindow = std::chrono::milliseconds(100);
// What the scheduler writes on a member whose PodGroup does not exist yet.
constexpr std::string_view kWaitsForGroup = "does not exist; the pod waits until it is created";

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int32_t Uniform(int32_t lo, int32_t hi) {
    return lo + static_cast<int32_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

struct Instance {
  int32_t nodes = 0;
  int32_t racks = 0;
  std::vector<PackingGang> gangs;
};

Instance MakeInstance(uint64_t seed) {
  SplitMix64 rng(seed);
  Instance in;
  in.nodes = rng.Uniform(8, 16);
  in.racks = rng.Uniform(4, 8);
  const int32_t gangs = rng.Uniform(6, 12);
  for (int32_t g = 0; g < gangs; ++g) {
    PackingGang gang;
    gang.pods = rng.Uniform(2, 8);
    gang.per_pod = rng.Uniform(1, 8);
    gang.rack_required = rng.Uniform(1, 100) <= 40;
    in.gangs.push_back(gang);
  }
  return in;
}

std::string GangName(size_t g) { return "g" + std::to_string(g); }
std::string PodName(size_t g, int32_t i) { return GangName(g) + "-" + std::to_string(i); }
// "g3-7" -> 3; -1 for other names.
int64_t GangOf(std::string_view name) {
  if (name.size() < 2 || name[0] != 'g') return -1;
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos) return -1;
  int64_t g = 0;
  for (char c : name.substr(1, dash - 1)) {
    if (c < '0' || c > '9') return -1;
    g = g * 10 + (c - '0');
  }
  return g;
}

std::string PodJson(size_t g, int32_t i, const PackingGang& gang) {
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", PodName(g, i)},
        {"namespace", kNamespace},
        {"labels", {{"scheduling.copse.dev/pod-group", GangName(g)}}}}},
      {"spec",
       {{"schedulerName", "copse-scheduler"},
        {"containers",
         json::array({{{"name", "main"},
                       {"image", "registry.k8s.io/pause:3.10"},
                       {"resources",
                        {{"requests",
                          {{"cpu", "1"}, {"memory", "1Gi"}, {kGpu, std::to_string(gang.per_pod)}}},
                         {"limits", {{kGpu, std::to_string(gang.per_pod)}}}}}}})}}}};
  return pod.dump();
}

std::string GroupJson(size_t g, const PackingGang& gang) {
  json spec = {{"minMember", gang.pods}};
  if (gang.rack_required) {
    spec["topologyConstraint"] = {{"topology", kTopologyName}, {"requiredTopologyLevel", "rack"}};
  }
  const json group = {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
                      {"kind", "PodGroup"},
                      {"metadata", {{"name", GangName(g)}, {"namespace", kNamespace}}},
                      {"spec", spec}};
  return group.dump();
}

// Binds (in order) and the pods the scheduler has seen, from a store watch.
class Watcher {
 public:
  struct Bind {
    std::string pod;
    std::string node;
    TimePoint at;  // when the watch delivered it
  };
  explicit Watcher(api::Store& store)
      : watch_(store, kNamespace, [this](const std::vector<api::WatchEvent>& events, TimePoint at) {
          Record(events, at);
        }) {}
  bool ok() const { return watch_.ok(); }
  int64_t observed() const { return observed_.load(); }
  std::vector<Bind> Binds() {
    std::lock_guard lock(mu_);
    return binds_;
  }

 private:
  void Record(const std::vector<api::WatchEvent>& events, TimePoint at) {
    std::lock_guard lock(mu_);
    for (const api::WatchEvent& e : events) {
      if ((e.type != api::WatchEventType::kAdded && e.type != api::WatchEventType::kModified) ||
          !e.object) {
        continue;
      }
      if (e.object->node_name.empty()) {
        if (e.object->json.find(kWaitsForGroup) != std::string::npos &&
            observed_names_.insert(e.object->name).second) {
          observed_.fetch_add(1);
        }
        continue;
      }
      if (bound_.insert(e.object->name).second) {
        binds_.push_back({e.object->name, e.object->node_name, at});
      }
    }
  }

  std::mutex mu_;
  std::set<std::string> observed_names_;
  std::set<std::string> bound_;
  std::vector<Bind> binds_;
  std::atomic<int64_t> observed_{0};
  PodWatchThread watch_;  // last: stopped before the records go
};

struct CopseRun {
  std::vector<uint8_t> placed;  // per gang: bound whole
  std::vector<int32_t> free;    // per model node, at the end
  double stranded_mean = 0;     // over the binds
  double last_bind_ms = 0;      // from the PodGroups created to the last bind (0: none)
  int64_t violations = 0;
  std::string violation;                         // the first one
  std::vector<std::vector<int32_t>> gang_nodes;  // per gang: model node of each bind
  std::vector<size_t> bind_order;                // gangs in the order of their first bind
  scheduler::SchedulerStats stats;               // the scheduler's, at the end
};

// Free GPUs stranded on `free`, given the gangs not placed (`placed` 0).
int64_t Stranded(const std::vector<int32_t>& free, const std::vector<PackingGang>& gangs,
                 const std::vector<uint8_t>& placed) {
  std::vector<int64_t> node_free(free.begin(), free.end());
  std::vector<int64_t> pending;
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (!placed[g]) pending.push_back(gangs[g].per_pod);
  }
  return topology::StrandedCapacity(node_free, pending);
}

// One instance through copse, end to end.
Result<CopseRun> RunCopse(const Instance& in, const std::vector<PackingNode>& model_nodes,
                          const std::vector<std::string>& node_objects,
                          const std::vector<std::string>& node_names, const BenchOptions& options,
                          Clock::Duration burst_window) {
  auto store = api::NewStore(api::StoreOptions{});
  auto create = [&](const kube::ResourceRef& ref, std::string_view ns,
                    std::string_view body) -> Status {
    auto created = store->Create(ref, ns, body);
    if (!created.ok()) return created.error();
    return Status::Ok();
  };
  for (const auto& [plural, kind, namespaced] :
       {std::tuple<std::string, std::string, bool>{"podgroups", "PodGroup", true},
        std::tuple<std::string, std::string, bool>{"topologies", "Topology", false}}) {
    if (Status s = create(kube::resources::kCustomResourceDefinitions, "",
                          CopseCrdJson(plural, kind, namespaced));
        !s.ok()) {
      return s.error();
    }
  }
  kube::Topology levels;
  levels.api_version = kube::Topology::kApiVersion;
  levels.kind = kube::Topology::kKind;
  levels.meta.name = kTopologyName;
  levels.spec.levels.push_back({kRackLabel});
  levels.spec.levels.push_back({"kubernetes.io/hostname"});
  if (Status s = create(kube::resources::kTopologies, "", levels.Encode()); !s.ok()) {
    return s.error();
  }
  for (const std::string& node : node_objects) {
    if (Status s = create(kube::resources::kNodes, "", node); !s.ok()) return s.error();
  }
  if (Status s = create(kube::resources::kNamespaces, "",
                        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
      !s.ok()) {
    return s.error();
  }

  api::Options server_options;
  server_options.store = store;
  server_options.threads = 1;
  server_options.serve_https = options.tls;
  server_options.serve_http = !options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();
  kube::ClientConfig config;
  config.server = options.tls ? (*server)->https_url() : (*server)->http_url();
  config.ca_pem = (*server)->ca_pem();
  config.max_connections = 8;
  // Declared after the server so they go first; the scheduler before its client's I/O.
  kube::IoThread io(1);
  auto client = kube::Client::Create(config, io.executor());
  if (!client.ok()) return client.error();
  scheduler::SchedulerOptions scheduler_options;
  scheduler_options.gang_burst_window = burst_window;
  auto created = scheduler::Scheduler::Create(*client, scheduler_options);
  if (!created.ok()) return created.error();
  std::unique_ptr<scheduler::Scheduler> sched = std::move(created).value();
  struct Stopper {
    scheduler::Scheduler& sched;
    api::ApiServer& server;
    ~Stopper() {
      sched.Stop();
      server.Stop();
    }
  } stopper{*sched, **server};
  sched->Start();
  if (!sched->WaitForSync(std::chrono::seconds(30))) {
    return MakeError(ErrorCode::kInternal, "scheduler informers did not sync");
  }
  Watcher watcher(*store);
  if (!watcher.ok()) return MakeError(ErrorCode::kInternal, "cannot watch the bench namespace");

  // 1. Every pod over HTTP, then until the scheduler has seen them all.
  int64_t total_pods = 0;
  std::vector<std::future<Result<std::string>>> pending;
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    for (int32_t i = 0; i < in.gangs[g].pods; ++i) {
      pending.push_back(io.Spawn(
          (*client)->Create(kube::resources::kPods, kNamespace, PodJson(g, i, in.gangs[g]))));
      ++total_pods;
    }
  }
  for (auto& f : pending) {
    Result<std::string> r = f.get();
    if (!r.ok()) return r.error();
  }
  const TimePoint observe_deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (watcher.observed() < total_pods) {
    if (SteadyClock::now() > observe_deadline) {
      return MakeError(ErrorCode::kInternal, "the scheduler observed only " +
                                                 std::to_string(watcher.observed()) + "/" +
                                                 std::to_string(total_pods) + " pods");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // 2. The PodGroups, back to back.
  pending.clear();
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    pending.push_back(io.Spawn((*client)->Create(kube::resources::kCopsePodGroups, kNamespace,
                                                 GroupJson(g, in.gangs[g]))));
  }
  for (auto& f : pending) {
    Result<std::string> r = f.get();
    if (!r.ok()) return r.error();
  }
  const TimePoint groups_created = SteadyClock::now();
  // 3. Until every gang is bound whole or reported Unschedulable.
  std::vector<uint8_t> unschedulable(in.gangs.size(), 0);
  const TimePoint deadline = SteadyClock::now() + std::chrono::seconds(60);
  for (;;) {
    std::vector<int32_t> bound(in.gangs.size(), 0);
    for (const Watcher::Bind& b : watcher.Binds()) {
      const int64_t g = GangOf(b.pod);
      if (g >= 0 && static_cast<size_t>(g) < bound.size()) ++bound[static_cast<size_t>(g)];
    }
    size_t resolved = 0;
    for (size_t g = 0; g < in.gangs.size(); ++g) {
      if (bound[g] >= in.gangs[g].pods) {
        ++resolved;
        continue;
      }
      if (!unschedulable[g]) {
        auto object = store->Get(kube::resources::kCopsePodGroups, kNamespace, GangName(g));
        if (object.ok() &&
            (*object)->json.find(R"("phase":"Unschedulable")") != std::string::npos) {
          unschedulable[g] = 1;
        }
      }
      resolved += unschedulable[g];
    }
    if (resolved == in.gangs.size()) break;
    if (SteadyClock::now() > deadline) {
      return MakeError(ErrorCode::kInternal,
                       "gangs not resolved within 60 s: " + std::to_string(resolved) + "/" +
                           std::to_string(in.gangs.size()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  // The outcome, replayed bind by bind on the model.
  CopseRun run;
  run.stats = sched->stats();
  run.placed.assign(in.gangs.size(), 0);
  run.free.resize(model_nodes.size());
  for (size_t n = 0; n < model_nodes.size(); ++n) run.free[n] = model_nodes[n].free;
  std::unordered_map<std::string, size_t> node_index;
  for (size_t n = 0; n < node_names.size(); ++n) node_index[node_names[n]] = n;
  auto violate = [&](std::string what) {
    if (run.violations++ == 0) run.violation = std::move(what);
  };
  std::vector<int32_t> bound(in.gangs.size(), 0);
  run.gang_nodes.resize(in.gangs.size());
  std::vector<std::set<int32_t>> racks(in.gangs.size());
  double stranded_sum = 0;
  const std::vector<Watcher::Bind> binds = watcher.Binds();
  for (const Watcher::Bind& b : binds) {
    const int64_t g = GangOf(b.pod);
    auto it = node_index.find(b.node);
    if (g < 0 || static_cast<size_t>(g) >= in.gangs.size() || it == node_index.end()) {
      violate("pod " + b.pod + " bound to unknown node " + b.node);
      continue;
    }
    const PackingGang& gang = in.gangs[static_cast<size_t>(g)];
    if (bound[static_cast<size_t>(g)] == 0) run.bind_order.push_back(static_cast<size_t>(g));
    run.gang_nodes[static_cast<size_t>(g)].push_back(static_cast<int32_t>(it->second));
    run.free[it->second] -= gang.per_pod;
    if (run.free[it->second] < 0) violate("node " + b.node + " over its " + kGpu + " allocatable");
    racks[static_cast<size_t>(g)].insert(model_nodes[it->second].rack);
    if (++bound[static_cast<size_t>(g)] == gang.pods) run.placed[static_cast<size_t>(g)] = 1;
    stranded_sum += static_cast<double>(Stranded(run.free, in.gangs, run.placed));
  }
  run.stranded_mean = binds.empty() ? 0 : stranded_sum / static_cast<double>(binds.size());
  if (!binds.empty()) {
    run.last_bind_ms = std::max(
        0.0, std::chrono::duration<double, std::milli>(binds.back().at - groups_created).count());
  }
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    if (bound[g] > 0 && bound[g] < in.gangs[g].pods) {
      violate("gang " + GangName(g) + " bound in part (" + std::to_string(bound[g]) + "/" +
              std::to_string(in.gangs[g].pods) + ")");
    }
    if (in.gangs[g].rack_required && racks[g].size() > 1) {
      violate("rack gang " + GangName(g) + " over " + std::to_string(racks[g].size()) + " racks");
    }
    if (run.placed[g] && unschedulable[g]) {
      violate("gang " + GangName(g) + " reported Unschedulable and bound");
    }
  }
  return run;
}

// --detail: one line per instance on stderr, e.g.
//   instance 7: copse 5 optimum 6 first-fit 6 BELOW | nodes 12 racks 5 (0,0,1,...) |
//   gangs g0 4x2r g1 3x8 ... | copse order g1(0,0,1) g0(2,2,2,2) ... | optimum g0 g2 ...
void PrintDetail(int64_t i, const Instance& in, const std::vector<PackingNode>& nodes,
                 const CopseRun& run, int32_t placed, const topology::PackingResult& opt,
                 double opt_ms, const topology::PackingResult& ff) {
  std::string line = "instance " + std::to_string(i) + ": copse " + std::to_string(placed) +
                     " optimum " + std::to_string(opt.gangs) + " first-fit " +
                     std::to_string(ff.gangs) + (placed < ff.gangs ? " BELOW" : "") + " | nodes " +
                     std::to_string(in.nodes) + " racks (";
  for (size_t n = 0; n < nodes.size(); ++n) {
    line += (n > 0 ? "," : "") + std::to_string(nodes[n].rack);
  }
  line += ") | gangs";
  for (size_t g = 0; g < in.gangs.size(); ++g) {
    line += " " + GangName(g) + " " + std::to_string(in.gangs[g].pods) + "x" +
            std::to_string(in.gangs[g].per_pod) + (in.gangs[g].rack_required ? "r" : "");
  }
  line += " | copse order";
  for (size_t g : run.bind_order) {
    line += " " + GangName(g) + "(";
    for (size_t k = 0; k < run.gang_nodes[g].size(); ++k) {
      line += (k > 0 ? "," : "") + std::to_string(run.gang_nodes[g][k]);
    }
    line += ")";
  }
  line += " | optimum";
  for (size_t g = 0; g < opt.placed.size(); ++g) {
    if (opt.placed[g]) line += " " + GangName(g);
  }
  line += " | first fit";
  for (size_t g = 0; g < ff.placed.size(); ++g) {
    if (ff.placed[g]) line += " " + GangName(g);
  }
  const scheduler::SchedulerStats& s = run.stats;
  line += " | plans " + std::to_string(s.burst_plans) + " (unproven " +
          std::to_string(s.burst_plans_unproven) + ", declined " +
          std::to_string(s.burst_plans_declined) + ") steered " +
          std::to_string(s.burst_gangs_steered) + " steer failures " +
          std::to_string(s.burst_steer_failures) + " | optimum solved in " +
          std::to_string(opt_ms) + " ms";
  std::fprintf(stderr, "%s\n", line.c_str());
}

Result<BenchResult> RunQuality(const BenchOptions& options, Progress& progress,
                               std::string_view scenario, Clock::Duration burst_window) {
  const int64_t instances = options.pods > 0 ? options.pods : kDefaultInstances;
  auto shape = ParseResourceList("cpu=64,memory=512Gi,pods=110,nvidia.com/gpu=8");
  if (!shape.ok()) return shape.error();

  int64_t offered = 0, optimum_total = 0, copse_total = 0, first_fit_total = 0;
  double copse_ratio_sum = 0, first_fit_ratio_sum = 0;
  int64_t at_optimum = 0, below_first_fit = 0, unproven = 0, violations = 0;
  double stranded_end = 0, stranded_mean = 0, ff_stranded_end = 0, opt_stranded_end = 0;
  int64_t total_nodes = 0, total_pods = 0;
  double last_bind_ms_sum = 0;
  int64_t with_binds = 0;
  int64_t plans = 0, plans_unproven = 0, plans_declined = 0, gangs_steered = 0, steer_failures = 0;
  double opt_ms_max = 0;
  std::string first_violation;
  const double cpu_before = ProcessCpuSeconds();
  const TimePoint start = SteadyClock::now();
  for (int64_t i = 0; i < instances; ++i) {
    const Instance in = MakeInstance(kQualitySeed + static_cast<uint64_t>(i));
    auto layout = api::ParseTopology("rack=" + std::to_string(in.racks));
    if (!layout.ok()) return layout.error();
    auto node_objects = api::MakeSyntheticNodes(in.nodes, *shape, *layout);
    if (!node_objects.ok()) return node_objects.error();
    // The model's nodes in creation order, racks numbered as they appear.
    std::vector<PackingNode> nodes;
    std::vector<std::string> names;
    std::map<std::string, int32_t> rack_ids;
    for (const std::string& text : *node_objects) {
      const json j = json::parse(text);
      names.push_back(j["metadata"]["name"].get<std::string>());
      const std::string rack = j["metadata"]["labels"].value(kRackLabel, "");
      auto [it, added] = rack_ids.try_emplace(rack, static_cast<int32_t>(rack_ids.size()));
      nodes.push_back({it->second, kGpusPerNode});
    }
    const TimePoint solve_start = SteadyClock::now();
    const topology::PackingResult opt = topology::OptimalGangs(nodes, in.gangs);
    const double opt_ms =
        std::chrono::duration<double, std::milli>(SteadyClock::now() - solve_start).count();
    opt_ms_max = std::max(opt_ms_max, opt_ms);
    const topology::PackingResult ff = topology::FirstFitGangs(nodes, in.gangs);
    Result<CopseRun> copse = RunCopse(in, nodes, *node_objects, names, options, burst_window);
    if (!copse.ok()) {
      return MakeError(copse.error().code,
                       "instance " + std::to_string(i) + ": " + copse.error().message);
    }
    int32_t placed = 0;
    for (uint8_t p : copse->placed) placed += p;
    if (options.detail) PrintDetail(i, in, nodes, *copse, placed, opt, opt_ms, ff);
    plans += static_cast<int64_t>(copse->stats.burst_plans);
    plans_unproven += static_cast<int64_t>(copse->stats.burst_plans_unproven);
    plans_declined += static_cast<int64_t>(copse->stats.burst_plans_declined);
    gangs_steered += static_cast<int64_t>(copse->stats.burst_gangs_steered);
    steer_failures += static_cast<int64_t>(copse->stats.burst_steer_failures);
    offered += static_cast<int64_t>(in.gangs.size());
    optimum_total += opt.gangs;
    copse_total += placed;
    first_fit_total += ff.gangs;
    copse_ratio_sum += opt.gangs > 0 ? static_cast<double>(placed) / opt.gangs : 1.0;
    first_fit_ratio_sum += opt.gangs > 0 ? static_cast<double>(ff.gangs) / opt.gangs : 1.0;
    at_optimum += placed >= opt.gangs ? 1 : 0;
    below_first_fit += placed < ff.gangs ? 1 : 0;
    unproven += opt.proven ? 0 : 1;
    if (copse->violations > 0 && violations == 0) {
      first_violation = "instance " + std::to_string(i) + ": " + copse->violation;
    }
    violations += copse->violations;
    stranded_end += static_cast<double>(Stranded(copse->free, in.gangs, copse->placed));
    stranded_mean += copse->stranded_mean;
    if (copse->last_bind_ms > 0) {
      last_bind_ms_sum += copse->last_bind_ms;
      ++with_binds;
    }
    ff_stranded_end += static_cast<double>(Stranded(ff.free, in.gangs, ff.placed));
    opt_stranded_end += static_cast<double>(Stranded(opt.free, in.gangs, opt.placed));
    total_nodes += in.nodes;
    for (const PackingGang& g : in.gangs) total_pods += g.pods;
    progress.Update("instances", i + 1, instances);
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  progress.Done("instances", instances, seconds);
  if (!first_violation.empty() && !options.quiet) {
    std::fprintf(stderr, "  first violation: %s\n", first_violation.c_str());
  }

  const auto n = static_cast<double>(std::max<int64_t>(1, instances));
  BenchResult result;
  result.scenario = std::string(scenario);
  result.nodes = total_nodes;
  result.pods = total_pods;
  // The scheduler shares the process with the API server and the solvers
  // here: its own CPU is not measured (null); the whole process's is an extra.
  result.extras["process_cpu_seconds"] = ProcessCpuSeconds() - cpu_before;
  result.peak_rss_bytes = PeakRssBytes();
  result.extras["instances"] = static_cast<double>(instances);
  result.extras["gangs_offered"] = static_cast<double>(offered);
  result.extras["gangs_placed"] = static_cast<double>(copse_total);
  result.extras["gangs_placed_fraction"] =
      offered > 0 ? static_cast<double>(copse_total) / static_cast<double>(offered) : 0;
  result.extras["optimum_gangs"] = static_cast<double>(optimum_total);
  result.extras["first_fit_gangs"] = static_cast<double>(first_fit_total);
  result.extras["copse_ratio"] = copse_ratio_sum / n;
  result.extras["first_fit_ratio"] = first_fit_ratio_sum / n;
  result.extras["instances_at_optimum"] = static_cast<double>(at_optimum);
  result.extras["instances_below_first_fit"] = static_cast<double>(below_first_fit);
  result.extras["optimum_unproven"] = static_cast<double>(unproven);
  result.extras["stranded_accelerators"] = stranded_end / n;
  result.extras["stranded_accelerators_mean"] = stranded_mean / n;
  result.extras["first_fit_stranded_accelerators"] = ff_stranded_end / n;
  result.extras["optimum_stranded_accelerators"] = opt_stranded_end / n;
  result.extras["violations"] = static_cast<double>(violations);
  result.extras["seconds_per_instance"] = seconds / n;
  result.extras["last_bind_ms"] =
      with_binds > 0 ? last_bind_ms_sum / static_cast<double>(with_binds) : 0;
  // The scheduler's gang burst plans (scheduler/burst_plan.h), summed over
  // the instances, and the longest exact solve of an instance by the bench.
  result.extras["burst_plans"] = static_cast<double>(plans);
  result.extras["burst_plans_unproven"] = static_cast<double>(plans_unproven);
  result.extras["burst_plans_declined"] = static_cast<double>(plans_declined);
  result.extras["burst_gangs_steered"] = static_cast<double>(gangs_steered);
  result.extras["burst_steer_failures"] = static_cast<double>(steer_failures);
  result.extras["optimum_solve_ms_max"] = opt_ms_max;
  result.extras["gang_burst_window_ms"] =
      std::chrono::duration<double, std::milli>(burst_window).count();
  result.targets["copse_ratio >= 0.95"] = result.extras["copse_ratio"] >= 0.95;
  result.targets["copse >= first fit on every instance"] = below_first_fit == 0;
  result.targets["violations == 0"] = violations == 0;
  result.targets["every optimum proven"] = unproven == 0;
  return result;
}

}  // namespace
}  // namespace quality_bench

Result<BenchResult> RunQualityBench(const BenchOptions& options, Progress& progress) {
  return quality_bench::RunQuality(options, progress, "quality", Clock::Duration::zero());
}

Result<BenchResult> RunQualityBurstBench(const BenchOptions& options, Progress& progress) {
  return quality_bench::RunQuality(options, progress, "quality-burst", quality_bench::kBurstWindow);
}

}  // namespace copse::bench
