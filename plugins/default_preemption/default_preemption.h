#pragma once
// DefaultPreemption (PostFilter): when no node fits, finds the node where
// evicting the fewest / least important lower-priority pods would make the
// pod fit (kube-scheduler defaultpreemption + preemption.Evaluator).
//
// Computing is separated from acting: PostFilter returns the chosen node and
// its victims; nothing is evicted and no nomination is written here.
//
// Algorithm:
//   1. Eligibility: preemptionPolicy Never -> "not eligible due to
//      preemptionPolicy=Never."; a pod nominated to a node where a
//      lower-priority pod is already terminating by preemption (unless the
//      nominated node is now UnschedulableAndUnresolvable) -> "not eligible
//      due to a terminating pod on the nominated node."
//   2. Potential nodes: those whose Filter verdict was Unschedulable (not
//      UnschedulableAndUnresolvable). None -> "Preemption is not helpful for
//      scheduling" for every node.
//   3. Dry run on a copy of the snapshot, from a random offset, until
//      max(10% of potential nodes, 100) candidates (capped at the count) are
//      found with at least one not violating a PDB. Per node
//      (SelectVictimsOnNode, kube's reprieve algorithm):
//      a. remove every pod of lower priority (PreFilter extensions follow);
//         none -> "No preemption victims found for incoming pod";
//      b. if the pod still does not fit, the node is no candidate;
//      c. sort removed pods most important first (priority, then earlier
//         start); split into PDB-violating and non-violating (in order);
//      d. add each back (violating ones first) and keep it if the pod still
//         fits, else it is a victim (counting PDB violations);
//      e. victims end sorted most important first.
//      With a VictimPolicy (pod groups, scheduler/victim_rules.h): step a
//      removes only what the policy allows together, and the victims are
//      completed by it (a group that must go whole goes whole); a node whose
//      victims cannot be completed is no candidate.
//   4. Pick the candidate with, in order: fewest PDB violations, lowest
//      priority of its first (most important) victim, smallest sum of
//      (priority + 2^31), fewest victims, latest earliest-start among its
//      highest-priority victims; then the first found.
//   5. No candidate -> Unschedulable with kube's FitError text over the
//      dry-run verdicts ("Preemption is not helpful for scheduling" for nodes
//      not tried), prefixed "preemption: ", and the nomination is cleared.
//
// Thread-safety: immutable after construction; works on private copies.

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod_info.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kDefaultPreemptionName = "DefaultPreemption";

struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;  // 0..100
  int32_t min_candidate_nodes_absolute = 100;   // >= 0; not both zero
};

struct Victims {
  std::vector<PodRef> pods;  // most important first
  int32_t num_pdb_violations = 0;
};

struct PreemptionCandidate {
  NodeIndex node = 0;
  Victims victims;
};

class DefaultPreemption final : public PostFilterPlugin {
 public:
  enum Reason : ReasonId { kReasonNoVictims = 1, kReasonNotHelpful = 2 };

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kDefaultPreemptionName; }
  PostFilterResult PostFilter(const PostFilterContext& ctx) const override;

  // ---- The pure pieces (also used by gang preemption later) ----

  // nullopt when the pod may preempt; otherwise kube's reason message. A pod
  // the policy says is Leaving counts as terminating by preemption.
  static std::optional<std::string> PodEligibleToPreemptOthers(
      const PodInfo& pod, const Snapshot& snapshot, std::span<const Status> node_statuses,
      const VictimPolicy* policy = nullptr);
  // Step 3a-e on row `node` of `scratch` (a copy of the cycle's snapshot) with
  // `state` (a clone of the cycle's state). Leaves the row edited: restore it
  // with scratch.CopyNodeFrom(original, node). Success with victims, or the
  // status explaining why the node cannot help.
  static Status SelectVictimsOnNode(const FrameworkHandle& framework, const PodInfo& pod,
                                    Snapshot& scratch, CycleState& state, NodeIndex node,
                                    std::span<const PodDisruptionBudgetInfo> pdbs,
                                    std::chrono::system_clock::time_point now, Victims& victims,
                                    const VictimPolicy* policy = nullptr);
  // Step 4: index into `candidates` (non-empty).
  static size_t PickOneNode(std::span<const PreemptionCandidate> candidates,
                            std::chrono::system_clock::time_point now) noexcept;
  // Candidates to collect for `num_potential` potential nodes (calculateNumCandidates).
  size_t NumCandidates(size_t num_potential) const noexcept;

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;

 private:
  explicit DefaultPreemption(DefaultPreemptionArgs args) : args_(args) {}
  DefaultPreemptionArgs args_;
};

// util.MoreImportantPod: higher priority, then earlier start (unset = now).
bool MoreImportantPod(const PodInfo& a, const PodInfo& b,
                      std::chrono::system_clock::time_point now) noexcept;

}  // namespace copse::plugins
