// The binding cycle (SchedulerLoop), after a cycle placed a pod:
//   1. Assume: the pod counts on its node in the cache at once.
//   2. Reserve, Permit, PreBind, with the pod's cycle's CycleState (layered
//      over the pass that placed it). A rejection forgets the pod, unreserves
//      and requeues it with an error backoff and a SchedulerError report.
//   3. Bind: the profile's Bind plugins; DefaultBinder asks the BindingClient,
//      which has the ApiWriter POST the binding. The loop moves on.
//   4. The outcome comes back through the inbox (BindDone):
//      - success: the assumed pod's TTL starts, the unit is done, PostBind
//        runs and a Scheduled event is recorded;
//      - unknown (timeout, connection lost, 409): the pod is read back first
//        (BindChecked), since forgetting a pod the server did bind frees its
//        node for others while the watch lags;
//      - failure: a gang member whose node still holds it is bound again
//        there (up to kMaxGroupBindRetries); otherwise the pod is forgotten
//        and unreserved, the freed room requeues others, and the pod (or its
//        whole group) is requeued.
#include <utility>

#include "core/log.h"
#include "plugins/framework/plugin.h"
#include "scheduler/config/metrics.h"
#include "scheduler/loop.h"

namespace copse::scheduler {
namespace {

PodId IdOf(const PodInfo& pod) { return {pod.namespace_name, pod.name, pod.uid}; }

// A bind whose outcome is unknown: the request timed out or its connection
// failed (the server may have applied it), or 409 (the pod is already bound,
// possibly by this very request's earlier attempt).
bool BindOutcomeUnknown(const Status& status) {
  if (status.ok()) return false;
  const ErrorCode code = status.error().code;
  return code == ErrorCode::kTimeout || code == ErrorCode::kUnavailable ||
         code == ErrorCode::kConflict;
}

// What Bind plugins ask of the runtime: the ApiWriter sends the binding and
// its outcome returns to the loop as a BindDone event of this attempt.
class WriterBindingClient final : public plugins::BindingClient {
 public:
  WriterBindingClient(ApiWriter& writer, Inbox& inbox, uint64_t attempt)
      : writer_(writer), inbox_(inbox), attempt_(attempt) {}

  void PostBinding(const PodInfo& pod, std::string_view node_name) override {
    ++requests_;
    writer_.Bind(IdOf(pod), std::string(node_name),
                 [inbox = &inbox_, uid = pod.uid, attempt = attempt_](Status s) {
                   inbox->Push(BindDone{uid, attempt, std::move(s)});
                 });
  }
  int requests() const noexcept { return requests_; }

 private:
  ApiWriter& writer_;
  Inbox& inbox_;
  uint64_t attempt_;
  int requests_ = 0;
};

}  // namespace

bool SchedulerLoop::AssumeAndBind(const queue::UnitKey& key, int64_t cycle, size_t profile,
                                  const Assignment& assignment, bool group_member) {
  const PodPtr& pod = assignment.pod;
  const std::string& node = assignment.node;
  // 1. Assume.
  auto assumed_info = std::make_shared<PodInfo>(*pod);
  assumed_info->node_name = node;
  PodPtr assumed = std::move(assumed_info);
  if (Status s = cache_.AssumePod(assumed); !s.ok()) {
    env_.InvalidateBatches();  // the kept passes counted this pod on `node`
    queue_.Done(key);
    return false;
  }
  queue_.DeleteNominatedPodIfExists(*pod);
  // 2. Reserve, Permit, PreBind.
  const plugins::Framework& fw = profiles_.at(profile);
  Binding binding;
  binding.pod = assumed;
  binding.key = key;
  binding.cycle = cycle;
  binding.profile = profile;
  binding.group_member = group_member;
  binding.state = plugins::CycleState(assignment.state);
  auto fail = [&](const std::string& why) {
    cache_.ForgetPod(assumed->uid);
    env_.InvalidateBatches();
    BindingCycleFailed(key, cycle, *pod, why);
    return false;
  };
  plugins::Status reserve = fw.RunReserve(binding.state, *assumed, node);
  if (!reserve.IsSuccess()) {
    return fail("running Reserve plugin: " + fw.StatusMessage(reserve, env_.snapshot()));
  }
  plugins::PermitDecision permit = fw.RunPermit(binding.state, *assumed, node);
  if (!permit.status.IsSuccess()) {
    fw.RunUnreserve(binding.state, *assumed, node);
    const std::string why = permit.status.code == plugins::Code::kWait
                                ? "Permit returned Wait: copse places groups in the Workload "
                                  "Scheduling Cycle instead of waiting pods"
                                : fw.StatusMessage(permit.status, env_.snapshot());
    return fail("running Permit plugin: " + why);
  }
  plugins::Status prebind = fw.RunPreBind(binding.state, *assumed, node);
  if (!prebind.IsSuccess()) {
    fw.RunUnreserve(binding.state, *assumed, node);
    return fail("running PreBind plugin: " + fw.StatusMessage(prebind, env_.snapshot()));
  }
  ++stats_.scheduled;
  // 3. Bind.
  StartBind(std::move(binding));
  return true;
}

void SchedulerLoop::StartBind(Binding binding) {
  binding.attempt = ++next_attempt_;
  const plugins::Framework& fw = profiles_.at(binding.profile);
  WriterBindingClient client(writer_, inbox_, binding.attempt);
  const plugins::Status bound =
      fw.RunBind(binding.state, *binding.pod, binding.pod->node_name, client);
  if (bound.IsSuccess() && client.requests() == 1) {
    const std::string uid = binding.pod->uid;
    bindings_.insert_or_assign(uid, std::move(binding));
    return;
  }
  std::string why;
  if (bound.IsSkip()) {
    why = "no Bind plugin handled the pod";
  } else if (!bound.IsSuccess()) {
    why = "running Bind plugin: " + fw.StatusMessage(bound, env_.snapshot());
  } else {
    why = "Bind plugin " + std::string(fw.plugin(bound.plugin).Name()) +
          " returned Success after " + std::to_string(client.requests()) +
          " binding requests (exactly one expected)";
  }
  BindFailed(std::move(binding), MakeError(ErrorCode::kInternal, why));
}

void SchedulerLoop::Apply(BindDone& event) {
  auto it = bindings_.find(event.uid);
  if (it == bindings_.end() || it->second.attempt != event.attempt) return;  // superseded
  if (event.status.ok()) {
    BindSucceeded(it->second);
    bindings_.erase(it);
    return;
  }
  Binding& binding = it->second;
  if (BindOutcomeUnknown(event.status) && binding.verifications < kMaxBindVerifications) {
    // Ask the server before forgetting the pod: forgetting a pod that is in
    // fact bound frees its node's capacity for others until the watch
    // catches up (overcommit). Until the answer, the pod stays assumed.
    ++stats_.binds_verified;
    binding.status_before_check = event.status;
    writer_.GetPodNodeName(IdOf(*binding.pod), [inbox = &inbox_, uid = event.uid,
                                                attempt = event.attempt](Result<std::string> node) {
      inbox->Push(BindChecked{uid, attempt, std::move(node)});
    });
    return;
  }
  Binding failed = std::move(binding);
  bindings_.erase(it);
  BindFailed(std::move(failed), event.status);
}

void SchedulerLoop::Apply(BindChecked& event) {
  auto it = bindings_.find(event.uid);
  if (it == bindings_.end() || it->second.attempt != event.attempt) return;
  Binding& binding = it->second;
  Status status = binding.status_before_check;
  if (!event.node_name.ok() && event.node_name.error().code != ErrorCode::kNotFound) {
    ++binding.verifications;  // still unknown: ask again, up to the limit
  } else {
    binding.verifications = kMaxBindVerifications;
    if (!event.node_name.ok()) {
      status = event.node_name.error();  // the pod is gone
    } else if (*event.node_name == binding.pod->node_name) {
      status = Status::Ok();  // the bind took effect
    } else {
      // Not bound: an ordinary failure (a bound member may be retried on
      // its node). Bound elsewhere: a conflict, never retried.
      const std::string& node = *event.node_name;
      status = MakeError(node.empty() ? ErrorCode::kInternal : ErrorCode::kConflict,
                         "binding did not take effect (" + status.error().message + ")" +
                             (node.empty() ? std::string() : "; the pod is on " + node));
    }
  }
  BindDone again{event.uid, event.attempt, std::move(status)};
  Apply(again);
}

void SchedulerLoop::BindSucceeded(Binding& binding) {
  const PodInfo& pod = *binding.pod;
  cache_.FinishBinding(pod.uid);
  if (!binding.group_member) queue_.Done(binding.key);
  queue_.DeleteNominatedPodIfExists(pod);  // a bound pod holds its node itself
  ++stats_.bound;
  reporter_.PodScheduled(pod);
  profiles_.at(binding.profile).RunPostBind(binding.state, pod, pod.node_name);
}

void SchedulerLoop::BindFailed(Binding binding, const Status& status) {
  const PodInfo& pod = *binding.pod;
  ++stats_.bind_failures;
  if (options_.metrics != nullptr) options_.metrics->IncBindFailures();
  const ErrorCode code = status.error().code;
  if (binding.group_member && binding.retries < kMaxGroupBindRetries &&
      code != ErrorCode::kNotFound && code != ErrorCode::kConflict &&
      cache_.HasNode(pod.node_name) && cache_.IsAssumed(pod.uid)) {
    // The member stays assumed on its node, which still holds it: bind
    // there again rather than re-placing the group.
    ++binding.retries;
    binding.verifications = 0;
    StartBind(std::move(binding));
    return;
  }
  if (LogEnabled(1)) {
    Log(1, "scheduler",
        "binding " + pod.FullName() + " to " + pod.node_name +
            " failed: " + status.error().message);
  }
  cache_.ForgetPod(pod.uid);
  env_.InvalidateBatches();
  profiles_.at(binding.profile).RunUnreserve(binding.state, pod, pod.node_name);
  // The node's capacity is free again for others.
  queue_.MoveAllToActiveOrBackoffQueue(queue::kEventAssignedPodDelete,
                                       queue::EventObject(binding.pod), {});
  if (binding.group_member) {
    // The group is placed again, constrained by the members already bound.
    reporter_.PodFailed(pod, "SchedulerError", "Binding rejected: " + status.error().message,
                        std::nullopt);
    ApplyDecision(gangs_.Evaluate(binding.key));
  } else if (code == ErrorCode::kNotFound) {
    queue_.Done(binding.key);  // the pod is gone
  } else {
    BindingCycleFailed(binding.key, binding.cycle, pod,
                       "Binding rejected: " + status.error().message);
  }
}

void SchedulerLoop::BindingCycleFailed(const queue::UnitKey& key, int64_t cycle, const PodInfo& pod,
                                       const std::string& message) {
  ++stats_.errors;
  queue_.AddErroredIfNotPresent(key, cycle);
  reporter_.PodFailed(pod, "SchedulerError", message, std::nullopt);
}

}  // namespace copse::scheduler
