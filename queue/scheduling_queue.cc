#include "queue/scheduling_queue.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "core/check.h"

namespace copse::queue {

namespace {

// The counter of a place; nullptr for kNone.
size_t* CountFor(PendingCounts& counts, QueueLocation location) noexcept {
  switch (location) {
    case QueueLocation::kActive:
      return &counts.active;
    case QueueLocation::kBackoff:
      return &counts.backoff;
    case QueueLocation::kUnschedulable:
      return &counts.unschedulable;
    case QueueLocation::kGated:
      return &counts.gated;
    case QueueLocation::kInFlight:
      return &counts.in_flight;
    case QueueLocation::kNone:
      break;
  }
  return nullptr;
}

std::vector<QueueProfile> DefaultProfiles(std::vector<QueueProfile> profiles) {
  if (profiles.empty()) profiles.emplace_back();
  return profiles;
}

// A required affinity term of a pending pod that `assigned` may satisfy. The
// namespace labels are not known here, so a term with a namespace selector
// counts as matching (the plugin's hint makes the exact call).
bool TermMayMatch(const PodAffinityTerm& term, const PodInfo& assigned) noexcept {
  return term.MatchesLabels(assigned.labels) &&
         (term.namespace_selector.has_value() || term.NamespaceListed(assigned.namespace_name));
}

}  // namespace

// ---------------------------------------------------------------------------
// Orderings

bool SchedulingQueue::ActiveLess::operator()(const Entry& a, const Entry& b) const noexcept {
  const QueueLessFn& less = queue->options_.less;
  if (!less) {
    const QueuedUnit& x = a.unit;
    const QueuedUnit& y = b.unit;
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.timestamp != y.timestamp) return x.timestamp < y.timestamp;
    return a.enqueue_seq < b.enqueue_seq;
  }
  const QueuedUnitView va = a.unit.View();
  const QueuedUnitView vb = b.unit.View();
  if (less(va, vb)) return true;
  if (less(vb, va)) return false;
  return a.enqueue_seq < b.enqueue_seq;
}

bool SchedulingQueue::BackoffLess::operator()(const Entry& a, const Entry& b) const noexcept {
  if (a.unit.backoff_expiration != b.unit.backoff_expiration) {
    return a.unit.backoff_expiration < b.unit.backoff_expiration;
  }
  return a.enqueue_seq < b.enqueue_seq;
}

// ---------------------------------------------------------------------------
// Construction

SchedulingQueue::SchedulingQueue(const Clock& clock, QueueOptions options,
                                 std::vector<QueueProfile> profiles)
    : clock_(clock),
      options_(std::move(options)),
      profiles_(DefaultProfiles(std::move(profiles))),
      active_(ActiveLess{this}) {
  COPSE_CHECK(options_.pod_initial_backoff.count() >= 0) << "negative initial backoff";
  COPSE_CHECK(options_.pod_max_backoff.count() >= 0) << "negative max backoff";
  COPSE_CHECK(options_.pod_max_in_unschedulable_pods.count() >= 0)
      << "negative podMaxInUnschedulablePodsDuration";
}

// ---------------------------------------------------------------------------
// Informer side

QueueLocation SchedulingQueue::Add(std::shared_ptr<const PodInfo> pod) {
  COPSE_CHECK(pod != nullptr) << "Add(nullptr)";
  Entry* existing = FindEntry(UnitKeyRef::ForPod(*pod));
  if (existing == nullptr) return AddNew(std::move(pod));
  // An already queued key is an update, with the queued version as "old".
  std::shared_ptr<const PodInfo> old_pod = existing->unit.pods.front();
  return UpdateEntry(*existing, std::move(old_pod), std::move(pod));
}

QueueLocation SchedulingQueue::Update(std::shared_ptr<const PodInfo> old_pod,
                                      std::shared_ptr<const PodInfo> new_pod) {
  COPSE_CHECK(new_pod != nullptr) << "Update(..., nullptr)";
  Entry* entry = FindEntry(UnitKeyRef::ForPod(*new_pod));
  if (entry == nullptr) return AddNew(std::move(new_pod));
  if (old_pod == nullptr) old_pod = entry->unit.pods.front();
  return UpdateEntry(*entry, std::move(old_pod), std::move(new_pod));
}

QueueLocation SchedulingQueue::AddNew(std::shared_ptr<const PodInfo> pod) {
  Entry& entry = NewEntry(pod);
  const QueueLocation location = MoveToActive(entry);
  if (location == QueueLocation::kActive) nominator_.Add(std::move(pod), std::nullopt);
  return location;
}

QueueLocation SchedulingQueue::UpdateEntry(Entry& entry, std::shared_ptr<const PodInfo> old_pod,
                                           std::shared_ptr<const PodInfo> new_pod) {
  const ClusterEventList events = PodSchedulingPropertiesChange(old_pod.get(), *new_pod);
  const EventObject old_obj(old_pod);
  const EventObject new_obj(new_pod);
  nominator_.Update(old_pod.get(), new_pod);
  SetPod(entry, std::move(new_pod));

  switch (entry.unit.location) {
    case QueueLocation::kInFlight:
      if (entry.deleted_in_flight) {
        // Recreated while the deleted incarnation is being scheduled: it
        // re-enters fresh when that attempt is handed back.
        entry.deleted_in_flight = false;
        entry.readded_in_flight = true;
        break;
      }
      // The attempt runs on the old version; if it fails, these events
      // decide whether the new version deserves another try right away.
      for (const ClusterEvent& event : events) RecordInFlightEvent(event, old_obj, new_obj);
      break;
    case QueueLocation::kActive:
      active_.Fix(&entry);
      break;
    case QueueLocation::kBackoff:
      break;
    case QueueLocation::kUnschedulable:
      for (const ClusterEvent& event : events) {
        const RequeueStrategy strategy = Evaluate(entry, event, old_obj, new_obj);
        if (strategy == RequeueStrategy::kSkip) continue;
        Detach(entry);
        Requeue(entry, strategy);
        break;
      }
      break;
    case QueueLocation::kGated:
      // Gates are cheap and the update may have lifted one: re-check.
      Detach(entry);
      Requeue(entry, RequeueStrategy::kAfterBackoff);
      break;
    case QueueLocation::kNone:
      break;
  }
  return entry.unit.location;
}

bool SchedulingQueue::Delete(const PodInfo& pod) {
  nominator_.Delete(pod.uid);
  Entry* entry = FindEntry(UnitKeyRef::ForPod(pod));
  if (entry == nullptr) return false;
  if (entry->unit.location == QueueLocation::kInFlight) {
    entry->deleted_in_flight = true;
    entry->readded_in_flight = false;
    return true;
  }
  Detach(*entry);
  EraseEntry(*entry);
  return true;
}

QueueLocation SchedulingQueue::UpsertGroup(const UnitKey& key, PodList members) {
  COPSE_CHECK(key.kind == UnitKind::kPodGroup && !members.empty())
      << "UpsertGroup " << key.ToString();
  int32_t priority = members.front()->priority;
  for (const auto& pod : members) priority = std::min(priority, pod->priority);
  Entry* entry = FindEntry(key);
  if (entry == nullptr) {
    auto [it, inserted] = units_.try_emplace(key);
    Entry& created = it->second;
    created.unit.key = key;
    created.profile = ProfileFor(*members.front());
    created.unit.priority = priority;
    created.unit.pods = std::move(members);
    for (const auto& pod : created.unit.pods) pending_requests_.Add(*pod);
    ResetAsNew(created);
    return MoveToActive(created);
  }
  QueuedUnit& unit = entry->unit;
  if (size_t* count = CountFor(pod_counts_, unit.location)) {
    *count = *count - unit.pods.size() + members.size();
  }
  for (const auto& pod : unit.pods) pending_requests_.Remove(*pod);
  unit.pods = std::move(members);
  for (const auto& pod : unit.pods) pending_requests_.Add(*pod);
  unit.priority = priority;
  const ClusterEvent event{EventResource::kUnscheduledPod, kActionUpdateOther};
  const EventObject new_obj(unit.pods.front());
  switch (unit.location) {
    case QueueLocation::kInFlight:
      if (entry->deleted_in_flight) {
        entry->deleted_in_flight = false;
        entry->readded_in_flight = true;
        break;
      }
      RecordInFlightEvent(event, {}, new_obj);
      break;
    case QueueLocation::kActive:
      active_.Fix(entry);
      break;
    case QueueLocation::kUnschedulable: {
      const RequeueStrategy strategy = Evaluate(*entry, event, {}, new_obj);
      if (strategy == RequeueStrategy::kSkip) break;
      Detach(*entry);
      Requeue(*entry, strategy);
      break;
    }
    case QueueLocation::kGated:
      Detach(*entry);
      Requeue(*entry, RequeueStrategy::kAfterBackoff);
      break;
    case QueueLocation::kBackoff:
    case QueueLocation::kNone:
      break;
  }
  return unit.location;
}

bool SchedulingQueue::DeleteGroup(const UnitKey& key) {
  Entry* entry = FindEntry(key);
  if (entry == nullptr) return false;
  if (entry->unit.location == QueueLocation::kInFlight) {
    entry->deleted_in_flight = true;
    entry->readded_in_flight = false;
    return true;
  }
  Detach(*entry);
  EraseEntry(*entry);
  return true;
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(const ClusterEvent& event,
                                                    const EventObject& old_obj,
                                                    const EventObject& new_obj) {
  MoveAll(event, old_obj, new_obj);
}

void SchedulingQueue::AssignedPodAdded(const std::shared_ptr<const PodInfo>& pod) {
  COPSE_CHECK(pod != nullptr) << "AssignedPodAdded(nullptr)";
  CollectAssignedPodCandidates(*pod);
  MovePods(scratch_, kEventAssignedPodAdd, EventObject(), EventObject(pod));
}

void SchedulingQueue::AssignedPodUpdated(const std::shared_ptr<const PodInfo>& old_pod,
                                         const std::shared_ptr<const PodInfo>& new_pod,
                                         const ClusterEvent& event) {
  COPSE_CHECK(new_pod != nullptr) << "AssignedPodUpdated(..., nullptr)";
  const ClusterEvent scale_down{EventResource::kPod, kActionUpdatePodScaleDown};
  if (MatchClusterEvents(scale_down, event)) {
    // Freed resources may help pods rejected by any resource plugin.
    MoveAll(event, EventObject(old_pod), EventObject(new_pod));
    return;
  }
  CollectAssignedPodCandidates(*new_pod);
  MovePods(scratch_, event, EventObject(old_pod), EventObject(new_pod));
}

void SchedulingQueue::AssignedPodDeleted(const std::shared_ptr<const PodInfo>& pod) {
  MoveAll(kEventAssignedPodDelete, EventObject(pod), EventObject());
}

void SchedulingQueue::Activate(std::span<const UnitKey> keys) {
  for (const UnitKey& key : keys) {
    Entry* entry = FindEntry(key);
    if (entry == nullptr) continue;
    switch (entry->unit.location) {
      case QueueLocation::kBackoff:
      case QueueLocation::kUnschedulable:
      case QueueLocation::kGated:
        Detach(*entry);
        MoveToActive(*entry);
        break;
      case QueueLocation::kInFlight:
        RecordInFlightEvent(kEventForceActivate, EventObject(),
                            EventObject(entry->unit.pods.front()));
        break;
      case QueueLocation::kActive:
      case QueueLocation::kNone:
        break;
    }
  }
}

// ---------------------------------------------------------------------------
// Scheduling loop

QueueLocation SchedulingQueue::AddUnschedulableIfNotPresent(const UnitKey& key, int64_t cycle,
                                                            const Rejection& rejection) {
  Entry* entry = FindEntry(key);
  if (entry == nullptr || entry->unit.location != QueueLocation::kInFlight ||
      entry->popped_cycle != cycle) {
    return QueueLocation::kNone;
  }
  return RequeueAfterAttempt(*entry, rejection);
}

void SchedulingQueue::Done(const UnitKey& key) {
  Entry* entry = FindEntry(key);
  if (entry == nullptr || entry->unit.location != QueueLocation::kInFlight) return;
  LeaveInFlight(*entry);
  if (entry->readded_in_flight) {
    ResetAsNew(*entry);
    MoveToActive(*entry);
    return;
  }
  EraseEntry(*entry);
}

int64_t SchedulingQueue::SchedulingCycle() const { return cycle_; }

// ---------------------------------------------------------------------------
// Timers

size_t SchedulingQueue::FlushBackoffQCompleted() {
  const Clock::TimePoint now = clock_.Now();
  size_t moved = 0;
  while (Entry* top = backoff_.Top()) {
    if (top->unit.backoff_expiration > now) break;
    backoff_.Pop();
    SetLocation(*top, QueueLocation::kNone);
    if (MoveToActive(*top) == QueueLocation::kActive) ++moved;
  }
  return moved;
}

size_t SchedulingQueue::FlushUnschedulablePodsLeftover() {
  const Clock::TimePoint now = clock_.Now();
  scratch_.clear();
  for (Entry* entry : unschedulable_) {
    if (now - entry->unit.timestamp > options_.pod_max_in_unschedulable_pods) {
      scratch_.push_back(entry);
    }
  }
  if (scratch_.empty()) return 0;
  return MovePods(scratch_, kEventUnschedulableTimeout, EventObject(), EventObject());
}

std::optional<Clock::TimePoint> SchedulingQueue::NextBackoffExpiry() const {
  if (backoff_.empty()) return std::nullopt;
  return backoff_.Top()->unit.backoff_expiration;
}

// ---------------------------------------------------------------------------
// Nominator

void SchedulingQueue::AddNominatedPod(std::shared_ptr<const PodInfo> pod,
                                      std::optional<std::string_view> node) {
  nominator_.Add(std::move(pod), node);
}

void SchedulingQueue::DeleteNominatedPodIfExists(const PodInfo& pod) { nominator_.Delete(pod.uid); }

std::vector<std::shared_ptr<const PodInfo>> SchedulingQueue::NominatedPodsForNode(
    std::string_view node) const {
  return nominator_.PodsForNode(node);
}

std::vector<std::pair<std::string, std::shared_ptr<const PodInfo>>> SchedulingQueue::NominatedPods()
    const {
  std::vector<std::pair<std::string, std::shared_ptr<const PodInfo>>> out;
  if (nominator_.size() == 0) return out;
  out.reserve(nominator_.size());
  nominator_.ForEach([&](const std::string& node, const std::shared_ptr<const PodInfo>& pod) {
    out.emplace_back(node, pod);
  });
  return out;
}

std::optional<std::string> SchedulingQueue::NominatedNodeOf(std::string_view pod_uid) const {
  if (auto node = nominator_.NominatedNode(pod_uid)) return std::string(*node);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Introspection

PendingCounts SchedulingQueue::PendingUnits() const { return unit_counts_; }

PendingCounts SchedulingQueue::PendingPods() const { return pod_counts_; }

std::optional<QueuedUnit> SchedulingQueue::Find(const UnitKey& key) const {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return std::nullopt;
  return entry->unit;
}

std::vector<UnitKey> SchedulingQueue::List(QueueLocation location) const {
  std::vector<UnitKey> keys;
  auto add_all = [&keys](auto entries) {
    for (const Entry* entry : entries) keys.push_back(entry->unit.key);
  };
  switch (location) {
    case QueueLocation::kActive:
      add_all(active_.items());
      break;
    case QueueLocation::kBackoff:
      add_all(backoff_.items());
      break;
    case QueueLocation::kUnschedulable:
      add_all(std::span<Entry* const>(unschedulable_));
      break;
    case QueueLocation::kGated:
      add_all(std::span<Entry* const>(gated_));
      break;
    case QueueLocation::kInFlight:
      for (const Entry* e = in_flight_head_; e != nullptr; e = e->in_flight_next) {
        keys.push_back(e->unit.key);
      }
      break;
    case QueueLocation::kNone:
      break;
  }
  return keys;
}

// ---------------------------------------------------------------------------
// Records

SchedulingQueue::Entry* SchedulingQueue::FindEntry(UnitKeyRef key) {
  auto it = units_.find(key);
  return it == units_.end() ? nullptr : &it->second;
}

const SchedulingQueue::Entry* SchedulingQueue::FindEntry(UnitKeyRef key) const {
  auto it = units_.find(key);
  return it == units_.end() ? nullptr : &it->second;
}

SchedulingQueue::Entry& SchedulingQueue::NewEntry(std::shared_ptr<const PodInfo> pod) {
  UnitKey key = UnitKey::ForPod(*pod);
  auto [it, inserted] = units_.try_emplace(key);
  COPSE_CHECK(inserted) << "duplicate unit " << key.ToString();
  Entry& entry = it->second;
  entry.unit.key = std::move(key);
  entry.profile = ProfileFor(*pod);
  entry.unit.priority = pod->priority;
  pending_requests_.Add(*pod);
  entry.unit.pods.push_back(std::move(pod));
  ResetAsNew(entry);
  return entry;
}

void SchedulingQueue::EraseEntry(Entry& entry) {
  SetLocation(entry, QueueLocation::kNone);
  auto it = units_.find(UnitKeyRef(entry.unit.key));
  COPSE_CHECK(it != units_.end() && &it->second == &entry) << "erasing an unknown unit";
  for (const auto& pod : entry.unit.pods) pending_requests_.Remove(*pod);
  units_.erase(it);
}

void SchedulingQueue::ResetAsNew(Entry& entry) {
  QueuedUnit& unit = entry.unit;
  unit.timestamp = clock_.Now();
  unit.initial_attempt_timestamp.reset();
  unit.attempts = 0;
  unit.unschedulable_count = 0;
  unit.consecutive_errors_count = 0;
  unit.unschedulable_plugins.Clear();
  unit.pending_plugins.Clear();
  unit.gating_plugin.reset();
  unit.backoff_expiration = unit.timestamp;
  entry.deleted_in_flight = false;
  entry.readded_in_flight = false;
}

void SchedulingQueue::SetPod(Entry& entry, std::shared_ptr<const PodInfo> pod) {
  entry.unit.priority = pod->priority;
  pending_requests_.Remove(*entry.unit.pods.front());
  pending_requests_.Add(*pod);
  entry.unit.pods.front() = std::move(pod);
}

uint32_t SchedulingQueue::ProfileFor(const PodInfo& pod) const noexcept {
  for (size_t i = 0; i < profiles_.size(); ++i) {
    const std::string& name = profiles_[i].scheduler_name;
    if (name.empty() || name == pod.scheduler_name) return static_cast<uint32_t>(i);
  }
  return 0;
}

void SchedulingQueue::SetLocation(Entry& entry, QueueLocation location) noexcept {
  QueuedUnit& unit = entry.unit;
  if (unit.location == location) return;
  if (size_t* units = CountFor(unit_counts_, unit.location)) {
    --*units;
    *CountFor(pod_counts_, unit.location) -= unit.pods.size();
  }
  unit.location = location;
  if (size_t* units = CountFor(unit_counts_, location)) {
    ++*units;
    *CountFor(pod_counts_, location) += unit.pods.size();
  }
}

void SchedulingQueue::Detach(Entry& entry) {
  switch (entry.unit.location) {
    case QueueLocation::kActive:
      active_.Erase(&entry);
      break;
    case QueueLocation::kBackoff:
      backoff_.Erase(&entry);
      break;
    case QueueLocation::kUnschedulable:
      RemoveFromPool(unschedulable_, entry);
      break;
    case QueueLocation::kGated:
      RemoveFromPool(gated_, entry);
      break;
    case QueueLocation::kInFlight:
      LeaveInFlight(entry);
      break;
    case QueueLocation::kNone:
      break;
  }
  SetLocation(entry, QueueLocation::kNone);
}

// ---------------------------------------------------------------------------
// Moves

bool SchedulingQueue::RunGates(Entry& entry) {
  const std::vector<PreEnqueueGate>& gates = profiles_[entry.profile].pre_enqueue;
  QueuedUnit& unit = entry.unit;
  auto admits = [&unit](const PreEnqueueGate& gate) {
    for (const std::shared_ptr<const PodInfo>& pod : unit.pods) {
      GateDecision decision = GateDecision::kGate;
      try {
        decision = gate.fn(*pod);
      } catch (...) {
        decision = GateDecision::kGate;
      }
      if (decision != GateDecision::kAdmit) return false;
    }
    return true;
  };
  auto gate_with = [&unit](const PreEnqueueGate& gate) {
    unit.unschedulable_plugins.Insert(gate.plugin);
    unit.gating_plugin = gate.plugin;
    return false;
  };
  // The plugin that gated the unit last time is the likeliest to gate it again.
  const std::optional<PluginId> previous = unit.gating_plugin;
  if (previous) {
    for (const PreEnqueueGate& gate : gates) {
      if (gate.plugin == *previous && !admits(gate)) return gate_with(gate);
    }
  }
  for (const PreEnqueueGate& gate : gates) {
    if (previous && gate.plugin == *previous) continue;
    if (!admits(gate)) return gate_with(gate);
  }
  unit.gating_plugin.reset();
  return true;
}

QueueLocation SchedulingQueue::MoveToActive(Entry& entry) {
  if (!RunGates(entry)) {
    PushPool(gated_, entry, QueueLocation::kGated);
    return QueueLocation::kGated;
  }
  if (!entry.unit.initial_attempt_timestamp) entry.unit.initial_attempt_timestamp = clock_.Now();
  entry.enqueue_seq = ++enqueue_seq_;
  SetLocation(entry, QueueLocation::kActive);
  active_.Push(&entry);
  return QueueLocation::kActive;
}

void SchedulingQueue::PushBackoff(Entry& entry) {
  entry.enqueue_seq = ++enqueue_seq_;
  SetLocation(entry, QueueLocation::kBackoff);
  backoff_.Push(&entry);
}

void SchedulingQueue::PushPool(std::vector<Entry*>& pool, Entry& entry, QueueLocation location) {
  entry.pool_index = pool.size();
  pool.push_back(&entry);
  SetLocation(entry, location);
}

void SchedulingQueue::RemoveFromPool(std::vector<Entry*>& pool, Entry& entry) noexcept {
  const size_t i = entry.pool_index;
  COPSE_CHECK(i < pool.size() && pool[i] == &entry) << "unit not in its pool";
  pool[i] = pool.back();
  pool[i]->pool_index = i;
  pool.pop_back();
}

QueueLocation SchedulingQueue::Requeue(Entry& entry, RequeueStrategy strategy) {
  switch (strategy) {
    case RequeueStrategy::kSkip:
      PushPool(unschedulable_, entry, QueueLocation::kUnschedulable);
      return QueueLocation::kUnschedulable;
    case RequeueStrategy::kAfterBackoff:
      if (IsBackingOff(entry)) {
        PushBackoff(entry);
        return QueueLocation::kBackoff;
      }
      return MoveToActive(entry);
    case RequeueStrategy::kImmediately:
      return MoveToActive(entry);
  }
  return MoveToActive(entry);
}

void SchedulingQueue::ComputeBackoff(Entry& entry) const {
  QueuedUnit& unit = entry.unit;
  const int32_t count =
      unit.consecutive_errors_count > 0 ? unit.consecutive_errors_count : unit.unschedulable_count;
  const bool group = unit.key.kind == UnitKind::kPodGroup;
  const Clock::Duration max = group ? options_.pod_group_max_backoff : options_.pod_max_backoff;
  if (max.count() == 0 || count <= 0) {
    unit.backoff_expiration = unit.timestamp;
    return;
  }
  Clock::Duration duration =
      std::min(group ? options_.pod_group_initial_backoff : options_.pod_initial_backoff, max);
  if (group) {
    // Larger groups are costlier to retry: scale by 1 + floor(log2(members)).
    const int scale = 1 + static_cast<int>(std::bit_width(unit.pods.size()) - 1);
    duration = std::min(max, duration * std::max(1, scale));
  }
  for (int32_t i = 1; i < count; ++i) {
    if (duration > max - duration) {  // doubling would pass the cap (and never overflows)
      duration = max;
      break;
    }
    duration += duration;
  }
  unit.backoff_expiration = unit.timestamp + duration;
}

bool SchedulingQueue::IsBackingOff(const Entry& entry) const noexcept {
  return entry.unit.backoff_expiration > clock_.Now();
}

bool SchedulingQueue::IsEventOfInterest(const ClusterEvent& event) const noexcept {
  if (event.IsWildCard()) return true;
  for (const QueueProfile& profile : profiles_) {
    if (profile.hints.IsEventOfInterest(event)) return true;
  }
  return false;
}

RequeueStrategy SchedulingQueue::Evaluate(const Entry& entry, const ClusterEvent& event,
                                          const EventObject& old_obj,
                                          const EventObject& new_obj) const {
  const QueueingHintRegistry& hints = profiles_[entry.profile].hints;
  const QueuedUnit& unit = entry.unit;
  RequeueStrategy best = RequeueStrategy::kSkip;
  // A group is worth retrying when the event may help any member.
  for (const std::shared_ptr<const PodInfo>& pod : unit.pods) {
    const RequeueStrategy strategy = hints.Evaluate(*pod, unit.unschedulable_plugins,
                                                    unit.pending_plugins, event, old_obj, new_obj);
    if (strategy == RequeueStrategy::kImmediately) return strategy;
    best = std::max(best, strategy);
  }
  return best;
}

RequeueStrategy SchedulingQueue::EvaluateInFlightEvents(const Entry& entry) const {
  auto it = std::upper_bound(
      in_flight_events_.begin(), in_flight_events_.end(), entry.in_flight_since,
      [](uint64_t since, const InFlightEvent& event) { return since < event.seq; });
  RequeueStrategy best = RequeueStrategy::kSkip;
  for (; it != in_flight_events_.end(); ++it) {
    const RequeueStrategy strategy = Evaluate(entry, it->event, it->old_obj, it->new_obj);
    if (strategy == RequeueStrategy::kImmediately) return strategy;
    best = std::max(best, strategy);
    // Only a pending plugin could still raise "after backoff" to "immediately".
    if (best == RequeueStrategy::kAfterBackoff && entry.unit.pending_plugins.Empty()) return best;
  }
  return best;
}

void SchedulingQueue::RecordInFlightEvent(const ClusterEvent& event, const EventObject& old_obj,
                                          const EventObject& new_obj) {
  if (in_flight_head_ == nullptr) return;
  in_flight_events_.push_back(InFlightEvent{++event_seq_, event, old_obj, new_obj});
}

void SchedulingQueue::LeaveInFlight(Entry& entry) {
  if (entry.in_flight_prev != nullptr) {
    entry.in_flight_prev->in_flight_next = entry.in_flight_next;
  } else {
    in_flight_head_ = entry.in_flight_next;
  }
  if (entry.in_flight_next != nullptr) {
    entry.in_flight_next->in_flight_prev = entry.in_flight_prev;
  } else {
    in_flight_tail_ = entry.in_flight_prev;
  }
  entry.in_flight_prev = entry.in_flight_next = nullptr;
  SetLocation(entry, QueueLocation::kNone);
  // Events logged before the oldest remaining in-flight pop matter to no one.
  const uint64_t oldest = in_flight_head_ != nullptr ? in_flight_head_->in_flight_since
                                                     : std::numeric_limits<uint64_t>::max();
  while (!in_flight_events_.empty() && in_flight_events_.front().seq <= oldest) {
    in_flight_events_.pop_front();
  }
}

size_t SchedulingQueue::MovePods(std::vector<Entry*>& candidates, const ClusterEvent& event,
                                 const EventObject& old_obj, const EventObject& new_obj) {
  if (!IsEventOfInterest(event)) {
    candidates.clear();
    return 0;
  }
  size_t moved = 0;
  for (Entry* entry : candidates) {
    if (entry->unit.location == QueueLocation::kGated) {
      // Only an event its gating plugin registered can lift a gate.
      const std::optional<PluginId> gating = entry->unit.gating_plugin;
      if (!gating || !profiles_[entry->profile].hints.PluginInterestedIn(*gating, event)) continue;
    }
    const RequeueStrategy strategy = Evaluate(*entry, event, old_obj, new_obj);
    if (strategy == RequeueStrategy::kSkip) continue;
    Detach(*entry);
    const QueueLocation location = Requeue(*entry, strategy);
    if (location == QueueLocation::kActive || location == QueueLocation::kBackoff) ++moved;
  }
  candidates.clear();
  RecordInFlightEvent(event, old_obj, new_obj);
  return moved;
}

void SchedulingQueue::MoveAll(const ClusterEvent& event, const EventObject& old_obj,
                              const EventObject& new_obj) {
  if (!IsEventOfInterest(event)) return;
  scratch_.clear();
  scratch_.insert(scratch_.end(), unschedulable_.begin(), unschedulable_.end());
  scratch_.insert(scratch_.end(), gated_.begin(), gated_.end());
  MovePods(scratch_, event, old_obj, new_obj);
}

void SchedulingQueue::CollectAssignedPodCandidates(const PodInfo& assigned) {
  scratch_.clear();
  for (Entry* entry : unschedulable_) {
    if (MayHelp(*entry, assigned)) scratch_.push_back(entry);
  }
  for (Entry* entry : gated_) {
    if (MayHelp(*entry, assigned)) scratch_.push_back(entry);
  }
}

bool SchedulingQueue::MayHelp(const Entry& entry, const PodInfo& assigned) const {
  const PluginSet cross_topology = profiles_[entry.profile].cross_topology_plugins;
  const bool rejected_by_cross_topology =
      entry.unit.unschedulable_plugins.Intersects(cross_topology);
  for (const std::shared_ptr<const PodInfo>& pod : entry.unit.pods) {
    if (rejected_by_cross_topology && pod->namespace_name == assigned.namespace_name) return true;
    for (const PodAffinityTerm& term : pod->required_affinity) {
      if (TermMayMatch(term, assigned)) return true;
    }
  }
  return false;
}

const QueuedUnit* SchedulingQueue::PeekActive() const noexcept {
  const Entry* head = active_.Top();
  return head == nullptr ? nullptr : &head->unit;
}

std::optional<PoppedUnit> SchedulingQueue::Pop() {
  if (active_.empty()) return std::nullopt;
  Entry& entry = *active_.Pop();
  QueuedUnit& unit = entry.unit;
  ++unit.attempts;
  unit.unschedulable_plugins.Clear();
  unit.pending_plugins.Clear();
  entry.popped_cycle = ++cycle_;
  entry.in_flight_since = event_seq_;
  entry.in_flight_prev = in_flight_tail_;
  entry.in_flight_next = nullptr;
  if (in_flight_tail_ != nullptr) {
    in_flight_tail_->in_flight_next = &entry;
  } else {
    in_flight_head_ = &entry;
  }
  in_flight_tail_ = &entry;
  SetLocation(entry, QueueLocation::kInFlight);
  return PoppedUnit(unit, entry.popped_cycle);
}

QueueLocation SchedulingQueue::RequeueAfterAttempt(Entry& entry, const Rejection& rejection) {
  if (entry.deleted_in_flight) {
    LeaveInFlight(entry);
    EraseEntry(entry);
    return QueueLocation::kNone;
  }
  if (entry.readded_in_flight) {
    // The failure belonged to the deleted incarnation.
    LeaveInFlight(entry);
    ResetAsNew(entry);
    return MoveToActive(entry);
  }
  QueuedUnit& unit = entry.unit;
  unit.unschedulable_plugins = rejection.unschedulable;
  unit.pending_plugins = rejection.pending;
  if (rejection.unschedulable.Empty() && rejection.pending.Empty()) {
    ++unit.consecutive_errors_count;
  } else {
    ++unit.unschedulable_count;
    unit.consecutive_errors_count = 0;
  }
  unit.timestamp = clock_.Now();
  ComputeBackoff(entry);
  // An error is retried after backoff; a rejection waits for an event, unless
  // one arrived while the unit was being scheduled.
  const RequeueStrategy strategy =
      unit.unschedulable_plugins.Empty() && unit.pending_plugins.Empty()
          ? RequeueStrategy::kAfterBackoff
          : EvaluateInFlightEvents(entry);
  LeaveInFlight(entry);
  return Requeue(entry, strategy);
}

}  // namespace copse::queue
