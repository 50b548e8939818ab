#include <gtest/gtest.h>

#include "grove/initc/image.h"

namespace copse::grove::initc {
namespace {

// A Deployment's pod as the API server returns it, with a sidecar next to the operator.
constexpr char kOwnPod[] = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "copse-grove-7f9c-abcde", "namespace": "copse-system"},
  "spec": {"containers": [
    {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0", "args": ["proxy", "sidecar"]},
    {"name": "grove", "image": "registry.example.com/team/copse:dev-42",
     "args": ["grove", "--in-cluster", "--webhook-port=9443"]}
  ]}
})";

TEST(InitcImage, ExplicitThenGroveEnvThenOwnPodThenDefault) {
  ImageSources sources;
  sources.version = "0.1.0";
  EXPECT_EQ(ResolveImage(sources).image, "ghcr.io/copse-dev/copse:0.1.0");
  EXPECT_EQ(ResolveImage(sources).source, "default");

  sources.own_pod_json = kOwnPod;
  EXPECT_EQ(ResolveImage(sources).image, "registry.example.com/team/copse:dev-42");
  EXPECT_EQ(ResolveImage(sources).source, "own pod");

  // Upstream Grove's variable names a repository; the tag is copse's version.
  sources.grove_env_repository = "mirror.example.com/copse";
  EXPECT_EQ(ResolveImage(sources).image, "mirror.example.com/copse:0.1.0");

  sources.explicit_image = "copse@sha256:0123";
  EXPECT_EQ(ResolveImage(sources).image, "copse@sha256:0123");
  EXPECT_EQ(ResolveImage(sources).source, "--initc-image");
}

TEST(InitcImage, WhichContainerOfThePodIsTheOperator) {
  EXPECT_EQ(OperatorImageFromPod(kOwnPod), "registry.example.com/team/copse:dev-42");
  // `command: [copse, grove, ...]` instead of args.
  EXPECT_EQ(OperatorImageFromPod(R"({"spec":{"containers":[{"image":"a","args":["x"]},
              {"image":"b","command":["/usr/local/bin/copse","grove"]}]}})"),
            "b");
  // A single container is the operator whatever its args.
  EXPECT_EQ(OperatorImageFromPod(R"({"spec":{"containers":[{"image":"only"}]}})"), "only");
  // Several containers and none runs grove: unknown, so the default applies.
  EXPECT_EQ(OperatorImageFromPod(R"({"spec":{"containers":[{"image":"a"},{"image":"b"}]}})"), "");
  EXPECT_EQ(OperatorImageFromPod("not json"), "");
  ImageSources sources;
  sources.version = "0.1.0";
  sources.own_pod_json = R"({"spec":{"containers":[{"image":"a"},{"image":"b"}]}})";
  EXPECT_EQ(ResolveImage(sources).image, "ghcr.io/copse-dev/copse:0.1.0");
}

}  // namespace
}  // namespace copse::grove::initc
