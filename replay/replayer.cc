#include "replay/replayer.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "apiserver/apiserver.h"
#include "apiserver/disruption.h"
#include "apiserver/store.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/rfc3339.h"
#include "deploy/crds.h"
#include "kube/client.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "kube/workload.h"
#include "kube/yaml.h"

namespace copse::replay {

using nlohmann::json;
namespace api = copse::apiserver;
using Ms = std::chrono::milliseconds;

namespace {

constexpr std::string_view kCopsePodGroupLabel = "scheduling.copse.dev/pod-group";

Result<kube::ResourceRef> ResourceOf(std::string_view api_version, std::string_view kind) {
  struct Row {
    std::string_view api_version, kind;
    const kube::ResourceRef* ref;
  };
  static const Row kRows[] = {
      {"v1", "Pod", &kube::resources::kPods},
      {"v1", "Node", &kube::resources::kNodes},
      {"v1", "Namespace", &kube::resources::kNamespaces},
      {"scheduling.k8s.io/v1", "PriorityClass", &kube::resources::kPriorityClasses},
      {"policy/v1", "PodDisruptionBudget", &kube::resources::kPodDisruptionBudgets},
      {"scheduling.copse.dev/v1alpha1", "PodGroup", &kube::resources::kCopsePodGroups},
      {"scheduling.copse.dev/v1alpha1", "Topology", &kube::resources::kTopologies},
      {"scheduling.k8s.io/v1alpha2", "PodGroup", &kube::resources::kPodGroups},
      {"scheduling.k8s.io/v1alpha2", "Workload", &kube::resources::kWorkloads},
  };
  for (const Row& row : kRows) {
    if (row.api_version == api_version && row.kind == kind) return *row.ref;
  }
  return MakeError(ErrorCode::kInvalid, "trace: " + std::string(api_version) + " " +
                                            std::string(kind) + " is not a kind copse replays");
}

uint64_t ParseRv(const std::string& rv) {
  uint64_t out = 0;
  for (char c : rv) {
    if (c < '0' || c > '9') return 0;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return out;
}

struct Requests {
  int64_t cpu_milli = 0;
  int64_t memory = 0;
  int64_t gpus = 0;
};

int64_t QuantityOf(const json& list, const char* key, bool milli) {
  if (!list.is_object()) return 0;
  auto it = list.find(key);
  if (it == list.end() || !it->is_string()) return 0;
  Result<Quantity> q = Quantity::Parse(it->get<std::string>());
  if (!q.ok()) return 0;
  return milli ? q->MilliValue() : q->Value();
}

Requests PodRequests(const json& pod, const std::string& gpu) {
  Requests r;
  const json spec = pod.value("spec", json::object());
  for (const json& c : spec.value("containers", json::array())) {
    const json requests = c.value("resources", json::object()).value("requests", json::object());
    r.cpu_milli += QuantityOf(requests, "cpu", true);
    r.memory += QuantityOf(requests, "memory", false);
    r.gpus += QuantityOf(requests, gpu.c_str(), false);
  }
  return r;
}

struct NodeState {
  std::string rack;
  std::string block;
  Requests allocatable;
  Requests used;
  bool exists = true;  // false once the trace deleted it (kept for its rack and block)
};

// One occurrence of a pod: a name used again (a StatefulSet's pod, a Job's
// retry) is another occurrence, with its own runtime and figures.
struct PodState {
  std::string key;     // namespace/name
  int occurrence = 1;  // 1 for the first pod of that name, 2 for the next, ...
  std::string uid;     // the replay's object, once observed
  int64_t created_ms = 0;
  std::string priority;  // priorityClassName
  std::string group;     // namespace/name of its gang, "" alone
  Requests requests;
  std::string node;
  int64_t bound_ms = -1;
  int64_t runtime_ms = -1;  // -1: runs until the end
  bool gone = false;        // ended, deleted or evicted
  bool ending = false;      // the replay ended or deleted it (not a victim)
};

struct GroupState {
  int64_t min_member = 1;
  std::vector<size_t> members;  // occurrences (Run::pods_)
};

// A pod's end, ordered by time then by the order binds were seen.
struct End {
  int64_t t_ms;
  uint64_t seq;
  size_t pod;  // occurrence (Run::pods_)
  bool operator>(const End& o) const { return std::tie(t_ms, seq) > std::tie(o.t_ms, o.seq); }
};

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t idx =
      std::min(sorted.size() - 1, static_cast<size_t>(std::ceil(p * sorted.size())) - 1);
  return sorted[p <= 0 ? 0 : idx];
}

// Time-weighted mean of a step function over [0, end].
double TimeMean(const std::vector<SeriesPoint>& s, int64_t end) {
  if (s.empty() || end <= 0) return s.empty() ? 0 : s.back().value;
  double area = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t next = i + 1 < s.size() ? s[i + 1].t_ms : end;
    area += s[i].value * static_cast<double>(std::max<int64_t>(0, next - s[i].t_ms));
  }
  return area / static_cast<double>(end);
}

class Run {
 public:
  Run(const Trace& trace, const ReplayConfig& config, const ReplayOptions& options)
      : trace_(trace), config_(config), options_(options) {}

  Result<ConfigResult> Go();

 private:
  Status Setup();
  Status ApplyInit(const TraceEvent& e);
  Status ApplyTraceEvent(const TraceEvent& e);
  // A Node of the trace, at t = 0 or later, and a Node the trace deletes:
  // the GPUs in the cluster and the racks gangs are counted in follow them.
  void AddNode(const TraceEvent& e);
  Status RemoveNode(const std::string& name);
  void SetTotalGpus(int64_t total);
  // The pod's runtime is over: Succeeded, as its kubelet would report, then
  // deleted, as its owner would, so that the name may be used again.
  Status EndPod(size_t pod);
  // Deletes a pod's object at once (grace period 0).
  Status DeletePodObject(const PodState& p);
  // The occurrence a watched pod object is, by uid; nullopt for none.
  std::optional<size_t> OccurrenceOf(const api::ObjectVersion& object);
  // Drains the pod and PodGroup watches: records binds, evictions and deletions.
  Status Observe();
  // The disruption controller's part, when the trace has PodDisruptionBudgets:
  // each PDB's status (disruptionsAllowed, ...) recomputed for namespaces
  // whose pods or budgets changed, as apiserver/disruption.h computes it.
  Status SyncDisruptionBudgets();
  // Waits until the informers have seen every pod and PodGroup write and the
  // loop sleeps with no API write in flight, observing as it goes.
  Status WaitSettled();
  // Records GPUs in use and stranded at `t_ms` (by default now).
  void Sample(std::optional<int64_t> t_ms = std::nullopt);
  // Nothing waits: every pod created so far is bound or gone, and the
  // scheduler had no unit to run at the last settle.
  bool Quiet() const { return waiting_pods_ == 0 && !runnable_; }
  // While Quiet, the pods' ends before `limit` (the next trace event or
  // scheduler timer) are one step; see Go.
  Status EndQuietly(Clock::TimePoint limit);
  // Waiting GPU pods by shape, kept as pods arrive, bind and leave: Sample
  // runs every step, and scanning every pod there made a long replay
  // quadratic.
  static bool Waiting(const PodState& p) { return !p.gone && p.bound_ms < 0; }
  void CountWaiting(const PodState& p, int64_t delta) {
    waiting_pods_ += delta;
    if (p.requests.gpus <= 0) return;
    const std::tuple<int64_t, int64_t, int64_t> shape{p.requests.gpus, p.requests.cpu_milli,
                                                      p.requests.memory};
    if ((waiting_shapes_[shape] += delta) <= 0) waiting_shapes_.erase(shape);
  }
  int64_t NowMs() const { return std::chrono::duration_cast<Ms>(clock_->Now() - start_).count(); }

  const Trace& trace_;
  const ReplayConfig& config_;
  const ReplayOptions& options_;
  std::shared_ptr<FakeClock> clock_;
  Clock::TimePoint start_;
  std::shared_ptr<api::Store> store_;
  std::unique_ptr<api::ApiServer> server_;
  std::unique_ptr<kube::IoThread> sched_io_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<kube::IoThread> io_;
  std::shared_ptr<kube::Client> client_;
  std::shared_ptr<api::WatchStream> pod_watch_;
  std::shared_ptr<api::WatchStream> group_watch_;
  std::shared_ptr<api::WatchStream> pdb_watch_;  // when the trace has PDBs
  uint64_t last_pod_rv_ = 0;
  uint64_t last_group_rv_ = 0;
  uint64_t last_pdb_rv_ = 0;
  bool has_pdbs_ = false;
  std::set<std::string> pdb_dirty_;         // namespaces whose PDB status may be stale
  Clock::TimePoint next_timer_{};           // the scheduler's, as of the last settle
  Clock::TimePoint next_decision_timer_{};  // of those, the next that can place or evict
  bool runnable_ = false;                   // a unit was ready to run at the last settle

  std::unordered_map<std::string, NodeState> nodes_;
  std::vector<PodState> pods_;                       // every occurrence, in create order
  std::unordered_map<std::string, size_t> current_;  // namespace/name -> its latest occurrence
  std::unordered_map<std::string, size_t> by_uid_;   // uid -> occurrence
  std::unordered_map<std::string, GroupState> groups_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> waiting_shapes_;  // -> pods
  int64_t waiting_pods_ = 0;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  uint64_t end_seq_ = 0;
  int64_t victims_ = 0;
  int64_t total_gpus_ = 0;
  std::vector<SeriesPoint> total_gpus_series_;  // GPUs in the cluster over time
  int64_t used_gpus_ = 0;
  ConfigResult result_;
};

Status Run::Setup() {
  std::chrono::system_clock::time_point wall{std::chrono::seconds(1'700'000'000)};
  if (!trace_.header.start.empty()) {
    if (auto parsed = ParseRfc3339(trace_.header.start)) wall = *parsed;
  }
  clock_ = std::make_shared<FakeClock>(wall);
  start_ = clock_->Now();
  api::StoreOptions store_options;
  store_options.clock = clock_;
  // Every watch resumes from the store's history; a replay writes a few
  // events per pod.
  store_options.watch_history = trace_.events.size() * 6 + 100'000;
  store_options.uid_seed = options_.seed;  // the scheduler orders some things by uid
  store_ = api::NewStore(store_options);
  for (const deploy::EmbeddedFile& file : deploy::BuiltinCrds()) {
    if (!file.path.starts_with("crds/copse/")) continue;
    Result<std::vector<std::string>> docs = kube::YamlDocumentsToJson(file.content);
    if (!docs.ok()) return docs.error();
    for (const std::string& doc : *docs) {
      auto created = store_->Create(kube::resources::kCustomResourceDefinitions, "", doc);
      if (!created.ok()) return created.error();
    }
  }
  // Pods and PodGroups are created over HTTP once the watches run (below).
  for (const TraceEvent& e : trace_.events) {
    if (e.op != TraceOp::kInit || e.kind == "Pod" || e.kind == "PodGroup") continue;
    if (Status s = ApplyInit(e); !s.ok()) return s;
  }
  api::Options server_options;
  server_options.serve_https = false;
  server_options.store = store_;
  server_options.watch_write_interval = std::chrono::microseconds(0);
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();
  server_ = std::move(server).value();

  kube::ClientConfig client_config;
  client_config.server = server_->http_url();
  client_config.max_connections = 16;
  sched_io_ = std::make_unique<kube::IoThread>(2);
  auto sched_client = kube::Client::Create(client_config, sched_io_->executor());
  if (!sched_client.ok()) return sched_client.error();
  scheduler::SchedulerOptions so = config_.options;
  so.clock = clock_;
  so.seed = options_.seed;
  so.record_events = false;  // events change nothing a scheduler reads
  so.inbox_gather = std::chrono::microseconds(0);
  so.metrics = nullptr;
  auto sched = scheduler::Scheduler::Create(*sched_client, std::move(so));
  if (!sched.ok()) return sched.error();
  sched_ = std::move(sched).value();

  io_ = std::make_unique<kube::IoThread>(1);
  client_config.max_connections = 1;  // creates reach the server in trace order
  auto client = kube::Client::Create(client_config, io_->executor());
  if (!client.ok()) return client.error();
  client_ = std::move(client).value();

  api::WatchOptions watch_options;
  watch_options.resource_version = store_->CurrentResourceVersion();
  auto pods = store_->Watch(kube::resources::kPods, watch_options);
  if (!pods.ok()) return pods.error();
  pod_watch_ = std::move(pods).value();
  auto groups = store_->Watch(kube::resources::kCopsePodGroups, watch_options);
  if (!groups.ok()) return groups.error();
  group_watch_ = std::move(groups).value();
  for (const TraceEvent& e : trace_.events) {
    if (e.kind != "PodDisruptionBudget") continue;
    has_pdbs_ = true;
    pdb_dirty_.insert(e.ns);
  }
  if (has_pdbs_) {
    auto pdbs = store_->Watch(kube::resources::kPodDisruptionBudgets, watch_options);
    if (!pdbs.ok()) return pdbs.error();
    pdb_watch_ = std::move(pdbs).value();
  }
  // A recorded trace's initial pods, some bound already (spec.nodeName):
  // the pod watch sees them bound at t = 0.
  for (const TraceEvent& e : trace_.events) {
    if (e.op != TraceOp::kInit || (e.kind != "Pod" && e.kind != "PodGroup")) continue;
    if (Status s = ApplyInit(e); !s.ok()) return s;
  }

  sched_->SetPaused(true);  // cycles run when granted (Go)
  sched_->Start();
  if (!sched_->WaitForSync(std::chrono::seconds(30))) {
    return MakeError(ErrorCode::kUnavailable, "the scheduler's informers did not sync within 30s");
  }
  return Status::Ok();
}

Status Run::ApplyInit(const TraceEvent& e) {
  Result<kube::ResourceRef> ref = ResourceOf(e.api_version, e.kind);
  if (!ref.ok()) return ref.error();
  if (e.kind == "Pod" || e.kind == "PodGroup") return ApplyTraceEvent(e);
  auto created = store_->Create(*ref, e.ns, e.object);
  if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) {
    return MakeError(created.error().code,
                     "trace " + e.kind + " " + e.name + ": " + created.error().message);
  }
  if (e.kind == "Node") AddNode(e);
  return Status::Ok();
}

void Run::AddNode(const TraceEvent& e) {
  const json node = json::parse(e.object);
  NodeState n;
  const json labels = node["metadata"].value("labels", json::object());
  n.rack = labels.value(trace_.header.rack_label, "");
  n.block = labels.value(trace_.header.block_label, "");
  const json alloc = node.value("status", json::object()).value("allocatable", json::object());
  n.allocatable.cpu_milli = QuantityOf(alloc, "cpu", true);
  n.allocatable.memory = QuantityOf(alloc, "memory", false);
  n.allocatable.gpus = QuantityOf(alloc, trace_.header.gpu_resource.c_str(), false);
  int64_t total = total_gpus_ + n.allocatable.gpus;
  if (auto old = nodes_.find(e.name); old != nodes_.end() && old->second.exists) {
    total -= old->second.allocatable.gpus;  // created again without a delete
    n.used = old->second.used;
  }
  nodes_[e.name] = n;
  SetTotalGpus(total);
}

Status Run::RemoveNode(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.exists) return Status::Ok();
  // Its pods go with it, as the pod garbage collector deletes the pods of a
  // node that no longer exists: they are not victims of the scheduler.
  for (PodState& p : pods_) {
    if (p.gone || p.bound_ms < 0 || p.node != name) continue;
    p.ending = true;
    if (Status s = DeletePodObject(p); !s.ok()) return s;
  }
  if (Status s = Observe(); !s.ok()) return s;
  it->second.exists = false;
  SetTotalGpus(total_gpus_ - it->second.allocatable.gpus);
  return Status::Ok();
}

void Run::SetTotalGpus(int64_t total) {
  total_gpus_ = total;
  result_.total_gpus = std::max(result_.total_gpus, total);
  const int64_t t = NowMs();
  if (!total_gpus_series_.empty() && total_gpus_series_.back().t_ms == t) {
    total_gpus_series_.back().value = static_cast<double>(total);
  } else {
    total_gpus_series_.push_back({t, static_cast<double>(total)});
  }
}

Status Run::ApplyTraceEvent(const TraceEvent& e) {
  Result<kube::ResourceRef> ref = ResourceOf(e.api_version, e.kind);
  if (!ref.ok()) return ref.error();
  const std::string key = e.ns + "/" + e.name;
  if (e.op == TraceOp::kDelete) {
    kube::DeleteOptions del;
    del.grace_period_seconds = 0;
    if (auto it = current_.find(key); e.kind == "Pod" && it != current_.end()) {
      pods_[it->second].ending = true;
    }
    if (e.kind == "Node") {
      if (Status s = RemoveNode(e.name); !s.ok()) return s;
    }
    Status s = io_->Run(client_->Delete(*ref, e.ns, e.name, del));
    if (!s.ok() && s.error().code != ErrorCode::kNotFound) return s;
    return Status::Ok();
  }
  if (e.kind == "Pod") {
    const json pod = json::parse(e.object);
    PodState p;
    p.key = key;
    p.created_ms = NowMs();
    p.priority = pod["spec"].value("priorityClassName", "");
    p.requests = PodRequests(pod, trace_.header.gpu_resource);
    const json labels = pod["metadata"].value("labels", json::object());
    std::string group = labels.value(std::string(kCopsePodGroupLabel), "");
    if (group.empty()) {
      group = pod["spec"].value("schedulingGroup", json::object()).value("podGroupName", "");
    }
    if (!group.empty()) {
      p.group = e.ns + "/" + group;
      groups_[p.group].members.push_back(pods_.size());
    }
    if (e.runtime_ms) p.runtime_ms = *e.runtime_ms;
    if (auto old = current_.find(key); old != current_.end()) {
      // A name used again. In the recorded cluster the previous pod was gone
      // by now (its owner deleted it); in the replay it may still run (bound
      // later than there) or wait: it ends now, so the create succeeds.
      if (Status s = Observe(); !s.ok()) return s;  // its uid is known
      PodState& prev = pods_[old->second];
      p.occurrence = prev.occurrence + 1;
      if (!prev.gone && prev.bound_ms >= 0) {
        if (Status s = EndPod(old->second); !s.ok()) return s;
      } else if (!prev.gone) {
        prev.ending = true;
        if (Status s = DeletePodObject(prev); !s.ok()) return s;
      }
      if (Status s = Observe(); !s.ok()) return s;
    }
    CountWaiting(p, +1);
    current_[key] = pods_.size();
    pods_.push_back(std::move(p));
  } else if (e.kind == "PodGroup") {
    const json group = json::parse(e.object);
    const json spec = group.value("spec", json::object());
    int64_t min = spec.value("minMember", int64_t{0});
    if (min == 0) {
      min = spec.value("schedulingPolicy", json::object())
                .value("gang", json::object())
                .value("minCount", int64_t{1});
    }
    groups_[key].min_member = std::max<int64_t>(1, min);
  }
  Result<std::string> created = io_->Run(client_->Create(*ref, e.ns, e.object));
  if (!created.ok()) {
    return MakeError(created.error().code,
                     "creating " + e.kind + " " + key + ": " + created.error().message);
  }
  if (e.kind == "Node") AddNode(e);
  return Status::Ok();
}

Status Run::EndPod(size_t pod) {
  PodState& p = pods_[pod];
  if (p.gone) return Status::Ok();
  p.ending = true;
  // As its kubelet would: the pod's containers exit and it is Succeeded.
  // The scheduler sees it finish before it is deleted, so it still counts
  // for its gang (gang recovery keeps finished members, not deleted ones).
  const size_t slash = p.key.find('/');
  auto finished =
      store_->Patch(kube::resources::kPods, p.key.substr(0, slash), p.key.substr(slash + 1),
                    api::PatchType::kMerge, R"({"status":{"phase":"Succeeded"}})", "status");
  if (!finished.ok() && finished.error().code != ErrorCode::kNotFound) return finished.error();
  // Then as its owner would (a Job's TTL, a StatefulSet replacing it): the
  // name is free for the pod the trace creates next under it.
  return DeletePodObject(p);
}

Status Run::DeletePodObject(const PodState& p) {
  api::DeleteOptions del;
  del.grace_period_seconds = 0;
  // Only this occurrence's object: never a later pod of the same name.
  if (!p.uid.empty()) del.precondition_uid = p.uid;
  const size_t slash = p.key.find('/');
  auto deleted =
      store_->Delete(kube::resources::kPods, p.key.substr(0, slash), p.key.substr(slash + 1), del);
  if (!deleted.ok() && deleted.error().code != ErrorCode::kNotFound &&
      deleted.error().code != ErrorCode::kConflict) {
    return deleted.error();
  }
  return Status::Ok();
}

std::optional<size_t> Run::OccurrenceOf(const api::ObjectVersion& object) {
  if (auto it = by_uid_.find(object.uid); it != by_uid_.end()) return it->second;
  // A uid not seen yet is the newest occurrence of its name: each pod's
  // first event is observed before another of that name is created.
  auto it = current_.find(object.ns + "/" + object.name);
  if (it == current_.end() || !pods_[it->second].uid.empty()) return std::nullopt;
  pods_[it->second].uid = object.uid;
  by_uid_.emplace(object.uid, it->second);
  return it->second;
}

Status Run::Observe() {
  std::vector<api::WatchEvent> events;
  group_watch_->Take(&events);
  for (const api::WatchEvent& ev : events) last_group_rv_ = std::max(last_group_rv_, ev.rv);
  events.clear();
  if (pdb_watch_) {
    pdb_watch_->Take(&events);
    for (const api::WatchEvent& ev : events) {
      last_pdb_rv_ = std::max(last_pdb_rv_, ev.rv);
      if (ev.object) pdb_dirty_.insert(ev.object->ns);
    }
    events.clear();
  }
  pod_watch_->Take(&events);
  for (const api::WatchEvent& ev : events) {
    last_pod_rv_ = std::max(last_pod_rv_, ev.rv);
    if (!ev.object) continue;
    if (has_pdbs_) pdb_dirty_.insert(ev.object->ns);
    const std::optional<size_t> occurrence = OccurrenceOf(*ev.object);
    if (!occurrence) continue;
    PodState& p = pods_[*occurrence];
    if (p.gone) continue;
    const bool deleted = ev.type == api::WatchEventType::kDeleted;
    if (!deleted && p.bound_ms < 0 && !ev.object->node_name.empty()) {
      CountWaiting(p, -1);
      p.bound_ms = NowMs();
      p.node = ev.object->node_name;
      if (auto n = nodes_.find(p.node); n != nodes_.end()) {
        n->second.used.cpu_milli += p.requests.cpu_milli;
        n->second.used.memory += p.requests.memory;
        n->second.used.gpus += p.requests.gpus;
      }
      used_gpus_ += p.requests.gpus;
      if (p.runtime_ms >= 0) ends_.push(End{p.bound_ms + p.runtime_ms, end_seq_++, *occurrence});
      if (has_pdbs_) {
        // As its kubelet would, at once: Running and Ready, so that it
        // counts as healthy for its disruption budgets.
        auto running = store_->Patch(
            kube::resources::kPods, ev.object->ns, ev.object->name, api::PatchType::kMerge,
            R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})",
            "status");
        if (!running.ok() && running.error().code != ErrorCode::kNotFound) return running.error();
      }
    }
    if (deleted || ev.object->deleting || ev.object->pod_terminal) {
      if (!p.ending && p.bound_ms >= 0) ++victims_;
      if (p.bound_ms < 0) CountWaiting(p, -1);
      p.gone = true;
      if (p.bound_ms >= 0) {
        if (auto n = nodes_.find(p.node); n != nodes_.end()) {
          n->second.used.cpu_milli -= p.requests.cpu_milli;
          n->second.used.memory -= p.requests.memory;
          n->second.used.gpus -= p.requests.gpus;
        }
        used_gpus_ -= p.requests.gpus;
      }
      // An evicted pod is terminating: the replay plays its kubelet.
      if (!deleted && ev.object->deleting) {
        if (Status s = DeletePodObject(pods_[*occurrence]); !s.ok()) return s;
        p.gone = true;
      }
    }
  }
  return Status::Ok();
}

Status Run::SyncDisruptionBudgets() {
  std::set<std::string> dirty;
  dirty.swap(pdb_dirty_);
  for (const std::string& ns : dirty) {
    api::ListOptions list;
    list.ns = ns;
    auto pdbs = store_->List(kube::resources::kPodDisruptionBudgets, list);
    if (!pdbs.ok()) return pdbs.error();
    if (pdbs->items.empty()) continue;
    auto pods = store_->List(kube::resources::kPods, list);
    if (!pods.ok()) return pods.error();
    for (const api::ObjectPtr& item : pdbs->items) {
      const json pdb = json::parse(item->json, nullptr, false);
      if (pdb.is_discarded()) continue;
      const api::DisruptionStatus computed =
          api::ComputeDisruption(pdb, pods->items).value_or(api::DisruptionStatus{});
      const json old = pdb.value("status", json::object());
      const json status = {{"observedGeneration", pdb["metadata"].value("generation", int64_t{0})},
                           {"expectedPods", computed.expected_pods},
                           {"currentHealthy", computed.current_healthy},
                           {"desiredHealthy", computed.desired_healthy},
                           {"disruptionsAllowed", computed.disruptions_allowed}};
      bool same = true;
      for (const auto& [key, value] : status.items())
        same = same && old.value(key, json()) == value;
      if (same) continue;
      auto written =
          store_->Patch(kube::resources::kPodDisruptionBudgets, ns, item->name,
                        api::PatchType::kMerge, json{{"status", status}}.dump(), "status");
      if (!written.ok() && written.error().code != ErrorCode::kNotFound) return written.error();
    }
  }
  return Status::Ok();
}

Status Run::WaitSettled() {
  const auto deadline = std::chrono::steady_clock::now() + options_.step_timeout;
  while (true) {
    if (Status s = Observe(); !s.ok()) return s;
    if (!pdb_dirty_.empty()) {
      // Statuses the scheduler must see before its next cycle, as it would
      // once kube's disruption controller caught up.
      if (Status s = SyncDisruptionBudgets(); !s.ok()) return s;
      if (Status s = Observe(); !s.ok()) return s;
    }
    const uint64_t pod_rv = last_pod_rv_;
    const uint64_t group_rv = last_group_rv_;
    const uint64_t pdb_rv = last_pdb_rv_;
    const scheduler::SchedulerIdleState state = sched_->IdleState();
    const bool seen = ParseRv(state.pods_resource_version) >= pod_rv &&
                      ParseRv(state.copse_pod_groups_resource_version) >= group_rv &&
                      ParseRv(state.pdbs_resource_version) >= pdb_rv;
    if (seen && state.idle) {
      // Nothing new was written meanwhile (a bind answered after the check).
      if (Status s = Observe(); !s.ok()) return s;
      if (last_pod_rv_ == pod_rv && last_group_rv_ == group_rv && last_pdb_rv_ == pdb_rv &&
          pdb_dirty_.empty()) {
        next_timer_ = state.next_timer;
        next_decision_timer_ = state.next_decision_timer;
        runnable_ = state.runnable;
        return Status::Ok();
      }
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return MakeError(ErrorCode::kTimeout, "replay " + config_.name +
                                                ": the scheduler did not settle within " +
                                                std::to_string(options_.step_timeout.count()) +
                                                "s at t=" + std::to_string(NowMs()) + "ms");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void Run::Sample(std::optional<int64_t> t_ms) {
  const int64_t t = t_ms.value_or(NowMs());
  // A node's free GPUs are stranded when no waiting shape fits there.
  const auto& shapes = waiting_shapes_;
  int64_t over = 0;
  for (const auto& [name, n] : nodes_) {
    if (!n.exists) continue;
    if (n.used.gpus > n.allocatable.gpus || n.used.cpu_milli > n.allocatable.cpu_milli ||
        n.used.memory > n.allocatable.memory) {
      ++over;
    }
  }
  result_.max_nodes_over_allocatable = std::max(result_.max_nodes_over_allocatable, over);
  int64_t stranded = 0;
  if (!shapes.empty()) {
    for (const auto& [name, n] : nodes_) {
      if (!n.exists) continue;
      const int64_t free_gpus = n.allocatable.gpus - n.used.gpus;
      if (free_gpus <= 0) continue;
      bool fits = false;
      for (const auto& [shape, count] : shapes) {
        const auto& [gpus, cpu, mem] = shape;
        if (gpus <= free_gpus && cpu <= n.allocatable.cpu_milli - n.used.cpu_milli &&
            mem <= n.allocatable.memory - n.used.memory) {
          fits = true;
          break;
        }
      }
      if (!fits) stranded += free_gpus;
    }
  }
  auto push = [t](std::vector<SeriesPoint>& s, double v) {
    if (!s.empty() && s.back().t_ms == t) {
      s.back().value = v;
    } else if (s.empty() || s.back().value != v) {
      s.push_back({t, v});
    }
  };
  push(result_.gpus_used, static_cast<double>(used_gpus_));
  push(result_.gpus_stranded, static_cast<double>(stranded));
}

// Pods that end while nothing waits cannot change a decision: no cycle
// would run between them (nothing is pending, so none becomes runnable),
// and no timer that places or evicts falls between them (`limit` is the
// next; status reports that fall due meanwhile are written at the last
// end instead, and a status changes no decision). Settling after
// each (the scheduler sees the update, the loop sleeps again) was most of a
// long replay's steps. So the clock jumps once, to the last of those ends;
// each pod is made Succeeded and observed in end order and the GPUs sampled
// at its own end time; then the scheduler settles once. The scheduler sees
// only the one clock value: the replay stays deterministic.
Status Run::EndQuietly(Clock::TimePoint limit) {
  std::vector<End> batch;
  while (!ends_.empty() && start_ + Ms(ends_.top().t_ms) < limit) {
    batch.push_back(ends_.top());
    ends_.pop();
  }
  clock_->Advance(start_ + Ms(batch.back().t_ms) - clock_->Now());
  for (const End& end : batch) {
    if (Status s = EndPod(end.pod); !s.ok()) return s;
    if (Status s = Observe(); !s.ok()) return s;
    Sample(end.t_ms);
  }
  sched_->Wake();
  return WaitSettled();
}

Result<ConfigResult> Run::Go() {
  const auto wall_start = std::chrono::steady_clock::now();
  if (Status s = Setup(); !s.ok()) return s.error();
  result_.name = config_.name;
  const std::vector<TraceEvent>& events = trace_.events;
  size_t i = 0;
  while (i < events.size() && events[i].op == TraceOp::kInit) ++i;
  // After the last event and the last pod's end, timers (backoff) may still
  // place what waits; nothing else can change.
  constexpr Ms kDrain = std::chrono::minutes(10);
  std::optional<int64_t> quiet_since;
  // Whether this step is one that can decide: it came for a trace event, a
  // pod's end or a timer that can place or evict, not for a status report
  // alone (those are not counted in `steps`: whether one falls due depends
  // on how the scheduler's inbox happened to batch events).
  bool deciding = true;
  while (true) {
    const int64_t now = NowMs();
    if (options_.timeout.count() > 0 &&
        std::chrono::steady_clock::now() - wall_start > options_.timeout) {
      return MakeError(ErrorCode::kTimeout, "replay " + config_.name + ": did not finish within " +
                                                std::to_string(options_.timeout.count()) +
                                                "s (at t=" + std::to_string(now / 1000) + "s of " +
                                                std::to_string(trace_.header.duration_ms / 1000) +
                                                "s)");
    }
    while (!ends_.empty() && ends_.top().t_ms <= now) {
      const size_t pod = ends_.top().pod;
      ends_.pop();
      if (Status s = EndPod(pod); !s.ok()) return s.error();
    }
    for (; i < events.size() && events[i].t_ms <= now; ++i) {
      const TraceEvent& e = events[i];
      if (e.op != TraceOp::kCreate && e.op != TraceOp::kDelete)
        continue;  // bound/end: the original's
      if (Status s = ApplyTraceEvent(e); !s.ok()) return s.error();
    }
    // One cycle at a time, each one's writes seen by the scheduler before
    // the next starts: no cycle depends on how fast an echo came back.
    if (Status s = WaitSettled(); !s.ok()) return s.error();
    while (runnable_) {
      sched_->GrantCycle();
      ++result_.cycles;
      if (Status s = WaitSettled(); !s.ok()) return s.error();
    }
    Sample();
    if (deciding) ++result_.steps;

    Clock::TimePoint target = Clock::TimePoint::max();
    if (i < events.size()) target = std::min(target, start_ + Ms(events[i].t_ms));
    if (!ends_.empty()) target = std::min(target, start_ + Ms(ends_.top().t_ms));
    if (target == Clock::TimePoint::max()) {
      if (!quiet_since) quiet_since = now;
      if (now - *quiet_since >= kDrain.count()) break;
    }
    Clock::TimePoint decision_target = target;
    if (next_decision_timer_ > clock_->Now()) {
      decision_target = std::min(decision_target, next_decision_timer_);
    }
    if (next_timer_ > clock_->Now()) target = std::min(target, next_timer_);
    if (target == Clock::TimePoint::max()) break;
    if (options_.progress && deciding && result_.steps % 2000 == 0) {
      options_.progress("replay " + config_.name + ": t=" + std::to_string(now / 1000) + "s, " +
                        std::to_string(result_.steps) + " steps");
    }
    if (options_.batch_quiet_ends && options_.speed <= 0 && Quiet() && !ends_.empty()) {
      Clock::TimePoint limit = Clock::TimePoint::max();
      if (i < events.size()) limit = start_ + Ms(events[i].t_ms);
      if (next_decision_timer_ > clock_->Now()) limit = std::min(limit, next_decision_timer_);
      if (start_ + Ms(ends_.top().t_ms) < limit) {
        if (Status s = EndQuietly(limit); !s.ok()) return s.error();
        deciding = true;
        continue;
      }
    }
    if (options_.speed > 0) {
      const auto due = wall_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        (target - start_) / options_.speed);
      std::this_thread::sleep_until(due);
    }
    deciding = target == decision_target;
    clock_->Advance(target - clock_->Now());
    sched_->Wake();
    // The loop runs its timers at the new time before the step's writes
    // arrive, not in whichever order the threads happen to take.
    if (Status s = WaitSettled(); !s.ok()) return s.error();
  }
  result_.end_ms = NowMs();
  const scheduler::SchedulerStats stats = sched_->stats();
  result_.preemption_attempts = static_cast<int64_t>(stats.preemption_attempts);
  result_.victims = victims_;
  sched_->Stop();
  pod_watch_->Close();
  group_watch_->Close();
  if (pdb_watch_) pdb_watch_->Close();
  server_->Stop();

  std::map<std::string, std::vector<double>> waits;
  std::vector<double> all_waits;
  for (const PodState& p : pods_) {
    ++result_.pods;
    WaitFigures& w = result_.wait_by_priority[p.priority];
    ++w.pods;
    ++result_.wait_all.pods;
    if (p.bound_ms >= 0) {
      ++result_.pods_placed;
      ++w.placed;
      ++result_.wait_all.placed;
      waits[p.priority].push_back(static_cast<double>(p.bound_ms - p.created_ms));
      all_waits.push_back(static_cast<double>(p.bound_ms - p.created_ms));
    }
    // A name used again: its later pods are "ns/name#2", ... (create order,
    // the same in every replay of the trace).
    result_.decisions.push_back(
        {p.occurrence == 1 ? p.key : p.key + "#" + std::to_string(p.occurrence), p.node,
         p.bound_ms});
  }
  std::sort(result_.decisions.begin(), result_.decisions.end(),
            [](const Decision& a, const Decision& b) { return a.pod < b.pod; });
  auto figures = [](std::vector<double>& v, WaitFigures& w) {
    std::sort(v.begin(), v.end());
    w.p50_ms = Percentile(v, 0.5);
    w.p99_ms = Percentile(v, 0.99);
    double sum = 0;
    for (double x : v) sum += x;
    w.mean_ms = v.empty() ? 0 : sum / static_cast<double>(v.size());
  };
  for (auto& [priority, v] : waits) figures(v, result_.wait_by_priority[priority]);
  figures(all_waits, result_.wait_all);
  for (const auto& [key, g] : groups_) {
    if (g.members.empty()) continue;
    ++result_.gangs;
    std::set<std::string> racks, blocks;
    int64_t bound = 0;
    for (const size_t member : g.members) {
      const PodState& p = pods_[member];
      if (p.bound_ms < 0) continue;
      ++bound;
      const NodeState& n = nodes_[p.node];
      racks.insert(n.rack);
      blocks.insert(n.block);
    }
    if (bound < g.min_member) {
      if (bound > 0) ++result_.gangs_partial;
      continue;
    }
    ++result_.gangs_placed;
    if (racks.size() == 1 && !racks.begin()->empty()) ++result_.gangs_one_rack;
    if (blocks.size() == 1 && !blocks.begin()->empty()) ++result_.gangs_one_block;
  }
  // GPU-time used over GPU-time in the cluster: nodes come and go.
  const double total_mean = TimeMean(total_gpus_series_, result_.end_ms);
  result_.mean_gpu_utilization =
      total_mean > 0 ? TimeMean(result_.gpus_used, result_.end_ms) / total_mean : 0;
  result_.mean_stranded_gpus = TimeMean(result_.gpus_stranded, result_.end_ms);
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(result_);
}

}  // namespace

Result<ConfigResult> ReplayTrace(const Trace& trace, const ReplayConfig& config,
                                 const ReplayOptions& options) {
  Run run(trace, config, options);
  return run.Go();
}

}  // namespace copse::replay
