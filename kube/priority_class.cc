#include "kube/priority_class.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Json;
using codec::Prev;
using codec::Read;
using codec::Reader;

Result<PriorityClass> PriorityClass::Decode(std::string_view json) {
  return codec::DecodeObject<PriorityClass>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PriorityClass& out) {
        if (key == "value") return Read(r, v, out.value);
        if (key == "globalDefault") return Read(r, v, out.global_default);
        if (key == "description") return Read(r, v, out.description);
        if (key == "preemptionPolicy") return Read(r, v, out.preemption_policy);
        return true;
      });
}

std::string PriorityClass::Encode() const {
  auto same = [this](const PriorityClass& before) {
    return value == before.value && global_default == before.global_default &&
           description == before.description && preemption_policy == before.preemption_policy;
  };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const PriorityClass* before) {
        codec::Put(root, "value", value, Prev(before, &PriorityClass::value), codec::Emit::kAlways);
        codec::Put(root, "globalDefault", global_default,
                   Prev(before, &PriorityClass::global_default));
        codec::Put(root, "description", description, Prev(before, &PriorityClass::description));
        codec::PutOpt(root, "preemptionPolicy", preemption_policy,
                      Prev(before, &PriorityClass::preemption_policy));
      });
}

}  // namespace copse::kube
