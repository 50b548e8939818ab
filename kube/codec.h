#pragma once
// JSON codecs shared by every kube/ object: ObjectMeta, untyped objects
// (any kind, including custom resources), and the small value types that
// several API objects use (IntOrString, conditions, object references,
// metav1.LabelSelector, core/v1 NodeSelector).
//
// Decoding uses simdjson (the hot path: watch events). Encode() of an object
// whose typed fields were not edited returns `raw` byte for byte; otherwise it
// parses `raw` with nlohmann, overlays only the typed fields that changed and
// dumps compactly (keys sorted), so fields copse does not model survive and
// unchanged values keep their spelling ("1000m" stays "1000m"). Neither JSON
// library appears in this header.
//
// Errors are ErrorCode::kInvalid and start with the JSON path of the field at
// fault: "metadata.labels.app: expected string, got number",
// "spec.containers[0].resources.requests.cpu: quantities must match ...",
// "spec.containers[0]: malformed JSON: parse error at line 1, column 57: ...".
//
// Thread-safety: all functions are reentrant; decoders use a thread-local
// simdjson parser.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

// Reads `metadata` of any object's JSON (the rest is validated as JSON only).
// A missing or null `metadata` yields an empty ObjectMeta.
Result<ObjectMeta> DecodeObjectMeta(std::string_view object_json);

// Any object, typed only as far as KubeObject goes: apiVersion, kind and
// metadata. Used for custom resources and by code that does not care about
// the kind (e.g. the embedded API server's storage).
class Unstructured : public KubeObject {
 public:
  // Requires a JSON object; fills meta, api_version, kind and raw.
  static Result<Unstructured> Decode(std::string_view json);
  // `raw` with apiVersion, kind and metadata replaced by the typed values
  // (unknown metadata fields such as managedFields are kept). An object
  // with an empty `raw` encodes as {"apiVersion","kind","metadata"}.
  std::string Encode() const;
};

// Requires a JSON object; fills meta, api_version, kind and raw (a copy of `json`).
Result<std::shared_ptr<Unstructured>> DecodeUnstructured(std::string_view json);

// k8s.io/apimachinery/pkg/util/intstr.IntOrString, e.g. PDB minAvailable
// ("50%" or 3) and Service targetPort ("http" or 8080).
struct IntOrString {
  bool is_string = false;
  int32_t int_value = 0;
  std::string str_value;

  static IntOrString FromInt(int32_t value) { return IntOrString{false, value, {}}; }
  static IntOrString FromString(std::string value) {
    return IntOrString{true, 0, std::move(value)};
  }

  bool IsPercent() const noexcept {
    return is_string && !str_value.empty() && str_value.back() == '%';
  }
  // "3" or "50%".
  std::string ToString() const;
  // As intstr.GetScaledValueFromIntOrPercent: an int is returned as is; "N%"
  // is N * total / 100, rounded up or down. Any other string is kInvalid.
  Result<int32_t> ScaledValue(int32_t total, bool round_up) const;

  bool operator==(const IntOrString&) const = default;
};

// A status condition: core/v1 PodCondition, NodeCondition and metav1.Condition
// share this shape (the time fields a kind does not have stay empty).
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;            // RFC 3339
  std::string last_probe_time;                 // PodCondition only
  std::string last_heartbeat_time;             // NodeCondition only
  std::optional<int64_t> observed_generation;  // metav1.Condition only

  bool operator==(const Condition&) const = default;
};

// The condition of the given type, or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions,
                               std::string_view type) noexcept;
Condition* FindCondition(std::vector<Condition>& conditions, std::string_view type) noexcept;

// core/v1 ObjectReference (Event involvedObject / events.k8s.io regarding).
struct ObjectReference {
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string api_version;
  std::string resource_version;
  std::string field_path;

  bool operator==(const ObjectReference&) const = default;
};

// metav1.LabelSelector JSON ({"matchLabels":{...},"matchExpressions":[...]})
// <-> core LabelSelector. JSON `null` decodes to LabelSelector::Nothing(), as
// kube-scheduler treats a nil selector; `{}` decodes to the empty selector
// (matches everything). Encoding writes equality requirements as matchLabels
// and the rest as matchExpressions; Nothing() encodes as `null`.
Result<LabelSelector> DecodeLabelSelector(std::string_view json);
std::string EncodeLabelSelector(const LabelSelector& selector);

// core/v1 NodeSelector JSON ({"nodeSelectorTerms":[{"matchExpressions":[...],
// "matchFields":[...]}]}) <-> core NodeSelector.
Result<NodeSelector> DecodeNodeSelector(std::string_view json);
std::string EncodeNodeSelector(const NodeSelector& selector);

}  // namespace copse::kube
