#include "kube/lease.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Json;
using codec::Prev;
using codec::PutOpt;
using codec::Read;
using codec::Reader;

Result<Lease> Lease::Decode(std::string_view json) {
  return codec::DecodeObject<Lease>(
      json, kKind, [](Reader& r, std::string_view key, Element v, Lease& out) {
        if (key != "spec") return true;
        return codec::ForEachField(r, v, [&](std::string_view field, Element value) {
          if (field == "holderIdentity") return Read(r, value, out.spec.holder_identity);
          if (field == "leaseDurationSeconds")
            return Read(r, value, out.spec.lease_duration_seconds);
          if (field == "acquireTime") return Read(r, value, out.spec.acquire_time);
          if (field == "renewTime") return Read(r, value, out.spec.renew_time);
          if (field == "leaseTransitions") return Read(r, value, out.spec.lease_transitions);
          return true;
        });
      });
}

std::string Lease::Encode() const {
  auto same = [this](const Lease& before) { return spec == before.spec; };
  return codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const Lease* before) {
        const LeaseSpec* b = Prev(before, &Lease::spec);
        codec::PutObject(root, "spec", [&](Json& j) {
          PutOpt(j, "holderIdentity", spec.holder_identity, Prev(b, &LeaseSpec::holder_identity));
          PutOpt(j, "leaseDurationSeconds", spec.lease_duration_seconds,
                 Prev(b, &LeaseSpec::lease_duration_seconds));
          PutOpt(j, "acquireTime", spec.acquire_time, Prev(b, &LeaseSpec::acquire_time));
          PutOpt(j, "renewTime", spec.renew_time, Prev(b, &LeaseSpec::renew_time));
          PutOpt(j, "leaseTransitions", spec.lease_transitions,
                 Prev(b, &LeaseSpec::lease_transitions));
        });
      });
}

}  // namespace copse::kube
