#include "kube/namespace.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Json;
using codec::Reader;

Result<Namespace> Namespace::Decode(std::string_view json) {
  return codec::DecodeObject<Namespace>(
      json, kKind, [](Reader& r, std::string_view key, Element v, Namespace& out) {
        if (key != "status") return true;
        return codec::ForEachField(r, v, [&](std::string_view field, Element value) {
          if (field == "phase") return codec::Read(r, value, out.phase);
          return true;
        });
      });
}

std::string Namespace::Encode() const {
  auto same = [this](const Namespace& before) { return phase == before.phase; };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const Namespace* before) {
        codec::PutObject(root, "status", [&](Json& j) {
          codec::Put(j, "phase", phase, codec::Prev(before, &Namespace::phase));
        });
      });
}

}  // namespace copse::kube
