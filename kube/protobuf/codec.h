#pragma once
// Kubernetes' protobuf wire form of the built-in API types
// (application/vnd.kubernetes.protobuf) <-> the JSON copse keeps.
//
// An object travels as the 4 bytes "k8s\0" and a runtime.Unknown envelope:
// typeMeta {apiVersion, kind}, raw (the object's message, which has no
// apiVersion/kind of its own), contentEncoding, contentType. Watch streams
// ("...;stream=watch") are 4-byte big-endian length-prefixed frames, each a
// meta.v1.WatchEvent {type, object: RawExtension{raw: an envelope as above}}.
//
// Covered: the kinds of core/v1, apps/v1, batch/v1, rbac/v1, scheduling/v1,
// policy/v1, coordination/v1, networking/v1, events/v1 and autoscaling/v1
// Scale that kube/protobuf/schema_data.cc lists, their lists ("PodList"),
// and meta Status, DeleteOptions and WatchEvent at any group version. Custom
// resources have no protobuf form (kube-apiserver serves them as JSON only).
//
// JSON as Go's encoding/json writes these types: scalars Go would omit when
// zero are left out, Quantity as a string, IntOrString as a number or a
// string, Time/MicroTime as RFC 3339 (zero: null; Time keeps seconds only, as Go's
// decoder does), bytes as base64,
// RawExtension and FieldsV1 as the JSON they hold. Unknown protobuf fields
// are skipped (as kube-apiserver's decoder does); unknown JSON fields are not
// encoded. Malformed input is ErrorCode::kInvalid, naming the field
// ("spec.replicas: wrong wire type 2 for an int32"); a kind with no protobuf
// form is ErrorCode::kInvalid with reason "UnsupportedMediaType".
//
// No protobuf or JSON library appears in this header. Thread-safety: all
// functions are reentrant.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse::kube::protobuf {

inline constexpr std::string_view kMediaType = "application/vnd.kubernetes.protobuf";
inline constexpr std::string_view kWatchMediaType =
    "application/vnd.kubernetes.protobuf;stream=watch";
inline constexpr std::string_view kMagic{"k8s\0", 4};

// True when (apiVersion, kind) has a protobuf form (lists included).
bool HasProtobufForm(std::string_view api_version, std::string_view kind);

// Decodes a "k8s\0" + Unknown body to the object's JSON, with apiVersion and
// kind from the envelope ("apiVersion" and "kind" first). When the envelope
// leaves them empty, `default_api_version` / `default_kind` stand in (as
// kube-apiserver fills them from the endpoint).
Result<std::string> DecodeObject(std::string_view body, std::string_view default_api_version = {},
                                 std::string_view default_kind = {});

// Encodes an object's JSON (which names its apiVersion and kind) as
// "k8s\0" + Unknown.
Result<std::string> EncodeObject(std::string_view json);

// The message alone (no magic, no envelope) of `kind` at `api_version`, and back.
Result<std::string> EncodeMessage(std::string_view api_version, std::string_view kind,
                                  std::string_view json);
Result<std::string> DecodeMessage(std::string_view api_version, std::string_view kind,
                                  std::string_view message);

// Appends one watch frame: the length prefix and WatchEvent{type, object}.
Status AppendWatchFrame(std::string_view type, std::string_view object_json, std::string* out);

// Reads the frame at the start of `stream`: on success sets `type`, the
// object's JSON, and `consumed` (bytes taken); consumed 0 when the frame is
// not complete yet.
struct WatchFrame {
  std::string type;
  std::string object_json;
  size_t consumed = 0;
};
Result<WatchFrame> ReadWatchFrame(std::string_view stream);

}  // namespace copse::kube::protobuf
