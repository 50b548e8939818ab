// Node, Namespace, Service, Event, Lease, PriorityClass, PodDisruptionBudget
// and CustomResourceDefinition codecs.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kube/custom_resource_definition.h"
#include "kube/event.h"
#include "kube/lease.h"
#include "kube/namespace.h"
#include "kube/node.h"
#include "kube/pod_disruption_budget.h"
#include "kube/priority_class.h"
#include "kube/service.h"

namespace copse::kube {
namespace {

using nlohmann::json;

template <typename T>
T MustDecode(std::string_view text) {
  Result<T> decoded = T::Decode(text);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  if (!decoded.ok()) return T();
  return std::move(decoded).value();
}

// An edit of one field changes that field and nothing else in the JSON.
template <typename T>
void ExpectMetaOnlyEdit(std::string_view raw) {
  T object = MustDecode<T>(raw);
  object.meta.resource_version = "edited";
  object.meta.annotations["copse.dev/touched"] = "1";
  json expected = json::parse(raw);
  expected["metadata"]["resourceVersion"] = "edited";
  expected["metadata"]["annotations"]["copse.dev/touched"] = "1";
  EXPECT_EQ(json::parse(object.Encode()), expected) << T::kKind;
}

// ------------------------------------------------------------------ Node

constexpr const char* kNode = R"json({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "gpu-node-3", "uid": "n-3", "resourceVersion": "991",
               "labels": {"kubernetes.io/hostname": "gpu-node-3", "topology.kubernetes.io/zone": "zone-1",
                          "copse.dev/block": "block-1-2", "copse.dev/rack": "rack-1-2-7"},
               "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
               "managedFields": [{"manager": "kubelet"}]},
  "spec": {"podCIDR": "10.244.3.0/24", "providerID": "kind://docker/kind/gpu-node-3",
           "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                      {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                       "timeAdded": "2024-05-01T10:00:00Z"}],
           "unschedulable": true},
  "status": {
    "addresses": [{"address": "172.18.0.3", "type": "InternalIP"}, {"address": "gpu-node-3", "type": "Hostname"}],
    "allocatable": {"cpu": "63500m", "ephemeral-storage": "95Gi", "memory": "515000Mi", "nvidia.com/gpu": "8", "pods": "110"},
    "capacity": {"cpu": "64", "ephemeral-storage": "100Gi", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"},
    "conditions": [
      {"lastHeartbeatTime": "2024-05-01T10:05:00Z", "lastTransitionTime": "2024-05-01T09:00:00Z",
       "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory",
       "status": "False", "type": "MemoryPressure"},
      {"lastHeartbeatTime": "2024-05-01T10:05:00Z", "lastTransitionTime": "2024-05-01T09:00:10Z",
       "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"}],
    "nodeInfo": {"kubeletVersion": "v1.31.0", "architecture": "amd64"},
    "images": [{"names": ["nginx:1.25"], "sizeBytes": 70000000}]
  }
})json";

TEST(NodeCodec, DecodesSchedulingFields) {
  Node node = MustDecode<Node>(kNode);
  EXPECT_EQ(node.meta.name, "gpu-node-3");
  EXPECT_EQ(node.labels().at("copse.dev/rack"), "rack-1-2-7");
  EXPECT_TRUE(node.spec.unschedulable);
  ASSERT_EQ(node.spec.taints.size(), 2u);
  EXPECT_EQ(node.spec.taints[0], (Taint{"nvidia.com/gpu", "present", "NoSchedule", ""}));
  EXPECT_EQ(node.spec.taints[1].time_added, "2024-05-01T10:00:00Z");
  EXPECT_EQ(node.status.allocatable.at("cpu").MilliValue(), 63500);
  EXPECT_EQ(node.status.allocatable.at("memory").Value(), 515000LL * 1024 * 1024);
  EXPECT_EQ(node.status.capacity.at("memory").Value(), 512LL << 30);
  EXPECT_EQ(node.status.allocatable.at("nvidia.com/gpu").Value(), 8);
  EXPECT_EQ(node.status.allocatable.at("pods").Value(), 110);
  ASSERT_EQ(node.status.addresses.size(), 2u);
  EXPECT_EQ(node.status.addresses[0], (NodeAddress{"InternalIP", "172.18.0.3"}));
  EXPECT_TRUE(node.IsReady());
  EXPECT_EQ(FindCondition(node.status.conditions, "Ready")->last_heartbeat_time,
            "2024-05-01T10:05:00Z");
  EXPECT_EQ(node.Encode(), kNode);
  ExpectMetaOnlyEdit<Node>(kNode);
}

TEST(NodeCodec, EditsTaintsConditionsAndAllocatable) {
  Node node = MustDecode<Node>(kNode);
  node.spec.unschedulable = false;
  node.spec.taints.erase(node.spec.taints.begin());
  node.status.allocatable["nvidia.com/gpu"] = Quantity::FromInt(7);
  FindCondition(node.status.conditions, "Ready")->status = "False";
  json encoded = json::parse(node.Encode());
  EXPECT_FALSE(encoded["spec"].contains("unschedulable"));
  EXPECT_EQ(encoded["spec"]["podCIDR"], "10.244.3.0/24");
  ASSERT_EQ(encoded["spec"]["taints"].size(), 1u);
  EXPECT_EQ(encoded["spec"]["taints"][0]["timeAdded"], "2024-05-01T10:00:00Z");
  EXPECT_EQ(encoded["status"]["allocatable"]["nvidia.com/gpu"], "7");
  EXPECT_EQ(encoded["status"]["allocatable"]["cpu"], "63500m");
  EXPECT_EQ(encoded["status"]["conditions"][1]["status"], "False");
  EXPECT_EQ(encoded["status"]["conditions"][1]["reason"], "KubeletReady");
  EXPECT_EQ(encoded["status"]["nodeInfo"]["kubeletVersion"], "v1.31.0");

  Node again = MustDecode<Node>(encoded.dump());
  EXPECT_FALSE(again.IsReady());
  EXPECT_EQ(again.spec, node.spec);
  EXPECT_EQ(again.status, node.status);
}

TEST(NodeCodec, ErrorsAndBuiltInCode) {
  Result<Node> bad = Node::Decode(R"({"status":{"allocatable":{"cpu":"64","memory":"lots"}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("status.allocatable.memory: ", 0), 0u) << bad.error().message;
  bad = Node::Decode(R"({"spec":{"taints":[{"key":"a","effect":7}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "spec.taints[0].effect: expected string, got number");
  bad = Node::Decode(R"({"spec":{"unschedulable":"true"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "spec.unschedulable: expected boolean, got string");

  Node node;
  node.meta.name = "sim-1";
  node.meta.labels["kubernetes.io/hostname"] = "sim-1";
  node.status.allocatable = ParseResourceList("cpu=64,memory=512Gi,nvidia.com/gpu=8").value();
  node.status.capacity = node.status.allocatable;
  node.status.conditions.push_back(
      Condition{"Ready", "True", "KubeletReady", "", "t0", "", "t1", {}});
  json encoded = json::parse(node.Encode());
  EXPECT_EQ(encoded["kind"], "Node");
  EXPECT_EQ(encoded["status"]["allocatable"],
            json::parse(R"({"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8"})"));
  EXPECT_EQ(encoded["status"]["conditions"][0]["lastHeartbeatTime"], "t1");
  EXPECT_FALSE(encoded.contains("spec"));
  Node again = MustDecode<Node>(encoded.dump());
  EXPECT_TRUE(again.IsReady());
  EXPECT_EQ(again.status, node.status);
}

// ------------------------------------------------------------------ Namespace, Service

TEST(NamespaceCodec, RoundTrip) {
  constexpr const char* kNamespace =
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml","labels":{"kubernetes.io/metadata.name":"ml"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})";
  Namespace ns = MustDecode<Namespace>(kNamespace);
  EXPECT_EQ(ns.meta.name, "ml");
  EXPECT_EQ(ns.phase, "Active");
  EXPECT_EQ(ns.Encode(), kNamespace);
  ExpectMetaOnlyEdit<Namespace>(kNamespace);
  ns.phase = "Terminating";
  json encoded = json::parse(ns.Encode());
  EXPECT_EQ(encoded["status"]["phase"], "Terminating");
  EXPECT_EQ(encoded["spec"]["finalizers"][0], "kubernetes");
  EXPECT_FALSE(Namespace::Decode(R"({"kind":"Pod"})").ok());
}

TEST(ServiceCodec, HeadlessServiceForGrove) {
  constexpr const char* kService = R"json({"apiVersion":"v1","kind":"Service",
    "metadata":{"name":"simple1-0","namespace":"default"},
    "spec":{"clusterIP":"None","clusterIPs":["None"],"internalTrafficPolicy":"Cluster",
            "ports":[{"name":"rdzv","port":29500,"protocol":"TCP","targetPort":29500},
                     {"name":"http","port":80,"protocol":"TCP","targetPort":"http"}],
            "publishNotReadyAddresses":true,
            "selector":{"app.kubernetes.io/part-of":"simple1","grove.io/podcliqueset-replica-index":"0"},
            "type":"ClusterIP"}})json";
  Service service = MustDecode<Service>(kService);
  EXPECT_TRUE(service.IsHeadless());
  EXPECT_TRUE(service.spec.publish_not_ready_addresses);
  EXPECT_EQ(service.spec.cluster_ips, std::vector<std::string>{"None"});
  EXPECT_EQ(service.spec.selector.at("grove.io/podcliqueset-replica-index"), "0");
  ASSERT_EQ(service.spec.ports.size(), 2u);
  EXPECT_EQ(service.spec.ports[0].port, 29500);
  EXPECT_EQ(service.spec.ports[0].target_port, IntOrString::FromInt(29500));
  EXPECT_EQ(service.spec.ports[1].target_port, IntOrString::FromString("http"));
  EXPECT_EQ(service.Encode(), kService);
  ExpectMetaOnlyEdit<Service>(kService);

  service.spec.ports[1].target_port = IntOrString::FromInt(8080);
  service.spec.publish_not_ready_addresses = false;
  json encoded = json::parse(service.Encode());
  EXPECT_EQ(encoded["spec"]["ports"][1]["targetPort"], 8080);
  EXPECT_EQ(encoded["spec"]["ports"][1]["name"], "http");
  EXPECT_FALSE(encoded["spec"].contains("publishNotReadyAddresses"));
  EXPECT_EQ(encoded["spec"]["internalTrafficPolicy"], "Cluster");

  Result<Service> bad = Service::Decode(R"({"spec":{"ports":[{"port":80,"targetPort":true}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "spec.ports[0].targetPort: expected integer or string, got boolean");
}

// ------------------------------------------------------------------ Event

TEST(EventCodec, CoreV1Event) {
  constexpr const char* kEvent = R"json({"apiVersion":"v1","kind":"Event",
    "metadata":{"name":"web-0.17c5a1b2c3d4e5f6","namespace":"default"},
    "involvedObject":{"apiVersion":"v1","kind":"Pod","name":"web-0","namespace":"default","uid":"u-1","resourceVersion":"7"},
    "reason":"FailedScheduling","message":"0/3 nodes are available: 3 Insufficient cpu.",
    "source":{"component":"copse-scheduler"},"firstTimestamp":"2024-05-01T10:00:00Z",
    "lastTimestamp":"2024-05-01T10:01:00Z","count":3,"type":"Warning",
    "eventTime":null,"reportingComponent":"copse-scheduler","reportingInstance":"copse-scheduler-abc"})json";
  Event event = MustDecode<Event>(kEvent);
  EXPECT_FALSE(event.IsEventsV1());
  EXPECT_EQ(event.involved_object.kind, "Pod");
  EXPECT_EQ(event.involved_object.name, "web-0");
  EXPECT_EQ(event.involved_object.uid, "u-1");
  EXPECT_EQ(event.reason, "FailedScheduling");
  EXPECT_EQ(event.message, "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_EQ(event.type, kEventTypeWarning);
  EXPECT_EQ(event.count, 3);
  EXPECT_EQ(event.source_component, "copse-scheduler");
  EXPECT_EQ(event.reporting_controller, "copse-scheduler");
  EXPECT_EQ(event.first_timestamp, "2024-05-01T10:00:00Z");
  EXPECT_EQ(event.Encode(), kEvent);
  ExpectMetaOnlyEdit<Event>(kEvent);

  event.count = 4;
  event.last_timestamp = "2024-05-01T10:02:00Z";
  json encoded = json::parse(event.Encode());
  EXPECT_EQ(encoded["count"], 4);
  EXPECT_EQ(encoded["lastTimestamp"], "2024-05-01T10:02:00Z");
  EXPECT_EQ(encoded["message"], "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_TRUE(encoded["eventTime"].is_null());
}

TEST(EventCodec, EventsV1Event) {
  constexpr const char* kEvent = R"json({"apiVersion":"events.k8s.io/v1","kind":"Event",
    "metadata":{"name":"pg-1.17c5","namespace":"ml"},
    "eventTime":"2024-05-01T10:00:00.123456Z","action":"Scheduling","reason":"FailedScheduling",
    "regarding":{"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","name":"pg-1","namespace":"ml"},
    "related":{"kind":"Node","name":"node-1"},
    "note":"gang needs 8 pods","type":"Warning","reportingController":"copse.dev/scheduler",
    "reportingInstance":"copse-0","deprecatedCount":2,
    "series":{"count":2,"lastObservedTime":"2024-05-01T10:01:00.000000Z"}})json";
  Event event = MustDecode<Event>(kEvent);
  EXPECT_TRUE(event.IsEventsV1());
  EXPECT_EQ(event.involved_object.kind, "PodGroup");
  EXPECT_EQ(event.involved_object.api_version, "scheduling.copse.dev/v1alpha1");
  ASSERT_TRUE(event.related.has_value());
  EXPECT_EQ(event.related->name, "node-1");
  EXPECT_EQ(event.message, "gang needs 8 pods");
  EXPECT_EQ(event.count, 2);
  EXPECT_EQ(event.action, "Scheduling");
  EXPECT_EQ(event.reporting_controller, "copse.dev/scheduler");
  EXPECT_EQ(event.event_time, "2024-05-01T10:00:00.123456Z");
  ASSERT_TRUE(event.series.has_value());
  EXPECT_EQ(event.series->count, 2);
  EXPECT_EQ(event.Encode(), kEvent);
  ExpectMetaOnlyEdit<Event>(kEvent);

  event.message = "gang needs 9 pods";
  event.series->count = 3;
  json encoded = json::parse(event.Encode());
  EXPECT_EQ(encoded["note"], "gang needs 9 pods");
  EXPECT_FALSE(encoded.contains("message"));
  EXPECT_EQ(encoded["series"]["count"], 3);
  EXPECT_EQ(encoded["series"]["lastObservedTime"], "2024-05-01T10:01:00.000000Z");
}

TEST(EventCodec, BuiltInCodeUsesTheChosenApi) {
  Event event;
  event.meta.name = "web-0.1";
  event.meta.namespace_ = "default";
  event.involved_object = ObjectReference{"Pod", "default", "web-0", "u-1", "v1", "", ""};
  event.reason = "Scheduled";
  event.message = "Successfully assigned default/web-0 to node-1";
  event.type = std::string(kEventTypeNormal);
  event.reporting_controller = "copse-scheduler";
  event.count = 1;

  json core = json::parse(event.Encode());
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["involvedObject"]["name"], "web-0");
  EXPECT_EQ(core["message"], event.message);
  EXPECT_EQ(core["reportingComponent"], "copse-scheduler");
  EXPECT_EQ(core["count"], 1);
  EXPECT_FALSE(core.contains("regarding"));

  event.api_version = std::string(Event::kEventsApiVersion);
  json v1 = json::parse(event.Encode());
  EXPECT_EQ(v1["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(v1["regarding"]["uid"], "u-1");
  EXPECT_EQ(v1["note"], event.message);
  EXPECT_EQ(v1["reportingController"], "copse-scheduler");
  EXPECT_EQ(v1["deprecatedCount"], 1);
  EXPECT_FALSE(v1.contains("involvedObject"));
  EXPECT_FALSE(v1.contains("message"));

  // Switching the API of a decoded event renames the fields.
  Event decoded = MustDecode<Event>(core.dump());
  decoded.api_version = std::string(Event::kEventsApiVersion);
  json switched = json::parse(decoded.Encode());
  EXPECT_EQ(switched["note"], event.message);
  EXPECT_FALSE(switched.contains("message"));
  EXPECT_FALSE(switched.contains("involvedObject"));
  EXPECT_EQ(switched["regarding"]["name"], "web-0");

  EXPECT_FALSE(Event::Decode(R"({"kind":"Event","count":"3"})").ok());
  EXPECT_EQ(Event::Decode(R"({"kind":"Event","regarding":[]})").error().message,
            "regarding: expected object, got array");
}

// ------------------------------------------------------------------ Lease

TEST(LeaseCodec, LeaderElectionCycle) {
  Lease lease;
  lease.meta.name = "copse-scheduler";
  lease.meta.namespace_ = "kube-system";
  lease.spec.holder_identity = "copse-0_abc";
  lease.spec.lease_duration_seconds = 15;
  lease.spec.acquire_time = "2024-05-01T10:00:00.000000Z";
  lease.spec.renew_time = "2024-05-01T10:00:00.000000Z";
  lease.spec.lease_transitions = 0;
  json created = json::parse(lease.Encode());
  EXPECT_EQ(created["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(created["kind"], "Lease");
  EXPECT_EQ(created["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(created["spec"]["leaseDurationSeconds"], 15);

  // The API server adds fields; a renew must keep them.
  created["metadata"]["resourceVersion"] = "10";
  created["metadata"]["managedFields"] = json::array({{{"manager", "copse"}}});
  created["spec"]["strategy"] = "OldestEmulationVersion";
  Lease current = MustDecode<Lease>(created.dump());
  EXPECT_EQ(current.spec, lease.spec);
  EXPECT_EQ(current.meta.resource_version, "10");
  current.spec.renew_time = "2024-05-01T10:00:10.000000Z";
  json renewed = json::parse(current.Encode());
  EXPECT_EQ(renewed["spec"]["renewTime"], "2024-05-01T10:00:10.000000Z");
  EXPECT_EQ(renewed["spec"]["acquireTime"], "2024-05-01T10:00:00.000000Z");
  EXPECT_EQ(renewed["spec"]["strategy"], "OldestEmulationVersion");
  EXPECT_EQ(renewed["metadata"]["resourceVersion"], "10");

  // Release: the holder is cleared.
  current.spec.holder_identity.reset();
  EXPECT_FALSE(json::parse(current.Encode())["spec"].contains("holderIdentity"));

  Result<Lease> bad = Lease::Decode(R"({"spec":{"leaseDurationSeconds":"15"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "spec.leaseDurationSeconds: expected integer, got string");
}

// ------------------------------------------------------------------ PriorityClass

TEST(PriorityClassCodec, RoundTrip) {
  constexpr const char* kClass = R"json({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"training"},"value":100000,"globalDefault":false,
    "description":"gang training jobs","preemptionPolicy":"Never"})json";
  PriorityClass pc = MustDecode<PriorityClass>(kClass);
  EXPECT_EQ(pc.value, 100000);
  EXPECT_FALSE(pc.global_default);
  EXPECT_EQ(pc.description, "gang training jobs");
  EXPECT_EQ(pc.preemption_policy, "Never");
  EXPECT_EQ(pc.Encode(), kClass);
  ExpectMetaOnlyEdit<PriorityClass>(kClass);

  PriorityClass zero;
  zero.meta.name = "zero";
  json encoded = json::parse(zero.Encode());
  EXPECT_EQ(encoded["value"], 0);  // value is required, even when zero
  EXPECT_FALSE(encoded.contains("globalDefault"));
  EXPECT_FALSE(encoded.contains("preemptionPolicy"));

  Result<PriorityClass> bad = PriorityClass::Decode(R"({"value":2000000001.5})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "value: expected integer, got 2000000001.5");
}

// ------------------------------------------------------------------ PodDisruptionBudget

TEST(PodDisruptionBudgetCodec, IntOrPercent) {
  constexpr const char* kPercent = R"json({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
    "metadata":{"name":"trainer","namespace":"ml","generation":2},
    "spec":{"minAvailable":"60%","selector":{"matchLabels":{"app":"trainer"}}},
    "status":{"observedGeneration":2,"disruptionsAllowed":1,"currentHealthy":5,"desiredHealthy":3,
              "expectedPods":5,"disruptedPods":{"trainer-1":"2024-05-01T10:00:00Z"},
              "conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods",
                             "lastTransitionTime":"2024-05-01T09:00:00Z","observedGeneration":2}]}})json";
  PodDisruptionBudget pdb = MustDecode<PodDisruptionBudget>(kPercent);
  ASSERT_TRUE(pdb.spec.min_available.has_value());
  EXPECT_TRUE(pdb.spec.min_available->IsPercent());
  EXPECT_FALSE(pdb.spec.max_unavailable.has_value());
  ASSERT_TRUE(pdb.spec.selector.has_value());
  EXPECT_TRUE(pdb.spec.selector->Matches({{"app", "trainer"}}));
  EXPECT_EQ(pdb.status.disruptions_allowed, 1);
  EXPECT_EQ(pdb.status.current_healthy, 5);
  EXPECT_EQ(pdb.status.desired_healthy, 3);
  EXPECT_EQ(pdb.status.expected_pods, 5);
  EXPECT_EQ(pdb.status.observed_generation, 2);
  EXPECT_EQ(pdb.status.disrupted_pods.at("trainer-1"), "2024-05-01T10:00:00Z");
  EXPECT_EQ(pdb.status.conditions[0].observed_generation, 2);
  // ceil(60% of 5) = 3, as the disruption controller computes it.
  EXPECT_EQ(pdb.DesiredHealthy(5).value(), 3);
  EXPECT_EQ(PodDisruptionBudget::DisruptionsAllowed(5, 3), 2);
  EXPECT_EQ(PodDisruptionBudget::DisruptionsAllowed(2, 3), 0);
  EXPECT_EQ(pdb.Encode(), kPercent);
  ExpectMetaOnlyEdit<PodDisruptionBudget>(kPercent);

  pdb.spec.min_available.reset();
  pdb.spec.max_unavailable = IntOrString::FromInt(1);
  pdb.status.disruptions_allowed = 0;
  pdb.status.disrupted_pods.clear();
  EXPECT_EQ(pdb.DesiredHealthy(5).value(), 4);
  json encoded = json::parse(pdb.Encode());
  EXPECT_FALSE(encoded["spec"].contains("minAvailable"));
  EXPECT_EQ(encoded["spec"]["maxUnavailable"], 1);
  EXPECT_EQ(encoded["status"]["disruptionsAllowed"], 0);  // written even when zero
  EXPECT_FALSE(encoded["status"].contains("disruptedPods"));
  PodDisruptionBudget again = MustDecode<PodDisruptionBudget>(encoded.dump());
  EXPECT_EQ(again.spec, pdb.spec);
  EXPECT_EQ(again.status, pdb.status);
}

// policy/v1beta1 (all v1.20 serves): an empty selector selects no pod.
TEST(PodDisruptionBudgetCodec, V1beta1EmptySelectorSelectsNothing) {
  auto decode = [](std::string_view api_version, std::string_view selector) {
    return MustDecode<PodDisruptionBudget>(
        std::string(R"({"kind":"PodDisruptionBudget","apiVersion":")") + std::string(api_version) +
        R"(","spec":{"minAvailable":1,"selector":)" + std::string(selector) + "}}");
  };
  EXPECT_FALSE(decode("policy/v1beta1", "{}").spec.selector.has_value());
  EXPECT_TRUE(decode("policy/v1", "{}").spec.selector->Empty());
  PodDisruptionBudget labelled = decode("policy/v1beta1", R"({"matchLabels":{"app":"x"}})");
  ASSERT_TRUE(labelled.spec.selector.has_value());
  EXPECT_TRUE(labelled.spec.selector->Matches({{"app", "x"}}));
  EXPECT_FALSE(labelled.spec.selector->Matches({{"app", "y"}}));
}

TEST(PodDisruptionBudgetCodec, DesiredHealthyCases) {
  auto pdb = [](std::string_view spec) {
    return MustDecode<PodDisruptionBudget>(std::string(R"({"kind":"PodDisruptionBudget","spec":)") +
                                           std::string(spec) + "}");
  };
  EXPECT_EQ(pdb(R"({"minAvailable":2})").DesiredHealthy(10).value(), 2);
  EXPECT_EQ(pdb(R"({"maxUnavailable":"30%"})").DesiredHealthy(10).value(), 7);
  EXPECT_EQ(pdb(R"({"maxUnavailable":"25%"})").DesiredHealthy(10).value(), 7);  // ceil(2.5) = 3
  EXPECT_EQ(pdb(R"({"maxUnavailable":12})").DesiredHealthy(10).value(), 0);
  EXPECT_EQ(pdb(R"({"minAvailable":"100%"})").DesiredHealthy(4).value(), 4);
  EXPECT_EQ(pdb(R"({})").DesiredHealthy(4).value(), 0);
  EXPECT_FALSE(pdb(R"({})").spec.selector.has_value());           // selects no pods
  EXPECT_TRUE(pdb(R"({"selector":{}})").spec.selector->Empty());  // selects all pods

  Result<int32_t> bad = pdb(R"({"minAvailable":"half"})").DesiredHealthy(4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("spec.minAvailable: ", 0), 0u) << bad.error().message;

  Result<PodDisruptionBudget> wrong =
      PodDisruptionBudget::Decode(R"({"spec":{"minAvailable":[1]}})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "spec.minAvailable: expected integer or string, got array");
  wrong = PodDisruptionBudget::Decode(R"({"status":{"currentHealthy":-1.25}})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "status.currentHealthy: expected integer, got -1.25");
}

// ------------------------------------------------------------------ CustomResourceDefinition

constexpr const char* kCrd = R"json({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "podcliques.grove.io", "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.0"}},
  "spec": {
    "group": "grove.io",
    "names": {"kind": "PodClique", "listKind": "PodCliqueList", "plural": "podcliques",
              "shortNames": ["pclq"], "singular": "podclique"},
    "scope": "Namespaced",
    "versions": [
      {"name": "v1alpha1", "served": true, "storage": true,
       "additionalPrinterColumns": [
         {"jsonPath": ".status.readyReplicas", "name": "Ready", "type": "integer"},
         {"jsonPath": ".spec.replicas", "name": "Desired", "type": "integer", "priority": 1,
          "description": "desired pods"},
         {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}],
       "schema": {"openAPIV3Schema": {"type": "object", "properties": {
         "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
         "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
       "subresources": {"status": {},
                        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                  "labelSelectorPath": ".status.selector"}}},
      {"name": "v1alpha0", "served": false, "storage": false, "deprecated": true,
       "deprecationWarning": "grove.io/v1alpha0 PodClique is deprecated",
       "schema": {"openAPIV3Schema": {"type": "object"}}}
    ],
    "conversion": {"strategy": "None"}
  },
  "status": {
    "acceptedNames": {"kind": "PodClique", "listKind": "PodCliqueList", "plural": "podcliques",
                      "shortNames": ["pclq"], "singular": "podclique"},
    "conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                    "lastTransitionTime": "2024-05-01T09:00:00Z", "message": "the initial names have been accepted"}],
    "storedVersions": ["v1alpha1"]
  }
})json";

TEST(CustomResourceDefinitionCodec, DecodesVersionsSubresourcesAndColumns) {
  CustomResourceDefinition crd = MustDecode<CustomResourceDefinition>(kCrd);
  EXPECT_EQ(crd.spec.group, "grove.io");
  EXPECT_EQ(crd.spec.scope, kNamespaceScoped);
  EXPECT_EQ(crd.spec.names.kind, "PodClique");
  EXPECT_EQ(crd.spec.names.list_kind, "PodCliqueList");
  EXPECT_EQ(crd.spec.names.plural, "podcliques");
  EXPECT_EQ(crd.spec.names.singular, "podclique");
  EXPECT_EQ(crd.spec.names.short_names, std::vector<std::string>{"pclq"});
  ASSERT_EQ(crd.spec.versions.size(), 2u);

  const CustomResourceDefinitionVersion* storage = crd.StorageVersion();
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->name, "v1alpha1");
  EXPECT_TRUE(storage->served);
  ASSERT_TRUE(storage->subresources.has_value());
  EXPECT_TRUE(storage->subresources->status);
  ASSERT_TRUE(storage->subresources->scale.has_value());
  EXPECT_EQ(storage->subresources->scale->spec_replicas_path, ".spec.replicas");
  EXPECT_EQ(storage->subresources->scale->status_replicas_path, ".status.replicas");
  EXPECT_EQ(storage->subresources->scale->label_selector_path, ".status.selector");
  ASSERT_EQ(storage->additional_printer_columns.size(), 3u);
  EXPECT_EQ(storage->additional_printer_columns[0].name, "Ready");
  EXPECT_EQ(storage->additional_printer_columns[0].json_path, ".status.readyReplicas");
  EXPECT_EQ(storage->additional_printer_columns[1].priority, 1);
  EXPECT_EQ(storage->additional_printer_columns[1].description, "desired pods");
  EXPECT_EQ(storage->additional_printer_columns[2].type, "date");
  ASSERT_TRUE(storage->schema.has_value());
  json schema = json::parse(*storage->schema);
  EXPECT_EQ(schema["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"],
            true);

  const CustomResourceDefinitionVersion* old = crd.FindVersion("v1alpha0");
  ASSERT_NE(old, nullptr);
  EXPECT_FALSE(old->served);
  EXPECT_TRUE(old->deprecated);
  EXPECT_EQ(old->deprecation_warning, "grove.io/v1alpha0 PodClique is deprecated");
  EXPECT_FALSE(old->subresources.has_value());
  EXPECT_EQ(crd.FindVersion("v2"), nullptr);

  EXPECT_EQ(crd.status.stored_versions, std::vector<std::string>{"v1alpha1"});
  EXPECT_EQ(crd.status.accepted_names, crd.spec.names);
  EXPECT_EQ(FindCondition(crd.status.conditions, "Established")->status, "True");

  ResourceRef ref = crd.Resource("v1alpha1");
  EXPECT_EQ(ref.ApiVersion(), "grove.io/v1alpha1");
  EXPECT_TRUE(ref.namespaced);
  EXPECT_EQ(ref.Path("ns", "a", "scale"),
            "/apis/grove.io/v1alpha1/namespaces/ns/podcliques/a/scale");

  EXPECT_EQ(crd.Encode(), kCrd);
  ExpectMetaOnlyEdit<CustomResourceDefinition>(kCrd);
}

TEST(CustomResourceDefinitionCodec, EditsAndBuiltInCode) {
  CustomResourceDefinition crd = MustDecode<CustomResourceDefinition>(kCrd);
  CustomResourceDefinitionVersion& v1 = crd.spec.versions[0];
  v1.additional_printer_columns.insert(
      v1.additional_printer_columns.begin() + 1,
      CustomResourceColumn{"Gang", "string", "", "", 0, ".spec.podGang"});
  v1.subresources->scale->label_selector_path.reset();
  crd.spec.versions[1].subresources = CustomResourceSubresources{true, std::nullopt};
  json encoded = json::parse(crd.Encode());
  json columns = encoded["spec"]["versions"][0]["additionalPrinterColumns"];
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[1],
            json::parse(R"({"name":"Gang","type":"string","jsonPath":".spec.podGang"})"));
  EXPECT_EQ(columns[2]["description"], "desired pods");
  EXPECT_FALSE(
      encoded["spec"]["versions"][0]["subresources"]["scale"].contains("labelSelectorPath"));
  EXPECT_EQ(encoded["spec"]["versions"][1]["subresources"], json::parse(R"({"status":{}})"));
  EXPECT_EQ(encoded["spec"]["conversion"]["strategy"], "None");
  CustomResourceDefinition again = MustDecode<CustomResourceDefinition>(crd.Encode());
  EXPECT_EQ(again.spec, crd.spec);

  CustomResourceDefinition topology;
  topology.meta.name = "topologies.scheduling.copse.dev";
  topology.spec.group = "scheduling.copse.dev";
  topology.spec.scope = std::string(kClusterScoped);
  topology.spec.names =
      CustomResourceNames{"topologies", "topology", "Topology", "TopologyList", {}, {}};
  CustomResourceDefinitionVersion version;
  version.name = "v1alpha1";
  version.served = true;
  version.storage = true;
  version.schema = R"({"openAPIV3Schema":{"type":"object"}})";
  version.subresources = CustomResourceSubresources{true, std::nullopt};
  topology.spec.versions.push_back(version);
  json built = json::parse(topology.Encode());
  EXPECT_EQ(built["apiVersion"], "apiextensions.k8s.io/v1");
  EXPECT_EQ(built["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"], "object");
  EXPECT_EQ(built["spec"]["versions"][0]["subresources"]["status"], json::object());
  EXPECT_FALSE(built.contains("status"));
  EXPECT_FALSE(topology.Resource("v1alpha1").namespaced);
  CustomResourceDefinition built_again = MustDecode<CustomResourceDefinition>(built.dump());
  EXPECT_EQ(built_again.spec, topology.spec);
}

TEST(CustomResourceDefinitionCodec, ErrorsNameTheVersion) {
  Result<CustomResourceDefinition> bad = CustomResourceDefinition::Decode(
      R"({"spec":{"versions":[{"name":"v1"},{"name":"v2","subresources":{"scale":{"specReplicasPath":3}}}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "spec.versions[1].subresources.scale.specReplicasPath: expected string, got number");
  bad = CustomResourceDefinition::Decode(
      R"({"spec":{"versions":[{"subresources":{"status":true}}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "spec.versions[0].subresources.status: expected object, got boolean");
  bad = CustomResourceDefinition::Decode(
      R"({"spec":{"versions":[{"additionalPrinterColumns":[{"name":"A","priority":"high"}]}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "spec.versions[0].additionalPrinterColumns[0].priority: expected integer, got string");
}

}  // namespace
}  // namespace copse::kube
