#include "grove/api/crds.h"

#include "core/check.h"
#include "kube/yaml.h"

namespace copse::grove::api {

std::vector<std::string> CrdManifests() {
  std::vector<std::string> out;
  for (const auto& [name, text] : CrdManifestTexts()) {
    auto docs = kube::YamlDocumentsToJson(text);
    COPSE_CHECK(docs.ok()) << "compiled-in CRD manifest " << name << " does not parse";
    for (auto& doc : *docs) out.push_back(std::move(doc));
  }
  return out;
}

boost::asio::awaitable<Status> InstallCrds(std::shared_ptr<kube::Client> client,
                                           std::vector<std::string> crd_jsons) {
  for (auto& body : crd_jsons) {
    Result<std::string> created =
        co_await client->Create(kube::resources::kCustomResourceDefinitions, "", body);
    if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) {
      co_return created.error();
    }
  }
  co_return Status::Ok();
}

}  // namespace copse::grove::api
