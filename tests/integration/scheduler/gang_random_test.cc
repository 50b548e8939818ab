// Gang semantics under preemption, randomized (issue 15, Measure): 200
// copse PodGroups of mixed priority and preemptibility (non-, semi- and
// preemptible; flat ones and hierarchical ones whose minSubGroup leaves
// replicas optional), and single pods, arrive in 20 steps on a cluster far
// too small for all of them, with the embedded API server and the
// scheduler. After every step, once nothing is binding or terminating, it
// checks:
//   - no gang is bound below its minimum (spec 002, counted here from the
//     generated tree, independently of core/gang.h): zero members bound, or
//     minMember and minSubGroup met;
//   - no node holds more than its allocatable;
//   - no member of a non-preemptible gang, once bound, was evicted (the test
//     itself never deletes a pod);
// and at the end, that every gang whose minimum fits in the free capacity
// is bound (each gang's pods are alike and no gang has a topology
// constraint, so the free slots of its pod size decide).
//
// The seed is COPSE_TEST_SEED when set, else random; it is printed with
// every failure so a run can be repeated.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kube/pod_group.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace {

using kube::resources::kCopsePodGroups;
using kube::resources::kNodes;
using kube::resources::kPods;

constexpr int kNodeCount = 16;
constexpr int kNodeCpu = 8;

struct Leaf {
  std::string name;
  int pods = 0;
  int min_member = 0;
};

struct Gang {
  std::string name;
  int cpu = 1;  // per pod, every pod alike
  std::string priority;
  std::string preemptibility;
  bool whole = false;  // disruptionMode PodGroup
  int min_member = 0;
  int min_sub_group = 0;  // hierarchical only
  int flat_pods = 0;      // flat gangs: pods without a subgroup
  std::vector<Leaf> leaves;

  int Pods() const {
    int n = flat_pods;
    for (const Leaf& l : leaves) n += l.pods;
    return n;
  }
  // The fewest pods that satisfy it: minMember, or the minSubGroup leaves
  // needing fewest, whichever is more.
  int RequiredPods() const {
    if (leaves.empty()) return min_member;
    std::vector<int> mins;
    for (const Leaf& l : leaves) mins.push_back(l.min_member);
    std::sort(mins.begin(), mins.end());
    const int cheapest = std::accumulate(mins.begin(), mins.begin() + min_sub_group, 0);
    return std::max(min_member, cheapest);
  }
  // Spec 002 over bound members per leaf ("" for a flat gang's pods).
  bool Satisfied(const std::map<std::string, int>& bound) const {
    int total = 0;
    for (const auto& [leaf, n] : bound) total += n;
    if (total < min_member) return false;
    int leaves_met = 0;
    for (const Leaf& l : leaves) {
      auto it = bound.find(l.name);
      leaves_met += it != bound.end() && it->second >= l.min_member;
    }
    return leaves.empty() || leaves_met >= min_sub_group;
  }

  std::string Json() const {
    std::string spec = R"({"minMember":)" + std::to_string(min_member) +
                       R"(,"priorityClassName":")" + priority + R"(","preemptibility":")" +
                       preemptibility + "\"";
    if (whole) spec += R"(,"disruptionMode":"PodGroup")";
    if (!leaves.empty()) {
      spec += R"(,"minSubGroup":)" + std::to_string(min_sub_group) + R"(,"subGroups":[)";
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (i > 0) spec += ',';
        spec += R"({"name":")" + leaves[i].name + R"(","minMember":)" +
                std::to_string(leaves[i].min_member) + "}";
      }
      spec += "]";
    }
    spec += "}";
    return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
           name + R"(","namespace":"default"},"spec":)" + spec + "}";
  }

  std::vector<std::string> PodNames() const {
    std::vector<std::string> out;
    for (int i = 0; i < flat_pods; ++i) out.push_back(name + "-" + std::to_string(i));
    for (const Leaf& l : leaves) {
      for (int i = 0; i < l.pods; ++i) out.push_back(name + "-" + l.name + "-" + std::to_string(i));
    }
    return out;
  }

  std::vector<std::string> PodJsons() const {
    std::vector<std::string> out;
    auto member = [&](const std::string& pod, const std::string& leaf) {
      PodSpecOptions p;
      p.name = pod;
      p.cpu = std::to_string(cpu);
      p.memory = "64Mi";
      p.priority_class = priority;
      p.labels["gang"] = name;
      p.labels["scheduling.copse.dev/pod-group"] = name;
      if (!leaf.empty()) p.labels["scheduling.copse.dev/subgroup"] = leaf;
      out.push_back(PodJson(p));
    };
    for (int i = 0; i < flat_pods; ++i) member(name + "-" + std::to_string(i), "");
    for (const Leaf& l : leaves) {
      for (int i = 0; i < l.pods; ++i)
        member(name + "-" + l.name + "-" + std::to_string(i), l.name);
    }
    return out;
  }
};

Gang RandomGang(std::mt19937& rng, int index) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  Gang g;
  g.name = "gang-" + std::to_string(index);
  g.cpu = pick(1, 2);
  g.priority = std::vector<std::string>{"low", "mid", "high"}[pick(0, 2)];
  g.preemptibility =
      std::vector<std::string>{"preemptible", "non-preemptible", "semi-preemptible"}[pick(0, 2)];
  g.whole = g.preemptibility == "preemptible" && pick(0, 4) == 0;
  if (pick(0, 4) < 2) {
    g.flat_pods = pick(2, 6);
    g.min_member = pick(1, g.flat_pods);
    return g;
  }
  const int leaves = pick(2, 4);
  int held = 0;
  for (int i = 0; i < leaves; ++i) {
    Leaf l;
    l.name = "r" + std::to_string(i);
    l.pods = pick(1, 3);
    l.min_member = pick(1, l.pods);
    held += l.min_member;
    g.leaves.push_back(l);
  }
  g.min_sub_group = pick(1, leaves);
  g.min_member = 1;
  // Between what the cheapest minSubGroup replicas need and what all hold.
  const int cheapest = g.RequiredPods();
  g.min_member = pick(cheapest, held);
  return g;
}

struct Observed {
  std::set<std::string> pods;                               // every pod in the store
  std::map<std::string, std::map<std::string, int>> bound;  // gang -> leaf -> live bound
  std::map<std::string, int64_t> free_milli;                // node -> free cpu
  int terminating = 0;
  std::set<std::string> attempted;     // gangs with a PodGroupScheduled condition
  std::vector<std::string> disrupted;  // pods with a DisruptionTarget condition
};

Observed Observe(Cluster& cluster) {
  Observed o;
  if (auto groups = cluster.store().List(kCopsePodGroups, {}); groups.ok()) {
    for (const auto& item : groups->items) {
      auto group = kube::CopsePodGroup::Decode(item->json);
      if (group.ok() &&
          kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled) != nullptr) {
        o.attempted.insert(group->meta.name);
      }
    }
  }
  for (const kube::Node& node : cluster.Nodes()) {
    o.free_milli[node.meta.name] = int64_t{kNodeCpu} * 1000;
  }
  for (const kube::Pod& pod : cluster.Pods()) {
    o.pods.insert(pod.meta.name);
    if (pod.meta.deletion_timestamp.has_value()) {
      ++o.terminating;
      continue;
    }
    if (kube::FindCondition(pod.status.conditions, kube::kDisruptionTarget) != nullptr) {
      o.disrupted.push_back(pod.meta.name);
    }
    if (pod.spec.node_name.empty()) continue;
    for (const auto& c : pod.spec.containers) {
      auto it = c.resources.requests.find("cpu");
      if (it != c.resources.requests.end())
        o.free_milli[pod.spec.node_name] -= it->second.MilliValue();
    }
    auto gang = pod.meta.labels.find("gang");
    if (gang == pod.meta.labels.end()) continue;
    auto leaf = pod.meta.labels.find("scheduling.copse.dev/subgroup");
    ++o.bound[gang->second][leaf == pod.meta.labels.end() ? "" : leaf->second];
  }
  return o;
}

TEST(GangRandomIntegration, TwoHundredMixedGangsUnderPreemptionKeepTheirMinimums) {
  uint32_t seed = std::random_device{}();
  if (const char* env = std::getenv("COPSE_TEST_SEED")) seed = std::strtoul(env, nullptr, 10);
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (repeat with COPSE_TEST_SEED=" + std::to_string(seed) + ")");
  std::mt19937 rng(seed);

  Cluster cluster;
  InstallCopseCrds(cluster);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, int>>{{"low", 10}, {"mid", 100}, {"high", 1000}}) {
    cluster.Create(
        kube::resources::kPriorityClasses, "",
        R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" +
            name + R"("},"value":)" + std::to_string(value) + "}");
  }
  for (int i = 0; i < kNodeCount; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = std::to_string(kNodeCpu);
    cluster.Create(kNodes, "", NodeJson(node));
  }
  SchedulerOptions options;
  // A gang left below its minimum must show here, not be mended by recovery.
  options.gang_recovery_timeout = std::chrono::hours(1);
  cluster.StartScheduler(options);

  std::vector<Gang> gangs;
  // Every pod of a non-preemptible gang. The test deletes no pod, so one
  // that is gone was evicted (terminationGracePeriodSeconds 0).
  std::set<std::string> non_preemptible;
  int singles = 0;
  auto violations = [&](const Observed& o) {
    std::vector<std::string> out = CheckInvariants(cluster.Nodes(), cluster.Pods());
    for (const Gang& g : gangs) {
      auto it = o.bound.find(g.name);
      if (it == o.bound.end()) continue;
      if (!g.Satisfied(it->second)) {
        std::string counts;
        for (const auto& [leaf, n] : it->second)
          counts += " " + (leaf.empty() ? "-" : leaf) + "=" + std::to_string(n);
        out.push_back(g.name + " (" + g.preemptibility + ") bound below its minimum:" + counts);
      }
    }
    for (const std::string& pod : non_preemptible) {
      if (!o.pods.contains(pod)) out.push_back(pod + " of a non-preemptible gang was evicted");
    }
    for (const std::string& pod : o.disrupted) {
      if (non_preemptible.contains(pod)) {
        out.push_back(pod + " of a non-preemptible gang got DisruptionTarget");
      }
    }
    return out;
  };
  // Polls until every gang so far has been tried (its PodGroupScheduled
  // condition is written), nothing is binding or terminating, and the
  // invariants hold; false (with the last violations) when the deadline
  // passes first.
  auto settle = [&](std::vector<std::string>& last) {
    return WaitUntil(
        [&] {
          if (cluster.scheduler()->stats().assumed_pods != 0) return false;
          const Observed o = Observe(cluster);
          if (o.terminating > 0 || o.attempted.size() < gangs.size()) return false;
          last = violations(o);
          return last.empty();
        },
        std::chrono::seconds(30));
  };

  constexpr int kSteps = 20;
  constexpr int kGangsPerStep = 10;
  for (int step = 0; step < kSteps; ++step) {
    for (int k = 0; k < kGangsPerStep; ++k) {
      Gang g = RandomGang(rng, static_cast<int>(gangs.size()));
      cluster.Create(kCopsePodGroups, "default", g.Json());
      for (const std::string& pod : g.PodJsons()) cluster.Create(kPods, "default", pod);
      if (g.preemptibility == "non-preemptible") {
        for (const std::string& pod : g.PodNames()) non_preemptible.insert(pod);
      }
      gangs.push_back(std::move(g));
    }
    for (int k = 0; k < 4; ++k) {
      PodSpecOptions p;
      p.name = "single-" + std::to_string(singles++);
      p.cpu = std::to_string(1 + rng() % 2);
      p.memory = "64Mi";
      p.priority_class = std::vector<std::string>{"low", "mid", "high"}[rng() % 3];
      cluster.Create(kPods, "default", PodJson(p));
    }
    std::vector<std::string> last;
    ASSERT_TRUE(settle(last)) << "after step " << step << ":\n  " << [&] {
      std::string s;
      for (const std::string& v : last) s += v + "\n  ";
      return s.empty() ? std::string("never settled (binds or evictions in flight)") : s;
    }();
  }

  // Eventually every gang whose minimum fits in the free capacity is bound.
  std::vector<std::string> unplaced;
  const bool all_fitting_bound = WaitUntil(
      [&] {
        if (cluster.scheduler()->stats().assumed_pods != 0) return false;
        const Observed o = Observe(cluster);
        if (o.terminating > 0) return false;
        unplaced.clear();
        for (const Gang& g : gangs) {
          if (o.bound.contains(g.name)) continue;
          int64_t slots = 0;
          for (const auto& [node, free] : o.free_milli)
            slots += std::max<int64_t>(0, free) / (1000 * g.cpu);
          if (slots >= g.RequiredPods()) {
            unplaced.push_back(g.name + " needs " + std::to_string(g.RequiredPods()) + " x " +
                               std::to_string(g.cpu) + " cpu, " + std::to_string(slots) +
                               " slots free");
          }
        }
        return unplaced.empty();
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(all_fitting_bound) << [&] {
    std::string s;
    for (const std::string& u : unplaced) s += "\n  " + u;
    return s;
  }();
  std::vector<std::string> last;
  EXPECT_TRUE(settle(last)) << [&] {
    std::string s;
    for (const std::string& v : last) s += "\n  " + v;
    return s;
  }();

  // The run exercised what it claims: gangs of each kind placed, and
  // preemption happened.
  const Observed o = Observe(cluster);
  std::map<std::string, int> placed_by_kind;
  int hierarchical_placed = 0;
  for (const Gang& g : gangs) {
    if (!o.bound.contains(g.name)) continue;
    ++placed_by_kind[g.preemptibility];
    hierarchical_placed += !g.leaves.empty();
  }
  EXPECT_GT(placed_by_kind["preemptible"], 0);
  EXPECT_GT(placed_by_kind["non-preemptible"], 0);
  EXPECT_GT(placed_by_kind["semi-preemptible"], 0);
  EXPECT_GT(hierarchical_placed, 0);
  EXPECT_GT(cluster.scheduler()->stats().preemption_victims, 0u);
}

}  // namespace
}  // namespace copse::scheduler::testing
