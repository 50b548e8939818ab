#pragma once
// The CustomResourceDefinitions of Grove's API (deploy/crds/grove/*.yaml,
// compiled in) and their installation into an API server.
//
// Thread-safety: CrdManifests() is immutable; InstallCrds may run concurrently
// with anything (creates are idempotent: AlreadyExists counts as installed).

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "kube/client.h"

namespace copse::grove::api {

// (file name, YAML text) of every CRD, sorted by file name.
const std::vector<std::pair<std::string_view, std::string_view>>& CrdManifestTexts();
// The same CRDs as JSON objects (CustomResourceDefinition bodies).
std::vector<std::string> CrdManifests();

// Creates every CRD of `crd_jsons` that does not exist yet.
boost::asio::awaitable<Status> InstallCrds(std::shared_ptr<kube::Client> client,
                                           std::vector<std::string> crd_jsons);

}  // namespace copse::grove::api
