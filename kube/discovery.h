#pragma once
// Discovery: which group-versions and resources an API server serves, read
// from its legacy discovery documents (/api, /apis, and each group-version's
// APIResourceList), as client-go's discovery client does. Real clusters
// differ (v1.20 serves PodDisruptionBudgets only as policy/v1beta1; KEP-4671's
// scheduling.k8s.io/v1alpha2 exists only where enabled): components ask here
// instead of assuming the newest API.
//
//   auto discovery = co_await Discovery::Read(client, {"policy", "scheduling.k8s.io"});
//   auto pdbs = discovery->FirstServed({kPdbV1, kPdbV1beta1});   // nullopt: none
//
// Errors: Read fails only when /api or /apis cannot be read. A group-version
// whose resource list fails (an aggregated API that is down answers 503) is
// recorded in failures() and counts as serving nothing.
//
// Thread-safety: a Discovery is an immutable value once read.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

class Client;

struct DiscoveredResource {
  std::string group;
  std::string version;
  std::string resource;  // plural; subresources as "pods/status"
  std::string kind;
  // The kind's group and version when they differ from the list's
  // (pods/eviction: policy/v1beta1 up to v1.21, policy/v1 from v1.22).
  std::string kind_group;
  std::string kind_version;
  bool namespaced = true;
  std::vector<std::string> verbs;
};

class Discovery {
 public:
  // Reads /api and /apis, then the resource lists of the group-versions of
  // `groups` ("" is the core group); every group when `groups` is empty.
  static boost::asio::awaitable<Result<Discovery>> Read(std::shared_ptr<Client> client,
                                                        std::vector<std::string> groups = {});
  // Read for plain threads, waiting at most `timeout`. Must not be called on
  // a thread of the client's executor (it would wait for itself).
  static Result<Discovery> ReadBlocking(
      std::shared_ptr<Client> client, std::vector<std::string> groups = {},
      std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Builds a Discovery from the documents' JSON text (what Read does after
  // fetching them): APIVersions (/api), APIGroupList (/apis), and
  // APIResourceLists. Errors are kInvalid naming the document.
  static Result<Discovery> FromDocuments(std::string_view api_versions, std::string_view api_groups,
                                         const std::vector<std::string>& resource_lists);

  // "v1", "apps/v1", ... in the server's order (preferred version first per group).
  const std::vector<std::string>& group_versions() const { return group_versions_; }
  bool ServesGroupVersion(std::string_view group, std::string_view version) const;
  // The resource (ref.group, ref.version, ref.resource) is listed by its group-version.
  bool Serves(const ResourceRef& ref) const;
  const DiscoveredResource* Find(std::string_view group, std::string_view version,
                                 std::string_view resource) const;
  // The apiVersion of the Eviction body pods/eviction takes: what the core
  // resource list names ("policy/v1beta1" on v1.20), else "policy/v1". Needs
  // the core group ("") read.
  std::string EvictionApiVersion() const;
  // The first candidate the server serves, in the candidates' order.
  std::optional<ResourceRef> FirstServed(const std::vector<ResourceRef>& candidates) const;
  // Group-versions whose resource list could not be read, with the error.
  const std::map<std::string, std::string>& failures() const { return failures_; }

 private:
  std::vector<std::string> group_versions_;
  std::vector<DiscoveredResource> resources_;
  std::map<std::string, std::string> failures_;
};

}  // namespace copse::kube
