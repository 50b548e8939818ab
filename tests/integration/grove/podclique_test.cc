// The PodClique controller's index tracker on the embedded API server:
// lowest free indices on recreation, highest removed on scale-in, indices
// recovered from hostnames after an operator restart, invalid pods replaced.

#include <gtest/gtest.h>

#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

const std::string kPca = "grove.io/podclique=simple1-0-pca";

std::map<int, std::string> IndexToPod(GroveEnv& env, const std::string& selector) {
  std::map<int, std::string> out;
  for (const auto& pod : env.Pods(selector)) {
    auto index =
        api::IndexFromHostname(pod.spec.hostname, pod.meta.labels.at("grove.io/podclique"));
    out[index.value_or(-1)] = pod.meta.name;
  }
  return out;
}

std::set<int> Indices(GroveEnv& env, const std::string& selector) {
  std::set<int> out;
  for (const auto& [i, name] : IndexToPod(env, selector)) out.insert(i);
  return out;
}

void DeletePod(GroveEnv& env, const std::string& name) {
  kube::DeleteOptions options;
  options.grace_period_seconds = 0;
  Status s = env.io().Run(env.client().Delete(kube::resources::kPods, "default", name, options));
  ASSERT_TRUE(s.ok()) << s.error().ToString();
}

void ScalePca(GroveEnv& env, int replicas) {
  // kubectl scale pclq simple1-0-pca (pca has an autoScalingConfig, so the
  // PodClique owns its replica count).
  auto scaled = env.io().Run(
      env.client().UpdateScale(api::resources::kPodCliques, "default", "simple1-0-pca", replicas));
  ASSERT_TRUE(scaled.ok()) << scaled.error().ToString();
}

class IndexTracker : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.CreateFromFile("deploy/examples/grove/simple1.yaml");
    ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca) == std::set<int>{0, 1, 2}; }));
  }
  GroveEnv env_;
};

TEST_F(IndexTracker, DeletedPodsComeBackWithTheLowestFreeIndices) {
  ScalePca(env_, 5);
  ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca) == std::set<int>{0, 1, 2, 3, 4}; }));
  auto before = IndexToPod(env_, kPca);
  DeletePod(env_, before[1]);
  DeletePod(env_, before[3]);
  ASSERT_TRUE(env_.WaitFor([&] {
    auto now = IndexToPod(env_, kPca);
    return now.size() == 5 && now.count(1) && now[1] != before[1] && now.count(3) &&
           now[3] != before[3];
  }));
  auto after = IndexToPod(env_, kPca);
  EXPECT_EQ(Indices(env_, kPca), (std::set<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(after[0], before[0]);  // untouched pods keep their index
  EXPECT_EQ(after[2], before[2]);
  EXPECT_EQ(after[4], before[4]);
  for (const auto& pod : env_.List(kube::resources::kPods, "default", kPca)) {
    EXPECT_EQ(pod["spec"]["hostname"].get<std::string>(),
              "simple1-0-pca-" + Label(pod, "grove.io/podclique-pod-index"));
  }
}

TEST_F(IndexTracker, ScaleInRemovesTheHighestIndices) {
  ScalePca(env_, 5);
  ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca).size() == 5; }));
  auto before = IndexToPod(env_, kPca);
  ScalePca(env_, 3);
  ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca) == std::set<int>{0, 1, 2}; }));
  auto after = IndexToPod(env_, kPca);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(after[i], before[i]) << "index " << i;
}

TEST_F(IndexTracker, RestartRecoversIndicesFromHostnames) {
  auto before = IndexToPod(env_, kPca);
  env_.StopOperator();
  DeletePod(env_, before[1]);
  ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca) == std::set<int>{0, 2}; }));
  env_.StartOperator();  // a fresh operator: no memory of the old one
  ASSERT_TRUE(env_.WaitFor([&] { return Indices(env_, kPca) == std::set<int>{0, 1, 2}; }));
  auto after = IndexToPod(env_, kPca);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2], before[2]);
  EXPECT_NE(after[1], before[1]);
  EXPECT_EQ(env_.Pods(kPca).size(), 3u);
}

TEST_F(IndexTracker, PodsWithInvalidIndicesAreReplaced) {
  env_.StopOperator();
  auto pclq = env_.Get(api::resources::kPodCliques, "default", "simple1-0-pca");
  ASSERT_TRUE(pclq.has_value());
  auto some_pod = env_.List(kube::resources::kPods, "default", kPca).front();
  auto make_pod = [&](const std::string& name, const std::string& hostname) {
    json pod = some_pod;
    pod["metadata"] = {{"name", name},
                       {"namespace", "default"},
                       {"labels", some_pod["metadata"]["labels"]},
                       {"ownerReferences", some_pod["metadata"]["ownerReferences"]}};
    pod["spec"]["hostname"] = hostname;
    pod.erase("status");
    auto created = env_.TryCreate(kube::resources::kPods, "default", pod.dump());
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  };
  make_pod("stray-out-of-range", "simple1-0-pca-7");  // left over from a scale-in
  make_pod("stray-unparsable", "not-a-grove-hostname");
  ASSERT_EQ(env_.Pods(kPca).size(), 5u);
  env_.StartOperator();
  ASSERT_TRUE(env_.WaitFor([&] {
    return env_.Pods(kPca).size() == 3 && Indices(env_, kPca) == std::set<int>{0, 1, 2};
  }));
  for (const auto& pod : env_.Pods(kPca)) {
    EXPECT_EQ(pod.meta.name.find("stray"), std::string::npos) << pod.meta.name;
  }
}

}  // namespace
}  // namespace copse::grove::testing
