// Protobuf bodies (kube/protobuf/codec.h): whole "k8s\0" envelopes, bare
// messages of a few kinds, and watch frames. Whatever decodes to JSON must
// encode back to protobuf and decode to the same JSON.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "kube/protobuf/codec.h"

namespace pb = copse::kube::protobuf;

namespace {

struct Kind {
  std::string_view api_version;
  std::string_view kind;
};
constexpr std::array<Kind, 8> kKinds{{{"v1", "Pod"},
                                      {"v1", "Node"},
                                      {"v1", "ConfigMap"},
                                      {"v1", "PodList"},
                                      {"apps/v1", "Deployment"},
                                      {"batch/v1", "Job"},
                                      {"v1", "Status"},
                                      {"policy/v1", "PodDisruptionBudget"}}};

void CheckStable(std::string_view json) {
  auto encoded = pb::EncodeObject(json);
  COPSE_CHECK(encoded.ok()) << encoded.error().ToString() << " for " << json;
  auto decoded = pb::DecodeObject(*encoded);
  COPSE_CHECK(decoded.ok()) << decoded.error().ToString() << " for " << json;
  COPSE_CHECK(*decoded == json) << *decoded << " != " << json;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const uint8_t mode = data[0];
  if (mode % 3 == 0) {
    auto json = pb::DecodeObject(body, "v1", "Pod");
    if (json.ok()) CheckStable(*json);
  } else if (mode % 3 == 1) {
    const Kind& kind = kKinds[(mode / 3) % kKinds.size()];
    auto json = pb::DecodeMessage(kind.api_version, kind.kind, body);
    if (json.ok()) {
      auto message = pb::EncodeMessage(kind.api_version, kind.kind, *json);
      COPSE_CHECK(message.ok()) << message.error().ToString() << " for " << *json;
      auto again = pb::DecodeMessage(kind.api_version, kind.kind, *message);
      COPSE_CHECK(again.ok()) << again.error().ToString();
      COPSE_CHECK(*again == *json) << *again << " != " << *json;
    }
  } else {
    std::string_view rest = body;
    while (!rest.empty()) {
      auto frame = pb::ReadWatchFrame(rest);
      if (!frame.ok() || frame->consumed == 0) break;
      COPSE_CHECK(frame->consumed <= rest.size());
      rest.remove_prefix(frame->consumed);
    }
  }
  return 0;
}
