// Patches: JSON patch, merge patch and strategic merge patch as the
// embedded API server's Store applies them (dry run, to a few live objects),
// and ApplyStrategicMergePatch on a fuzzed original too.
//
// Input: byte 0 picks the mode; for the Store, the patch type and the object
// and the rest is the patch; for the pure strategic merge, the kind, then
// the original object's JSON up to the first newline, then the patch.
// Inputs nesting deeper than the API server's limit are dropped (its handler
// refuses such bodies before anything parses them); the rest run on a stack
// as large as the server's request threads (server_stack.h).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/strategic_merge.h"
#include "core/check.h"
#include "core/json_text.h"
#include "tests/fuzz/server_stack.h"

namespace api = copse::apiserver;
using nlohmann::json;

namespace {

struct Live {
  api::ResourceRef ref;
  std::string_view name;
  std::string_view body;
};

const std::array<Live, 4> kLive{{
    {{"", "v1", "pods", true},
     "p",
     R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"a"},)"
     R"("finalizers":["x/y"]},"spec":{"containers":[{"name":"c","image":"i",)"
     R"("env":[{"name":"A","value":"1"}],"ports":[{"containerPort":80}],)"
     R"("resources":{"requests":{"cpu":"100m","memory":"1Gi"}}}],)"
     R"("tolerations":[{"key":"k","operator":"Exists"}]}})"},
    {{"", "v1", "nodes", false},
     "n",
     R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"zone":"a"}},)"
     R"("spec":{"podCIDRs":["10.0.0.0/24"],"taints":[{"key":"t","effect":"NoSchedule"}]},)"
     R"("status":{"capacity":{"cpu":"8"},"allocatable":{"cpu":"8"}}})"},
    {{"", "v1", "configmaps", true},
     "c",
     R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"2"}})"},
    {{"apps", "v1", "deployments", true},
     "d",
     R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,)"
     R"("selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
     R"("spec":{"containers":[{"name":"c","image":"i"}]}}}})"},
}};

struct Kind {
  std::string_view api_version;
  std::string_view kind;
};
constexpr std::array<Kind, 5> kKinds{{{"v1", "Pod"},
                                      {"v1", "Node"},
                                      {"apps/v1", "Deployment"},
                                      {"v1", "Service"},
                                      {"example.com/v1", "Widget"}}};

api::Store& LiveStore() {
  static std::shared_ptr<api::Store> store = [] {
    auto s = api::NewStore();
    for (const Live& live : kLive) {
      auto created = s->Create(live.ref, "default", live.body);
      COPSE_CHECK(created.ok()) << created.error().ToString();
    }
    return s;
  }();
  return *store;
}

void PatchLive(uint8_t mode, std::string_view patch) {
  static constexpr std::array<api::PatchType, 3> kTypes{
      api::PatchType::kJson, api::PatchType::kMerge, api::PatchType::kStrategicMerge};
  const api::PatchType type = kTypes[mode % 3];
  const Live& live = kLive[(mode / 3) % kLive.size()];
  const std::string_view subresource = (mode / 12) % 2 ? "status" : "";
  api::Store& store = LiveStore();
  auto before = store.Get(live.ref, "default", live.name);
  COPSE_CHECK(before.ok());
  auto patched = store.Patch(live.ref, "default", live.name, type, patch, subresource,
                             /*dry_run=*/true);
  if (patched.ok()) {
    COPSE_CHECK(json::accept((*patched)->json)) << (*patched)->json;
  } else {
    COPSE_CHECK(!patched.error().message.empty());
  }
  auto after = store.Get(live.ref, "default", live.name);
  COPSE_CHECK(after.ok());
  COPSE_CHECK((*after)->rv == (*before)->rv) << "a dry run wrote";
  COPSE_CHECK((*after)->json == (*before)->json) << "a dry run wrote";
}

void PatchPure(uint8_t mode, std::string_view input) {
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return;
  json original, patch;
  try {
    original = json::parse(input.substr(0, newline));
    patch = json::parse(input.substr(newline + 1));
  } catch (const json::exception&) {
    return;
  }
  const Kind& kind = kKinds[mode % kKinds.size()];
  auto result = api::ApplyStrategicMergePatch(original, patch, kind.api_version, kind.kind);
  if (result.ok()) (void)result->dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (copse::JsonDepthExceeds(rest)) return 0;
  copse::fuzz::ServerStack::Run([&] {
    if (data[0] & 0x80) {
      PatchPure(data[0] & 0x7f, rest);
    } else {
      PatchLive(data[0], rest);
    }
  });
  return 0;
}
