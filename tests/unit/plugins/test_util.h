#pragma once
// Test helpers: fluent pod/node builders, a small cluster whose snapshot is
// kept in sync, and drivers that run one plugin's PreFilter/Filter or
// PreScore/Score/NormalizeScore like the framework does.

#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/quantity.h"
#include "core/resource_vector.h"
#include "core/snapshot.h"
#include "plugins/framework/cycle_state.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/random.h"
#include "plugins/framework/registry.h"

namespace copse::plugins::testing {

using Res = std::initializer_list<std::pair<const char*, const char*>>;

inline ResourceVector MakeResources(ResourceNames& names, Res list) {
  ResourceList rl;
  for (const auto& [name, value] : list) rl.emplace(name, Quantity::MustParse(value));
  Result<ResourceVector> v = ResourceVector::FromResourceList(rl, names);
  EXPECT_TRUE(v.ok());
  return v.ok() ? *v : ResourceVector();
}

inline LabelSelector Selector(std::string_view text) {
  Result<LabelSelector> s = LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.ok() ? *s : LabelSelector::Nothing();
}

inline Requirement Req(std::string key, SelectorOp op, std::vector<std::string> values = {}) {
  std::sort(values.begin(), values.end());
  return Requirement{std::move(key), op, std::move(values)};
}

inline PodAffinityTerm AffinityTerm(
    std::string_view selector, std::string topology_key, std::vector<std::string> namespaces = {},
    std::optional<LabelSelector> namespace_selector = std::nullopt) {
  PodAffinityTerm t;
  t.label_selector = Selector(selector);
  t.topology_key = std::move(topology_key);
  t.namespaces = std::move(namespaces);
  t.namespace_selector = std::move(namespace_selector);
  return t;
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default") {
    pod_.name = name;
    pod_.uid = "uid-" + ns + "-" + name;
    pod_.namespace_name = std::move(ns);
    pod_.scheduler_name = "copse-scheduler";
  }
  PodBuilder& Label(std::string k, std::string v) {
    pod_.labels[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& Priority(int32_t p) {
    pod_.priority = p;
    return *this;
  }
  PodBuilder& Requests(ResourceNames& names, Res list) {
    pod_.requests = MakeResources(names, list);
    return *this;
  }
  PodBuilder& NodeSelector(std::string k, std::string v) {
    pod_.node_selector[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& RequiredNodeAffinity(copse::NodeSelector s) {
    pod_.required_node_affinity = std::move(s);
    return *this;
  }
  PodBuilder& PreferredNodeAffinity(int32_t weight, NodeSelectorTerm term) {
    pod_.preferred_node_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  PodBuilder& Toleration(std::string key, TolerationOperator op, std::string value,
                         std::optional<TaintEffect> effect) {
    pod_.tolerations.push_back(copse::Toleration{std::move(key), op, std::move(value), effect});
    return *this;
  }
  PodBuilder& HostPort(std::string ip, Protocol protocol, int32_t port) {
    pod_.host_ports.push_back(copse::HostPort::Make(ip, protocol, port));
    return *this;
  }
  PodBuilder& PodAffinity(PodAffinityTerm t) {
    pod_.required_affinity.push_back(std::move(t));
    return *this;
  }
  PodBuilder& PodAntiAffinity(PodAffinityTerm t) {
    pod_.required_anti_affinity.push_back(std::move(t));
    return *this;
  }
  PodBuilder& PreferredPodAffinity(int32_t w, PodAffinityTerm t) {
    pod_.preferred_affinity.push_back({w, std::move(t)});
    return *this;
  }
  PodBuilder& PreferredPodAntiAffinity(int32_t w, PodAffinityTerm t) {
    pod_.preferred_anti_affinity.push_back({w, std::move(t)});
    return *this;
  }
  PodBuilder& Spread(int32_t max_skew, std::string key, UnsatisfiableConstraintAction action,
                     std::optional<LabelSelector> selector, int32_t min_domains = 1,
                     NodeInclusionPolicy affinity_policy = NodeInclusionPolicy::kHonor,
                     NodeInclusionPolicy taints_policy = NodeInclusionPolicy::kIgnore) {
    TopologySpreadConstraint c;
    c.max_skew = max_skew;
    c.topology_key = std::move(key);
    c.when_unsatisfiable = action;
    c.label_selector = std::move(selector);
    c.min_domains = min_domains;
    c.node_affinity_policy = affinity_policy;
    c.node_taints_policy = taints_policy;
    pod_.topology_spread_constraints.push_back(std::move(c));
    return *this;
  }
  PodBuilder& NodeName(std::string n) {
    pod_.node_name = std::move(n);
    return *this;
  }
  PodBuilder& NominatedNode(std::string n) {
    pod_.nominated_node_name = std::move(n);
    return *this;
  }
  PodBuilder& PreemptNever() {
    pod_.preemption_policy = PreemptionPolicy::kNever;
    return *this;
  }
  PodBuilder& StartTime(int64_t seconds) {
    pod_.start_time = std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
    return *this;
  }
  PodBuilder& Terminating() {
    pod_.terminating = true;
    return *this;
  }
  PodInfo& raw() { return pod_; }
  std::shared_ptr<PodInfo> Obj() {
    auto p = std::make_shared<PodInfo>(pod_);
    copse::Status s = p->Finalize();
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return p;
  }

 private:
  PodInfo pod_;
};

// Nodes plus a snapshot synced on demand.
class Cluster {
 public:
  Cluster() : snapshot_(names) {}

  NodeInfo& AddNode(const std::string& name,
                    Res allocatable = {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}},
                    Labels labels = {}) {
    auto node = std::make_unique<NodeInfo>(name);
    node->SetAllocatable(MakeResources(names, allocatable));
    if (labels.find(std::string(kLabelHostname)) == labels.end())
      labels[std::string(kLabelHostname)] = name;
    node->SetLabels(std::move(labels));
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }
  NodeInfo& node(const std::string& name) {
    for (auto& n : nodes_) {
      if (n->name() == name) return *n;
    }
    ADD_FAILURE() << "no node " << name;
    return *nodes_.front();
  }
  void AddPod(const std::string& node_name, std::shared_ptr<const PodInfo> pod) {
    node(node_name).AddPod(std::move(pod));
  }

  const Snapshot& snapshot() {
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes_) ptrs.push_back(n.get());
    snapshot_.Sync(ptrs);
    return snapshot_;
  }
  Snapshot& mutable_snapshot() {
    snapshot();
    return snapshot_;
  }
  NodeIndex index(const std::string& name) { return *snapshot().FindNode(name); }

  ResourceNames names;

 private:
  std::vector<std::unique_ptr<NodeInfo>> nodes_;
  Snapshot snapshot_;
};

inline std::unique_ptr<Plugin> MakePlugin(PluginFactory factory, const PluginArgs* args = nullptr) {
  Result<std::unique_ptr<Plugin>> p = factory(args);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(*p) : nullptr;
}

// Result of running one plugin's PreFilter + Filter over every node.
struct FilterRun {
  Status prefilter;  // Skip: Filter not run (every node Success)
  std::optional<std::vector<NodeIndex>> prefilter_nodes;
  std::vector<Status> statuses;                   // by NodeIndex
  std::vector<std::vector<std::string>> reasons;  // rendered, by NodeIndex
};

inline FilterRun RunFilter(const Plugin& plugin, const PodInfo& pod, const Snapshot& snapshot,
                           CycleState& state) {
  FilterRun run;
  run.statuses.assign(snapshot.num_nodes(), Status::Success());
  run.reasons.resize(snapshot.num_nodes());
  if (const auto* pre = dynamic_cast<const PreFilterPlugin*>(&plugin)) {
    PreFilterResult result;
    run.prefilter = pre->PreFilter(pod, snapshot, state, result);
    run.prefilter_nodes = result.nodes;
    if (run.prefilter.IsSkip()) return run;
    if (!run.prefilter.IsSuccess()) return run;
  }
  const auto* filter = dynamic_cast<const FilterPlugin*>(&plugin);
  if (filter == nullptr) return run;
  std::vector<NodeIndex> nodes;
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) nodes.push_back(n);
  filter->Filter(CycleContext{pod, snapshot, state}, nodes, run.statuses);
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    if (!run.statuses[n].IsSuccess())
      plugin.AppendReasons(run.statuses[n], snapshot, run.reasons[n]);
  }
  return run;
}

inline FilterRun RunFilter(const Plugin& plugin, const PodInfo& pod, const Snapshot& snapshot) {
  CycleState state;
  return RunFilter(plugin, pod, snapshot, state);
}

// Result of PreScore + Score + NormalizeScore over `nodes` (default: all).
struct ScoreRun {
  Status prescore;  // Skip: scores are all zero
  std::vector<int64_t> scores;
};

inline ScoreRun RunScore(const Plugin& plugin, const PodInfo& pod, const Snapshot& snapshot,
                         std::vector<NodeIndex> nodes = {}) {
  if (nodes.empty()) {
    for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) nodes.push_back(n);
  }
  ScoreRun run;
  run.scores.assign(nodes.size(), 0);
  CycleState state;
  if (const auto* pre = dynamic_cast<const PreScorePlugin*>(&plugin)) {
    run.prescore = pre->PreScore(pod, snapshot, nodes, state);
    if (!run.prescore.IsSuccess()) return run;
  }
  const auto* score = dynamic_cast<const ScorePlugin*>(&plugin);
  const CycleContext ctx{pod, snapshot, state};
  EXPECT_TRUE(score->Score(ctx, nodes, run.scores).IsSuccess());
  if (score->HasNormalizeScore()) {
    EXPECT_TRUE(score->NormalizeScore(ctx, nodes, run.scores).IsSuccess());
  }
  return run;
}

// Always returns the same value (clamped to the range).
class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(uint64_t value) : value_(value) {}
  uint64_t Uniform(uint64_t n) noexcept override { return n == 0 ? 0 : std::min(value_, n - 1); }

 private:
  uint64_t value_;
};

inline std::chrono::system_clock::time_point TestNow() {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1'000'000));
}

}  // namespace copse::plugins::testing
