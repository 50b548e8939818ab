#pragma once
// Events in either API: core/v1 Event and events.k8s.io/v1 Event. One typed
// view covers both; the JSON field names follow `api_version`:
//
//   typed field           core/v1 ("v1")          events.k8s.io/v1
//   involved_object       involvedObject          regarding
//   message               message                 note
//   count                 count                   deprecatedCount
//   first_timestamp       firstTimestamp          deprecatedFirstTimestamp
//   last_timestamp        lastTimestamp           deprecatedLastTimestamp
//   source_component/host source.{component,host} deprecatedSource.{...}
//   reporting_controller  reportingComponent      reportingController
//   related, reason, type, action, event_time, reporting_instance, series: same names
//
// An Event built in code encodes as core/v1 unless api_version is set to
// kEventsApiVersion.
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

struct EventSeries {
  int32_t count = 0;
  std::string last_observed_time;  // MicroTime
  bool operator==(const EventSeries&) const = default;
};

class Event : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "v1";
  static constexpr std::string_view kEventsApiVersion = "events.k8s.io/v1";
  static constexpr std::string_view kKind = "Event";

  ObjectReference involved_object;
  std::optional<ObjectReference> related;
  std::string reason;
  std::string message;
  std::string type;  // "Normal" | "Warning"
  std::string action;
  int32_t count = 0;
  std::string event_time;  // MicroTime
  std::string first_timestamp;
  std::string last_timestamp;
  std::string reporting_controller;
  std::string reporting_instance;
  std::string source_component;
  std::string source_host;
  std::optional<EventSeries> series;

  bool IsEventsV1() const noexcept { return api_version == kEventsApiVersion; }

  // Accepts both APIs (apiVersion "v1" or "events.k8s.io/v1").
  static Result<Event> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
