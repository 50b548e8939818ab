#include "kube/node.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutArray;
using codec::PutObject;
using codec::Read;
using codec::ReadArray;
using codec::Reader;

namespace {

bool ReadTaint(Reader& r, Element e, Taint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "key") return Read(r, v, out.key);
    if (key == "value") return Read(r, v, out.value);
    if (key == "effect") return Read(r, v, out.effect);
    if (key == "timeAdded") return Read(r, v, out.time_added);
    return true;
  });
}

bool ReadAddress(Reader& r, Element e, NodeAddress& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, out.type);
    if (key == "address") return Read(r, v, out.address);
    return true;
  });
}

bool ReadNodeSpec(Reader& r, Element e, NodeSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "unschedulable") return Read(r, v, out.unschedulable);
    if (key == "taints") return ReadArray(r, v, out.taints, ReadTaint);
    return true;
  });
}

bool ReadNodeStatus(Reader& r, Element e, NodeStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "capacity") return Read(r, v, out.capacity);
    if (key == "allocatable") return Read(r, v, out.allocatable);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "addresses") return ReadArray(r, v, out.addresses, ReadAddress);
    return true;
  });
}

void OverlayTaint(Json& j, const Taint& now, const Taint* before) {
  Put(j, "key", now.key, Prev(before, &Taint::key), Emit::kAlways);
  Put(j, "value", now.value, Prev(before, &Taint::value));
  Put(j, "effect", now.effect, Prev(before, &Taint::effect), Emit::kAlways);
  Put(j, "timeAdded", now.time_added, Prev(before, &Taint::time_added));
}

void OverlayAddress(Json& j, const NodeAddress& now, const NodeAddress* before) {
  Put(j, "type", now.type, Prev(before, &NodeAddress::type), Emit::kAlways);
  Put(j, "address", now.address, Prev(before, &NodeAddress::address), Emit::kAlways);
}

void OverlayNodeSpec(Json& j, const NodeSpec& now, const NodeSpec* before) {
  Put(j, "unschedulable", now.unschedulable, Prev(before, &NodeSpec::unschedulable));
  PutArray(j, "taints", now.taints, Prev(before, &NodeSpec::taints), OverlayTaint,
           [](const Taint& a, const Taint& b) { return a.key == b.key && a.effect == b.effect; });
}

void OverlayNodeStatus(Json& j, const NodeStatus& now, const NodeStatus* before) {
  codec::PutResourceList(j, "capacity", now.capacity, Prev(before, &NodeStatus::capacity));
  codec::PutResourceList(j, "allocatable", now.allocatable, Prev(before, &NodeStatus::allocatable));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &NodeStatus::conditions));
  PutArray(j, "addresses", now.addresses, Prev(before, &NodeStatus::addresses), OverlayAddress);
}

}  // namespace

bool Node::IsReady() const noexcept {
  const Condition* ready = FindCondition(status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

Result<Node> Node::Decode(std::string_view json) {
  return codec::DecodeObject<Node>(json, kKind,
                                   [](Reader& r, std::string_view key, Element v, Node& out) {
                                     if (key == "spec") return ReadNodeSpec(r, v, out.spec);
                                     if (key == "status") return ReadNodeStatus(r, v, out.status);
                                     return true;
                                   });
}

std::string Node::Encode() const {
  auto same = [this](const Node& before) { return spec == before.spec && status == before.status; };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const Node* before) {
        PutObject(root, "spec",
                  [&](Json& j) { OverlayNodeSpec(j, spec, Prev(before, &Node::spec)); });
        PutObject(root, "status",
                  [&](Json& j) { OverlayNodeStatus(j, status, Prev(before, &Node::status)); });
      });
}

}  // namespace copse::kube
