#pragma once
// The startup-order init container (`copse initc`, upstream's grove-initc):
// blocks a pod's start until every PodClique it depends on has at least
// minAvailable Ready pods.
//
//   copse initc --podcliques=<pclq-fqn>:<minAvailable>[,<pclq-fqn>:<minAvailable>...]
//
// The flag may also be given several times (upstream's form). The pod's
// namespace comes from GROVE_POD_NAMESPACE (downward API) or the pod-info
// volume (/var/run/grove/pod-info/namespace).
//
// Thread-safety: pure functions; Wait runs on the client's executor.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/client.h"
#include "kube/pod.h"

namespace copse::grove::initc {

struct Dependency {
  std::string pclq;
  int32_t min_available = 0;
  bool operator==(const Dependency&) const = default;
};

// Parses one or more `--podcliques` values ("a:1,b:2"; a leading
// "--podcliques=" is accepted, so init-container args parse as they are). Errors are kInvalid
// and name the flag and the bad entry.
Result<std::vector<Dependency>> ParsePodCliques(const std::vector<std::string>& values);

// Ready pods per PodClique (label grove.io/podclique) among `pods`, skipping
// terminating ones.
std::map<std::string, int32_t> ReadyPerClique(const std::vector<kube::Pod>& pods);
// Every dependency has at least min_available Ready pods.
bool Satisfied(const std::vector<Dependency>& deps, const std::map<std::string, int32_t>& ready);

// Lists and watches the dependencies' pods in `ns` until Satisfied, or fails
// with kTimeout after `timeout`.
boost::asio::awaitable<Status> Wait(std::shared_ptr<kube::Client> client, std::string ns,
                                    std::vector<Dependency> deps,
                                    std::chrono::milliseconds timeout);

}  // namespace copse::grove::initc
