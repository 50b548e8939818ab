// Gang termination: a PodClique that falls below minAvailable after having
// been available gets MinAvailableBreached=True; once that lasts
// terminationDelay (on the operator's FakeClock) the PodCliqueSet replica
// (standalone clique or scaling group) or the scaled scaling-group replica is
// deleted and recreated from scratch.

#include <gtest/gtest.h>

#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

std::string Condition(GroveEnv& env, const std::string& pclq, const std::string& type) {
  auto obj = env.Get(api::resources::kPodCliques, "default", pclq);
  if (!obj) return "";
  auto decoded = api::PodClique::Decode(obj->dump());
  if (!decoded.ok()) return "";
  const kube::Condition* c = kube::FindCondition(decoded->status.conditions, type);
  return c == nullptr ? "" : c->status + "/" + c->reason;
}

std::string Uid(GroveEnv& env, const kube::ResourceRef& ref, const std::string& name) {
  auto obj = env.Get(ref, "default", name);
  return obj ? (*obj)["metadata"]["uid"].get<std::string>() : "";
}

std::set<std::string> PodNames(GroveEnv& env, const std::string& selector) {
  std::set<std::string> out;
  for (const auto& p : env.Pods(selector)) out.insert(p.meta.name);
  return out;
}

class GangTermination : public ::testing::Test {
 protected:
  GangTermination() : clock_(std::make_shared<FakeClock>()), env_(Options(clock_)) {}

  static EnvOptions Options(std::shared_ptr<FakeClock> clock) {
    EnvOptions options;
    options.clock = clock;
    return options;
  }

  void CreateSimple(int sga_replicas) {
    json pcs = json::parse(YamlDocs(ReadSourceFile("deploy/examples/grove/simple1.yaml")).front());
    pcs["spec"]["template"]["terminationDelay"] = "10m";
    pcs["spec"]["template"]["podCliqueScalingGroups"][0]["replicas"] = sga_replicas;
    pcs["spec"]["template"]["podCliqueScalingGroups"][0].erase("scaleConfig");
    env_.CreateJson(pcs.dump());
    size_t pods = 5 + 4 * sga_replicas;
    ASSERT_TRUE(env_.BindUntilReady("app.kubernetes.io/part-of=simple1", pods));
  }

  void DeleteOnePod(const std::string& pclq) {
    auto pods = env_.Pods("grove.io/podclique=" + pclq);
    ASSERT_FALSE(pods.empty());
    kube::DeleteOptions now;
    now.grace_period_seconds = 0;
    Status s = env_.io().Run(
        env_.client().Delete(kube::resources::kPods, "default", pods.front().meta.name, now));
    ASSERT_TRUE(s.ok()) << s.error().ToString();
  }

  // Makes the PodCliqueSet controller run again (it mirrors PodCliqueSet
  // labels onto PodGangs) and waits until it has.
  void ReconcileAfterAdvance(const std::string& marker) {
    // Read, change, update; again on a conflict (the controllers write the
    // PodCliqueSet's status meanwhile).
    std::string failed;
    ASSERT_TRUE(env_.WaitFor([&] {
      auto pcs = env_.Get(api::resources::kPodCliqueSets, "default", "simple1");
      if (!pcs.has_value()) return false;
      (*pcs)["metadata"]["labels"]["poke"] = marker;
      auto updated = env_.io().Run(
          env_.client().Update(api::resources::kPodCliqueSets, "default", "simple1", pcs->dump()));
      failed = updated.ok() ? "" : updated.error().ToString();
      return updated.ok() || updated.error().code != ErrorCode::kConflict;
    }));
    ASSERT_EQ(failed, "");
    ASSERT_TRUE(env_.WaitFor([&] {
      auto gang = env_.Get(api::resources::kPodGangs, "default", "simple1-0");
      return gang && Label(*gang, "poke") == marker;
    }));
  }

  std::shared_ptr<FakeClock> clock_;
  GroveEnv env_;
};

TEST_F(GangTermination, BreachedStandaloneCliqueRecreatesTheReplica) {
  CreateSimple(1);
  ASSERT_TRUE(env_.WaitFor([&] {
    return Condition(env_, "simple1-0-pca", "MinAvailableBreached") == "False/SufficientReadyPods";
  }));
  std::string pclq_uid = Uid(env_, api::resources::kPodCliques, "simple1-0-pca");
  std::string gang_uid = Uid(env_, api::resources::kPodGangs, "simple1-0");
  std::string pcsg_uid = Uid(env_, api::resources::kPodCliqueScalingGroups, "simple1-0-sga");
  auto old_pods = PodNames(env_, "app.kubernetes.io/part-of=simple1");

  DeleteOnePod("simple1-0-pca");  // the replacement is never bound: 2 of 3 Ready
  ASSERT_TRUE(env_.WaitFor([&] {
    return Condition(env_, "simple1-0-pca", "MinAvailableBreached") == "True/InsufficientReadyPods";
  }));

  clock_->Advance(std::chrono::minutes(5));
  ReconcileAfterAdvance("1");
  EXPECT_EQ(Uid(env_, api::resources::kPodCliques, "simple1-0-pca"), pclq_uid)
      << "terminated before terminationDelay";

  clock_->Advance(std::chrono::minutes(6));
  env_.recorder().Poke();
  ASSERT_TRUE(env_.WaitFor([&] {
    std::string uid = Uid(env_, api::resources::kPodCliques, "simple1-0-pca");
    return !uid.empty() && uid != pclq_uid &&
           env_.Pods("app.kubernetes.io/part-of=simple1").size() == 9;
  }));
  EXPECT_NE(Uid(env_, api::resources::kPodGangs, "simple1-0"), gang_uid);
  EXPECT_NE(Uid(env_, api::resources::kPodCliqueScalingGroups, "simple1-0-sga"), pcsg_uid);
  for (const auto& name : PodNames(env_, "app.kubernetes.io/part-of=simple1")) {
    EXPECT_EQ(old_pods.count(name), 0u) << name << " survived the gang termination";
  }
  // The recreated gang goes through the lifecycle again and runs.
  ASSERT_TRUE(env_.BindUntilReady("app.kubernetes.io/part-of=simple1", 9));
}

TEST_F(GangTermination, BreachedScaledReplicaIsRecreatedAlone) {
  CreateSimple(2);  // sga replica 1 is the scaled gang simple1-0-sga-0
  ASSERT_TRUE(env_.WaitFor([&] {
    return Condition(env_, "simple1-0-sga-1-pcb", "MinAvailableBreached") ==
           "False/SufficientReadyPods";
  }));
  std::string base_uid = Uid(env_, api::resources::kPodCliques, "simple1-0-sga-0-pcb");
  std::string scaled_uid = Uid(env_, api::resources::kPodCliques, "simple1-0-sga-1-pcb");
  std::string pca_uid = Uid(env_, api::resources::kPodCliques, "simple1-0-pca");

  DeleteOnePod("simple1-0-sga-1-pcb");
  ASSERT_TRUE(env_.WaitFor([&] {
    return Condition(env_, "simple1-0-sga-1-pcb", "MinAvailableBreached") ==
           "True/InsufficientReadyPods";
  }));
  clock_->Advance(std::chrono::minutes(11));
  env_.recorder().Poke();
  ASSERT_TRUE(env_.WaitFor([&] {
    std::string uid = Uid(env_, api::resources::kPodCliques, "simple1-0-sga-1-pcb");
    return !uid.empty() && uid != scaled_uid;
  }));
  EXPECT_EQ(Uid(env_, api::resources::kPodCliques, "simple1-0-sga-0-pcb"), base_uid);
  EXPECT_EQ(Uid(env_, api::resources::kPodCliques, "simple1-0-pca"), pca_uid);
  // The scaling group still has minAvailable replicas: the PodCliqueSet replica stays.
  auto pcsg = env_.Get(api::resources::kPodCliqueScalingGroups, "default", "simple1-0-sga");
  auto decoded = api::PodCliqueScalingGroup::Decode(pcsg->dump());
  const kube::Condition* c =
      kube::FindCondition(decoded->status.conditions, "MinAvailableBreached");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
}

}  // namespace
}  // namespace copse::grove::testing
