#include "kube/event.h"

#include <tuple>

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::Read;
using codec::Reader;

namespace {

// The JSON names of the fields that differ between the two APIs.
struct EventNames {
  const char* involved_object;
  const char* message;
  const char* count;
  const char* first_timestamp;
  const char* last_timestamp;
  const char* source;
  const char* reporting_controller;
};

constexpr EventNames kCoreNames{"involvedObject",    "message",       "count",
                                "firstTimestamp",    "lastTimestamp", "source",
                                "reportingComponent"};
constexpr EventNames kEventsNames{"regarding",
                                  "note",
                                  "deprecatedCount",
                                  "deprecatedFirstTimestamp",
                                  "deprecatedLastTimestamp",
                                  "deprecatedSource",
                                  "reportingController"};

bool ReadObjectReference(Reader& r, Element e, ObjectReference& out) { return Read(r, e, out); }

bool ReadSeries(Reader& r, Element e, EventSeries& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "count") return Read(r, v, out.count);
    if (key == "lastObservedTime") return Read(r, v, out.last_observed_time);
    return true;
  });
}

bool ReadSource(Reader& r, Element e, Event& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "component") return Read(r, v, out.source_component);
    if (key == "host") return Read(r, v, out.source_host);
    return true;
  });
}

bool ReadEventField(Reader& r, std::string_view key, Element v, Event& out) {
  // Both APIs' names are accepted; an object carries only its own.
  if (key == "involvedObject" || key == "regarding") return Read(r, v, out.involved_object);
  if (key == "related") return codec::ReadOpt(r, v, out.related, ReadObjectReference);
  if (key == "reason") return Read(r, v, out.reason);
  if (key == "message" || key == "note") return Read(r, v, out.message);
  if (key == "type") return Read(r, v, out.type);
  if (key == "action") return Read(r, v, out.action);
  if (key == "count" || key == "deprecatedCount") return Read(r, v, out.count);
  if (key == "eventTime") return Read(r, v, out.event_time);
  if (key == "firstTimestamp" || key == "deprecatedFirstTimestamp") {
    return Read(r, v, out.first_timestamp);
  }
  if (key == "lastTimestamp" || key == "deprecatedLastTimestamp") {
    return Read(r, v, out.last_timestamp);
  }
  if (key == "reportingComponent" || key == "reportingController") {
    return Read(r, v, out.reporting_controller);
  }
  if (key == "reportingInstance") return Read(r, v, out.reporting_instance);
  if (key == "source" || key == "deprecatedSource") return ReadSource(r, v, out);
  if (key == "series") return codec::ReadOpt(r, v, out.series, ReadSeries);
  return true;
}

void OverlaySeries(Json& j, const EventSeries& now, const EventSeries* before) {
  Put(j, "count", now.count, Prev(before, &EventSeries::count), Emit::kAlways);
  Put(j, "lastObservedTime", now.last_observed_time, Prev(before, &EventSeries::last_observed_time),
      Emit::kAlways);
}

}  // namespace

Result<Event> Event::Decode(std::string_view json) {
  return codec::DecodeObject<Event>(json, kKind, ReadEventField);
}

std::string Event::Encode() const {
  auto typed = [](const Event& e) {
    return std::tie(e.involved_object, e.related, e.reason, e.message, e.type, e.action, e.count,
                    e.event_time, e.first_timestamp, e.last_timestamp, e.reporting_controller,
                    e.reporting_instance, e.source_component, e.source_host, e.series);
  };
  auto same = [&](const Event& before) { return typed(*this) == typed(before); };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const Event* before) {
        const EventNames& names = IsEventsV1() ? kEventsNames : kCoreNames;
        // Switching API drops the fields whose names belong to the other one.
        if (before != nullptr && before->IsEventsV1() != IsEventsV1()) {
          const EventNames& old = before->IsEventsV1() ? kEventsNames : kCoreNames;
          for (const char* key : {old.involved_object, old.message, old.count, old.first_timestamp,
                                  old.last_timestamp, old.source, old.reporting_controller}) {
            root.erase(key);
          }
          before = nullptr;
        }
        codec::PutObject(root, names.involved_object, [&](Json& j) {
          codec::OverlayObjectReference(j, involved_object, Prev(before, &Event::involved_object));
        });
        codec::PutOptObject(root, "related", related, Prev(before, &Event::related),
                            codec::OverlayObjectReference);
        Put(root, "reason", reason, Prev(before, &Event::reason));
        Put(root, names.message, message, Prev(before, &Event::message));
        Put(root, "type", type, Prev(before, &Event::type));
        Put(root, "action", action, Prev(before, &Event::action));
        Put(root, names.count, count, Prev(before, &Event::count));
        Put(root, "eventTime", event_time, Prev(before, &Event::event_time));
        Put(root, names.first_timestamp, first_timestamp, Prev(before, &Event::first_timestamp));
        Put(root, names.last_timestamp, last_timestamp, Prev(before, &Event::last_timestamp));
        Put(root, names.reporting_controller, reporting_controller,
            Prev(before, &Event::reporting_controller));
        Put(root, "reportingInstance", reporting_instance,
            Prev(before, &Event::reporting_instance));
        codec::PutObject(root, names.source, [&](Json& j) {
          Put(j, "component", source_component, Prev(before, &Event::source_component));
          Put(j, "host", source_host, Prev(before, &Event::source_host));
        });
        codec::PutOptObject(root, "series", series, Prev(before, &Event::series), OverlaySeries);
      });
}

}  // namespace copse::kube
