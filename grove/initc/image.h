#pragma once
// Which image the startup-order init container (`copse initc`) runs. The
// operator injects it into pods, so it must be an image holding the copse
// binary; by default it is the very image the operator runs from. In order:
//   1. an explicit image (`copse grove --initc-image`);
//   2. $GROVE_INIT_CONTAINER_IMAGE, a repository without a tag as upstream
//      Grove's operator reads it, tagged with copse's version;
//   3. the image of the operator's own container, read from its Pod (the
//      container whose args start with "grove", else the pod's only container);
//   4. ghcr.io/copse-dev/copse:<version>, the published build of this version.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace copse::grove::initc {

inline constexpr std::string_view kDefaultImageRepository = "ghcr.io/copse-dev/copse";

struct ImageSources {
  std::string explicit_image;        // 1; "" when not given
  std::string grove_env_repository;  // 2; "" when unset
  std::string own_pod_json;          // 3; "" when the operator's Pod was not read
  std::string version;               // copse's version ("0.1.0")
};

struct ResolvedImage {
  std::string image;
  std::string source;  // "--initc-image", "GROVE_INIT_CONTAINER_IMAGE", "own pod", "default"
};

ResolvedImage ResolveImage(const ImageSources& sources);

// The operator container's image in its Pod's JSON (step 3); "" when the pod
// does not say which container that is.
std::string OperatorImageFromPod(std::string_view pod_json);

}  // namespace copse::grove::initc
