#include "apiserver/node_simulator.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <random>
#include <unordered_map>

#include "apiserver/disruption.h"
#include "kube/controller/objects.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

enum class Action : uint8_t { kStart, kRemove, kHeartbeat, kFinish };

struct Task {
  Clock::TimePoint due;
  Action action;
  std::string ns;
  std::string name;
  std::string uid;
  int32_t exit_code = 0;  // kFinish
  bool operator>(const Task& o) const { return due > o.due; }
};

std::string Hex(uint64_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[v & 0xf];
    v >>= 4;
  }
  return out;
}

json Condition(const std::string& type, const std::string& status, const std::string& now) {
  return {
      {"type", type}, {"status", status}, {"lastProbeTime", nullptr}, {"lastTransitionTime", now}};
}

}  // namespace

struct NodeSimulator::State {
  std::shared_ptr<WatchStream> pods;
  std::shared_ptr<WatchStream> nodes;
  std::shared_ptr<WatchStream> pdbs;
  std::unordered_map<std::string, int> pdbs_per_namespace;
  std::unordered_map<std::string, bool> dirty_namespaces;
  std::chrono::steady_clock::time_point last_disruption_sync;
  std::priority_queue<Task, std::vector<Task>, std::greater<>> tasks;
  // Pods with a start or removal queued, by uid (avoids double scheduling).
  std::unordered_map<std::string, Action> scheduled;
  std::unordered_map<std::string, std::string> node_ips;  // node name -> InternalIP
  // Bound pods waiting for their node to appear: node -> pods (ns, name, uid).
  std::unordered_map<std::string, std::vector<Task>> waiting_for_node;
  uint64_t next_ip = 1;
  std::mt19937_64 rng{42};
};

NodeSimulator::NodeSimulator(std::shared_ptr<Store> store, NodeSimulatorOptions options)
    : store_(std::move(store)), options_(options), state_(std::make_unique<State>()) {}

NodeSimulator::~NodeSimulator() { Stop(); }

void NodeSimulator::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return;
  running_ = true;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void NodeSimulator::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return;
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
}

Status NodeSimulator::CreateNodes(const std::vector<std::string>& node_jsons) {
  for (const auto& text : node_jsons) {
    auto created = store_->Create(resources::kNodes, "", text);
    if (!created.ok()) return std::move(created).error();
  }
  return Status::Ok();
}

void NodeSimulator::Run() {
  State& st = *state_;
  const Clock& clock = store_->clock();
  auto notify = [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      wake_ = true;
    }
    cv_.notify_one();
  };
  auto open_watch = [&](const ResourceRef& ref) {
    auto w = store_->Watch(ref, WatchOptions{});
    if (!w.ok()) return std::shared_ptr<WatchStream>();
    (*w)->SetNotify(notify);
    return std::move(w).value();
  };
  auto now_text = [&] { return FormatRfc3339(clock.WallNow()); };
  // PodDisruptionBudgets in the version the store serves (policy/v1, or
  // v1beta1 only for a store made to look like v1.20); none: not managed.
  std::optional<ResourceRef> pdb_ref;
  for (const auto& info : store_->Resources()) {
    if (info->group == "policy" && info->resource == "poddisruptionbudgets" &&
        !info->versions.empty()) {
      pdb_ref = ResourceRef{"policy", info->preferred_version(), "poddisruptionbudgets", true};
    }
  }
  const bool manage_pdbs = options_.manage_disruption_budgets && pdb_ref.has_value();

  auto schedule_start = [&](const ObjectVersion& pod) {
    auto ip = st.node_ips.find(pod.node_name);
    Task task{clock.Now() + options_.pod_start_delay, Action::kStart, pod.ns, pod.name, pod.uid};
    if (ip == st.node_ips.end()) {
      st.waiting_for_node[pod.node_name].push_back(std::move(task));
      return;
    }
    st.scheduled[pod.uid] = Action::kStart;
    st.tasks.push(std::move(task));
    pods_awaiting_start_.fetch_add(1);
  };

  // A Running pod with a simulated lifetime ends run_for after its startTime
  // (measured on the store's clock; a restarted simulator keeps the time).
  auto schedule_finish = [&](const ObjectVersion& pod) {
    if (pod.json.find(kSimulateRunForAnnotation) == std::string::npos) return;
    json obj = json::parse(pod.json, nullptr, false);
    const json* annotations = FindPath(obj, "metadata.annotations");
    if (annotations == nullptr) return;
    auto lifetime = SimulatedLifetimeOf(*annotations);
    if (!lifetime.ok() || !lifetime->has_value()) return;
    Clock::Duration left = (*lifetime)->run_for;
    if (const json* start = FindPath(obj, "status.startTime");
        start != nullptr && start->is_string()) {
      if (auto started = kube::controller::ParseRfc3339(start->get<std::string>())) {
        left -= std::chrono::duration_cast<Clock::Duration>(clock.WallNow() - *started);
      }
    }
    if (left < Clock::Duration::zero()) left = Clock::Duration::zero();
    st.scheduled[pod.uid] = Action::kFinish;
    Task task{clock.Now() + left, Action::kFinish, pod.ns, pod.name, pod.uid};
    task.exit_code = (*lifetime)->exit_code;
    st.tasks.push(std::move(task));
  };

  auto handle_pod = [&](const WatchEvent& e) {
    const ObjectVersion& pod = *e.object;
    if (e.type == WatchEventType::kDeleted) {
      st.scheduled.erase(pod.uid);
      return;
    }
    if (pod.node_name.empty() || pod.pod_terminal) return;
    auto it = st.scheduled.find(pod.uid);
    if (pod.deleting) {
      if (it != st.scheduled.end() && it->second == Action::kRemove) return;
      json obj = json::parse(pod.json, nullptr, false);
      int64_t grace = 0;
      if (const json* g = FindPath(obj, "metadata.deletionGracePeriodSeconds");
          g != nullptr && g->is_number_integer()) {
        grace = g->get<int64_t>();
      }
      auto delay =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::seconds(grace));
      if (delay > options_.max_termination_delay) delay = options_.max_termination_delay;
      st.scheduled[pod.uid] = Action::kRemove;
      st.tasks.push(Task{clock.Now() + delay, Action::kRemove, pod.ns, pod.name, pod.uid});
      return;
    }
    if (it != st.scheduled.end()) return;
    // Running pods that are Ready need nothing (but their simulated
    // lifetime, if they have one); others (re)start.
    static const int phase_index = [] {
      auto all = BuiltinResources();
      for (const auto& info : all) {
        if (info->group.empty() && info->resource == "pods")
          return info->FieldIndex("status.phase");
      }
      return -1;
    }();
    if (phase_index >= 0 && static_cast<size_t>(phase_index) < pod.fields.size() &&
        pod.fields[static_cast<size_t>(phase_index)] == "Running") {
      schedule_finish(pod);
      return;
    }
    schedule_start(pod);
  };

  auto handle_node = [&](const WatchEvent& e) {
    const ObjectVersion& node = *e.object;
    if (e.type == WatchEventType::kDeleted) {
      st.node_ips.erase(node.name);
      return;
    }
    json obj = json::parse(node.json, nullptr, false);
    std::string ip;
    bool ready = false;
    if (const json* addrs = FindPath(obj, "status.addresses"); addrs && addrs->is_array()) {
      for (const auto& a : *addrs) {
        if (a.is_object() && a.value("type", "") == "InternalIP") ip = a.value("address", "");
      }
    }
    if (const json* conds = FindPath(obj, "status.conditions"); conds && conds->is_array()) {
      for (const auto& c : *conds) {
        if (c.is_object() && c.value("type", "") == "Ready")
          ready = c.value("status", "") == "True";
      }
    }
    const bool is_new = st.node_ips.count(node.name) == 0;
    if (ip.empty()) {
      ip = st.node_ips.count(node.name) ? st.node_ips[node.name]
                                        : "10.200." + std::to_string((st.next_ip >> 8) & 0xff) +
                                              "." + std::to_string(st.next_ip & 0xff);
      if (is_new) ++st.next_ip;
    }
    st.node_ips[node.name] = ip;
    if (!ready) {
      const std::string now = now_text();
      const std::string node_ip = ip;
      (void)store_->Mutate(resources::kNodes, "", node.name, "status", [&](json& n) {
        json& status = n["status"];
        if (!status.is_object()) status = json::object();
        json conds = json::array();
        for (const char* t : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
          json c = Condition(t, "False", now);
          c["lastHeartbeatTime"] = now;
          c["reason"] = std::string("KubeletHasSufficient") + (t[0] == 'M'   ? "Memory"
                                                               : t[0] == 'D' ? "Disk"
                                                                             : "PID");
          conds.push_back(std::move(c));
        }
        json r = Condition("Ready", "True", now);
        r["lastHeartbeatTime"] = now;
        r["reason"] = "KubeletReady";
        r["message"] = "kubelet is posting ready status";
        conds.push_back(std::move(r));
        status["conditions"] = std::move(conds);
        if (!status.contains("addresses")) {
          status["addresses"] =
              json::array({{{"type", "InternalIP"}, {"address", node_ip}},
                           {{"type", "Hostname"}, {"address", n["metadata"]["name"]}}});
        }
        return Status::Ok();
      });
    }
    if (is_new && options_.node_heartbeat_interval.count() > 0) {
      st.tasks.push(Task{clock.Now() + options_.node_heartbeat_interval, Action::kHeartbeat, "",
                         node.name, node.uid});
    }
    if (auto w = st.waiting_for_node.find(node.name); w != st.waiting_for_node.end()) {
      for (auto& task : w->second) {
        st.scheduled[task.uid] = Action::kStart;
        task.due = clock.Now() + options_.pod_start_delay;
        st.tasks.push(std::move(task));
        pods_awaiting_start_.fetch_add(1);
      }
      st.waiting_for_node.erase(w);
    }
  };

  auto start_pod = [&](const Task& task) {
    const std::string now = now_text();
    bool started = false;
    auto result = store_->Mutate(resources::kPods, task.ns, task.name, "status", [&](json& pod) {
      const json& meta = pod["metadata"];
      if (meta.value("uid", "") != task.uid || meta.contains("deletionTimestamp")) {
        return Status::Ok();
      }
      const json* node = FindPath(pod, "spec.nodeName");
      if (node == nullptr || !node->is_string()) return Status::Ok();
      json& status = pod["status"];
      if (!status.is_object()) status = json::object();
      if (status.value("phase", "") == "Running") return Status::Ok();
      const std::string node_name = node->get<std::string>();
      auto ip = st.node_ips.find(node_name);
      const std::string host_ip = ip == st.node_ips.end() ? "" : ip->second;
      const uint64_t n = st.next_ip++;
      const std::string pod_ip = "10." + std::to_string(128 + ((n >> 16) & 63)) + "." +
                                 std::to_string((n >> 8) & 0xff) + "." + std::to_string(n & 0xff);
      status["phase"] = "Running";
      status["hostIP"] = host_ip;
      status["hostIPs"] = json::array({{{"ip", host_ip}}});
      status["podIP"] = pod_ip;
      status["podIPs"] = json::array({{{"ip", pod_ip}}});
      status["startTime"] = now;
      json conds = json::array();
      json scheduled = Condition("PodScheduled", "True", now);
      if (auto it = status.find("conditions"); it != status.end() && it->is_array()) {
        for (const auto& c : *it) {
          if (c.is_object() && c.value("type", "") == "PodScheduled") scheduled = c;
        }
      }
      for (const char* t :
           {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"}) {
        conds.push_back(Condition(t, "True", now));
      }
      conds.push_back(std::move(scheduled));
      status["conditions"] = std::move(conds);
      json statuses = json::array();
      if (const json* containers = FindPath(pod, "spec.containers");
          containers && containers->is_array()) {
        for (const auto& c : *containers) {
          if (!c.is_object()) continue;
          const std::string image = c.value("image", "");
          statuses.push_back(
              {{"name", c.value("name", "")},
               {"image", image},
               {"imageID", "copse.dev/simulated/" + image},
               {"containerID", "containerd://" + Hex(st.rng(), 16) + Hex(st.rng(), 16)},
               {"ready", true},
               {"started", true},
               {"restartCount", 0},
               {"lastState", json::object()},
               {"state", {{"running", {{"startedAt", now}}}}}});
        }
      }
      status["containerStatuses"] = std::move(statuses);
      if (const json* inits = FindPath(pod, "spec.initContainers"); inits && inits->is_array()) {
        json init_statuses = json::array();
        for (const auto& c : *inits) {
          if (!c.is_object()) continue;
          init_statuses.push_back({{"name", c.value("name", "")},
                                   {"image", c.value("image", "")},
                                   {"imageID", "copse.dev/simulated/" + c.value("image", "")},
                                   {"ready", true},
                                   {"restartCount", 0},
                                   {"lastState", json::object()},
                                   {"state",
                                    {{"terminated",
                                      {{"exitCode", 0},
                                       {"reason", "Completed"},
                                       {"startedAt", now},
                                       {"finishedAt", now}}}}}});
        }
        status["initContainerStatuses"] = std::move(init_statuses);
      }
      started = true;
      return Status::Ok();
    });
    if (result.ok() && started) pods_started_.fetch_add(1);
  };

  auto finish_pod = [&](const Task& task) {
    const std::string now = now_text();
    const bool failed = task.exit_code != 0;
    bool finished = false;
    auto result = store_->Mutate(resources::kPods, task.ns, task.name, "status", [&](json& pod) {
      const json& meta = pod["metadata"];
      if (meta.value("uid", "") != task.uid || meta.contains("deletionTimestamp")) {
        return Status::Ok();
      }
      json& status = pod["status"];
      if (!status.is_object() || status.value("phase", "") != "Running") return Status::Ok();
      status["phase"] = failed ? "Failed" : "Succeeded";
      if (auto conds = status.find("conditions"); conds != status.end() && conds->is_array()) {
        for (auto& c : *conds) {
          if (!c.is_object()) continue;
          const std::string type = c.value("type", "");
          if (type == "Ready" || type == "ContainersReady") {
            c["status"] = "False";
            c["reason"] = "PodCompleted";
            c["lastTransitionTime"] = now;
          }
        }
      }
      if (auto statuses = status.find("containerStatuses");
          statuses != status.end() && statuses->is_array()) {
        for (auto& c : *statuses) {
          if (!c.is_object()) continue;
          std::string started = now;
          if (const json* s = FindPath(c, "state.running.startedAt");
              s != nullptr && s->is_string()) {
            started = s->get<std::string>();
          }
          c["ready"] = false;
          c["started"] = false;
          c["state"] = {{"terminated",
                         {{"exitCode", task.exit_code},
                          {"reason", failed ? "Error" : "Completed"},
                          {"startedAt", started},
                          {"finishedAt", now},
                          {"containerID", c.value("containerID", "")}}}};
        }
      }
      finished = true;
      return Status::Ok();
    });
    if (result.ok() && finished) pods_finished_.fetch_add(1);
  };

  auto remove_pod = [&](const Task& task) {
    DeleteOptions opts;
    opts.grace_period_seconds = 0;
    opts.precondition_uid = task.uid;
    auto deleted = store_->Delete(resources::kPods, task.ns, task.name, opts);
    if (deleted.ok() && deleted->removed) pods_removed_.fetch_add(1);
  };

  auto heartbeat = [&](const Task& task) {
    const std::string now = now_text();
    auto result = store_->Mutate(resources::kNodes, "", task.name, "status", [&](json& n) {
      if (n["metadata"].value("uid", "") != task.uid) return Status::Ok();
      if (json* conds = &n["status"]["conditions"]; conds->is_array()) {
        for (auto& c : *conds) {
          if (c.is_object()) c["lastHeartbeatTime"] = now;
        }
      }
      return Status::Ok();
    });
    if (result.ok()) {
      st.tasks.push(Task{clock.Now() + options_.node_heartbeat_interval, Action::kHeartbeat, "",
                         task.name, task.uid});
    }
  };

  auto handle_pdb = [&](const WatchEvent& e) {
    const ObjectVersion& pdb = *e.object;
    if (e.type == WatchEventType::kAdded) ++st.pdbs_per_namespace[pdb.ns];
    if (e.type == WatchEventType::kDeleted && --st.pdbs_per_namespace[pdb.ns] <= 0) {
      st.pdbs_per_namespace.erase(pdb.ns);
      return;
    }
    st.dirty_namespaces[pdb.ns] = true;
  };

  auto sync_disruption = [&](const std::string& ns) {
    ListOptions list;
    list.ns = ns;
    auto pdbs = store_->List(*pdb_ref, list);
    auto pods = store_->List(resources::kPods, list);
    if (!pdbs.ok() || !pods.ok()) return;
    const std::string now = now_text();
    for (const auto& item : pdbs->items) {
      json pdb = json::parse(item->json, nullptr, false);
      if (pdb.is_discarded()) continue;
      const auto computed = ComputeDisruption(pdb, pods->items);
      const DisruptionStatus status = computed.value_or(DisruptionStatus{});
      (void)store_->Mutate(*pdb_ref, ns, item->name, "status", [&](json& obj) {
        json& s = obj["status"];
        if (!s.is_object()) s = json::object();
        const int64_t generation = FindPath(obj, "metadata.generation") != nullptr &&
                                           obj["metadata"]["generation"].is_number_integer()
                                       ? obj["metadata"]["generation"].get<int64_t>()
                                       : 0;
        s["observedGeneration"] = generation;
        s["expectedPods"] = status.expected_pods;
        s["currentHealthy"] = status.current_healthy;
        s["desiredHealthy"] = status.desired_healthy;
        s["disruptionsAllowed"] = status.disruptions_allowed;
        if (!s.contains("disruptedPods")) s["disruptedPods"] = json::object();
        const bool allowed = status.disruptions_allowed > 0;
        json cond = {{"type", "DisruptionAllowed"},
                     {"status", allowed ? "True" : "False"},
                     {"reason", allowed ? "SufficientPods" : "InsufficientPods"},
                     {"message", ""},
                     {"observedGeneration", generation},
                     {"lastTransitionTime", now}};
        if (auto conds = s.find("conditions"); conds != s.end() && conds->is_array()) {
          for (const auto& c : *conds) {
            if (c.is_object() && c.value("type", "") == "DisruptionAllowed" &&
                c.value("status", "") == cond["status"] && c.contains("lastTransitionTime")) {
              cond["lastTransitionTime"] = c["lastTransitionTime"];
            }
          }
        }
        s["conditions"] = json::array({cond});
        return Status::Ok();
      });
    }
  };

  std::vector<WatchEvent> events;
  while (true) {
    if (manage_pdbs && (!st.pdbs || st.pdbs->closed())) {
      st.pdbs_per_namespace.clear();
      st.pdbs = open_watch(*pdb_ref);
    }
    events.clear();
    if (st.pdbs) st.pdbs->Take(&events);
    for (const auto& e : events) handle_pdb(e);
    if (!st.nodes || st.nodes->closed()) st.nodes = open_watch(resources::kNodes);
    if (!st.pods || st.pods->closed()) {
      st.scheduled.clear();
      st.pods = open_watch(resources::kPods);
    }
    events.clear();
    if (st.nodes) st.nodes->Take(&events);
    for (const auto& e : events) handle_node(e);
    events.clear();
    if (st.pods) st.pods->Take(&events);
    for (const auto& e : events) {
      if (!st.pdbs_per_namespace.empty() && st.pdbs_per_namespace.count(e.object->ns) != 0) {
        st.dirty_namespaces[e.object->ns] = true;
      }
      handle_pod(e);
    }
    const auto real_now = std::chrono::steady_clock::now();
    if (!st.dirty_namespaces.empty() &&
        real_now - st.last_disruption_sync >= options_.disruption_resync) {
      st.last_disruption_sync = real_now;
      auto dirty = std::move(st.dirty_namespaces);
      st.dirty_namespaces.clear();
      for (const auto& [ns, unused] : dirty) {
        if (st.pdbs_per_namespace.count(ns) != 0) sync_disruption(ns);
      }
    }
    const auto now = clock.Now();
    while (!st.tasks.empty() && st.tasks.top().due <= now) {
      Task task = st.tasks.top();
      st.tasks.pop();
      switch (task.action) {
        case Action::kStart:
          st.scheduled.erase(task.uid);
          start_pod(task);
          break;
        case Action::kRemove:
          remove_pod(task);
          break;
        case Action::kHeartbeat:
          heartbeat(task);
          break;
        case Action::kFinish:
          if (auto it = st.scheduled.find(task.uid);
              it != st.scheduled.end() && it->second == Action::kFinish) {
            st.scheduled.erase(it);
            finish_pod(task);
          }
          break;
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) break;
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
    wake_ = false;
    if (stop_) break;
  }
  if (st.pods) {
    st.pods->SetNotify(nullptr);
    st.pods->Close();
  }
  for (auto* w : {&st.nodes, &st.pdbs}) {
    if (*w) {
      (*w)->SetNotify(nullptr);
      (*w)->Close();
    }
  }
}

}  // namespace copse::apiserver
