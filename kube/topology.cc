#include "kube/topology.h"

#include <set>

#include "core/labels.h"
#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Read;
using codec::Reader;

namespace {

bool ReadLevel(Reader& r, Element e, TopologyLevel& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "nodeLabel") return Read(r, v, out.node_label);
    return true;
  });
}

bool ReadSpec(Reader& r, Element e, TopologySpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "levels") return codec::ReadArray(r, v, out.levels, ReadLevel);
    return true;
  });
}

void OverlayLevel(Json& j, const TopologyLevel& now, const TopologyLevel* before) {
  codec::Put(j, "nodeLabel", now.node_label, Prev(before, &TopologyLevel::node_label),
             Emit::kAlways);
}

void OverlaySpec(Json& j, const TopologySpec& now, const TopologySpec* before) {
  codec::PutArray(
      j, "levels", now.levels, Prev(before, &TopologySpec::levels), OverlayLevel,
      [](const TopologyLevel& a, const TopologyLevel& b) { return a.node_label == b.node_label; });
}

}  // namespace

TopologyDefinition Topology::ToDefinition() const {
  TopologyDefinition definition;
  definition.name = meta.name;
  definition.levels.reserve(spec.levels.size());
  for (const TopologyLevel& level : spec.levels) definition.levels.push_back(level.node_label);
  return definition;
}

Status Topology::Validate() const {
  std::vector<std::string> errors;
  if (spec.levels.empty()) errors.push_back("spec.levels: Required value");
  std::set<std::string_view> seen;
  for (size_t i = 0; i < spec.levels.size(); ++i) {
    const std::string& label = spec.levels[i].node_label;
    const std::string path = "spec.levels[" + std::to_string(i) + "].nodeLabel";
    if (label.empty()) {
      errors.push_back(path + ": Required value");
    } else if (Status valid = ValidateLabelKey(label); !valid.ok()) {
      errors.push_back(path + ": Invalid value: \"" + label + "\": " + valid.error().message);
    } else if (!seen.insert(label).second) {
      errors.push_back(path + ": Duplicate value: \"" + label + "\"");
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string message;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) message += "; ";
    message += errors[i];
  }
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

Result<Topology> Topology::Decode(std::string_view json) {
  return codec::DecodeObject<Topology>(
      json, kKind, [](Reader& r, std::string_view key, Element v, Topology& out) {
        if (key == "spec") return ReadSpec(r, v, out.spec);
        return true;
      });
}

std::string Topology::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind, [this](const Topology& before) { return spec == before.spec; },
      [this](Json& root, const Topology* before) {
        codec::PutObject(root, "spec",
                         [&](Json& j) { OverlaySpec(j, spec, Prev(before, &Topology::spec)); });
      });
}

}  // namespace copse::kube
