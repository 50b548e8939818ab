// The API server's JSON text <-> DOM conversions (apiserver/json_text.h)
// against nlohmann's own parser and serializer, which they promise to match,
// and the untyped object codec's decode/encode round trip (kube/codec.h).
// The server's conversions see only text within the depth limit (its
// handler refuses deeper bodies first) and run on a stack as large as its
// request threads (server_stack.h). The client's decoder refuses deeper
// text itself, on libFuzzer's own stack: no recursion before the refusal.
// Within the limit the client's round trip runs on that large stack too:
// this build's frames (ASan, UBSan, coverage) are far larger than a
// release build's: built with g++ -O2, nlohmann's parse and dump of 10,000
// nested arrays fit in 256 KiB of stack, against the 8 MiB of the client's
// threads; here one 10,000-deep object overflowed libFuzzer's 8 MiB main
// thread in CI (the seed deep-object-array-client-roundtrip.json).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/json_text.h"
#include "core/check.h"
#include "core/json_text.h"
#include "kube/codec.h"
#include "tests/fuzz/server_stack.h"

using nlohmann::json;

namespace {

void ServerConversions(std::string_view text) {
  json ours;
  bool ours_ok = true;
  try {
    ours = copse::apiserver::ParseJson(text);
  } catch (const json::exception&) {
    ours_ok = false;
  }
  json reference;
  bool reference_ok = true;
  try {
    reference = json::parse(text);
  } catch (const json::exception&) {
    reference_ok = false;
  }
  COPSE_CHECK(ours_ok == reference_ok) << "ParseJson accepts: " << ours_ok;
  if (ours_ok) {
    COPSE_CHECK(ours == reference);
    const std::string dumped = copse::apiserver::DumpJson(ours);
    COPSE_CHECK(dumped == reference.dump(-1, ' ', false, json::error_handler_t::replace)) << dumped;
    // What DumpJson writes, ParseJson reads back unchanged (invalid UTF-8
    // was replaced on the first dump, so compare from the dumped text on).
    const json again = copse::apiserver::ParseJson(dumped);
    COPSE_CHECK(copse::apiserver::DumpJson(again) == dumped);
  }
}

void ClientRoundTrip(std::string_view text) {
  auto object = copse::kube::Unstructured::Decode(text);
  if (!object.ok()) return;
  COPSE_CHECK(json::accept(text)) << "Unstructured::Decode accepted invalid JSON";
  object->meta.labels["fuzz"] = "x";  // forces the overlay path of Encode()
  const std::string encoded = object->Encode();
  auto decoded = copse::kube::Unstructured::Decode(encoded);
  COPSE_CHECK(decoded.ok()) << decoded.error().ToString() << " in " << encoded;
  COPSE_CHECK(decoded->meta.labels == object->meta.labels);
  COPSE_CHECK(decoded->meta.name == object->meta.name);
  COPSE_CHECK(decoded->kind == object->kind);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (copse::JsonDepthExceeds(text)) {
    COPSE_CHECK(!copse::kube::Unstructured::Decode(text).ok())
        << "Unstructured::Decode accepted JSON beyond the limit";
    return 0;
  }
  copse::fuzz::ServerStack::Run([&] {
    ServerConversions(text);
    ClientRoundTrip(text);
  });
  return 0;
}
