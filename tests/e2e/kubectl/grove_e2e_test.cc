// The Grove backend through the binary and kubectl: `copse local` runs the
// scheduler and the Grove operator together, and every step below is a
// kubectl command against it.
//   - Upstream Grove's samples (deploy/examples/grove/: simple1 with four
//     cliques and a scaling group; multi-node disaggregated inference with
//     prefill and decode scaling groups) create exactly the upstream-named
//     PodCliques, PodCliqueScalingGroups, PodGangs, headless Service and pods
//     (hostname, subdomain, GROVE_* env vars, grove.io labels); every pod is
//     bound and each gang's copse PodGroup reports PodGroupScheduled=True.
//   - Cordoned nodes (4 nodes of 8 GPUs, workers of 4 GPUs): a gang that does
//     not fit binds none of its pods, also after the scheduler retried it
//     with half of it fitting (its copse PodGroup says Unschedulable, with
//     the fit count), and binds whole once uncordoned; a clique with
//     minAvailable < replicas binds exactly its minAvailable subset when
//     only that fits, the rest later.
//   - `kubectl scale pcsg/<name>` (the scale subresource) adds and removes
//     scaled PodGangs with their cliques, pods and copse PodGroups; the
//     added pods are bound; the operator keeps the scaled replicas.
//   - An invalid PodCliqueSet is refused by `kubectl apply` through the
//     validating admission webhook with field-named messages, and nothing
//     is created (DISABLED until `copse local` registers the webhook; see
//     the test).

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace grove_e2e_test {

using json = nlohmann::json;

const std::string kExamples = std::string(COPSE_SOURCE_DIR) + "/deploy/examples/grove/";

const std::string kPodGangs = "podgangs.scheduler.grove.io";
const std::string kPodCliques = "podcliques.grove.io";
const std::string kScalingGroups = "podcliquescalinggroups.grove.io";
const std::string kPodCliqueSets = "podcliquesets.grove.io";
const std::string kCopsePodGroups = "podgroups.scheduling.copse.dev";

// The items of a list (empty when the query failed).
json Items(const json& list) {
  if (!list.is_object() || !list.contains("items")) return json::array();
  return list["items"];
}

std::set<std::string> Names(const json& list) {
  std::set<std::string> out;
  for (const auto& item : Items(list)) out.insert(item["metadata"].value("name", ""));
  return out;
}

std::string Label(const json& object, const std::string& key) {
  const json& labels = object["metadata"].value("labels", json::object());
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string NodeOf(const json& pod) { return pod["spec"].value("nodeName", ""); }

// The pods a PodCliqueSet owns (every pod carries app.kubernetes.io/part-of=<pcs>).
json PcsPods(LocalCluster& cluster, const std::string& pcs) {
  return Items(GetJson(cluster, {"pods", "-l", "app.kubernetes.io/part-of=" + pcs}));
}

// Pods of the list whose label `key` equals `value`.
json WithLabel(const json& pods, const std::string& key, const std::string& value) {
  json out = json::array();
  for (const auto& pod : pods) {
    if (Label(pod, key) == value) out.push_back(pod);
  }
  return out;
}

int CountBound(const json& pods) {
  int bound = 0;
  for (const auto& pod : pods) bound += NodeOf(pod).empty() ? 0 : 1;
  return bound;
}

// True when exactly `count` pods of the PodCliqueSet exist and all are bound.
bool AllBound(LocalCluster& cluster, const std::string& pcs, size_t count, json* pods) {
  *pods = PcsPods(cluster, pcs);
  return pods->size() == count && CountBound(*pods) == static_cast<int>(count);
}

bool GroupScheduled(LocalCluster& cluster, const std::string& name) {
  json group = GetJson(cluster, {kCopsePodGroups, name});
  return Condition(group, "PodGroupScheduled").value("status", "") == "True";
}

// The first container's env var `name` (an empty object when missing).
json EnvVar(const json& pod, const std::string& name) {
  for (const auto& var : pod["spec"]["containers"][0].value("env", json::array())) {
    if (var.value("name", "") == name) return var;
  }
  return json::object();
}

// A downward-API env var reading label `label`.
json LabelRefEnv(const std::string& name, const std::string& label) {
  return {{"name", name},
          {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.labels['" + label + "']"}}}}}};
}

// What one PodClique of a sample must look like.
struct CliqueExpectation {
  std::string pclq;       // fully qualified PodClique name
  int replicas = 0;       // pods, with indices 0..replicas-1
  std::string gang;       // grove.io/podgang of its pods
  std::string pcsg;       // "" for a standalone clique
  int pcsg_index = -1;    // scaling-group replica
  int pcsg_num_pods = 0;  // GROVE_PCSG_TEMPLATE_NUM_PODS
};

// Checks every pod of PodCliqueSet `pcs` (replica 0, namespace default)
// against `cliques`: generateName, hostname/subdomain, indices, labels, env
// vars, gate lifted, copse-scheduler labels, bound.
void ExpectPods(const json& pods, const std::string& pcs,
                const std::vector<CliqueExpectation>& cliques) {
  size_t expected_pods = 0;
  for (const auto& c : cliques) expected_pods += static_cast<size_t>(c.replicas);
  EXPECT_EQ(pods.size(), expected_pods);
  const std::string service = pcs + "-0";
  for (const auto& c : cliques) {
    SCOPED_TRACE(c.pclq);
    json mine = WithLabel(pods, "grove.io/podclique", c.pclq);
    ASSERT_EQ(mine.size(), static_cast<size_t>(c.replicas));
    std::set<std::string> hostnames;
    std::set<std::string> expected_hostnames;
    for (int i = 0; i < c.replicas; ++i)
      expected_hostnames.insert(c.pclq + "-" + std::to_string(i));
    for (const auto& pod : mine) {
      const std::string name = pod["metadata"].value("name", "");
      SCOPED_TRACE(name);
      const json& spec = pod["spec"];
      EXPECT_EQ(pod["metadata"].value("generateName", ""), c.pclq + "-");
      EXPECT_TRUE(name.starts_with(c.pclq + "-"));
      const std::string index = Label(pod, "grove.io/podclique-pod-index");
      EXPECT_EQ(spec.value("hostname", ""), c.pclq + "-" + index);
      hostnames.insert(spec.value("hostname", ""));
      EXPECT_EQ(spec.value("subdomain", ""), service);
      // Labels.
      EXPECT_EQ(Label(pod, "app.kubernetes.io/managed-by"), "grove-operator");
      EXPECT_EQ(Label(pod, "app.kubernetes.io/part-of"), pcs);
      EXPECT_EQ(Label(pod, "grove.io/podcliqueset-replica-index"), "0");
      EXPECT_EQ(Label(pod, "grove.io/podgang"), c.gang);
      EXPECT_EQ(Label(pod, "scheduling.copse.dev/pod-group"), c.gang);
      EXPECT_EQ(Label(pod, "grove.io/podcliquescalinggroup"), c.pcsg);
      if (!c.pcsg.empty()) {
        EXPECT_EQ(Label(pod, "grove.io/podcliquescalinggroup-replica-index"),
                  std::to_string(c.pcsg_index));
        EXPECT_EQ(Label(pod, "app.kubernetes.io/component"), "pcsg-podclique");
      } else {
        EXPECT_EQ(Label(pod, "app.kubernetes.io/component"), "pcs-podclique");
      }
      // Env vars (GROVE_PCLQ_POD_INDEX and the PCSG ones read labels, as upstream).
      EXPECT_EQ(EnvVar(pod, "GROVE_PCS_NAME").value("value", ""), pcs);
      EXPECT_EQ(EnvVar(pod, "GROVE_PCS_INDEX").value("value", ""), "0");
      EXPECT_EQ(EnvVar(pod, "GROVE_PCLQ_NAME").value("value", ""), c.pclq);
      EXPECT_EQ(EnvVar(pod, "GROVE_HEADLESS_SERVICE").value("value", ""),
                service + ".default.svc.cluster.local");
      EXPECT_EQ(EnvVar(pod, "GROVE_PCLQ_POD_INDEX"),
                LabelRefEnv("GROVE_PCLQ_POD_INDEX", "grove.io/podclique-pod-index"));
      if (!c.pcsg.empty()) {
        EXPECT_EQ(EnvVar(pod, "GROVE_PCSG_NAME"),
                  LabelRefEnv("GROVE_PCSG_NAME", "grove.io/podcliquescalinggroup"));
        EXPECT_EQ(EnvVar(pod, "GROVE_PCSG_INDEX"),
                  LabelRefEnv("GROVE_PCSG_INDEX", "grove.io/podcliquescalinggroup-replica-index"));
        EXPECT_EQ(EnvVar(pod, "GROVE_PCSG_TEMPLATE_NUM_PODS").value("value", ""),
                  std::to_string(c.pcsg_num_pods));
      } else {
        EXPECT_EQ(EnvVar(pod, "GROVE_PCSG_NAME"), json::object());
      }
      // Scheduled by copse, gate lifted, bound.
      EXPECT_EQ(spec.value("schedulerName", ""), "copse-scheduler");
      EXPECT_TRUE(spec.value("schedulingGates", json::array()).empty()) << spec.dump();
      EXPECT_FALSE(NodeOf(pod).empty());
    }
    EXPECT_EQ(hostnames, expected_hostnames);
  }
}

// The PodGang is Initialized and lists exactly `pods` (sorted references).
void ExpectGang(LocalCluster& cluster, const std::string& gang, const json& pods) {
  SCOPED_TRACE(gang);
  json pg = GetJson(cluster, {kPodGangs, gang});
  ASSERT_TRUE(pg.is_object());
  EXPECT_EQ(Condition(pg, "Initialized").value("status", ""), "True") << pg.dump(2);
  std::set<std::string> referenced;
  int min_replicas = 0;
  for (const auto& group : pg["spec"]["podgroups"]) {
    std::vector<std::string> refs;
    for (const auto& ref : group["podReferences"]) refs.push_back(ref.value("name", ""));
    EXPECT_TRUE(std::is_sorted(refs.begin(), refs.end())) << group.dump();
    referenced.insert(refs.begin(), refs.end());
    min_replicas += group.value("minReplicas", 0);
  }
  std::set<std::string> members;
  for (const auto& pod : WithLabel(pods, "grove.io/podgang", gang)) {
    members.insert(pod["metadata"].value("name", ""));
  }
  EXPECT_EQ(referenced, members);
  // Its copse PodGroup: the same name, minMember = the gang's minimum, scheduled.
  json group = GetJson(cluster, {kCopsePodGroups, gang});
  ASSERT_TRUE(group.is_object());
  EXPECT_EQ(group["spec"].value("minMember", 0), min_replicas) << group.dump(2);
  EXPECT_EQ(Condition(group, "PodGroupScheduled").value("status", ""), "True") << group.dump(2);
}

TEST(GroveE2E, SimpleSampleCreatesUpstreamObjectsAndIsPlacedWhole) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "3", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto applied = cluster.Kubectl({"apply", "-f", kExamples + "simple1.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  EXPECT_NE(applied.out.find("podcliqueset.grove.io/simple1 created"), std::string::npos)
      << applied.out;

  json pods;
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "simple1", 9, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
  ASSERT_TRUE(Eventually([&] { return GroupScheduled(cluster, "simple1-0"); }));

  EXPECT_EQ(Names(GetJson(cluster, {kPodCliques})),
            (std::set<std::string>{"simple1-0-pca", "simple1-0-pcd", "simple1-0-sga-0-pcb",
                                   "simple1-0-sga-0-pcc"}));
  EXPECT_EQ(Names(GetJson(cluster, {kScalingGroups})), std::set<std::string>{"simple1-0-sga"});
  EXPECT_EQ(Names(GetJson(cluster, {kPodGangs})), std::set<std::string>{"simple1-0"});
  EXPECT_EQ(Names(GetJson(cluster, {kCopsePodGroups})), std::set<std::string>{"simple1-0"});
  json service = GetJson(cluster, {"service", "simple1-0"});
  ASSERT_TRUE(service.is_object());
  EXPECT_EQ(service["spec"].value("clusterIP", ""), "None");
  EXPECT_EQ(service["spec"].value("publishNotReadyAddresses", false), true);

  ExpectPods(pods, "simple1",
             {{"simple1-0-pca", 3, "simple1-0", "", -1, 0},
              {"simple1-0-pcd", 2, "simple1-0", "", -1, 0},
              {"simple1-0-sga-0-pcb", 2, "simple1-0", "simple1-0-sga", 0, 4},
              {"simple1-0-sga-0-pcc", 2, "simple1-0", "simple1-0-sga", 0, 4}});
  ExpectGang(cluster, "simple1-0", pods);
}

const std::vector<CliqueExpectation> kDisaggregated = {
    {"multinode-disaggregated-0-prefill-0-pleader", 1, "multinode-disaggregated-0",
     "multinode-disaggregated-0-prefill", 0, 5},
    {"multinode-disaggregated-0-prefill-0-pworker", 4, "multinode-disaggregated-0",
     "multinode-disaggregated-0-prefill", 0, 5},
    {"multinode-disaggregated-0-prefill-1-pleader", 1, "multinode-disaggregated-0-prefill-0",
     "multinode-disaggregated-0-prefill", 1, 5},
    {"multinode-disaggregated-0-prefill-1-pworker", 4, "multinode-disaggregated-0-prefill-0",
     "multinode-disaggregated-0-prefill", 1, 5},
    {"multinode-disaggregated-0-decode-0-dleader", 1, "multinode-disaggregated-0",
     "multinode-disaggregated-0-decode", 0, 3},
    {"multinode-disaggregated-0-decode-0-dworker", 2, "multinode-disaggregated-0",
     "multinode-disaggregated-0-decode", 0, 3}};

std::set<std::string> CliqueNames(const std::vector<CliqueExpectation>& cliques) {
  std::set<std::string> out;
  for (const auto& c : cliques) out.insert(c.pclq);
  return out;
}

TEST(GroveE2E, DisaggregatedSampleCreatesBaseAndScaledGangsAndPlacesBoth) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "4", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto applied = cluster.Kubectl({"apply", "-f", kExamples + "multinode-disaggregated.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;

  json pods;
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "multinode-disaggregated", 13, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
  ASSERT_TRUE(Eventually([&] {
    return GroupScheduled(cluster, "multinode-disaggregated-0") &&
           GroupScheduled(cluster, "multinode-disaggregated-0-prefill-0");
  }));

  EXPECT_EQ(Names(GetJson(cluster, {kPodCliques})), CliqueNames(kDisaggregated));
  EXPECT_EQ(Names(GetJson(cluster, {kScalingGroups})),
            (std::set<std::string>{"multinode-disaggregated-0-prefill",
                                   "multinode-disaggregated-0-decode"}));
  const std::set<std::string> gangs = {"multinode-disaggregated-0",
                                       "multinode-disaggregated-0-prefill-0"};
  EXPECT_EQ(Names(GetJson(cluster, {kPodGangs})), gangs);
  EXPECT_EQ(Names(GetJson(cluster, {kCopsePodGroups})), gangs);

  ExpectPods(pods, "multinode-disaggregated", kDisaggregated);
  // Pods of the scaled gang name their base gang.
  for (const auto& pod :
       WithLabel(pods, "grove.io/podgang", "multinode-disaggregated-0-prefill-0")) {
    EXPECT_EQ(Label(pod, "grove.io/base-podgang"), "multinode-disaggregated-0");
  }
  ExpectGang(cluster, "multinode-disaggregated-0", pods);
  ExpectGang(cluster, "multinode-disaggregated-0-prefill-0", pods);
}

// One clique of 4 workers of 4 GPUs: two workers per 8-GPU node.
const char kTrainer[] = R"(apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: trainer
  namespace: default
spec:
  replicas: 1
  template:
    cliques:
    - name: worker
      spec:
        roleName: worker
        replicas: 4
        minAvailable: MIN_AVAILABLE
        podSpec:
          containers:
          - name: worker
            image: registry.k8s.io/pause:3.10
            resources:
              requests:
                cpu: "1"
                nvidia.com/gpu: "4"
              limits:
                nvidia.com/gpu: "4"
)";

std::string Trainer(int min_available) {
  std::string text = kTrainer;
  const std::string marker = "MIN_AVAILABLE";
  text.replace(text.find(marker), marker.size(), std::to_string(min_available));
  return text;
}

const std::vector<std::string> kGpuCluster = {"--nodes", "4", "--node-shape",
                                              "cpu=16,memory=64Gi,nvidia.com/gpu=8"};

void Cordon(LocalCluster& cluster, const std::string& verb, const std::vector<std::string>& nodes) {
  std::vector<std::string> argv = {verb};
  argv.insert(argv.end(), nodes.begin(), nodes.end());
  auto r = cluster.Kubectl(argv);
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

// The PodGroupScheduled condition of copse PodGroup `group` once its status
// is False and its message contains `needle` (an empty object on timeout).
json WaitUnschedulable(LocalCluster& cluster, const std::string& group, const std::string& needle) {
  json condition;
  bool seen = Eventually([&] {
    condition = Condition(GetJson(cluster, {kCopsePodGroups, group}), "PodGroupScheduled");
    return condition.value("status", "") == "False" &&
           condition.value("message", "").find(needle) != std::string::npos;
  });
  EXPECT_TRUE(seen) << "PodGroupScheduled of " << group << " never False with \"" << needle
                    << "\": " << condition.dump();
  return seen ? condition : json::object();
}

// The PodCliqueSet's pods, checked `observations` times: exactly `bound` of
// its `total` pods bound, and no unbound pod claims PodScheduled=True.
void ExpectBoundCountHolds(LocalCluster& cluster, const std::string& pcs, size_t total, int bound,
                           int observations = 5) {
  for (int observation = 0; observation < observations; ++observation) {
    json pods = PcsPods(cluster, pcs);
    ASSERT_EQ(pods.size(), total) << "observation " << observation;
    EXPECT_EQ(CountBound(pods), bound) << "observation " << observation;
    for (const auto& pod : pods) {
      if (!NodeOf(pod).empty()) continue;
      EXPECT_NE(Condition(pod, "PodScheduled").value("status", ""), "True")
          << pod["metadata"].value("name", "");
    }
  }
}

// At least `count` pods of the PodCliqueSet have been told (PodScheduled=
// False, Unschedulable) why they wait, with `needle` in the message.
bool ToldWhy(LocalCluster& cluster, const std::string& pcs, size_t count,
             const std::string& needle) {
  size_t told = 0;
  for (const auto& pod : PcsPods(cluster, pcs)) {
    const json scheduled = Condition(pod, "PodScheduled");
    if (scheduled.value("status", "") == "False" &&
        scheduled.value("reason", "") == "Unschedulable" &&
        scheduled.value("message", "").find(needle) != std::string::npos) {
      ++told;
    }
  }
  return told >= count;
}

TEST(GroveE2E, CordonedNodesKeepTheWholeGangPendingUntilItFits) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kGpuCluster);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  Cordon(cluster, "cordon", {"node-1", "node-2", "node-3", "node-4"});
  auto applied = cluster.Kubectl({"apply", "-f", cluster.WriteFile("trainer.yaml", Trainer(4))});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  // First attempt: no node at all.
  json condition = WaitUnschedulable(cluster, "trainer-0", "4 node(s) were unschedulable");
  EXPECT_EQ(condition.value("reason", ""), "Unschedulable");
  // The gang waits for all four members (minAvailable = replicas), so each
  // is told why.
  EXPECT_TRUE(
      Eventually([&] { return ToldWhy(cluster, "trainer", 4, "4 node(s) were unschedulable"); }));
  ExpectBoundCountHolds(cluster, "trainer", 4, 0);

  // One node back: room for two of the four workers. The uncordon requeues
  // the gang; its second attempt finds half of it fits, and binds nothing.
  Cordon(cluster, "uncordon", {"node-1"});
  condition = WaitUnschedulable(cluster, "trainer-0", "Insufficient nvidia.com/gpu");
  const std::string message = condition.value("message", "");
  EXPECT_NE(message.find("2/4 of its pods fit"), std::string::npos) << message;
  EXPECT_NE(message.find("3 node(s) were unschedulable"), std::string::npos) << message;
  EXPECT_TRUE(
      Eventually([&] { return ToldWhy(cluster, "trainer", 4, "Insufficient nvidia.com/gpu"); }));
  ExpectBoundCountHolds(cluster, "trainer", 4, 0);

  // A second node: the whole gang fits and binds, two workers per node.
  Cordon(cluster, "uncordon", {"node-2"});
  json pods;
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "trainer", 4, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
  ASSERT_TRUE(Eventually([&] { return GroupScheduled(cluster, "trainer-0"); }));
  std::map<std::string, int> per_node;
  for (const auto& pod : pods) ++per_node[NodeOf(pod)];
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"node-1", 2}, {"node-2", 2}}));
}

TEST(GroveE2E, CordonedNodesLetOnlyTheMinAvailableSubsetBind) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kGpuCluster);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  Cordon(cluster, "cordon", {"node-1", "node-2", "node-3", "node-4"});
  // Four workers, of which two (minAvailable) make the gang.
  auto applied = cluster.Kubectl({"apply", "-f", cluster.WriteFile("trainer.yaml", Trainer(2))});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  WaitUnschedulable(cluster, "trainer-0", "4 node(s) were unschedulable");
  // The attempt may start with the two required members (the others join
  // later): at least those are told why.
  EXPECT_TRUE(
      Eventually([&] { return ToldWhy(cluster, "trainer", 2, "4 node(s) were unschedulable"); }));
  json pg = GetJson(cluster, {kCopsePodGroups, "trainer-0"});
  EXPECT_EQ(pg["spec"].value("minMember", 0), 2) << pg.dump(2);
  ExpectBoundCountHolds(cluster, "trainer", 4, 0);

  // Room for two workers: the minAvailable subset binds; the other two are
  // tried against the now full node and wait.
  Cordon(cluster, "uncordon", {"node-1"});
  json pods;
  ASSERT_TRUE(Eventually([&] {
    pods = PcsPods(cluster, "trainer");
    if (pods.size() != 4 || CountBound(pods) != 2) return false;
    for (const auto& pod : pods) {
      if (NodeOf(pod).empty() &&
          Condition(pod, "PodScheduled").value("message", "").find("Insufficient nvidia.com/gpu") ==
              std::string::npos) {
        return false;
      }
    }
    return true;
  })) << pods.dump(2);
  ASSERT_TRUE(Eventually([&] { return GroupScheduled(cluster, "trainer-0"); }));
  for (const auto& pod : pods) {
    if (!NodeOf(pod).empty()) {
      EXPECT_EQ(NodeOf(pod), "node-1");
    }
  }
  ExpectBoundCountHolds(cluster, "trainer", 4, 2);

  Cordon(cluster, "uncordon", {"node-2", "node-3", "node-4"});
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "trainer", 4, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
}

// A router and a scaling group `decode` of one leader and two workers, the
// shape of the disaggregated sample's decode group; pods end at once when
// deleted (terminationGracePeriodSeconds 0), so scale-in is seen to finish.
const char kServe[] = R"(apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: serve
  namespace: default
spec:
  replicas: 1
  template:
    cliques:
    - name: router
      spec:
        roleName: router
        replicas: 1
        podSpec:
          terminationGracePeriodSeconds: 0
          containers:
          - name: router
            image: registry.k8s.io/pause:3.10
            resources: {requests: {cpu: 100m}}
    - name: dleader
      spec:
        roleName: dleader
        replicas: 1
        podSpec:
          terminationGracePeriodSeconds: 0
          containers:
          - name: leader
            image: registry.k8s.io/pause:3.10
            resources: {requests: {cpu: 100m}}
    - name: dworker
      spec:
        roleName: dworker
        replicas: 2
        podSpec:
          terminationGracePeriodSeconds: 0
          containers:
          - name: worker
            image: registry.k8s.io/pause:3.10
            resources: {requests: {cpu: 100m}}
    podCliqueScalingGroups:
    - name: decode
      cliqueNames: [dleader, dworker]
      replicas: 1
)";

// The expected cliques of `serve` with `decode` scaled to `replicas`.
std::vector<CliqueExpectation> ServeCliques(int replicas) {
  const std::string decode = "serve-0-decode";
  std::vector<CliqueExpectation> out = {{"serve-0-router", 1, "serve-0", "", -1, 0}};
  for (int j = 0; j < replicas; ++j) {
    // Replica 0 (below minAvailable 1) is in the base gang; replica j >= 1
    // is the scaled gang <pcsg>-<j-1>.
    const std::string gang = j == 0 ? "serve-0" : decode + "-" + std::to_string(j - 1);
    out.push_back({decode + "-" + std::to_string(j) + "-dleader", 1, gang, decode, j, 3});
    out.push_back({decode + "-" + std::to_string(j) + "-dworker", 2, gang, decode, j, 3});
  }
  return out;
}

std::set<std::string> ServeGangs(int replicas) {
  std::set<std::string> out = {"serve-0"};
  for (int j = 1; j < replicas; ++j) out.insert("serve-0-decode-" + std::to_string(j - 1));
  return out;
}

TEST(GroveE2E, ScaleScalingGroupOutAndInWithKubectl) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "3", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto applied = cluster.Kubectl({"apply", "-f", cluster.WriteFile("serve.yaml", kServe)});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  const std::string decode = "serve-0-decode";
  json pods;
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "serve", 4, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
  const std::set<std::string> base_pods = Names(json{{"items", pods}});

  // Out, through the scale subresource: replicas 1 and 2 become the scaled
  // gangs <pcsg>-0 and <pcsg>-1, each with its own copse PodGroup.
  auto scaled = cluster.Kubectl({"scale", "pcsg/" + decode, "--replicas=3"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.out;
  EXPECT_NE(scaled.out.find("podcliquescalinggroup.grove.io/" + decode + " scaled"),
            std::string::npos)
      << scaled.out;
  ASSERT_TRUE(Eventually([&] { return AllBound(cluster, "serve", 10, &pods); }))
      << CountBound(pods) << " of " << pods.size() << " bound";
  ASSERT_TRUE(Eventually([&] {
    return GroupScheduled(cluster, decode + "-0") && GroupScheduled(cluster, decode + "-1");
  }));
  EXPECT_EQ(Names(GetJson(cluster, {kPodCliques})), CliqueNames(ServeCliques(3)));
  EXPECT_EQ(Names(GetJson(cluster, {kPodGangs})), ServeGangs(3));
  EXPECT_EQ(Names(GetJson(cluster, {kCopsePodGroups})), ServeGangs(3));
  ExpectPods(pods, "serve", ServeCliques(3));
  for (const auto& gang : ServeGangs(3)) ExpectGang(cluster, gang, pods);
  // The scale subresource and the status agree; the operator kept the new
  // replicas (the PodCliqueSet template still says 1).
  json pcsg;
  ASSERT_TRUE(Eventually([&] {
    pcsg = GetJson(cluster, {kScalingGroups, decode});
    return pcsg.is_object() && pcsg["status"].value("replicas", 0) == 3;
  })) << pcsg.dump(2);
  EXPECT_EQ(pcsg["spec"].value("replicas", 0), 3);
  auto scale = cluster.Kubectl(
      {"get", "--raw",
       "/apis/grove.io/v1alpha1/namespaces/default/podcliquescalinggroups/" + decode + "/scale"});
  ASSERT_EQ(scale.exit_code, 0) << scale.out;
  json scale_json = json::parse(scale.out, nullptr, false);
  EXPECT_EQ(scale_json["spec"].value("replicas", 0), 3) << scale.out;
  EXPECT_EQ(scale_json["status"].value("replicas", 0), 3) << scale.out;
  EXPECT_NE(
      scale_json["status"].value("selector", "").find("grove.io/podcliquescalinggroup=" + decode),
      std::string::npos)
      << scale.out;

  // In: back to one replica. The scaled gangs go with their cliques and
  // pods, and their copse PodGroups are gone (the scheduler releases its
  // pod-group-protection finalizer once no member is left, even when the
  // deletion races with the members' own); the base gang's pods are
  // untouched.
  scaled = cluster.Kubectl({"scale", "pcsg/" + decode, "--replicas=1"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.out;
  ASSERT_TRUE(Eventually([&] {
    pods = PcsPods(cluster, "serve");
    return pods.size() == 4 && Names(GetJson(cluster, {kPodGangs})) == ServeGangs(1) &&
           Names(GetJson(cluster, {kCopsePodGroups})) == ServeGangs(1);
  })) << pods.size()
      << " pods";
  EXPECT_EQ(Names(GetJson(cluster, {kPodCliques})), CliqueNames(ServeCliques(1)));
  EXPECT_EQ(Names(json{{"items", pods}}), base_pods);
  EXPECT_EQ(CountBound(pods), 4);
  ASSERT_TRUE(Eventually([&] {
    pcsg = GetJson(cluster, {kScalingGroups, decode});
    return pcsg.is_object() && pcsg["status"].value("replicas", 0) == 1;
  })) << pcsg.dump(2);
}

// A PodCliqueSet with two faults the webhook names: a pod pinned to a node
// and a clique minAvailable above its replicas.
const char kInvalid[] = R"(apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: broken
  namespace: default
spec:
  replicas: 1
  template:
    cliques:
    - name: leader
      spec:
        roleName: leader
        replicas: 1
        podSpec:
          nodeName: node-1
          containers:
          - name: leader
            image: registry.k8s.io/pause:3.10
    - name: worker
      spec:
        roleName: worker
        replicas: 2
        minAvailable: 3
        podSpec:
          containers:
          - name: worker
            image: registry.k8s.io/pause:3.10
)";

// DISABLED until `copse local` registers Grove's webhook: today
// cmd/copse/local.cc neither calls apiserver::
// InstallAdmissionRegistration nor starts grove::webhook::Server, so the
// PodCliqueSet is stored (the operator then creates nothing for it, as the
// integration tests show, but kubectl reports success). Enable it with that
// wiring (grove/README.md "Using it" shows the calls).
TEST(GroveE2E, InvalidPodCliqueSetIsRejectedByTheWebhookAndCreatesNothing) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "2", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  // The webhook is registered the way a real cluster registers it.
  json hook = GetJson(cluster, {"validatingwebhookconfigurations", "copse-grove"});
  ASSERT_TRUE(hook.is_object()) << "no ValidatingWebhookConfiguration copse-grove";
  EXPECT_EQ(hook["webhooks"][0].value("name", ""), "validate.podcliqueset.grove.io");

  auto applied = cluster.Kubectl({"apply", "-f", cluster.WriteFile("broken.yaml", kInvalid)});
  EXPECT_NE(applied.exit_code, 0) << applied.out;
  // kubectl prints the denial's field causes, one per line.
  EXPECT_NE(applied.out.find("PodCliqueSet"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("is invalid"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("* spec.template.cliques[0].spec.podSpec.nodeName: Invalid value: "
                             "\"node-1\": must not be set"),
            std::string::npos)
      << applied.out;
  EXPECT_NE(applied.out.find("* spec.template.cliques[1].spec.minAvailable: Invalid value: 3: "
                             "minAvailable must not be greater than replicas"),
            std::string::npos)
      << applied.out;

  // Nothing was stored, so nothing is created from it; a valid PodCliqueSet
  // applied afterwards is admitted and reconciled.
  auto valid = cluster.Kubectl({"apply", "-f", kExamples + "simple1.yaml"});
  ASSERT_EQ(valid.exit_code, 0) << valid.out;
  ASSERT_TRUE(
      Eventually([&] { return Names(GetJson(cluster, {kPodGangs})).contains("simple1-0"); }));
  auto get = cluster.Kubectl({"get", kPodCliqueSets, "broken"});
  EXPECT_NE(get.exit_code, 0) << get.out;
  EXPECT_NE(get.out.find("NotFound"), std::string::npos) << get.out;
  EXPECT_EQ(Names(GetJson(cluster, {kPodCliqueSets})), std::set<std::string>{"simple1"});
  for (const auto& name : Names(GetJson(cluster, {kPodCliques}))) {
    EXPECT_TRUE(name.starts_with("simple1-")) << name;
  }
  EXPECT_EQ(Names(GetJson(cluster, {kPodGangs})), std::set<std::string>{"simple1-0"});
  EXPECT_TRUE(Items(GetJson(cluster, {"pods", "-l", "app.kubernetes.io/part-of=broken"})).empty());
  EXPECT_EQ(Names(GetJson(cluster, {"services"})).count("broken-0"), 0u);
}

}  // namespace grove_e2e_test
}  // namespace copse::e2e
