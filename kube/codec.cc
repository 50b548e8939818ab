#include "kube/codec.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Json;
using codec::Reader;

Result<ObjectMeta> DecodeObjectMeta(std::string_view object_json) {
  ObjectMeta meta;
  Status status = codec::ParseAndRead(object_json, [&](Reader& r, Element root) {
    if (!root.is_object()) return r.TypeError(root, "object");
    return codec::ForEachField(r, root, [&](std::string_view key, Element value) {
      if (key == "metadata") return codec::Read(r, value, meta);
      return true;
    });
  });
  if (!status.ok()) return status.error();
  return meta;
}

Result<Unstructured> Unstructured::Decode(std::string_view json) {
  return codec::DecodeObject<Unstructured>(
      json, /*kind=*/{}, [](Reader&, std::string_view, Element, Unstructured&) { return true; });
}

std::string Unstructured::Encode() const {
  return codec::EncodeObject(
      *this, /*default_api_version=*/{}, /*default_kind=*/{},
      [](const Unstructured&) { return true; }, [](Json&, const Unstructured*) {});
}

Result<std::shared_ptr<Unstructured>> DecodeUnstructured(std::string_view json) {
  Result<Unstructured> decoded = Unstructured::Decode(json);
  if (!decoded.ok()) return std::move(decoded).error();
  return std::make_shared<Unstructured>(std::move(decoded).value());
}

std::string IntOrString::ToString() const {
  return is_string ? str_value : std::to_string(int_value);
}

Result<int32_t> IntOrString::ScaledValue(int32_t total, bool round_up) const {
  if (!is_string) return int_value;
  if (!IsPercent()) {
    return MakeError(ErrorCode::kInvalid, "invalid value for IntOrString: invalid type: string \"" +
                                              str_value + "\" is not a percentage");
  }
  std::string_view digits(str_value.data(), str_value.size() - 1);
  int32_t percent = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), percent);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return MakeError(ErrorCode::kInvalid,
                     "invalid value \"" + str_value + "\": not an integer percentage");
  }
  // intstr computes in float64 and rounds with math.Ceil / math.Floor.
  double scaled = static_cast<double>(percent) * static_cast<double>(total) / 100.0;
  scaled = round_up ? std::ceil(scaled) : std::floor(scaled);
  if (scaled > std::numeric_limits<int32_t>::max() ||
      scaled < std::numeric_limits<int32_t>::min()) {
    return MakeError(ErrorCode::kInvalid, "value \"" + str_value + "\" of " +
                                              std::to_string(total) + " is out of range");
  }
  return static_cast<int32_t>(scaled);
}

const Condition* FindCondition(const std::vector<Condition>& conditions,
                               std::string_view type) noexcept {
  for (const Condition& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

Condition* FindCondition(std::vector<Condition>& conditions, std::string_view type) noexcept {
  for (Condition& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

Result<LabelSelector> DecodeLabelSelector(std::string_view json) {
  LabelSelector selector;
  Status status = codec::ParseAndRead(
      json, [&](Reader& r, Element root) { return codec::Read(r, root, selector); });
  if (!status.ok()) return status.error();
  return selector;
}

std::string EncodeLabelSelector(const LabelSelector& selector) {
  return codec::ToJson(selector).dump();
}

Result<NodeSelector> DecodeNodeSelector(std::string_view json) {
  NodeSelector selector;
  Status status = codec::ParseAndRead(
      json, [&](Reader& r, Element root) { return codec::Read(r, root, selector); });
  if (!status.ok()) return status.error();
  return selector;
}

std::string EncodeNodeSelector(const NodeSelector& selector) {
  return codec::ToJson(selector).dump();
}

}  // namespace copse::kube
