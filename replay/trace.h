#pragma once
// The copse trace format (replay/README.md): a cluster's history as JSON
// Lines, written by `copse record` and `copse trace synth`, read by
// `copse replay`.
//
//   line 1   header  {"format":"copse-trace","version":1,"source":...,
//                     "start":"<RFC 3339>","duration_ms":N, ...}
//   then     init    {"t":0,"op":"init","object":{...}}   the initial lists
//                     (Nodes, Namespaces, PriorityClasses, Topologies, PDBs,
//                     and objects that existed when recording began)
//   then     events  in time order (t: milliseconds since start):
//            {"t":T,"op":"create","object":{...},"runtime_ms":R}
//                     runtime_ms (pods, optional): how long the pod ran once
//                     bound; a replayed pod leaves that long after its bind
//            {"t":T,"op":"delete","apiVersion":..,"kind":..,"namespace":..,"name":..}
//            {"t":T,"op":"bound","namespace":..,"name":..,"node":..}
//            {"t":T,"op":"end","namespace":..,"name":..}
//                     what happened to a recorded pod (informational: the
//                     replay makes its own decisions); a pod with both and
//                     no runtime_ms runs end - bound (per pod: a name used
//                     again is another pod)
//
// Objects are reduced to what scheduling reads (ReduceObject): no env
// values, no secrets, no annotations outside scheduling.
//
// Thread-safety: pure functions and values.

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::replay {

inline constexpr std::string_view kTraceFormat = "copse-trace";
inline constexpr int kTraceVersion = 1;

struct TraceHeader {
  std::string source;  // "synth", "record"
  std::string start;   // RFC 3339: the wall time of t = 0
  int64_t duration_ms = 0;
  // Node label keys the report groups gangs by (defaults: copse's synthetic ones).
  std::string rack_label = "copse.dev/rack";
  std::string block_label = "copse.dev/block";
  std::string gpu_resource = "nvidia.com/gpu";
};

enum class TraceOp : uint8_t { kInit, kCreate, kDelete, kBound, kEnd };
std::string_view TraceOpName(TraceOp op) noexcept;

struct TraceEvent {
  int64_t t_ms = 0;
  TraceOp op = TraceOp::kCreate;
  std::string api_version;  // of the object (create/init) or the deleted object
  std::string kind;
  std::string ns;
  std::string name;
  std::string object;  // compact JSON (init/create)
  std::string node;    // bound
  std::optional<int64_t> runtime_ms;
};

struct Trace {
  TraceHeader header;
  // Init first, then by t (stable). A pod's create (or init) event carries
  // its runtime: its runtime_ms, else end - bound of that pod, the bound and
  // end for its name that follow it (before the name's next create), so a
  // name used again gets each pod's own runtime.
  std::vector<TraceEvent> events;
};

// Parses a trace. Errors (kInvalid) name the line and the field: a missing
// or foreign header, a newer version, an unknown op, an object without
// apiVersion/kind/metadata.name, events out of time order, a negative
// runtime.
Result<Trace> ParseTrace(std::istream& in);
Result<Trace> ReadTraceFile(const std::string& path);

// What scheduling reads of an object, for the trace (replay/README.md).
// Every kind keeps metadata name, namespace, labels and the scheduling
// annotations (keys starting copse.dev/, scheduling. or scheduler.grove.io/,
// or containing .scheduling.). Pods also keep ownerReferences' apiVersion,
// kind, name, uid and controller; spec's schedulerName, priority,
// priorityClassName, nodeSelector, affinity, tolerations,
// topologySpreadConstraints, schedulingGroup, overhead, preemptionPolicy,
// schedulingGates, hostNetwork, runtimeClassName; and per container and init
// container only name, image, resources, ports and restartPolicy.
// Nodes keep taints, unschedulable, capacity, allocatable and the Ready
// condition. Other kinds keep apiVersion, kind and spec (PriorityClasses
// value, globalDefault and preemptionPolicy).
nlohmann::json ReduceObject(const nlohmann::json& object);

// One trace line each.
std::string HeaderLine(const TraceHeader& header);
std::string EventLine(const TraceEvent& event);

}  // namespace copse::replay
