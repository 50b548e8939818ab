#include "apiserver/table.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "apiserver/jsonpath.h"
#include "apiserver/scheduling_api.h"

namespace copse::apiserver {
namespace {

using json = nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

constexpr std::string_view kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
constexpr std::string_view kCreationTimestampDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";

PrinterColumn Column(std::string name, std::string type, std::string builtin,
                     std::string description = {}, int priority = 0) {
  PrinterColumn c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.description = std::move(description);
  c.priority = priority;
  c.builtin = std::move(builtin);
  return c;
}

PrinterColumn NameColumn(int priority = 0) {
  PrinterColumn c = Column("Name", "string", "name", std::string(kNameDescription), priority);
  c.format = "name";
  return c;
}
PrinterColumn AgeColumn() {
  return Column("Age", "string", "age", std::string(kCreationTimestampDescription));
}

// ---------------------------------------------------------------------------
// Field access helpers: missing fields read as empty/zero, as Go's zero values.

using json_fields::Arr;
using json_fields::Get;
using json_fields::Str;
int64_t Int(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return static_cast<int64_t>(v.get<double>());
  return 0;
}
bool Bool(const json& v) { return v.is_boolean() && v.get<bool>(); }

// ---------------------------------------------------------------------------
// Time.

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// RFC 3339 ("2024-05-01T10:00:00Z", "...T10:00:00.123456+02:00").
std::optional<TimePoint> ParseRfc3339(std::string_view s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (s.size() < 20 || !Digits(s, 0, 4, year) || s[4] != '-' || !Digits(s, 5, 2, month) ||
      s[7] != '-' || !Digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, hour) || s[13] != ':' || !Digits(s, 14, 2, minute) || s[16] != ':' ||
      !Digits(s, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  std::chrono::nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t ns = 0;
    int n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 9) {
        ns = ns * 10 + (s[pos] - '0');
        ++n;
      }
      ++pos;
    }
    if (n == 0) return std::nullopt;
    while (n < 9) {
      ns *= 10;
      ++n;
    }
    frac = std::chrono::nanoseconds(ns);
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (!Digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, om)) {
      return std::nullopt;
    }
    offset_seconds = (s[pos] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return TimePoint(
      std::chrono::duration_cast<TimePoint::duration>(std::chrono::seconds(secs) + frac));
}

std::optional<TimePoint> TimeOf(const json& v) {
  if (!v.is_string()) return std::nullopt;
  return ParseRfc3339(v.get_ref<const std::string&>());
}

std::string FormatRfc3339(TimePoint t) {
  const int64_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  // civil_from_days
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>(rem % 3600 / 60), static_cast<long long>(rem % 60));
  return buf;
}

std::string Since(const std::optional<TimePoint>& t, TimePoint now) {
  if (!t) return "<unknown>";
  return HumanDuration(now - *t);
}

// ---------------------------------------------------------------------------
// Pods (printPod in pkg/printers/internalversion/printers.go).

struct PodSummary {
  std::string ready;
  std::string status;
  std::string restarts;
  std::string ip;
  std::string node;
  std::string nominated_node;
  std::string readiness_gates;
  json conditions;  // row conditions (Completed for Succeeded/Failed pods), or null
};

bool HasCondition(const json& pod, std::string_view type, std::string_view status) {
  for (const json& c : Arr(Get(pod, {"status", "conditions"}))) {
    if (Str(Get(c, {"type"})) == type) return Str(Get(c, {"status"})) == status;
  }
  return false;
}

void LatestTermination(const json& container_status, std::optional<TimePoint>& latest) {
  const json& finished = Get(container_status, {"lastState", "terminated", "finishedAt"});
  if (Get(container_status, {"lastState", "terminated"}).is_null()) return;
  std::optional<TimePoint> t = TimeOf(finished);
  if (t && (!latest || *latest < *t)) latest = t;
}

PodSummary SummarizePod(const json& pod, TimePoint now) {
  PodSummary out;
  const json& spec = Get(pod, {"spec"});
  const json& status = Get(pod, {"status"});
  int64_t restarts = 0;
  int64_t restartable_init_restarts = 0;
  int64_t total = static_cast<int64_t>(Arr(Get(spec, {"containers"})).size());
  int64_t ready = 0;
  std::optional<TimePoint> last_restart;
  std::optional<TimePoint> last_restartable_init_restart;

  const std::string phase = Str(Get(status, {"phase"}));
  std::string reason = phase;
  if (!Str(Get(status, {"reason"})).empty()) reason = Str(Get(status, {"reason"}));
  for (const json& c : Arr(Get(status, {"conditions"}))) {
    if (Str(Get(c, {"type"})) == "PodScheduled" && Str(Get(c, {"reason"})) == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }
  if (phase == "Succeeded") {
    out.conditions = json::array({{{"type", "Completed"},
                                   {"status", "True"},
                                   {"reason", "Succeeded"},
                                   {"message", "The pod has completed successfully."}}});
  } else if (phase == "Failed") {
    out.conditions = json::array({{{"type", "Completed"},
                                   {"status", "True"},
                                   {"reason", "Failed"},
                                   {"message", "The pod failed."}}});
  }

  const json& init_containers = Arr(Get(spec, {"initContainers"}));
  std::set<std::string> restartable;  // sidecars: restartPolicy Always
  for (const json& c : init_containers) {
    if (Str(Get(c, {"restartPolicy"})) == "Always") {
      restartable.insert(Str(Get(c, {"name"})));
      ++total;
    }
  }

  bool initializing = false;
  const json& init_statuses = Arr(Get(status, {"initContainerStatuses"}));
  for (size_t i = 0; i < init_statuses.size(); ++i) {
    const json& cs = init_statuses[i];
    const int64_t count = Int(Get(cs, {"restartCount"}));
    restarts += count;
    LatestTermination(cs, last_restart);
    const bool is_restartable = restartable.count(Str(Get(cs, {"name"}))) > 0;
    if (is_restartable) {
      restartable_init_restarts += count;
      LatestTermination(cs, last_restartable_init_restart);
    }
    const json& terminated = Get(cs, {"state", "terminated"});
    const json& waiting = Get(cs, {"state", "waiting"});
    if (terminated.is_object() && Int(Get(terminated, {"exitCode"})) == 0) continue;
    if (is_restartable && Bool(Get(cs, {"started"}))) {
      if (Bool(Get(cs, {"ready"}))) ++ready;
      continue;
    }
    if (terminated.is_object()) {
      const std::string r = Str(Get(terminated, {"reason"}));
      if (r.empty()) {
        const int64_t signal = Int(Get(terminated, {"signal"}));
        reason = signal != 0
                     ? "Init:Signal:" + std::to_string(signal)
                     : "Init:ExitCode:" + std::to_string(Int(Get(terminated, {"exitCode"})));
      } else {
        reason = "Init:" + r;
      }
    } else if (waiting.is_object() && !Str(Get(waiting, {"reason"})).empty() &&
               Str(Get(waiting, {"reason"})) != "PodInitializing") {
      reason = "Init:" + Str(Get(waiting, {"reason"}));
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_containers.size());
    }
    initializing = true;
    break;
  }

  if (!initializing || HasCondition(pod, "Initialized", "True")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    const json& statuses = Arr(Get(status, {"containerStatuses"}));
    for (size_t k = statuses.size(); k-- > 0;) {
      const json& cs = statuses[k];
      restarts += Int(Get(cs, {"restartCount"}));
      LatestTermination(cs, last_restart);
      const json& waiting = Get(cs, {"state", "waiting"});
      const json& terminated = Get(cs, {"state", "terminated"});
      if (waiting.is_object() && !Str(Get(waiting, {"reason"})).empty()) {
        reason = Str(Get(waiting, {"reason"}));
      } else if (terminated.is_object() && !Str(Get(terminated, {"reason"})).empty()) {
        reason = Str(Get(terminated, {"reason"}));
      } else if (terminated.is_object()) {
        const int64_t signal = Int(Get(terminated, {"signal"}));
        reason = signal != 0 ? "Signal:" + std::to_string(signal)
                             : "ExitCode:" + std::to_string(Int(Get(terminated, {"exitCode"})));
      } else if (Bool(Get(cs, {"ready"})) && Get(cs, {"state", "running"}).is_object()) {
        has_running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && has_running) {
      reason = HasCondition(pod, "Ready", "True") ? "Running" : "NotReady";
    }
  }

  const bool deleting = !Get(pod, {"metadata", "deletionTimestamp"}).is_null();
  if (deleting && Str(Get(status, {"reason"})) == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }

  out.restarts = std::to_string(restarts);
  if (restarts != 0 && last_restart) {
    out.restarts += " (" + HumanDuration(now - *last_restart) + " ago)";
  }
  out.ready = std::to_string(ready) + "/" + std::to_string(total);
  out.status = reason;

  out.node = Str(Get(spec, {"nodeName"}));
  out.nominated_node = Str(Get(status, {"nominatedNodeName"}));
  const json& pod_ips = Arr(Get(status, {"podIPs"}));
  if (!pod_ips.empty()) out.ip = Str(Get(pod_ips[0], {"ip"}));
  if (out.ip.empty()) out.ip = Str(Get(status, {"podIP"}));
  if (out.ip.empty()) out.ip = "<none>";
  if (out.node.empty()) out.node = "<none>";
  if (out.nominated_node.empty()) out.nominated_node = "<none>";
  out.readiness_gates = "<none>";
  const json& gates = Arr(Get(spec, {"readinessGates"}));
  if (!gates.empty()) {
    int64_t true_conditions = 0;
    for (const json& gate : gates) {
      const std::string type = Str(Get(gate, {"conditionType"}));
      for (const json& c : Arr(Get(status, {"conditions"}))) {
        if (Str(Get(c, {"type"})) == type) {
          if (Str(Get(c, {"status"})) == "True") ++true_conditions;
          break;
        }
      }
    }
    out.readiness_gates = std::to_string(true_conditions) + "/" + std::to_string(gates.size());
  }
  return out;
}

// ---------------------------------------------------------------------------
// Nodes, services, events, and the rest.

std::string NodeStatus(const json& node) {
  std::string status;
  for (const json& c : Arr(Get(node, {"status", "conditions"}))) {
    if (Str(Get(c, {"type"})) == "Ready") {
      status = Str(Get(c, {"status"})) == "True" ? "Ready" : "NotReady";
      break;
    }
  }
  if (status.empty()) status = "Unknown";
  if (Bool(Get(node, {"spec", "unschedulable"}))) status += ",SchedulingDisabled";
  return status;
}

std::string NodeRoles(const json& node) {
  constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
  std::set<std::string> roles;
  const json& labels = Get(node, {"metadata", "labels"});
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (k.substr(0, kRolePrefix.size()) == kRolePrefix) {
        if (k.size() > kRolePrefix.size()) roles.insert(k.substr(kRolePrefix.size()));
      } else if (k == "kubernetes.io/role" && !Str(v).empty()) {
        roles.insert(Str(v));
      }
    }
  }
  std::string out;
  for (const std::string& r : roles) {
    if (!out.empty()) out += ',';
    out += r;
  }
  return out.empty() ? "<none>" : out;
}

std::string NodeAddress(const json& node, std::string_view type) {
  for (const json& a : Arr(Get(node, {"status", "addresses"}))) {
    if (Str(Get(a, {"type"})) == type) return Str(Get(a, {"address"}));
  }
  return "<none>";
}

std::string OrUnknown(std::string s) { return s.empty() ? "<unknown>" : s; }

std::string JoinStrings(const json& list, std::string_view sep) {
  std::string out;
  for (const json& v : Arr(list)) {
    if (!out.empty()) out += sep;
    out += Str(v);
  }
  return out;
}

// labels.FormatLabels: sorted "k=v,k=v", "<none>" when empty.
std::string FormatLabels(const json& labels) {
  std::string out;
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (!out.empty()) out += ',';
      out += k + "=" + Str(v);
    }
  }
  return out.empty() ? "<none>" : out;
}

std::string ServiceType(const json& svc) {
  std::string type = Str(Get(svc, {"spec", "type"}));
  return type.empty() ? "ClusterIP" : type;
}

std::string ServiceExternalIp(const json& svc) {
  const std::string type = ServiceType(svc);
  const json& external_ips = Get(svc, {"spec", "externalIPs"});
  if (type == "ClusterIP" || type == "NodePort") {
    return Arr(external_ips).empty() ? "<none>" : JoinStrings(external_ips, ",");
  }
  if (type == "LoadBalancer") {
    std::set<std::string> ingress;
    for (const json& i : Arr(Get(svc, {"status", "loadBalancer", "ingress"}))) {
      if (!Str(Get(i, {"ip"})).empty()) {
        ingress.insert(Str(Get(i, {"ip"})));
      } else if (!Str(Get(i, {"hostname"})).empty()) {
        ingress.insert(Str(Get(i, {"hostname"})));
      }
    }
    std::string lb;
    for (const std::string& s : ingress) {
      if (!lb.empty()) lb += ',';
      lb += s;
    }
    if (!Arr(external_ips).empty()) {
      std::string out = lb;
      for (const json& ip : Arr(external_ips)) {
        if (!out.empty()) out += ',';
        out += Str(ip);
      }
      return out;
    }
    return lb.empty() ? "<pending>" : lb;
  }
  if (type == "ExternalName") return Str(Get(svc, {"spec", "externalName"}));
  return "<unknown>";
}

std::string ServicePorts(const json& svc) {
  std::string out;
  for (const json& p : Arr(Get(svc, {"spec", "ports"}))) {
    if (!out.empty()) out += ',';
    std::string protocol = Str(Get(p, {"protocol"}));
    if (protocol.empty()) protocol = "TCP";
    const int64_t node_port = Int(Get(p, {"nodePort"}));
    out += std::to_string(Int(Get(p, {"port"})));
    if (node_port > 0) out += ":" + std::to_string(node_port);
    out += "/" + protocol;
  }
  return out.empty() ? "<none>" : out;
}

std::string ServiceClusterIp(const json& svc) {
  const json& ips = Arr(Get(svc, {"spec", "clusterIPs"}));
  if (!ips.empty()) return Str(ips[0]);
  const std::string ip = Str(Get(svc, {"spec", "clusterIP"}));
  return ip.empty() ? "<none>" : ip;
}

// Core v1 and events.k8s.io/v1 events share one printer upstream (both are
// stored as the internal core Event); read either field name.
const json& EventField(const json& ev, std::string_view core_name, std::string_view v1_name) {
  auto it = ev.find(core_name);
  if (it != ev.end() && !it->is_null()) return *it;
  return Get(ev, {v1_name});
}

struct EventSummary {
  std::string last_seen, first_seen, target, subobject, source, message;
  int64_t count = 0;
};

EventSummary SummarizeEvent(const json& ev, TimePoint now) {
  EventSummary out;
  std::optional<TimePoint> first =
      TimeOf(EventField(ev, "firstTimestamp", "deprecatedFirstTimestamp"));
  out.first_seen = first ? HumanDuration(now - *first) : Since(TimeOf(Get(ev, {"eventTime"})), now);
  std::optional<TimePoint> last =
      TimeOf(EventField(ev, "lastTimestamp", "deprecatedLastTimestamp"));
  out.last_seen = last ? HumanDuration(now - *last) : out.first_seen;
  out.count = Int(EventField(ev, "count", "deprecatedCount"));
  const json& series = Get(ev, {"series"});
  if (series.is_object()) {
    out.last_seen = Since(TimeOf(Get(series, {"lastObservedTime"})), now);
    out.count = Int(Get(series, {"count"}));
  } else if (out.count == 0) {
    out.count = 1;
  }
  const json& involved = EventField(ev, "involvedObject", "regarding");
  std::string kind = Str(Get(involved, {"kind"}));
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string name = Str(Get(involved, {"name"}));
  out.target = name.empty() ? kind : kind + "/" + name;
  out.subobject = Str(Get(involved, {"fieldPath"}));
  const json& source = EventField(ev, "source", "deprecatedSource");
  std::string component = Str(Get(source, {"component"}));
  if (component.empty()) component = Str(Get(ev, {"reportingController"}));
  std::string host = Str(Get(source, {"host"}));
  if (host.empty()) host = Str(Get(ev, {"reportingInstance"}));
  out.source = host.empty() ? component : component + ", " + host;
  std::string message = Str(EventField(ev, "message", "note"));
  const auto first_non_space = message.find_first_not_of(" \t\n\r\v\f");
  if (first_non_space == std::string::npos) {
    message.clear();
  } else {
    message = message.substr(first_non_space,
                             message.find_last_not_of(" \t\n\r\v\f") - first_non_space + 1);
  }
  out.message = message;
  return out;
}

// intstr.IntOrString.String().
std::string IntOrString(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return std::to_string(Int(v));
}

// Per-row state: summaries computed once however many columns use them.
struct RowContext {
  const json& obj;
  TimePoint now;
  std::optional<PodSummary> pod;
  std::optional<EventSummary> event;

  const PodSummary& Pod() {
    if (!pod) pod = SummarizePod(obj, now);
    return *pod;
  }
  const EventSummary& Event() {
    if (!event) event = SummarizeEvent(obj, now);
    return *event;
  }
};

// The cells of kubectl's apps and batch printers (printDeployment,
// printReplicaSet, printStatefulSet, printDaemonSet, printJob).
json WorkloadCell(const std::string& id, RowContext& row) {
  const json& obj = row.obj;
  auto status = [&obj](const char* field) { return Int(Get(obj, {"status", field})); };
  auto spec = [&obj](const char* field) { return Int(Get(obj, {"spec", field})); };
  auto ratio = [](int64_t have, int64_t want) {
    return std::to_string(have) + "/" + std::to_string(want);
  };
  if (id == "apps.ready_of_replicas") return ratio(status("readyReplicas"), spec("replicas"));
  if (id == "apps.updated") return status("updatedReplicas");
  if (id == "apps.available") return status("availableReplicas");
  if (id == "apps.desired") return spec("replicas");
  if (id == "apps.current") return status("replicas");
  if (id == "apps.ready") return status("readyReplicas");
  if (id == "apps.ds_desired") return status("desiredNumberScheduled");
  if (id == "apps.ds_current") return status("currentNumberScheduled");
  if (id == "apps.ds_ready") return status("numberReady");
  if (id == "apps.ds_updated") return status("updatedNumberScheduled");
  if (id == "apps.ds_available") return status("numberAvailable");
  if (id == "apps.ds_node_selector") {
    const std::string selector =
        FormatLabels(Get(obj, {"spec", "template", "spec", "nodeSelector"}));
    return selector == "<none>" ? std::string("<none>") : selector;
  }
  if (id == "apps.containers" || id == "apps.images") {
    std::string out;
    const json& containers = Get(obj, {"spec", "template", "spec", "containers"});
    if (containers.is_array()) {
      for (const json& c : containers) {
        if (!out.empty()) out += ',';
        out += Str(Get(c, {id == "apps.containers" ? "name" : "image"}));
      }
    }
    return out;
  }
  if (id == "apps.selector") return FormatLabels(Get(obj, {"spec", "selector", "matchLabels"}));
  if (id == "job.completions") {
    const json& completions = Get(obj, {"spec", "completions"});
    const int64_t succeeded = status("succeeded");
    if (!completions.is_null()) return ratio(succeeded, Int(completions));
    // A Job without completions is done when one pod succeeds.
    const int64_t parallelism = spec("parallelism");
    return ratio(succeeded, 1) + (parallelism > 1 ? " of " + std::to_string(parallelism) : "");
  }
  if (id == "job.duration") {
    const std::optional<TimePoint> start = TimeOf(Get(obj, {"status", "startTime"}));
    if (!start) return std::string();
    const std::optional<TimePoint> done = TimeOf(Get(obj, {"status", "completionTime"}));
    return Since(start, done ? *done : row.now);
  }
  return nullptr;
}

json BuiltinCell(const std::string& id, RowContext& row) {
  const json& obj = row.obj;
  if (id == "name") return Str(Get(obj, {"metadata", "name"}));
  if (id == "age") return Since(TimeOf(Get(obj, {"metadata", "creationTimestamp"})), row.now);
  if (id == "created_at") {
    std::optional<TimePoint> t = TimeOf(Get(obj, {"metadata", "creationTimestamp"}));
    return t ? json(FormatRfc3339(*t)) : json(nullptr);
  }
  if (id.rfind("pod.", 0) == 0) {
    const PodSummary& p = row.Pod();
    if (id == "pod.ready") return p.ready;
    if (id == "pod.status") return p.status;
    if (id == "pod.restarts") return p.restarts;
    if (id == "pod.ip") return p.ip;
    if (id == "pod.node") return p.node;
    if (id == "pod.nominated_node") return p.nominated_node;
    if (id == "pod.readiness_gates") return p.readiness_gates;
  }
  if (id == "node.status") return NodeStatus(obj);
  if (id == "node.roles") return NodeRoles(obj);
  if (id == "node.version") return Str(Get(obj, {"status", "nodeInfo", "kubeletVersion"}));
  if (id == "node.internal_ip") return NodeAddress(obj, "InternalIP");
  if (id == "node.external_ip") return NodeAddress(obj, "ExternalIP");
  if (id == "node.os_image") return OrUnknown(Str(Get(obj, {"status", "nodeInfo", "osImage"})));
  if (id == "node.kernel_version") {
    return OrUnknown(Str(Get(obj, {"status", "nodeInfo", "kernelVersion"})));
  }
  if (id == "node.container_runtime") {
    return OrUnknown(Str(Get(obj, {"status", "nodeInfo", "containerRuntimeVersion"})));
  }
  if (id == "namespace.status") return Str(Get(obj, {"status", "phase"}));
  if (id == "service.type") return ServiceType(obj);
  if (id == "service.cluster_ip") return ServiceClusterIp(obj);
  if (id == "service.external_ip") return ServiceExternalIp(obj);
  if (id == "service.ports") return ServicePorts(obj);
  if (id == "service.selector") return FormatLabels(Get(obj, {"spec", "selector"}));
  if (id.rfind("event.", 0) == 0) {
    const EventSummary& e = row.Event();
    if (id == "event.last_seen") return e.last_seen;
    if (id == "event.type") return Str(Get(obj, {"type"}));
    if (id == "event.reason") return Str(Get(obj, {"reason"}));
    if (id == "event.object") return e.target;
    if (id == "event.subobject") return e.subobject;
    if (id == "event.source") return e.source;
    if (id == "event.message") return e.message;
    if (id == "event.first_seen") return e.first_seen;
    if (id == "event.count") return e.count;
  }
  if (id == "lease.holder") return Str(Get(obj, {"spec", "holderIdentity"}));
  if (id == "priorityclass.value") return Int(Get(obj, {"value"}));
  if (id == "priorityclass.global_default") return Bool(Get(obj, {"globalDefault"}));
  if (id == "priorityclass.preemption_policy") return Str(Get(obj, {"preemptionPolicy"}));
  if (id == "pdb.min_available" || id == "pdb.max_unavailable") {
    const json& v =
        Get(obj, {"spec", id == "pdb.min_available" ? "minAvailable" : "maxUnavailable"});
    return v.is_null() ? std::string("N/A") : IntOrString(v);
  }
  if (id == "pdb.allowed_disruptions") return Int(Get(obj, {"status", "disruptionsAllowed"}));
  if (id == "configmap.data") {
    const json& data = Get(obj, {"data"});
    const json& binary = Get(obj, {"binaryData"});
    return static_cast<int64_t>((data.is_object() ? data.size() : 0) +
                                (binary.is_object() ? binary.size() : 0));
  }
  if (id.rfind("apps.", 0) == 0 || id.rfind("job.", 0) == 0) return WorkloadCell(id, row);
  if (id == "podgroup.policy") {
    return Get(obj, {"spec", "schedulingPolicy", "gang"}).is_null() ? "Basic" : "Gang";
  }
  if (id == "podgroup.workload") return PodGroupWorkloadName(obj);
  if (id == "podgroup.status") return PodGroupStatusText(obj);
  if (id == "secret.type") return Str(Get(obj, {"type"}));
  if (id == "secret.data") {
    const json& data = Get(obj, {"data"});
    return static_cast<int64_t>(data.is_object() ? data.size() : 0);
  }
  return nullptr;
}

// cellForJSONValue in apiextensions-apiserver's tableconvertor.
json CellForJsonValue(const std::string& type, const json& value, TimePoint now) {
  if (value.is_null()) return nullptr;
  if (type == "integer") {
    if (value.is_number_integer()) return value.get<int64_t>();
    if (value.is_number_float()) return static_cast<int64_t>(value.get<double>());
  } else if (type == "number") {
    if (value.is_number()) return value.get<double>();
  } else if (type == "boolean") {
    if (value.is_boolean()) return value.get<bool>();
  } else if (type == "string") {
    if (value.is_string()) return value;
  } else if (type == "date") {
    if (value.is_string()) {
      std::optional<TimePoint> t = ParseRfc3339(value.get_ref<const std::string&>());
      if (!t) return "<invalid>";
      return HumanDuration(now - *t);
    }
  }
  return nullptr;
}

json PathCell(const PrinterColumn& column, const Result<JsonPath>& path, const json& obj,
              TimePoint now) {
  if (!path.ok()) return nullptr;
  std::vector<const json*> results = path->Find(obj);
  if (results.empty() || results.front()->is_null()) return nullptr;
  const json& value = *results.front();
  if (column.type == "string") return JsonPathText(value);
  return CellForJsonValue(column.type, value, now);
}

json ColumnDefinitions(const std::vector<PrinterColumn>& columns) {
  json defs = json::array();
  for (const PrinterColumn& c : columns) {
    defs.push_back({{"name", c.name},
                    {"type", c.type},
                    {"format", c.format},
                    {"description", c.description},
                    {"priority", c.priority}});
  }
  return defs;
}

json RowObject(const json& obj, std::string_view include_object) {
  if (include_object == "None") return nullptr;
  if (include_object == "Object") return obj;
  json metadata = Get(obj, {"metadata"});
  if (!metadata.is_object()) metadata = json::object();
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", std::move(metadata)}};
}

json BuildRows(const std::vector<PrinterColumn>& columns,
               const std::vector<const nlohmann::json*>& objects, std::string_view include_object,
               TimePoint now) {
  std::vector<Result<JsonPath>> paths;
  paths.reserve(columns.size());
  for (const PrinterColumn& c : columns) {
    paths.push_back(c.builtin.empty()
                        ? JsonPath::Parse(c.json_path)
                        : Result<JsonPath>(Error{ErrorCode::kInvalid, "builtin", 0, {}}));
  }
  json rows = json::array();
  for (const json* obj : objects) {
    RowContext ctx{*obj, now, std::nullopt, std::nullopt};
    json cells = json::array();
    for (size_t i = 0; i < columns.size(); ++i) {
      cells.push_back(columns[i].builtin.empty() ? PathCell(columns[i], paths[i], *obj, now)
                                                 : BuiltinCell(columns[i].builtin, ctx));
    }
    json row = {{"cells", std::move(cells)}};
    if (ctx.pod && !ctx.pod->conditions.is_null()) row["conditions"] = ctx.pod->conditions;
    row["object"] = RowObject(*obj, include_object);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string HumanDuration(std::chrono::system_clock::duration d) {
  const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    if (s == 0) return std::to_string(minutes) + "m";
    return std::to_string(minutes) + "m" + std::to_string(s) + "s";
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  const int64_t hours = seconds / 3600;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    if (m == 0) return std::to_string(hours) + "h";
    return std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    if (h == 0) return std::to_string(hours / 24) + "d";
    return std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    if (dy == 0) return std::to_string(hours / 24 / 365) + "y";
    return std::to_string(hours / 24 / 365) + "y" + std::to_string(dy) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::string TranslateTimestampSince(std::string_view rfc3339,
                                    std::chrono::system_clock::time_point now) {
  if (rfc3339.empty()) return "<unknown>";
  return Since(ParseRfc3339(rfc3339), now);
}

std::vector<PrinterColumn> BuiltinColumns(std::string_view group, std::string_view resource) {
  if (group.empty() && resource == "pods") {
    return {NameColumn(),
            Column("Ready", "string", "pod.ready",
                   "The aggregate readiness state of this pod for accepting traffic."),
            Column("Status", "string", "pod.status",
                   "The aggregate status of the containers in this pod."),
            Column("Restarts", "string", "pod.restarts",
                   "The number of times the containers in this pod have been restarted and when "
                   "the last container in this pod has restarted."),
            AgeColumn(),
            Column("IP", "string", "pod.ip",
                   "podIP address allocated to the pod. Routable at least within the cluster. "
                   "Empty if not yet allocated.",
                   1),
            Column("Node", "string", "pod.node",
                   "NodeName indicates in which node this pod is scheduled. If empty, this pod is "
                   "a candidate for scheduling by the scheduler defined in schedulerName.",
                   1),
            Column("Nominated Node", "string", "pod.nominated_node",
                   "nominatedNodeName is set only when this pod preempts other pods on the node, "
                   "but it cannot be scheduled right away as preemption victims receive their "
                   "graceful termination periods.",
                   1),
            Column("Readiness Gates", "string", "pod.readiness_gates",
                   "If specified, all readiness gates will be evaluated for pod readiness.", 1)};
  }
  if (group.empty() && resource == "nodes") {
    return {NameColumn(),
            Column("Status", "string", "node.status", "The status of the node"),
            Column("Roles", "string", "node.roles", "The roles of the node"),
            AgeColumn(),
            Column("Version", "string", "node.version", "Kubelet Version reported by the node."),
            Column("Internal-IP", "string", "node.internal_ip",
                   "List of addresses reachable to the node.", 1),
            Column("External-IP", "string", "node.external_ip",
                   "List of addresses reachable to the node.", 1),
            Column("OS-Image", "string", "node.os_image",
                   "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
                   "(wheezy)).",
                   1),
            Column("Kernel-Version", "string", "node.kernel_version",
                   "Kernel Version reported by the node from 'uname -r' (e.g. "
                   "3.16.0-0.bpo.4-amd64).",
                   1),
            Column("Container-Runtime", "string", "node.container_runtime",
                   "ContainerRuntime Version reported by the node through runtime remote API "
                   "(e.g. containerd://1.4.2).",
                   1)};
  }
  if (group.empty() && resource == "namespaces") {
    return {NameColumn(),
            Column("Status", "string", "namespace.status", "The status of the namespace"),
            AgeColumn()};
  }
  if (group.empty() && resource == "services") {
    return {NameColumn(),
            Column("Type", "string", "service.type",
                   "type determines how the Service is exposed. Defaults to ClusterIP."),
            Column("Cluster-IP", "string", "service.cluster_ip",
                   "clusterIP is the IP address of the service and is usually assigned randomly."),
            Column("External-IP", "string", "service.external_ip",
                   "externalIPs is a list of IP addresses for which nodes in the cluster will "
                   "also accept traffic for this service."),
            Column("Port(s)", "string", "service.ports",
                   "The list of ports that are exposed by this service."),
            AgeColumn(),
            Column("Selector", "string", "service.selector",
                   "Route service traffic to pods with label keys and values matching this "
                   "selector.",
                   1)};
  }
  if ((group.empty() || group == "events.k8s.io") && resource == "events") {
    return {
        Column("Last Seen", "string", "event.last_seen",
               "The time at which the most recent occurrence of this event was recorded."),
        Column("Type", "string", "event.type",
               "Type of this event (Normal, Warning), new types could be added in the future"),
        Column("Reason", "string", "event.reason",
               "This should be a short, machine understandable string that gives the reason "
               "for the transition into the object's current status."),
        Column("Object", "string", "event.object", "The object that this event is about."),
        Column("Subobject", "string", "event.subobject",
               "If referring to a piece of an object instead of an entire object, this "
               "string should contain a valid JSON/Go field access statement.",
               1),
        Column("Source", "string", "event.source",
               "The component reporting this event. Should be a short machine understandable "
               "string.",
               1),
        Column("Message", "string", "event.message",
               "A human-readable description of the status of this operation."),
        Column("First Seen", "string", "event.first_seen",
               "The time at which the event was first recorded. (Time of server receipt is in "
               "TypeMeta.)",
               1),
        Column("Count", "string", "event.count", "The number of times this event has occurred.", 1),
        NameColumn(1)};
  }
  if (group == "coordination.k8s.io" && resource == "leases") {
    return {NameColumn(),
            Column("Holder", "string", "lease.holder",
                   "holderIdentity contains the identity of the holder of a current lease."),
            AgeColumn()};
  }
  if (group == "scheduling.k8s.io" && resource == "priorityclasses") {
    return {NameColumn(),
            Column("Value", "integer", "priorityclass.value",
                   "value represents the integer value of this priority class. This is the "
                   "actual priority that pods receive when they have the name of this class in "
                   "their pod spec."),
            Column("Global-Default", "boolean", "priorityclass.global_default",
                   "globalDefault specifies whether this PriorityClass should be considered as "
                   "the default priority for pods that do not have any priority class."),
            AgeColumn(),
            Column("PreemptionPolicy", "string", "priorityclass.preemption_policy",
                   "preemptionPolicy is the Policy for preempting pods with lower priority. One "
                   "of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.")};
  }
  if (group == "scheduling.k8s.io" &&
      (resource == "podgroups" || resource == "compositepodgroups")) {
    // printPodGroup; kube-apiserver prints CompositePodGroups alike.
    return {
        NameColumn(),
        Column("Policy", "string", "podgroup.policy",
               "schedulingPolicy defines the scheduling policy for this instance of the "
               "PodGroup."),
        Column("Workload", "string", "podgroup.workload", "Name of the referenced Workload object"),
        Column("Status", "string", "podgroup.status", "Status of the PodGroup"), AgeColumn()};
  }
  if (group == "policy" && resource == "poddisruptionbudgets") {
    return {NameColumn(),
            Column("Min Available", "string", "pdb.min_available",
                   "The minimum number of pods that must be available."),
            Column("Max Unavailable", "string", "pdb.max_unavailable",
                   "The maximum number of pods that may be unavailable."),
            Column("Allowed Disruptions", "integer", "pdb.allowed_disruptions",
                   "Calculated number of pods that may be disrupted at this time."),
            AgeColumn()};
  }
  if (group == "apiextensions.k8s.io" && resource == "customresourcedefinitions") {
    return {NameColumn(),
            Column("Created At", "date", "created_at", std::string(kCreationTimestampDescription))};
  }
  if (group == "apps" && resource == "deployments") {
    return {
        NameColumn(),
        Column("Ready", "string", "apps.ready_of_replicas", "Number of the pod with ready state"),
        Column("Up-to-date", "string", "apps.updated",
               "Total number of non-terminated pods targeted by this deployment that have the "
               "desired template spec."),
        Column("Available", "string", "apps.available",
               "Total number of available pods (ready for at least minReadySeconds) targeted "
               "by this deployment."),
        AgeColumn(),
        Column("Containers", "string", "apps.containers",
               "Names of each container in the template.", 1),
        Column("Images", "string", "apps.images",
               "Images referenced by each container in "
               "the template.",
               1),
        Column("Selector", "string", "apps.selector",
               "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
               "will be the ones affected by this deployment.",
               1)};
  }
  if (group == "apps" && resource == "replicasets") {
    return {NameColumn(),
            Column("Desired", "integer", "apps.desired", "Number of desired pods."),
            Column("Current", "integer", "apps.current",
                   "Replicas is the most recently observed number of replicas."),
            Column("Ready", "integer", "apps.ready",
                   "The number of ready replicas for this replica set."),
            AgeColumn(),
            Column("Containers", "string", "apps.containers",
                   "Names of each container in the template.", 1),
            Column("Images", "string", "apps.images",
                   "Images referenced by each container in the template.", 1),
            Column("Selector", "string", "apps.selector",
                   "Selector is a label query over pods that should match the replica count.", 1)};
  }
  if (group == "apps" && resource == "statefulsets") {
    return {
        NameColumn(),
        Column("Ready", "string", "apps.ready_of_replicas", "Number of the pod with ready state"),
        AgeColumn(),
        Column("Containers", "string", "apps.containers",
               "Names of each container in the template.", 1),
        Column("Images", "string", "apps.images",
               "Images referenced by each container in the template.", 1)};
  }
  if (group == "apps" && resource == "daemonsets") {
    return {NameColumn(),
            Column("Desired", "integer", "apps.ds_desired",
                   "The total number of nodes that should be running the daemon pod."),
            Column("Current", "integer", "apps.ds_current",
                   "The number of nodes that are running at least 1 daemon pod and are supposed "
                   "to run the daemon pod."),
            Column("Ready", "integer", "apps.ds_ready",
                   "The number of nodes that should be running the daemon pod and have one or "
                   "more of the daemon pod running and ready."),
            Column("Up-to-date", "integer", "apps.ds_updated",
                   "The total number of nodes that are running updated daemon pod"),
            Column("Available", "integer", "apps.ds_available",
                   "The number of nodes that should be running the daemon pod and have one or "
                   "more of the daemon pod running and available (ready for at least "
                   "spec.minReadySeconds)"),
            Column("Node Selector", "string", "apps.ds_node_selector",
                   "NodeSelector is a selector which must be true for the pod to fit on a node."),
            AgeColumn(),
            Column("Containers", "string", "apps.containers",
                   "Names of each container in the template.", 1),
            Column("Images", "string", "apps.images",
                   "Images referenced by each container in the template.", 1),
            Column("Selector", "string", "apps.selector",
                   "A label query over pods that are managed by the daemon set.", 1)};
  }
  if (group == "batch" && resource == "jobs") {
    return {NameColumn(),
            Column("Completions", "string", "job.completions",
                   "The desired number of successfully finished pods the job should be run with."),
            Column("Duration", "string", "job.duration", "Time required to complete the job."),
            AgeColumn(),
            Column("Containers", "string", "apps.containers",
                   "Names of each container in the template.", 1),
            Column("Images", "string", "apps.images",
                   "Images referenced by each container in the template.", 1),
            Column("Selector", "string", "apps.selector",
                   "A label query over pods that should match the pod count.", 1)};
  }
  if (group.empty() && resource == "configmaps") {
    return {NameColumn(),
            Column("Data", "string", "configmap.data", "Data contains the configuration data."),
            AgeColumn()};
  }
  if (group.empty() && resource == "secrets") {
    return {NameColumn(),
            Column("Type", "string", "secret.type",
                   "Used to facilitate programmatic handling of secret data."),
            Column("Data", "string", "secret.data", "Data contains the secret data."), AgeColumn()};
  }
  return {NameColumn(), AgeColumn()};
}

std::vector<PrinterColumn> ColumnsFromCrd(const nlohmann::json& crd_version) {
  std::vector<PrinterColumn> columns{NameColumn()};
  const json& declared = Get(crd_version, {"additionalPrinterColumns"});
  if (!declared.is_array() || declared.empty()) {
    PrinterColumn age;
    age.name = "Age";
    age.type = "date";
    age.description = std::string(kCreationTimestampDescription);
    age.json_path = ".metadata.creationTimestamp";
    columns.push_back(std::move(age));
    return columns;
  }
  for (const json& d : declared) {
    PrinterColumn c;
    c.name = Str(Get(d, {"name"}));
    c.type = Str(Get(d, {"type"}));
    c.format = Str(Get(d, {"format"}));
    c.json_path = Str(Get(d, {"jsonPath"}));
    c.description = Str(Get(d, {"description"}));
    if (c.description.empty()) {
      c.description = "Custom resource definition column (in JSONPath format): " + c.json_path;
    }
    c.priority = static_cast<int>(Int(Get(d, {"priority"})));
    columns.push_back(std::move(c));
  }
  return columns;
}

Status CheckIncludeObject(std::string_view include_object) {
  if (include_object.empty() || include_object == "None" || include_object == "Metadata" ||
      include_object == "Object") {
    return Status::Ok();
  }
  return Error{ErrorCode::kInvalid,
               "unrecognized includeObject value: " + json(std::string(include_object)).dump(), 400,
               "BadRequest"};
}

nlohmann::json BuildTable(const std::vector<PrinterColumn>& columns,
                          const std::vector<const nlohmann::json*>& objects,
                          std::string_view include_object,
                          std::chrono::system_clock::time_point now) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", json::object()},
          {"columnDefinitions", ColumnDefinitions(columns)},
          {"rows", BuildRows(columns, objects, include_object, now)}};
}

nlohmann::json BuildTableWatchEvent(const std::vector<PrinterColumn>& columns,
                                    const nlohmann::json& object, std::string_view include_object,
                                    std::chrono::system_clock::time_point now,
                                    bool include_column_definitions) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", json::object()},
          {"columnDefinitions",
           include_column_definitions ? ColumnDefinitions(columns) : json::array()},
          {"rows", BuildRows(columns, {&object}, include_object, now)}};
}

}  // namespace copse::apiserver
