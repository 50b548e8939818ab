#include "kube/controller/objects.h"

#include <cstdio>
#include <ctime>

namespace copse::kube::controller {

std::string Key(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key.append(ns).append("/").append(name);
  return key;
}

std::pair<std::string, std::string> SplitKey(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {std::string(), std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

kube::OwnerReference ControllerRef(std::string_view api_version, std::string_view kind,
                                   const kube::ObjectMeta& owner) {
  kube::OwnerReference ref;
  ref.api_version = api_version;
  ref.kind = kind;
  ref.name = owner.name;
  ref.uid = owner.uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

bool IsControlledBy(const kube::ObjectMeta& meta, std::string_view owner_uid) {
  const kube::OwnerReference* ref = meta.ControllerRef();
  return ref != nullptr && ref->uid == owner_uid;
}

bool SetCondition(std::vector<kube::Condition>& conditions, kube::Condition condition,
                  std::string_view now) {
  kube::Condition* existing = kube::FindCondition(conditions, condition.type);
  if (existing == nullptr) {
    condition.last_transition_time = std::string(now);
    conditions.push_back(std::move(condition));
    return true;
  }
  if (existing->status == condition.status) {
    condition.last_transition_time = existing->last_transition_time;
  } else {
    condition.last_transition_time = std::string(now);
  }
  if (*existing == condition) return false;
  *existing = std::move(condition);
  return true;
}

bool IsTerminating(const kube::ObjectMeta& meta) { return meta.deletion_timestamp.has_value(); }

bool IsPodReady(const kube::Pod& pod) {
  const kube::Condition* ready = kube::FindCondition(pod.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

bool IsPodScheduled(const kube::Pod& pod) { return !pod.spec.node_name.empty(); }

bool IsPodTerminal(const kube::Pod& pod) {
  return pod.status.phase == kube::kPodSucceeded || pod.status.phase == kube::kPodFailed;
}

bool HasSchedulingGate(const kube::Pod& pod, std::string_view gate) {
  for (const auto& g : pod.spec.scheduling_gates) {
    if (g == gate) return true;
  }
  return false;
}

std::string SelectorString(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (!out.empty()) out += ',';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

bool LabelsContain(const Labels& labels, const Labels& subset) {
  for (const auto& [k, v] : subset) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  if (text.size() < 20) return std::nullopt;
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &month, &day, &hour, &minute,
                  &second) != 6) {
    return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::string Fnv1aHex(std::string_view data) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace copse::kube::controller
