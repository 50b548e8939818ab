#include "replay/trace.h"

#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace copse::replay {

using nlohmann::json;

namespace {

Error Invalid(size_t line, const std::string& what) {
  return MakeError(ErrorCode::kInvalid, "trace line " + std::to_string(line) + ": " + what);
}

std::optional<TraceOp> ParseOp(std::string_view op) {
  if (op == "init") return TraceOp::kInit;
  if (op == "create") return TraceOp::kCreate;
  if (op == "delete") return TraceOp::kDelete;
  if (op == "bound") return TraceOp::kBound;
  if (op == "end") return TraceOp::kEnd;
  return std::nullopt;
}

std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Annotations a scheduler or the simulated kubelet read; everything else
// (notes, tooling state, possibly secrets) stays out of a trace.
bool SchedulingAnnotation(std::string_view key) {
  return key.starts_with("copse.dev/") || key.starts_with("scheduling.") ||
         key.find(".scheduling.") != std::string_view::npos ||
         key.starts_with("scheduler.grove.io/");
}

void CopyIf(const json& from, json& to, const char* key) {
  if (auto it = from.find(key); it != from.end() && !it->is_null()) to[key] = *it;
}

json ReduceMeta(const json& meta, bool owners) {
  json out = json::object();
  CopyIf(meta, out, "name");
  CopyIf(meta, out, "namespace");
  CopyIf(meta, out, "labels");
  if (auto it = meta.find("annotations"); it != meta.end() && it->is_object()) {
    json kept = json::object();
    for (const auto& [key, value] : it->items()) {
      if (SchedulingAnnotation(key)) kept[key] = value;
    }
    if (!kept.empty()) out["annotations"] = std::move(kept);
  }
  if (auto it = meta.find("ownerReferences"); owners && it != meta.end() && it->is_array()) {
    json refs = json::array();
    for (const json& ref : *it) {
      if (!ref.is_object()) continue;
      json r = json::object();
      CopyIf(ref, r, "apiVersion");
      CopyIf(ref, r, "kind");
      CopyIf(ref, r, "name");
      // An API server refuses an owner reference without its uid (the
      // replay creates the pod); controller marks the pod's controller.
      CopyIf(ref, r, "uid");
      CopyIf(ref, r, "controller");
      refs.push_back(std::move(r));
    }
    out["ownerReferences"] = std::move(refs);
  }
  return out;
}

json ReduceContainers(const json& containers) {
  json out = json::array();
  if (!containers.is_array()) return out;
  for (const json& c : containers) {
    if (!c.is_object()) continue;
    json r = json::object();
    CopyIf(c, r, "name");
    CopyIf(c, r, "image");
    CopyIf(c, r, "resources");
    CopyIf(c, r, "ports");
    CopyIf(c, r, "restartPolicy");  // sidecars count toward requests differently
    out.push_back(std::move(r));
  }
  return out;
}

json ReducePod(const json& pod) {
  json out = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  out["metadata"] = ReduceMeta(pod.value("metadata", json::object()), true);
  const json spec = pod.value("spec", json::object());
  json s = json::object();
  for (const char* key :
       {"schedulerName", "priority", "priorityClassName", "nodeSelector", "affinity", "tolerations",
        "topologySpreadConstraints", "schedulingGroup", "overhead", "preemptionPolicy",
        "schedulingGates", "hostNetwork", "runtimeClassName"}) {
    CopyIf(spec, s, key);
  }
  s["containers"] = ReduceContainers(spec.value("containers", json::array()));
  if (spec.contains("initContainers")) {
    s["initContainers"] = ReduceContainers(spec["initContainers"]);
  }
  out["spec"] = std::move(s);
  return out;
}

json ReduceNode(const json& node) {
  json out = {{"apiVersion", "v1"}, {"kind", "Node"}};
  out["metadata"] = ReduceMeta(node.value("metadata", json::object()), false);
  const json spec = node.value("spec", json::object());
  json s = json::object();
  CopyIf(spec, s, "taints");
  CopyIf(spec, s, "unschedulable");
  out["spec"] = std::move(s);
  const json status = node.value("status", json::object());
  json st = json::object();
  CopyIf(status, st, "capacity");
  CopyIf(status, st, "allocatable");
  if (auto it = status.find("conditions"); it != status.end() && it->is_array()) {
    for (const json& c : *it) {
      if (c.is_object() && c.value("type", "") == "Ready") {
        st["conditions"] = json::array(
            {{{"type", "Ready"}, {"status", c.value("status", "Unknown")}, {"reason", "Replay"}}});
      }
    }
  }
  out["status"] = std::move(st);
  return out;
}

}  // namespace

std::string_view TraceOpName(TraceOp op) noexcept {
  switch (op) {
    case TraceOp::kInit:
      return "init";
    case TraceOp::kCreate:
      return "create";
    case TraceOp::kDelete:
      return "delete";
    case TraceOp::kBound:
      return "bound";
    case TraceOp::kEnd:
      return "end";
  }
  return "?";
}

json ReduceObject(const json& object) {
  if (!object.is_object()) return json::object();
  const std::string kind = object.value("kind", "");
  if (kind == "Pod") return ReducePod(object);
  if (kind == "Node") return ReduceNode(object);
  json out = json::object();
  CopyIf(object, out, "apiVersion");
  CopyIf(object, out, "kind");
  out["metadata"] = ReduceMeta(object.value("metadata", json::object()), false);
  CopyIf(object, out, "spec");
  // PriorityClasses carry their fields at the top level.
  for (const char* key : {"value", "globalDefault", "preemptionPolicy"}) CopyIf(object, out, key);
  return out;
}

std::string HeaderLine(const TraceHeader& h) {
  return json{{"format", kTraceFormat},       {"version", kTraceVersion},
              {"source", h.source},           {"start", h.start},
              {"duration_ms", h.duration_ms}, {"rack_label", h.rack_label},
              {"block_label", h.block_label}, {"gpu_resource", h.gpu_resource}}
      .dump();
}

std::string EventLine(const TraceEvent& e) {
  json j = {{"t", e.t_ms}, {"op", TraceOpName(e.op)}};
  switch (e.op) {
    case TraceOp::kInit:
    case TraceOp::kCreate:
      j["object"] = json::parse(e.object);
      if (e.runtime_ms) j["runtime_ms"] = *e.runtime_ms;
      break;
    case TraceOp::kDelete:
      j["apiVersion"] = e.api_version;
      j["kind"] = e.kind;
      if (!e.ns.empty()) j["namespace"] = e.ns;
      j["name"] = e.name;
      break;
    case TraceOp::kBound:
      j["namespace"] = e.ns;
      j["name"] = e.name;
      j["node"] = e.node;
      break;
    case TraceOp::kEnd:
      j["namespace"] = e.ns;
      j["name"] = e.name;
      break;
  }
  return j.dump();
}

Result<Trace> ParseTrace(std::istream& in) {
  Trace trace;
  std::string line;
  size_t number = 0;
  bool have_header = false;
  int64_t last_t = 0;
  // Per pod name, its latest create (or init) event and when that pod was
  // bound: a name used again (a StatefulSet's pod, a Job's retry) is another
  // pod with a runtime of its own.
  std::unordered_map<std::string, size_t> latest_pod;
  std::unordered_map<std::string, int64_t> bound_at;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) return Invalid(number, "not a JSON object");
    if (!have_header) {
      if (j.value("format", "") != kTraceFormat) {
        return Invalid(number, "the header's format must be \"copse-trace\"");
      }
      const json version = j.value("version", json());
      if (!version.is_number_integer() || version.get<int64_t>() < 1 ||
          version.get<int64_t>() > kTraceVersion) {
        return Invalid(number, "header version: want 1.." + std::to_string(kTraceVersion));
      }
      trace.header.source = StringField(j, "source");
      trace.header.start = StringField(j, "start");
      trace.header.duration_ms = j.value("duration_ms", int64_t{0});
      if (trace.header.duration_ms < 0) return Invalid(number, "duration_ms must not be negative");
      for (auto [key, field] : {std::pair{"rack_label", &trace.header.rack_label},
                                std::pair{"block_label", &trace.header.block_label},
                                std::pair{"gpu_resource", &trace.header.gpu_resource}}) {
        if (std::string v = StringField(j, key); !v.empty()) *field = v;
      }
      have_header = true;
      continue;
    }
    TraceEvent e;
    const json t = j.value("t", json());
    if (!t.is_number_integer() || t.get<int64_t>() < 0) {
      return Invalid(number, "t must be a non-negative integer (milliseconds)");
    }
    e.t_ms = t.get<int64_t>();
    std::optional<TraceOp> op = ParseOp(StringField(j, "op"));
    if (!op)
      return Invalid(number, "op \"" + StringField(j, "op") +
                                 "\" is not one of init, create, delete, bound, end");
    e.op = *op;
    if (e.t_ms < last_t)
      return Invalid(number, "t goes back in time (events must be in time order)");
    last_t = e.t_ms;
    if (e.op == TraceOp::kInit || e.op == TraceOp::kCreate) {
      const json& object = j.value("object", json());
      if (!object.is_object()) return Invalid(number, "object missing");
      e.api_version = StringField(object, "apiVersion");
      e.kind = StringField(object, "kind");
      const json meta = object.value("metadata", json::object());
      e.name = meta.is_object() ? StringField(meta, "name") : "";
      e.ns = meta.is_object() ? StringField(meta, "namespace") : "";
      if (e.api_version.empty() || e.kind.empty() || e.name.empty()) {
        return Invalid(number, "object needs apiVersion, kind and metadata.name");
      }
      if (auto it = j.find("runtime_ms"); it != j.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 0) {
          return Invalid(number, "runtime_ms must be a non-negative integer");
        }
        e.runtime_ms = it->get<int64_t>();
      }
      e.object = object.dump();
      if (e.kind == "Pod") {
        const std::string key = e.ns + "/" + e.name;
        latest_pod[key] = trace.events.size();
        bound_at.erase(key);
      }
    } else {
      e.api_version = StringField(j, "apiVersion");
      e.kind = StringField(j, "kind");
      e.ns = StringField(j, "namespace");
      e.name = StringField(j, "name");
      e.node = StringField(j, "node");
      if (e.name.empty()) return Invalid(number, "name missing");
      if (e.op == TraceOp::kDelete && e.kind.empty()) return Invalid(number, "kind missing");
      if (e.op == TraceOp::kBound && e.node.empty()) return Invalid(number, "node missing");
      const std::string key = e.ns + "/" + e.name;
      if (e.op == TraceOp::kBound) bound_at[key] = e.t_ms;
      if (e.op == TraceOp::kEnd) {
        auto pod = latest_pod.find(key);
        auto bound = bound_at.find(key);
        if (pod != latest_pod.end() && bound != bound_at.end() &&
            !trace.events[pod->second].runtime_ms) {
          trace.events[pod->second].runtime_ms = e.t_ms - bound->second;
        }
        latest_pod.erase(key);  // a later end or bound is not this pod's
        bound_at.erase(key);
      }
    }
    trace.events.push_back(std::move(e));
  }
  if (!have_header) return MakeError(ErrorCode::kInvalid, "trace: empty (no header line)");
  return trace;
}

Result<Trace> ReadTraceFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return MakeError(ErrorCode::kInvalid, "trace " + path + ": cannot open");
  Result<Trace> trace = ParseTrace(in);
  if (!trace.ok()) return MakeError(trace.error().code, path + ": " + trace.error().message);
  return trace;
}

}  // namespace copse::replay
