// Pod codec: realistic objects round-trip, typed fields, typed edits, effective
// requests and errors that name the field.

#include "kube/pod.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kube/informer.h"
#include "kube/node.h"

namespace copse::kube {
namespace {

using nlohmann::json;

// The shape `kubectl get pod -o json` prints for a scheduled pod: managedFields,
// env, volumes, probes and container statuses are fields copse does not model.
constexpr const char* kRunningPod = R"json({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"},
    "creationTimestamp": "2024-05-01T10:00:05Z",
    "generateName": "trainer-7d9f8-",
    "labels": {"app": "trainer", "pod-template-hash": "7d9f8", "scheduling.copse.dev/pod-group": "pg-1"},
    "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
                       "manager": "kube-controller-manager", "operation": "Update",
                       "time": "2024-05-01T10:00:05Z"}],
    "name": "trainer-7d9f8-abcde",
    "namespace": "ml",
    "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                         "kind": "ReplicaSet", "name": "trainer-7d9f8",
                         "uid": "0b7c5e4e-1111-4c1a-9d6e-2a2f7c1d0001"}],
    "resourceVersion": "123456",
    "uid": "5f0e8a36-2222-4b8e-8f3e-6b1d2c3e0002"
  },
  "spec": {
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-1", "zone-2"]},
            {"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["3"]}]}]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 50, "preference": {"matchExpressions": [
            {"key": "copse.dev/rack", "operator": "Exists"}]}}]
      },
      "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "trainer"}},
            "namespaceSelector": {},
            "topologyKey": "copse.dev/block",
            "matchLabelKeys": ["pod-template-hash"]}}]
      },
      "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["etcd"]}]},
           "namespaces": ["kube-system"],
           "topologyKey": "kubernetes.io/hostname",
           "mismatchLabelKeys": ["tenant"]}]
      }
    },
    "containers": [
      {"name": "trainer", "image": "ghcr.io/example/trainer:1.2",
       "env": [{"name": "GROVE_PCS_NAME", "value": "trainer"}],
       "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                 {"containerPort": 29500, "hostPort": 29500, "hostIP": "10.0.0.5", "protocol": "UDP"}],
       "resources": {"limits": {"nvidia.com/gpu": "8", "memory": "64Gi"},
                     "requests": {"cpu": "1000m", "memory": "32Gi", "nvidia.com/gpu": "8"}},
       "volumeMounts": [{"mountPath": "/data", "name": "data"}],
       "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5}},
      {"name": "metrics", "image": "prom/exporter:0.1",
       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    ],
    "initContainers": [
      {"name": "fetch", "image": "busybox", "command": ["sh", "-c", "true"],
       "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
      {"name": "proxy", "image": "envoy:1.30", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}}
    ],
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": true,
    "hostname": "trainer-0",
    "nodeName": "node-17",
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "overhead": {"cpu": "50m", "memory": "10Mi"},
    "preemptionPolicy": "PreemptLowerPriority",
    "priority": 1000,
    "priorityClassName": "training",
    "restartPolicy": "Always",
    "schedulerName": "copse-scheduler",
    "schedulingGates": [{"name": "grove.io/podgang-pending-creation"}],
    "schedulingGroup": {"podGroupName": "pg-1"},
    "securityContext": {},
    "serviceAccountName": "default",
    "subdomain": "trainer-headless",
    "terminationGracePeriodSeconds": 30,
    "tolerations": [
      {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
      {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}
    ],
    "topologySpreadConstraints": [
      {"labelSelector": {"matchLabels": {"app": "trainer"}}, "maxSkew": 1, "minDomains": 2,
       "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
       "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
       "matchLabelKeys": ["pod-template-hash"]}
    ],
    "volumes": [{"name": "data", "emptyDir": {}}]
  },
  "status": {
    "conditions": [
      {"lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:06Z", "status": "True", "type": "PodScheduled"},
      {"lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:30Z", "status": "True", "type": "Ready"}
    ],
    "containerStatuses": [{"name": "trainer", "ready": true, "restartCount": 0,
                           "state": {"running": {"startedAt": "2024-05-01T10:00:20Z"}}}],
    "hostIP": "10.0.0.5",
    "phase": "Running",
    "podIP": "10.244.3.7",
    "podIPs": [{"ip": "10.244.3.7"}],
    "qosClass": "Burstable",
    "startTime": "2024-05-01T10:00:06Z"
  }
})json";

// A pending pod as kube-scheduler's docs show it after a failed attempt.
constexpr const char* kPendingPod =
    R"json({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"default","uid":"u-1","resourceVersion":"7"},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25","resources":{"requests":{"cpu":"500m","memory":"128Mi"}}}],"schedulerName":"copse-scheduler"},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available: 3 Insufficient cpu.","lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:00Z"}],"qosClass":"Burstable"}})json";

Pod MustDecode(std::string_view text) {
  Result<Pod> pod = Pod::Decode(text);
  EXPECT_TRUE(pod.ok()) << (pod.ok() ? "" : pod.error().message);
  if (!pod.ok()) return Pod();
  return std::move(pod).value();
}

std::string Minified(std::string_view text) { return nlohmann::ordered_json::parse(text).dump(); }

std::string DecodeError(std::string_view text) {
  Result<Pod> pod = Pod::Decode(text);
  EXPECT_FALSE(pod.ok());
  if (pod.ok()) return "";
  EXPECT_EQ(pod.error().code, ErrorCode::kInvalid);
  return pod.error().message;
}

TEST(PodCodec, DecodesMetadata) {
  Pod pod = MustDecode(kRunningPod);
  EXPECT_EQ(pod.api_version, "v1");
  EXPECT_EQ(pod.kind, "Pod");
  EXPECT_EQ(pod.meta.name, "trainer-7d9f8-abcde");
  EXPECT_EQ(pod.meta.namespace_, "ml");
  EXPECT_EQ(pod.meta.Key(), "ml/trainer-7d9f8-abcde");
  EXPECT_EQ(pod.meta.generate_name, "trainer-7d9f8-");
  EXPECT_EQ(pod.meta.resource_version, "123456");
  EXPECT_EQ(pod.meta.labels.at("scheduling.copse.dev/pod-group"), "pg-1");
  EXPECT_EQ(pod.meta.annotations.size(), 1u);
  ASSERT_NE(pod.meta.ControllerRef(), nullptr);
  EXPECT_EQ(pod.meta.ControllerRef()->kind, "ReplicaSet");
  EXPECT_TRUE(pod.meta.ControllerRef()->block_owner_deletion);
  EXPECT_EQ(pod.raw, kRunningPod);
}

TEST(PodCodec, DecodesContainersAndPorts) {
  Pod pod = MustDecode(kRunningPod);
  ASSERT_EQ(pod.spec.containers.size(), 2u);
  const Container& trainer = pod.spec.containers[0];
  EXPECT_EQ(trainer.name, "trainer");
  EXPECT_EQ(trainer.image, "ghcr.io/example/trainer:1.2");
  EXPECT_EQ(trainer.resources.requests.at("cpu").MilliValue(), 1000);
  EXPECT_EQ(trainer.resources.requests.at("memory").Value(), 32LL << 30);
  EXPECT_EQ(trainer.resources.requests.at("nvidia.com/gpu").Value(), 8);
  EXPECT_EQ(trainer.resources.limits.at("memory").Value(), 64LL << 30);
  EXPECT_EQ(trainer.resources.limits.count("cpu"), 0u);
  ASSERT_EQ(trainer.ports.size(), 2u);
  EXPECT_EQ(trainer.ports[0].name, "http");
  EXPECT_EQ(trainer.ports[0].container_port, 8080);
  EXPECT_EQ(trainer.ports[0].host_port, 0);
  EXPECT_EQ(trainer.ports[1].host_port, 29500);
  EXPECT_EQ(trainer.ports[1].host_ip, "10.0.0.5");
  EXPECT_EQ(trainer.ports[1].EffectiveProtocol(), "UDP");
  EXPECT_FALSE(trainer.restart_policy.has_value());

  ASSERT_EQ(pod.spec.init_containers.size(), 2u);
  EXPECT_FALSE(pod.spec.init_containers[0].IsSidecar());
  EXPECT_TRUE(pod.spec.init_containers[1].IsSidecar());
  EXPECT_EQ(pod.spec.init_containers[1].resources.requests.at("cpu").MilliValue(), 250);
}

TEST(PodCodec, DecodesSchedulingFields) {
  Pod pod = MustDecode(kRunningPod);
  const PodSpec& spec = pod.spec;
  EXPECT_EQ(spec.scheduler_name, "copse-scheduler");
  EXPECT_EQ(spec.priority, 1000);
  EXPECT_EQ(spec.priority_class_name, "training");
  EXPECT_EQ(spec.preemption_policy, "PreemptLowerPriority");
  EXPECT_EQ(spec.node_name, "node-17");
  EXPECT_EQ(spec.hostname, "trainer-0");
  EXPECT_EQ(spec.subdomain, "trainer-headless");
  EXPECT_EQ(spec.pod_group_name, "pg-1");
  EXPECT_EQ(spec.scheduling_gates, std::vector<std::string>{"grove.io/podgang-pending-creation"});
  EXPECT_EQ(spec.node_selector, (Labels{{"kubernetes.io/os", "linux"}}));
  EXPECT_EQ(spec.overhead.at("cpu").MilliValue(), 50);

  ASSERT_EQ(spec.tolerations.size(), 2u);
  EXPECT_EQ(spec.tolerations[0].key, "node.kubernetes.io/not-ready");
  EXPECT_EQ(spec.tolerations[0].op, "Exists");
  EXPECT_EQ(spec.tolerations[0].effect, "NoExecute");
  EXPECT_EQ(spec.tolerations[0].toleration_seconds, 300);
  EXPECT_EQ(spec.tolerations[1].value, "present");
  EXPECT_FALSE(spec.tolerations[1].toleration_seconds.has_value());

  ASSERT_EQ(spec.topology_spread_constraints.size(), 1u);
  const TopologySpreadConstraint& tsc = spec.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 1);
  EXPECT_EQ(tsc.min_domains, 2);
  EXPECT_EQ(tsc.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(tsc.when_unsatisfiable, "DoNotSchedule");
  EXPECT_EQ(tsc.node_affinity_policy, "Honor");
  EXPECT_EQ(tsc.node_taints_policy, "Ignore");
  EXPECT_EQ(tsc.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  ASSERT_TRUE(tsc.label_selector.has_value());
  EXPECT_TRUE(tsc.label_selector->Matches({{"app", "trainer"}}));
  EXPECT_FALSE(tsc.label_selector->Matches({{"app", "web"}}));
}

TEST(PodCodec, DecodesAffinity) {
  Pod pod = MustDecode(kRunningPod);
  ASSERT_TRUE(pod.spec.affinity.has_value());
  const Affinity& affinity = *pod.spec.affinity;

  ASSERT_TRUE(affinity.node_affinity.has_value());
  ASSERT_TRUE(affinity.node_affinity->required.has_value());
  const NodeSelector& required = *affinity.node_affinity->required;
  ASSERT_EQ(required.terms.size(), 1u);
  ASSERT_EQ(required.terms[0].match_expressions.size(), 2u);
  EXPECT_EQ(required.terms[0].match_expressions[1].op, SelectorOp::kGt);
  EXPECT_TRUE(required.Matches(
      {{"topology.kubernetes.io/zone", "zone-2"}, {"nvidia.com/gpu.count", "8"}}, "n1"));
  EXPECT_FALSE(required.Matches(
      {{"topology.kubernetes.io/zone", "zone-2"}, {"nvidia.com/gpu.count", "2"}}, "n1"));
  ASSERT_EQ(affinity.node_affinity->preferred.size(), 1u);
  EXPECT_EQ(affinity.node_affinity->preferred[0].weight, 50);
  EXPECT_EQ(affinity.node_affinity->preferred[0].preference.match_expressions[0].op,
            SelectorOp::kExists);

  ASSERT_TRUE(affinity.pod_affinity.has_value());
  EXPECT_TRUE(affinity.pod_affinity->required.empty());
  ASSERT_EQ(affinity.pod_affinity->preferred.size(), 1u);
  const WeightedPodAffinityTerm& preferred = affinity.pod_affinity->preferred[0];
  EXPECT_EQ(preferred.weight, 100);
  EXPECT_EQ(preferred.term.topology_key, "copse.dev/block");
  ASSERT_TRUE(preferred.term.namespace_selector.has_value());
  EXPECT_TRUE(preferred.term.namespace_selector->Empty());  // {} = all namespaces
  EXPECT_EQ(preferred.term.match_label_keys, std::vector<std::string>{"pod-template-hash"});

  ASSERT_TRUE(affinity.pod_anti_affinity.has_value());
  ASSERT_EQ(affinity.pod_anti_affinity->required.size(), 1u);
  const PodAffinityTerm& anti = affinity.pod_anti_affinity->required[0];
  EXPECT_EQ(anti.topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(anti.namespaces, std::vector<std::string>{"kube-system"});
  EXPECT_FALSE(anti.namespace_selector.has_value());
  EXPECT_EQ(anti.mismatch_label_keys, std::vector<std::string>{"tenant"});
  ASSERT_TRUE(anti.label_selector.has_value());
  EXPECT_TRUE(anti.label_selector->Matches({{"app", "etcd"}}));
  EXPECT_FALSE(anti.label_selector->Matches({{"app", "trainer"}}));
}

TEST(PodCodec, DecodesStatus) {
  Pod pod = MustDecode(kRunningPod);
  EXPECT_EQ(pod.status.phase, kPodRunning);
  EXPECT_EQ(pod.status.pod_ip, "10.244.3.7");
  EXPECT_EQ(pod.status.host_ip, "10.0.0.5");
  EXPECT_EQ(pod.status.start_time, "2024-05-01T10:00:06Z");
  ASSERT_EQ(pod.status.conditions.size(), 2u);
  const Condition* ready = FindCondition(pod.status.conditions, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, "True");
  EXPECT_EQ(ready->last_transition_time, "2024-05-01T10:00:30Z");
  EXPECT_TRUE(ready->last_probe_time.empty());

  Pod pending = MustDecode(kPendingPod);
  const Condition* scheduled = FindCondition(pending.status.conditions, "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->reason, "Unschedulable");
  EXPECT_EQ(scheduled->message, "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_FALSE(pending.spec.affinity.has_value());
  EXPECT_FALSE(pending.spec.priority.has_value());
  EXPECT_FALSE(pending.spec.pod_group_name.has_value());
}

TEST(PodCodec, ResourceClaimsRoundTrip) {
  auto pod = Pod::Decode(R"({"metadata":{"name":"p"},"spec":{"containers":[],
    "resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"two-h100"},
                      {"name":"nic","resourceClaimName":"shared-nic"}]},
    "status":{"resourceClaimStatuses":[{"name":"gpus","resourceClaimName":"p-gpus-x7k2"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  ASSERT_EQ(pod->spec.resource_claims.size(), 2u);
  EXPECT_EQ(pod->spec.resource_claims[0].name, "gpus");
  EXPECT_EQ(pod->spec.resource_claims[0].resource_claim_template_name, "two-h100");
  EXPECT_FALSE(pod->spec.resource_claims[0].resource_claim_name.has_value());
  EXPECT_EQ(pod->spec.resource_claims[1].resource_claim_name, "shared-nic");
  ASSERT_EQ(pod->status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod->status.resource_claim_statuses[0].resource_claim_name, "p-gpus-x7k2");
  // A typed edit is written back; the decoded copy of the text equals it.
  pod->status.resource_claim_statuses.push_back({"nic", std::nullopt});
  auto again = Pod::Decode(pod->Encode());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->spec.resource_claims, pod->spec.resource_claims);
  EXPECT_EQ(again->status.resource_claim_statuses, pod->status.resource_claim_statuses);
}

TEST(PodCodec, UneditedEncodeIsRawByteForByte) {
  for (const char* text : {kRunningPod, kPendingPod}) {
    std::string compact = Minified(text);
    EXPECT_EQ(MustDecode(compact).Encode(), compact);
    EXPECT_EQ(MustDecode(text).Encode(), text);  // whitespace included
  }
  // A typed value set back to what it was is no edit either.
  Pod pod = MustDecode(kRunningPod);
  pod.spec.containers[0].resources.requests["cpu"] = Quantity::MustParse("1");
  pod.meta.labels["app"] = "trainer";
  EXPECT_EQ(pod.Encode(), kRunningPod);
}

TEST(PodCodec, AnEditChangesThatFieldAndNothingElse) {
  for (const char* text : {kRunningPod, kPendingPod}) {
    Pod pod = MustDecode(text);
    pod.meta.resource_version = "999";
    pod.status.phase = "Succeeded";
    json expected = json::parse(text);
    expected["metadata"]["resourceVersion"] = "999";
    expected["status"]["phase"] = "Succeeded";
    EXPECT_EQ(json::parse(pod.Encode()), expected);
  }
}

TEST(PodCodec, ListItemsGainApiVersionAndKind) {
  // Items of a PodList carry neither; an encoded object needs both.
  Pod item = MustDecode(
      R"({"metadata":{"name":"a","namespace":"x"},"spec":{"containers":[{"name":"c"}]}})");
  json encoded = json::parse(item.Encode());
  EXPECT_EQ(encoded["apiVersion"], "v1");
  EXPECT_EQ(encoded["kind"], "Pod");
  EXPECT_EQ(encoded["spec"]["containers"][0]["name"], "c");
}

TEST(PodCodec, TypedEditsShowUpAndUnknownFieldsSurvive) {
  Pod pod = MustDecode(kRunningPod);
  pod.meta.labels["copse.dev/extra"] = "yes";
  pod.meta.resource_version = "123457";
  pod.spec.containers[0].resources.requests["cpu"] = Quantity::MustParse("1500m");
  pod.spec.tolerations.push_back(
      Toleration{"dedicated", "Equal", "ml", "NoSchedule", std::nullopt});
  pod.spec.node_selector.clear();
  pod.spec.scheduling_gates.clear();
  pod.spec.priority = 0;
  pod.status.nominated_node_name = "node-3";
  pod.status.conditions.push_back(
      Condition{"copse.dev/GangReady", "True", "Placed", "", "t", "", "", {}});

  json encoded = json::parse(pod.Encode());
  // Typed edits.
  EXPECT_EQ(encoded["metadata"]["labels"]["copse.dev/extra"], "yes");
  EXPECT_EQ(encoded["metadata"]["resourceVersion"], "123457");
  EXPECT_EQ(encoded["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1500m");
  EXPECT_EQ(encoded["spec"]["tolerations"].size(), 3u);
  EXPECT_EQ(encoded["spec"]["tolerations"][2]["key"], "dedicated");
  EXPECT_FALSE(encoded["spec"].contains("nodeSelector"));
  EXPECT_FALSE(encoded["spec"].contains("schedulingGates"));
  EXPECT_EQ(encoded["spec"]["priority"], 0);
  EXPECT_EQ(encoded["status"]["nominatedNodeName"], "node-3");
  EXPECT_EQ(encoded["status"]["conditions"][2]["type"], "copse.dev/GangReady");
  // Unchanged quantities keep their spelling; unknown fields survive.
  EXPECT_EQ(encoded["spec"]["containers"][0]["resources"]["requests"]["memory"], "32Gi");
  EXPECT_EQ(encoded["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(encoded["spec"]["containers"][0]["env"][0]["name"], "GROVE_PCS_NAME");
  EXPECT_EQ(encoded["spec"]["containers"][0]["readinessProbe"]["periodSeconds"], 5);
  EXPECT_EQ(encoded["spec"]["volumes"][0]["name"], "data");
  EXPECT_EQ(encoded["metadata"]["managedFields"][0]["manager"], "kube-controller-manager");
  EXPECT_EQ(encoded["status"]["containerStatuses"][0]["restartCount"], 0);
  EXPECT_EQ(encoded["status"]["qosClass"], "Burstable");
  EXPECT_TRUE(encoded["status"]["conditions"][0]["lastProbeTime"].is_null());

  // Decoding the result gives the edited typed values back.
  Pod again = MustDecode(encoded.dump());
  EXPECT_EQ(again.spec.containers[0].resources.requests.at("cpu").MilliValue(), 1500);
  EXPECT_EQ(again.spec.tolerations.size(), 3u);
  EXPECT_EQ(again.spec.priority, 0);
  EXPECT_TRUE(again.spec.node_selector.empty());
  EXPECT_EQ(again.status.nominated_node_name, "node-3");
  EXPECT_EQ(again.meta.labels.at("copse.dev/extra"), "yes");
  EXPECT_EQ(again.spec, pod.spec);
  EXPECT_EQ(again.status, pod.status);
  EXPECT_EQ(again.meta.labels, pod.meta.labels);
}

TEST(PodCodec, RemovingAContainerKeepsTheOthersUnknownFields) {
  Pod pod = MustDecode(kRunningPod);
  // Drop "trainer"; "metrics" moves to index 0 and must keep its own JSON.
  pod.spec.containers.erase(pod.spec.containers.begin());
  pod.spec.containers[0].image = "prom/exporter:0.2";
  json encoded = json::parse(pod.Encode());
  ASSERT_EQ(encoded["spec"]["containers"].size(), 1u);
  json metrics = encoded["spec"]["containers"][0];
  EXPECT_EQ(metrics["name"], "metrics");
  EXPECT_EQ(metrics["image"], "prom/exporter:0.2");
  EXPECT_FALSE(metrics.contains("env"));  // trainer's env must not leak into it
  EXPECT_FALSE(metrics.contains("ports"));
  EXPECT_EQ(metrics["resources"]["requests"]["cpu"], "100m");
}

TEST(PodCodec, EditsInsideAffinityAndSelectors) {
  Pod pod = MustDecode(kRunningPod);
  PodAffinityTerm& anti = pod.spec.affinity->pod_anti_affinity->required[0];
  anti.topology_key = "topology.kubernetes.io/zone";
  anti.label_selector = LabelSelector::Parse("app in (etcd,zk)").value();
  pod.spec.affinity->node_affinity.reset();
  pod.spec.pod_group_name.reset();

  json encoded = json::parse(pod.Encode());
  json affinity = encoded["spec"]["affinity"];
  EXPECT_FALSE(affinity.contains("nodeAffinity"));
  json term = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(term["topologyKey"], "topology.kubernetes.io/zone");
  EXPECT_EQ(term["namespaces"][0], "kube-system");  // untouched member of the edited term
  EXPECT_EQ(term["labelSelector"]["matchExpressions"][0]["operator"], "In");
  EXPECT_EQ(term["labelSelector"]["matchExpressions"][0]["values"], json({"etcd", "zk"}));
  // Untouched sibling: the selector JSON is kept as written.
  EXPECT_EQ(affinity["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
                    ["podAffinityTerm"]["labelSelector"],
            json::parse(R"({"matchLabels": {"app": "trainer"}})"));
  EXPECT_FALSE(encoded["spec"].contains("schedulingGroup"));

  Pod again = MustDecode(encoded.dump());
  EXPECT_EQ(again.spec.affinity, pod.spec.affinity);
  EXPECT_FALSE(again.spec.pod_group_name.has_value());
  EXPECT_TRUE(
      again.spec.affinity->pod_anti_affinity->required[0].label_selector->Matches({{"app", "zk"}}));
}

TEST(PodCodec, PodBuiltInCodeEncodesOnlyWhatIsSet) {
  Pod pod;
  pod.meta.name = "solo";
  pod.meta.namespace_ = "default";
  pod.meta.labels["app"] = "solo";
  Container container;
  container.name = "main";
  container.image = "busybox";
  container.resources.requests["cpu"] = Quantity::MustParse("250m");
  container.resources.requests["nvidia.com/gpu"] = Quantity::FromInt(1);
  container.ports.push_back(ContainerPort{"", 80, 8080, "", ""});
  pod.spec.containers.push_back(container);
  pod.spec.scheduler_name = "copse-scheduler";
  pod.spec.pod_group_name = "pg-2";
  pod.spec.affinity.emplace();
  pod.spec.affinity->node_affinity.emplace();
  pod.spec.affinity->node_affinity->required =
      NodeSelector{{NodeSelectorTerm{{Requirement{"zone", SelectorOp::kIn, {"a"}}}, {}}}};

  std::string text = pod.Encode();
  json encoded = json::parse(text);
  EXPECT_EQ(encoded["apiVersion"], "v1");
  EXPECT_EQ(encoded["kind"], "Pod");
  EXPECT_EQ(encoded["metadata"],
            json::parse(R"({"name":"solo","namespace":"default","labels":{"app":"solo"}})"));
  EXPECT_EQ(encoded["spec"]["containers"][0]["resources"]["requests"],
            json::parse(R"({"cpu":"250m","nvidia.com/gpu":"1"})"));
  EXPECT_EQ(encoded["spec"]["containers"][0]["ports"][0],
            json::parse(R"({"hostPort":8080,"containerPort":80})"));
  EXPECT_EQ(encoded["spec"]["schedulingGroup"]["podGroupName"], "pg-2");
  EXPECT_EQ(
      encoded["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"][0]["matchExpressions"][0],
      json::parse(R"({"key":"zone","operator":"In","values":["a"]})"));
  EXPECT_FALSE(encoded.contains("status"));
  EXPECT_FALSE(encoded["spec"].contains("tolerations"));
  EXPECT_FALSE(encoded["spec"].contains("priority"));
  EXPECT_FALSE(encoded["spec"].contains("nodeName"));

  Pod again = MustDecode(text);
  EXPECT_EQ(again.spec, pod.spec);
  EXPECT_EQ(again.meta.labels, pod.meta.labels);
}

TEST(PodCodec, ReencodingAnEncodedPodIsStable) {
  Pod pod = MustDecode(kRunningPod);
  pod.spec.containers[1].resources.limits["cpu"] = Quantity::MustParse("0.5");
  std::string first = pod.Encode();
  Pod again = MustDecode(first);
  EXPECT_EQ(again.Encode(), first);
  EXPECT_EQ(json::parse(first)["spec"]["containers"][1]["resources"]["limits"]["cpu"], "500m");
}

// ------------------------------------------------------------------ errors

TEST(PodCodecErrors, BadQuantityNamesTheField) {
  std::string message = DecodeError(
      R"({"kind":"Pod","spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"one"}}}]}})");
  EXPECT_EQ(message.rfind("spec.containers[0].resources.requests.cpu: ", 0), 0u) << message;
  EXPECT_NE(message.find("quantities must match the regular expression"), std::string::npos)
      << message;

  message = DecodeError(
      R"({"spec":{"initContainers":[{"name":"a"},{"name":"b","resources":{"limits":{"nvidia.com/gpu":"2x"}}}]}})");
  EXPECT_EQ(message.rfind("spec.initContainers[1].resources.limits[nvidia.com/gpu]: ", 0), 0u)
      << message;

  message = DecodeError(R"({"spec":{"overhead":{"memory":true}}})");
  EXPECT_EQ(message, "spec.overhead.memory: expected quantity (string or number), got boolean");
}

TEST(PodCodecErrors, BareNumbersAreQuantities) {
  Pod pod = MustDecode(
      R"({"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":2,"memory":0.5}}}]}})");
  EXPECT_EQ(pod.spec.containers[0].resources.requests.at("cpu").MilliValue(), 2000);
  EXPECT_EQ(pod.spec.containers[0].resources.requests.at("memory").MilliValue(), 500);
}

TEST(PodCodecErrors, WrongTypesNameTheField) {
  EXPECT_EQ(DecodeError(R"({"spec":{"priority":"high"}})"),
            "spec.priority: expected integer, got string");
  EXPECT_EQ(DecodeError(R"({"spec":{"priority":3000000000}})"),
            "spec.priority: value 3000000000 is out of range for int32");
  EXPECT_EQ(DecodeError(R"({"spec":{"priority":1.5}})"),
            "spec.priority: expected integer, got 1.5");
  EXPECT_EQ(DecodeError(R"({"metadata":{"labels":{"app.kubernetes.io/name":7}}})"),
            "metadata.labels[app.kubernetes.io/name]: expected string, got number");
  EXPECT_EQ(DecodeError(R"({"spec":{"containers":{"name":"a"}}})"),
            "spec.containers: expected array, got object");
  EXPECT_EQ(DecodeError(R"({"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}})"),
            "spec.containers[0].ports[0].containerPort: expected integer, got string");
  EXPECT_EQ(DecodeError(R"({"spec":{"tolerations":[{"tolerationSeconds":true}]}})"),
            "spec.tolerations[0].tolerationSeconds: expected integer, got boolean");
  EXPECT_EQ(DecodeError(R"({"spec":{"schedulingGroup":{"podGroupName":1}}})"),
            "spec.schedulingGroup.podGroupName: expected string, got number");
  EXPECT_EQ(DecodeError(R"([{"kind":"Pod"}])"), "expected object, got array");
  EXPECT_EQ(DecodeError(R"({"kind":"Node","metadata":{"name":"n"}})"),
            "kind: expected \"Pod\", got \"Node\"");
}

TEST(PodCodecErrors, BadSelectorsNameTheField) {
  std::string message = DecodeError(R"({"spec":{"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"k",
      "labelSelector":{"matchExpressions":[{"key":"app","operator":"Near","values":["x"]}]}}]}}}})");
  EXPECT_EQ(message.rfind(
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                ".labelSelector.matchExpressions[0].operator: ",
                0),
            0u)
      << message;
  EXPECT_NE(message.find("Near"), std::string::npos) << message;

  message = DecodeError(R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1,
      "labelSelector":{"matchExpressions":[{"key":"app","operator":"In"}]}}]}})");
  EXPECT_EQ(message.rfind("spec.topologySpreadConstraints[0].labelSelector: ", 0), 0u) << message;
  EXPECT_NE(message.find("matchExpressions[0].values"), std::string::npos) << message;

  message = DecodeError(
      R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","values":["a"]}]}]}}}}})");
  EXPECT_EQ(message,
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[0]"
            ".matchExpressions[0].operator: Required value");
}

TEST(PodCodecErrors, MalformedJsonNamesWhereItBroke) {
  std::string message = DecodeError(R"({"spec": {"containers": [{"name": "a", "image": "b",}]}})");
  EXPECT_EQ(message.rfind("spec.containers[0]", 0), 0u) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("line 1"), std::string::npos) << message;

  message = DecodeError("{\"metadata\": {\"name\": \"x\"},\n \"spec\": {\"nodeName\": nope}}");
  EXPECT_EQ(message.rfind("spec.nodeName: malformed JSON: ", 0), 0u) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;

  message = DecodeError("");
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  message = DecodeError(R"({"metadata": {"name": "x")");
  EXPECT_EQ(message.rfind("metadata", 0), 0u) << message;
}

TEST(PodCodecErrors, NullsReadAsZeroValues) {
  Pod pod = MustDecode(
      R"({"metadata":{"labels":null,"name":"p"},"spec":{"affinity":null,"priority":null,"containers":[{"name":"a","resources":null,"ports":null}],"tolerations":null},"status":null})");
  EXPECT_EQ(pod.meta.name, "p");
  EXPECT_FALSE(pod.spec.affinity.has_value());
  EXPECT_FALSE(pod.spec.priority.has_value());
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  EXPECT_TRUE(pod.spec.containers[0].resources.requests.empty());
}

// ------------------------------------------------------------------ requests

Pod PodWithRequests(std::string_view spec_json) {
  return MustDecode(
      std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)") +
      std::string(spec_json) + "}");
}

int64_t Milli(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? -1 : it->second.MilliValue();
}

int64_t Bytes(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? -1 : it->second.Value();
}

constexpr int64_t kMi = 1024 * 1024;

TEST(PodRequests, InitContainersTakeTheMaxOfTheHeaviest) {
  // Kubernetes docs (init containers, "Resource sharing within containers"):
  // init 200Mi/150Mi, app 120Mi + 140Mi -> 260Mi.
  Pod pod = PodWithRequests(R"({
    "initContainers":[{"name":"a","resources":{"requests":{"memory":"200Mi"}}},
                      {"name":"b","resources":{"requests":{"memory":"150Mi"}}}],
    "containers":[{"name":"c1","resources":{"requests":{"memory":"120Mi"}}},
                  {"name":"c2","resources":{"requests":{"memory":"140Mi"}}}]})");
  EXPECT_EQ(Bytes(PodRequests(pod), "memory"), 260 * kMi);

  // init 300Mi/500Mi, app 250Mi + 200Mi, overhead 50Mi -> max(500, 450) + 50.
  pod = PodWithRequests(R"({
    "initContainers":[{"name":"a","resources":{"requests":{"memory":"300Mi"}}},
                      {"name":"b","resources":{"requests":{"memory":"500Mi"}}}],
    "containers":[{"name":"c1","resources":{"requests":{"memory":"250Mi"}}},
                  {"name":"c2","resources":{"requests":{"memory":"200Mi"}}}],
    "overhead":{"memory":"50Mi"}})");
  EXPECT_EQ(Bytes(PodRequests(pod), "memory"), 550 * kMi);
  EXPECT_EQ(Bytes(PodRequests(pod, PodRequestOptions{.exclude_overhead = true}), "memory"),
            500 * kMi);

  // Per-resource max: IC1 2/1G, IC2 2/3G, C1 2/1G, C2 1/1G -> cpu 3, memory 3G.
  pod = PodWithRequests(R"({
    "initContainers":[{"name":"i1","resources":{"requests":{"cpu":"2","memory":"1G"}}},
                      {"name":"i2","resources":{"requests":{"cpu":"2","memory":"3G"}}}],
    "containers":[{"name":"c1","resources":{"requests":{"cpu":"2","memory":"1G"}}},
                  {"name":"c2","resources":{"requests":{"cpu":"1","memory":"1G"}}}]})");
  ResourceList requests = PodRequests(pod);
  EXPECT_EQ(Milli(requests, "cpu"), 3000);
  EXPECT_EQ(Bytes(requests, "memory"), 3'000'000'000);
}

TEST(PodRequests, SidecarsAddUpAndCountForLaterInitContainers) {
  // A sidecar started before an init container runs alongside it:
  // use(init) = 4 + 1 = 5 > containers (1) + sidecar (1).
  Pod before = PodWithRequests(R"({
    "initContainers":[{"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
                      {"name":"setup","resources":{"requests":{"cpu":"4"}}}],
    "containers":[{"name":"app","resources":{"requests":{"cpu":"1"}}}]})");
  EXPECT_EQ(Milli(PodRequests(before), "cpu"), 5000);

  // The same sidecar started after the init container does not overlap it.
  Pod after = PodWithRequests(R"({
    "initContainers":[{"name":"setup","resources":{"requests":{"cpu":"4"}}},
                      {"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}}],
    "containers":[{"name":"app","resources":{"requests":{"cpu":"1"}}}]})");
  EXPECT_EQ(Milli(PodRequests(after), "cpu"), 4000);

  // Sidecars dominate: 3 containers' worth of steady state vs a small init.
  Pod steady = PodWithRequests(R"({
    "initContainers":[{"name":"s1","restartPolicy":"Always","resources":{"requests":{"cpu":"1","memory":"100Mi"}}},
                      {"name":"init","resources":{"requests":{"cpu":"500m"}}},
                      {"name":"s2","restartPolicy":"Always","resources":{"requests":{"cpu":"1","memory":"100Mi"}}}],
    "containers":[{"name":"app","resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]})");
  ResourceList requests = PodRequests(steady);
  EXPECT_EQ(Milli(requests, "cpu"), 4000);
  EXPECT_EQ(Bytes(requests, "memory"), 1024 * kMi + 200 * kMi);

  // The decoded running pod: containers 1000m + 100m, sidecar 250m = 1350m vs init 2000m
  // (the sidecar comes after the init container) -> 2000m, plus 50m overhead.
  Pod running = MustDecode(kRunningPod);
  requests = PodRequests(running);
  EXPECT_EQ(Milli(requests, "cpu"), 2050);
  EXPECT_EQ(Bytes(requests, "memory"), 32 * 1024 * kMi + 64 * kMi + 128 * kMi + 10 * kMi);
  EXPECT_EQ(Bytes(requests, "nvidia.com/gpu"), 8);
}

TEST(PodRequests, OverheadAsInTheRuntimeClassDocs) {
  // Pod overhead docs: 2 containers (500m/100Mi, 1500m/100Mi) + overhead
  // 250m/120Mi -> 2250m and 320Mi.
  Pod pod = PodWithRequests(R"({
    "containers":[{"name":"busybox-ctr","resources":{"requests":{"cpu":"500m","memory":"100Mi"}}},
                  {"name":"nginx-ctr","resources":{"requests":{"cpu":"1500m","memory":"100Mi"}}}],
    "overhead":{"cpu":"250m","memory":"120Mi"}})");
  ResourceList requests = PodRequests(pod);
  EXPECT_EQ(Milli(requests, "cpu"), 2250);
  EXPECT_EQ(Bytes(requests, "memory"), 320 * kMi);
}

TEST(PodRequests, PodLevelResourcesOverrideCpuAndMemoryOnly) {
  Pod pod = PodWithRequests(R"({
    "resources":{"requests":{"cpu":"4","memory":"1Gi"}},
    "containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"100Mi","nvidia.com/gpu":"2"}}}],
    "overhead":{"cpu":"100m"}})");
  ResourceList requests = PodRequests(pod);
  EXPECT_EQ(Milli(requests, "cpu"), 4100);
  EXPECT_EQ(Bytes(requests, "memory"), 1024 * kMi);
  EXPECT_EQ(Bytes(requests, "nvidia.com/gpu"), 2);
  requests = PodRequests(pod, PodRequestOptions{.pod_level_resources = false});
  EXPECT_EQ(Milli(requests, "cpu"), 1100);
  EXPECT_EQ(Bytes(requests, "memory"), 100 * kMi);
}

TEST(PodRequests, NonZeroDefaultsFillOnlyMissingRequests) {
  Pod pod = PodWithRequests(R"({
    "containers":[{"name":"none"},
                  {"name":"zero-cpu","resources":{"requests":{"cpu":"0"}}}]})");
  EXPECT_TRUE(PodRequests(pod).count("cpu") == 1 && PodRequests(pod).at("cpu").IsZero());
  EXPECT_EQ(PodRequests(pod).count("memory"), 0u);
  ResourceList requests = PodRequests(
      pod, PodRequestOptions{.non_missing_container_requests = NonZeroRequestDefaults()});
  EXPECT_EQ(Milli(requests, "cpu"), 100);  // explicit 0 stays 0
  EXPECT_EQ(Bytes(requests, "memory"), 400 * kMi);
}

TEST(PodRequests, EmptyPodRequestsNothing) {
  Pod pod = PodWithRequests(R"({"containers":[{"name":"a"}]})");
  EXPECT_TRUE(PodRequests(pod).empty());
}

// ------------------------------------------------------------------ tolerations

TEST(Toleration, ToleratesTaintLikeCoreV1) {
  Taint gpu{"nvidia.com/gpu", "present", "NoSchedule", ""};
  EXPECT_TRUE(
      (Toleration{"nvidia.com/gpu", "Equal", "present", "NoSchedule", {}}).ToleratesTaint(gpu));
  EXPECT_TRUE((Toleration{"nvidia.com/gpu", "", "present", "", {}}).ToleratesTaint(gpu));
  EXPECT_FALSE(
      (Toleration{"nvidia.com/gpu", "Equal", "absent", "NoSchedule", {}}).ToleratesTaint(gpu));
  EXPECT_FALSE((Toleration{"nvidia.com/gpu", "Exists", "", "NoExecute", {}}).ToleratesTaint(gpu));
  EXPECT_TRUE((Toleration{"", "Exists", "", "", {}}).ToleratesTaint(gpu));
  EXPECT_FALSE((Toleration{"other", "Exists", "", "", {}}).ToleratesTaint(gpu));
  EXPECT_FALSE((Toleration{"nvidia.com/gpu", "Gt", "present", "", {}}).ToleratesTaint(gpu));
}

}  // namespace
}  // namespace copse::kube

namespace copse::kube {
namespace {

// The scheduler's informers keep typed fields only: the decoder without raw
// gives the same typed pod as TypedDecoder, and no JSON copy.
TEST(PodCodec, DecoderWithoutRawKeepsTypedFieldsOnly) {
  const std::string json = kRunningPod;
  auto with_raw = TypedDecoder<Pod>()(json);
  auto without_raw = TypedDecoderWithoutRaw<Pod>()(json);
  ASSERT_TRUE(with_raw.ok());
  ASSERT_TRUE(without_raw.ok());
  const auto& full = static_cast<const Pod&>(**with_raw);
  const auto& lean = static_cast<const Pod&>(**without_raw);
  EXPECT_EQ(full.raw, json);
  EXPECT_TRUE(lean.raw.empty());
  EXPECT_EQ(lean.meta.name, full.meta.name);
  EXPECT_EQ(lean.meta.labels, full.meta.labels);
  EXPECT_EQ(lean.spec.node_name, full.spec.node_name);
  EXPECT_EQ(lean.spec.containers.size(), full.spec.containers.size());
  EXPECT_EQ(PodRequests(lean), PodRequests(full));
  EXPECT_FALSE(TypedDecoderWithoutRaw<Pod>()("{\"kind\":").ok());
}

}  // namespace
}  // namespace copse::kube

namespace copse::kube {
namespace {

// A decoded object moves (into a Result, into a shared_ptr) without copying
// its metadata and raw JSON: the moved-from object is left without them.
TEST(PodCodec, MovingADecodedPodMovesItsMetadataAndRaw) {
  Pod pod = MustDecode(kRunningPod);
  ASSERT_FALSE(pod.raw.empty());
  ASSERT_FALSE(pod.meta.labels.empty());
  Pod moved = std::move(pod);
  EXPECT_EQ(moved.raw, kRunningPod);
  EXPECT_EQ(moved.meta.name, "trainer-7d9f8-abcde");
  EXPECT_TRUE(pod.raw.empty());          // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_TRUE(pod.meta.labels.empty());  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace copse::kube
