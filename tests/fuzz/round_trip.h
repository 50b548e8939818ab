#pragma once
// The typed codecs' property, shared by codec_fuzz.cc and
// grove_codec_fuzz.cc: whatever T::Decode() accepts survives Encode() ->
// Decode(), both through the overlay path (a typed field edited) and from
// the typed fields alone (`raw` cleared, as for an object built in code).

#include <string>
#include <string_view>
#include <utility>

#include "core/check.h"

namespace copse::fuzz {

template <typename T>
void RoundTrip(std::string_view json) {
  auto decoded = T::Decode(json);
  if (!decoded.ok()) return;
  T object = std::move(decoded).value();

  object.meta.labels["copse.dev/fuzz"] = "x";  // forces the overlay path
  const std::string overlaid = object.Encode();
  auto again = T::Decode(overlaid);
  COPSE_CHECK(again.ok()) << again.error().ToString() << " in " << overlaid;
  COPSE_CHECK(again->meta.labels == object.meta.labels) << overlaid;
  COPSE_CHECK(again->meta.name == object.meta.name) << overlaid;

  object.raw.clear();
  const std::string typed = object.Encode();
  auto from_typed = T::Decode(typed);
  COPSE_CHECK(from_typed.ok()) << from_typed.error().ToString() << " in " << typed;
  COPSE_CHECK(from_typed->meta.labels == object.meta.labels) << typed;
  // Encoding is deterministic: the re-decoded object, stripped the same way,
  // encodes to the same text.
  T stripped = std::move(from_typed).value();
  stripped.raw.clear();
  COPSE_CHECK(stripped.Encode() == typed) << typed;
}

}  // namespace copse::fuzz
