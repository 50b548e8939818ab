// kube/protobuf: the protobuf wire form of built-in types. Envelopes and
// messages are built here byte by byte (not with the codec) for the decoding
// tests; every covered kind round-trips JSON -> protobuf -> JSON.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kube/protobuf/codec.h"
#include "tests/support/paths.h"

namespace copse::kube::protobuf {
namespace {

using nlohmann::json;

// ------------------------------------------------ wire bytes written by hand

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Len(uint32_t field, std::string_view data) {
  return Varint(field << 3 | 2) + Varint(data.size()) + std::string(data);
}
std::string Int(uint32_t field, uint64_t v) { return Varint(field << 3) + Varint(v); }
std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return std::string("k8s\0", 4) + Len(1, Len(1, api_version) + Len(2, kind)) + Len(2, raw) +
         Len(3, "") + Len(4, "");
}

json Parse(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

// ConfigMap{metadata{name cm, namespace ns}, data{a: b}, binaryData{bin: 00 01}, immutable}
std::string ConfigMapMessage() {
  return Len(1, Len(1, "cm") + Len(3, "ns")) + Len(2, Len(1, "a") + Len(2, "b")) +
         Len(3, Len(1, "bin") + Len(2, std::string("\x00\x01", 2))) + Int(4, 1);
}
const json kConfigMapJson = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
  "metadata":{"name":"cm","namespace":"ns"},"data":{"a":"b"},"binaryData":{"bin":"AAE="},
  "immutable":true})");

TEST(ProtobufEnvelope, DecodesAHandBuiltConfigMap) {
  auto decoded = DecodeObject(Envelope("v1", "ConfigMap", ConfigMapMessage()));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded), kConfigMapJson);
  // apiVersion and kind come first, from the envelope.
  EXPECT_TRUE(decoded->starts_with(R"({"apiVersion":"v1","kind":"ConfigMap",)")) << *decoded;
}

TEST(ProtobufEnvelope, EncodesAConfigMapAsGoDoes) {
  auto encoded = EncodeObject(kConfigMapJson.dump());
  ASSERT_TRUE(encoded.ok()) << encoded.error().ToString();
  EXPECT_EQ(*encoded, Envelope("v1", "ConfigMap", ConfigMapMessage()));
}

TEST(ProtobufEnvelope, SkipsUnknownFieldsOfEveryWireType) {
  const std::string unknown = Int(99, 7) + Len(98, "whatever") + Varint(97 << 3 | 5) +
                              std::string("\x01\x02\x03\x04", 4) + Varint(96 << 3 | 1) +
                              std::string(8, '\x09');
  auto decoded = DecodeObject(Envelope("v1", "ConfigMap", unknown + ConfigMapMessage()));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded), kConfigMapJson);
  // Unknown envelope fields too.
  std::string body = Envelope("v1", "ConfigMap", ConfigMapMessage()) + Len(15, "x");
  auto again = DecodeObject(body);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(Parse(*again), kConfigMapJson);
}

TEST(ProtobufEnvelope, FillsAMissingTypeMetaFromTheDefaults) {
  const std::string body = std::string("k8s\0", 4) + Len(1, "") + Len(2, ConfigMapMessage());
  auto decoded = DecodeObject(body, "v1", "ConfigMap");
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded), kConfigMapJson);
  auto no_kind = DecodeObject(body);
  ASSERT_FALSE(no_kind.ok());
  EXPECT_NE(no_kind.error().message.find("Kind"), std::string::npos) << no_kind.error().message;
  EXPECT_EQ(no_kind.error().http_status, 400);
}

TEST(ProtobufEnvelope, RejectsMalformedBodiesNamingTheField) {
  struct Case {
    std::string body;
    std::string message;
  };
  const std::string cm = ConfigMapMessage();
  // Deployment spec.replicas (field 1 of DeploymentSpec) sent length-delimited.
  const std::string bad_replicas = Len(2, Len(1, "3"));
  const std::vector<Case> cases = {
      {"", "prefix"},
      {"{\"kind\":\"Pod\"}", "prefix"},
      {std::string("k8s\0", 4), "empty"},
      {Envelope("v1", "ConfigMap", cm).substr(0, 20), "runs past the end"},
      {Envelope("v1", "ConfigMap", cm.substr(0, cm.size() - 3)), "runs past the end"},
      {Envelope("apps/v1", "Deployment", bad_replicas), "spec.replicas: wrong wire type"},
      {Envelope("v1", "ConfigMap", Len(1, Len(1, "\xff\xfe"))),
       "metadata.name: string is not UTF-8"},
      {Envelope("v1", "ConfigMap", Varint(3 << 3 | 3)), "unsupported wire type 3"},
      {std::string("k8s\0", 4) + Len(1, Len(1, "v1") + Len(2, "ConfigMap")) + Len(2, cm) +
           Len(3, "gzip"),
       "contentEncoding \"gzip\""},
  };
  for (const Case& c : cases) {
    auto decoded = DecodeObject(c.body);
    ASSERT_FALSE(decoded.ok()) << c.message;
    EXPECT_EQ(decoded.error().http_status, 400) << decoded.error().message;
    EXPECT_NE(decoded.error().message.find(c.message), std::string::npos)
        << "want \"" << c.message << "\" in: " << decoded.error().message;
  }
}

TEST(ProtobufEnvelope, KindsWithoutAProtobufFormAre415) {
  auto crd = DecodeObject(Envelope("scheduling.copse.dev/v1alpha1", "PodGroup", ""));
  ASSERT_FALSE(crd.ok());
  EXPECT_EQ(crd.error().http_status, 415);
  EXPECT_EQ(crd.error().reason, "UnsupportedMediaType");
  auto encoded = EncodeObject(R"({"apiVersion":"grove.io/v1alpha1","kind":"PodClique"})");
  ASSERT_FALSE(encoded.ok());
  EXPECT_EQ(encoded.error().http_status, 415);
  EXPECT_FALSE(HasProtobufForm("grove.io/v1alpha1", "PodClique"));
  EXPECT_FALSE(HasProtobufForm("v1", "Table"));
}

TEST(ProtobufEnvelope, DeeplyNestedInputIsAnErrorNotACrash) {
  // The one recursive shape of the covered types: a RawExtension holding an
  // envelope (ControllerRevision.data), 200 deep.
  std::string raw = ConfigMapMessage();
  std::string body = Envelope("v1", "ConfigMap", raw);
  for (int i = 0; i < 200; ++i) {
    body = Envelope("apps/v1", "ControllerRevision",
                    Len(1, Len(1, "r")) + Len(2, Len(1, body)) + Int(3, 1));
  }
  auto decoded = DecodeObject(body);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().http_status, 400);
  EXPECT_NE(decoded.error().message.find("deeper than"), std::string::npos)
      << decoded.error().message;
}

// ------------------------------------------------ special types by hand

TEST(ProtobufSpecialTypes, DecodeFromHandBuiltBytes) {
  // Service spec.ports[0]: port 80, targetPort IntOrString "http"; ports[1]: targetPort 8080.
  const std::string port0 =
      Len(1, "web") + Int(3, 80) + Len(4, Int(1, 1) + Int(2, 0) + Len(3, "http"));
  const std::string port1 = Int(3, 81) + Len(4, Int(1, 0) + Int(2, 8080) + Len(3, ""));
  // metadata.creationTimestamp = 2024-01-02T03:04:05Z (1704164645 s, nanos dropped as Go does),
  // deletionTimestamp present but empty (Go's zero time: null).
  const std::string meta = Len(1, "svc") + Len(8, Int(1, 1704164645) + Int(2, 999)) + Len(9, "");
  const std::string service = Len(1, meta) + Len(2, Len(1, port0) + Len(1, port1));
  auto decoded = DecodeObject(Envelope("v1", "Service", service));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded), json::parse(R"({"apiVersion":"v1","kind":"Service",
    "metadata":{"name":"svc","creationTimestamp":"2024-01-02T03:04:05Z","deletionTimestamp":null},
    "spec":{"ports":[{"name":"web","port":80,"targetPort":"http"},{"port":81,"targetPort":8080}]}})"));

  // Lease spec: MicroTime keeps microseconds; Pod resources: Quantity strings.
  const std::string lease =
      Len(1, Len(1, "l")) + Len(2, Len(1, "me") + Len(3, Int(1, 1704164645) + Int(2, 123456789)));
  auto l = DecodeObject(Envelope("coordination.k8s.io/v1", "Lease", lease));
  ASSERT_TRUE(l.ok()) << l.error().ToString();
  EXPECT_EQ(Parse(*l)["spec"],
            json::parse(R"({"holderIdentity":"me","acquireTime":"2024-01-02T03:04:05.123456Z"})"));

  const std::string requests = Len(2, Len(1, "cpu") + Len(2, Len(1, "100m")));
  const std::string container = Len(1, "c") + Len(2, "img") + Len(8, requests);
  const std::string pod = Len(1, Len(1, "p")) + Len(2, Len(2, container));
  auto p = DecodeObject(Envelope("v1", "Pod", pod));
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(Parse(*p)["spec"]["containers"][0]["resources"],
            json::parse(R"({"requests":{"cpu":"100m"}})"));
}

TEST(ProtobufSpecialTypes, ZeroScalarsFollowGosOmitempty) {
  // PriorityClass.value has no omitempty (0 stays), globalDefault has (false goes);
  // Deployment spec.replicas is a pointer (0 stays).
  const std::string pc = Len(1, Len(1, "low")) + Int(2, 0) + Int(3, 0);
  auto decoded = DecodeObject(Envelope("scheduling.k8s.io/v1", "PriorityClass", pc));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded), json::parse(R"({"apiVersion":"scheduling.k8s.io/v1",
    "kind":"PriorityClass","metadata":{"name":"low"},"value":0})"));
  const std::string deploy = Len(1, Len(1, "d") + Int(7, 0)) + Len(2, Int(1, 0));
  auto d = DecodeObject(Envelope("apps/v1", "Deployment", deploy));
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(Parse(*d), json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d"},"spec":{"replicas":0}})"));
}

TEST(ProtobufSpecialTypes, NegativeIntegersAndPackedRepeatedFields) {
  // int32 -1 as a 10-byte varint; Service ports' nodePort; PodSecurityContext
  // supplementalGroups (repeated int64), once unpacked and once packed.
  const std::string sc_unpacked = Int(4, 5) + Int(4, 6);
  const std::string sc_packed = Len(4, Varint(5) + Varint(6));
  for (const std::string& sc : {sc_unpacked, sc_packed}) {
    const std::string pod =
        Len(1, Len(1, "p")) + Len(2, Len(14, sc) + Int(4, static_cast<uint64_t>(-1)));
    auto decoded = DecodeObject(Envelope("v1", "Pod", pod));
    ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
    const json spec = Parse(*decoded)["spec"];
    EXPECT_EQ(spec["securityContext"]["supplementalGroups"], json::parse("[5,6]"));
    EXPECT_EQ(spec["terminationGracePeriodSeconds"], -1);
  }
}

TEST(ProtobufSpecialTypes, JsonErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"three"}})",
       "spec.replicas: expected integer"},
      {R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4294967296}})",
       "spec.replicas: integer out of range"},
      {R"({"apiVersion":"v1","kind":"Secret","data":{"k":"not base64!"}})",
       "data[k]: illegal base64"},
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"yesterday"}})",
       "metadata.creationTimestamp: parsing time"},
      {R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":{}}})",
       "spec.containers: expected array"},
      {R"({"kind":"Pod"})", "apiVersion and kind"},
      {R"([1,2])", "JSON object"},
  };
  for (const Case& c : cases) {
    auto encoded = EncodeObject(c.json);
    ASSERT_FALSE(encoded.ok()) << c.json;
    EXPECT_NE(encoded.error().message.find(c.message), std::string::npos)
        << "want \"" << c.message << "\" in: " << encoded.error().message;
  }
}

// ------------------------------------------------ round trips of every kind

// A representative object of every covered kind, as kube-apiserver writes it
// in JSON (zero values Go omits are absent).
const char* const kObjects[] = {
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"default",
      "uid":"0b5b2a4e-1","resourceVersion":"42","generation":3,
      "creationTimestamp":"2024-01-02T03:04:05Z","labels":{"app":"web"},
      "annotations":{"a":"b"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet",
      "name":"web","uid":"u1","controller":true,"blockOwnerDeletion":true}],
      "finalizers":["f.example/x"],"managedFields":[{"manager":"kubectl","operation":"Update",
      "apiVersion":"v1","time":"2024-01-02T03:04:05Z","fieldsType":"FieldsV1",
      "fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},
      "spec":{"volumes":[{"name":"cfg","configMap":{"name":"cm","items":[{"key":"k","path":"p"}],
      "defaultMode":420}},{"name":"scratch","emptyDir":{"sizeLimit":"1Gi"}},
      {"name":"tok","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3600,
      "path":"token"}}]}}],
      "initContainers":[{"name":"init","image":"busybox","command":["sh","-c","true"],
      "resources":{}}],
      "containers":[{"name":"main","image":"nginx:1.27","args":["-g","daemon off;"],
      "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
      "env":[{"name":"A","value":"1"},{"name":"POD","valueFrom":{"fieldRef":{"apiVersion":"v1",
      "fieldPath":"metadata.name"}}},{"name":"S","valueFrom":{"secretKeyRef":{"name":"sec",
      "key":"k","optional":false}}}],
      "resources":{"limits":{"cpu":"2","memory":"1Gi","nvidia.com/gpu":"1"},
      "requests":{"cpu":"500m","memory":"512Mi"}},
      "volumeMounts":[{"name":"cfg","readOnly":true,"mountPath":"/etc/cfg"}],
      "livenessProbe":{"httpGet":{"path":"/healthz","port":"http","scheme":"HTTP"},
      "initialDelaySeconds":5,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,
      "failureThreshold":3},
      "readinessProbe":{"tcpSocket":{"port":8080},"timeoutSeconds":1,"periodSeconds":5,
      "successThreshold":1,"failureThreshold":3},
      "lifecycle":{"preStop":{"exec":{"command":["sleep","5"]}}},
      "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
      "imagePullPolicy":"IfNotPresent","securityContext":{"runAsUser":1000,
      "allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}],
      "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
      "nodeSelector":{"disk":"ssd"},"serviceAccountName":"default","nodeName":"node-1",
      "securityContext":{"fsGroup":2000,"supplementalGroups":[5,6]},
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
      "nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In",
      "values":["a","b"]}]}]}},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
      {"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"web"}},
      "topologyKey":"kubernetes.io/hostname"}}]}},
      "schedulerName":"copse-scheduler","tolerations":[{"key":"k","operator":"Exists",
      "effect":"NoExecute","tolerationSeconds":300}],"priorityClassName":"high","priority":1000,
      "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
      "whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchExpressions":[{"key":"app",
      "operator":"Exists"}]}}],"overhead":{"cpu":"10m"},"enableServiceLinks":true,
      "schedulingGates":[{"name":"gate"}]},
      "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True",
      "lastProbeTime":null,"lastTransitionTime":"2024-01-02T03:04:06Z"}],"hostIP":"10.0.0.1",
      "podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"startTime":"2024-01-02T03:04:05Z",
      "containerStatuses":[{"name":"main","state":{"running":{"startedAt":"2024-01-02T03:04:06Z"}},
      "lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled",
      "startedAt":"2024-01-01T00:00:00Z","finishedAt":"2024-01-01T01:00:00Z"}},"ready":true,
      "restartCount":1,"image":"nginx:1.27","imageID":"sha256:abc","containerID":"c://1",
      "started":true}],"qosClass":"Burstable"}})",
    R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p","namespace":"ns"},
      "target":{"kind":"Node","name":"node-1"}})",
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"},
      "data":{"a":"1","b":"two\nlines \u00e9"},"binaryData":{"blob":"3q2+7w=="}})",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"},
      "immutable":false,"data":{"password":"cGFzcw==","empty":""},"type":"Opaque"})",
    R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"svc"},"subsets":[{
      "addresses":[{"ip":"10.1.0.5","nodeName":"node-1","targetRef":{"kind":"Pod","name":"p",
      "namespace":"ns"}}],"ports":[{"name":"http","port":80,"protocol":"TCP"}]}]})",
    R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e.1","namespace":"ns"},
      "involvedObject":{"kind":"Pod","namespace":"ns","name":"p","uid":"u"},"reason":"Scheduled",
      "message":"assigned","source":{"component":"copse-scheduler"},
      "firstTimestamp":"2024-01-02T03:04:05Z","lastTimestamp":"2024-01-02T03:04:05Z","count":1,
      "type":"Normal","eventTime":"2024-01-02T03:04:05.123456Z","reportingComponent":"copse",
      "reportingInstance":"copse-1"})",
    R"({"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr"},"spec":{"limits":[{
      "type":"Container","max":{"cpu":"2"},"default":{"memory":"256Mi"}}]}})",
    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","labels":{
      "kubernetes.io/metadata.name":"team-a"}},"spec":{"finalizers":["kubernetes"]},
      "status":{"phase":"Active"}})",
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1","labels":{
      "topology.kubernetes.io/zone":"zone-1"}},"spec":{"podCIDR":"10.1.0.0/24",
      "taints":[{"key":"gpu","value":"true","effect":"NoSchedule"}],"unschedulable":true},
      "status":{"capacity":{"cpu":"64","memory":"512Gi","pods":"110"},
      "allocatable":{"cpu":"63500m","memory":"500Gi","pods":"110"},"conditions":[{"type":"Ready",
      "status":"True","lastHeartbeatTime":"2024-01-02T03:04:05Z",
      "lastTransitionTime":"2024-01-02T03:04:05Z","reason":"KubeletReady","message":"ok"}],
      "addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
      "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"m",
      "systemUUID":"s","bootID":"b","kernelVersion":"6","osImage":"copse","containerRuntimeVersion":"fake",
      "kubeletVersion":"v1.32.0","kubeProxyVersion":"","operatingSystem":"linux",
      "architecture":"amd64"}}})",
    R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv"},"spec":{
      "capacity":{"storage":"10Gi"},"hostPath":{"path":"/data","type":"DirectoryOrCreate"},
      "accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Retain",
      "storageClassName":"local"},"status":{"phase":"Available"}})",
    R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"pvc",
      "namespace":"ns"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{
      "storage":"1Gi"}},"storageClassName":"local","volumeMode":"Filesystem"},
      "status":{"phase":"Pending"}})",
    R"({"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt"},"template":{
      "metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i",
      "resources":{}}]}}})",
    R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc"},"spec":{
      "replicas":2,"selector":{"app":"rc"},"template":{"metadata":{"labels":{"app":"rc"}},
      "spec":{"containers":[{"name":"c","image":"i","resources":{}}]}}},"status":{"replicas":2}})",
    R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"ns"},
      "spec":{"hard":{"pods":"10","requests.cpu":"4"},"scopes":["NotBestEffort"]},
      "status":{"hard":{"pods":"10"},"used":{"pods":"3"}}})",
    R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ns"},
      "spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":"http",
      "nodePort":30080},{"name":"alt","protocol":"TCP","port":81,"targetPort":8081}],
      "selector":{"app":"web"},"clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],
      "type":"NodePort","sessionAffinity":"None","externalTrafficPolicy":"Cluster",
      "ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},
      "status":{"loadBalancer":{}}})",
    R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa","namespace":"ns"},
      "secrets":[{"name":"tok"}],"imagePullSecrets":[{"name":"reg"}],
      "automountServiceAccountToken":false})",
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns",
      "generation":2},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{
      "containers":[{"name":"nginx","image":"nginx","resources":{}}]}},
      "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}},
      "revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":2,
      "replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,
      "conditions":[{"type":"Available","status":"True",
      "lastUpdateTime":"2024-01-02T03:04:05Z","lastTransitionTime":"2024-01-02T03:04:05Z",
      "reason":"MinimumReplicasAvailable","message":"ok"}]}})",
    R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-5d4","namespace":"ns"},
      "spec":{"replicas":0,"minReadySeconds":5,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c",
      "image":"i","resources":{}}]}}},"status":{"replicas":0}})",
    R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{
      "replicas":2,"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{
      "labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"i","resources":{}}]}},
      "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":[
      "ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],"serviceName":"db",
      "podManagementPolicy":"Parallel","updateStrategy":{"type":"RollingUpdate",
      "rollingUpdate":{"partition":0,"maxUnavailable":1}},
      "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Delete"},
      "ordinals":{"start":1}},"status":{"replicas":2,"availableReplicas":0}})",
    R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent"},"spec":{
      "selector":{"matchLabels":{"app":"agent"}},"template":{"metadata":{"labels":{
      "app":"agent"}},"spec":{"containers":[{"name":"c","image":"i","resources":{}}]}},
      "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"10%",
      "maxSurge":0}}},"status":{"currentNumberScheduled":1,"numberMisscheduled":0,
      "desiredNumberScheduled":1,"numberReady":1}})",
    R"({"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"db-7f"},
      "data":{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"c"}]}}}},
      "revision":2})",
    R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"pi"},"spec":{"parallelism":2,
      "completions":4,"backoffLimit":6,"activeDeadlineSeconds":600,"completionMode":"Indexed",
      "suspend":false,"template":{"metadata":{"labels":{"job":"pi"}},"spec":{"containers":[{
      "name":"pi","image":"perl","command":["perl","-e","1"],"resources":{}}],
      "restartPolicy":"Never"}},"podFailurePolicy":{"rules":[{"action":"FailJob",
      "onExitCodes":{"operator":"In","values":[42]}}]}},"status":{"startTime":"2024-01-02T03:04:05Z",
      "active":2,"succeeded":1,"completedIndexes":"0","conditions":[{"type":"Complete",
      "status":"True","lastProbeTime":"2024-01-02T03:04:05Z",
      "lastTransitionTime":"2024-01-02T03:04:05Z"}]}})",
    R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly"},"spec":{
      "schedule":"0 3 * * *","timeZone":"Etc/UTC","concurrencyPolicy":"Forbid",
      "jobTemplate":{"metadata":{"creationTimestamp":null},"spec":{"template":{"metadata":{
      "creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"i","resources":{}}],
      "restartPolicy":"OnFailure"}}}},"successfulJobsHistoryLimit":3},
      "status":{"lastScheduleTime":"2024-01-02T03:00:00Z"}})",
    R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{
      "name":"reader"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},
      {"verbs":["get"],"nonResourceURLs":["/healthz"]}],"aggregationRule":{
      "clusterRoleSelectors":[{"matchLabels":{"agg":"true"}}]}})",
    R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{
      "name":"read-all"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io",
      "name":"alice"},{"kind":"ServiceAccount","name":"sa","namespace":"ns"}],
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"reader"}})",
    R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r",
      "namespace":"ns"},"rules":[{"verbs":["*"],"apiGroups":["apps"],"resources":["deployments"],
      "resourceNames":["web"]}]})",
    R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb",
      "namespace":"ns"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io",
      "name":"devs"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role",
      "name":"r"}})",
    R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},
      "value":1000000,"globalDefault":true,"description":"important",
      "preemptionPolicy":"Never"})",
    R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb",
      "namespace":"ns"},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}},
      "unhealthyPodEvictionPolicy":"AlwaysAllow"},"status":{"observedGeneration":1,
      "disruptionsAllowed":1,"currentHealthy":3,"desiredHealthy":2,"expectedPods":3,
      "disruptedPods":{"web-1":"2024-01-02T03:04:05Z"}}})",
    R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"ns"},
      "deleteOptions":{"gracePeriodSeconds":0,"preconditions":{"uid":"u"},
      "propagationPolicy":"Background","dryRun":["All"]}})",
    R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"copse",
      "namespace":"kube-system"},"spec":{"holderIdentity":"copse-0","leaseDurationSeconds":15,
      "acquireTime":"2024-01-02T03:04:05.000000Z","renewTime":"2024-01-02T03:04:20.250000Z",
      "leaseTransitions":0}})",
    R"({"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web"},"spec":{
      "ingressClassName":"nginx","tls":[{"hosts":["a.example"],"secretName":"tls"}],
      "rules":[{"host":"a.example","http":{"paths":[{"path":"/","pathType":"Prefix",
      "backend":{"service":{"name":"web","port":{"number":80}}}}]}}],
      "defaultBackend":{"service":{"name":"web","port":{"name":"http"}}}},
      "status":{"loadBalancer":{}}})",
    R"({"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"nginx"},
      "spec":{"controller":"k8s.io/ingress-nginx","parameters":{"kind":"Params","name":"p",
      "scope":"Cluster"}}})",
    R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"deny"},
      "spec":{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/8",
      "except":["10.1.0.0/16"]}}],"ports":[{"protocol":"TCP","port":"http","endPort":9000}]}],
      "policyTypes":["Ingress"]}})",
    R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e2","namespace":"ns"},
      "eventTime":"2024-01-02T03:04:05.000001Z","reportingController":"copse",
      "reportingInstance":"copse-0","action":"Binding","reason":"Scheduled",
      "regarding":{"kind":"Pod","name":"p"},"note":"bound","type":"Normal"})",
    R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"ns"},
      "spec":{"replicas":5},"status":{"replicas":3,"selector":"app=web"}})",
    R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
      "metadata":{},"spec":{"resourceAttributes":{"namespace":"default",
      "verb":"create","resource":"pods"}},
      "status":{"allowed":true,"reason":"admin"}})",
    R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview",
      "metadata":{},"spec":{"namespace":"default"},
      "status":{"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],
      "nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],"incomplete":false}})",
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x",
      "kind":"pods","causes":[{"reason":"FieldValueInvalid","message":"bad","field":"spec"}],
      "retryAfterSeconds":1},"code":404})",
    R"({"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","gracePeriodSeconds":0,
      "propagationPolicy":"Foreground"})",
    R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"c",
      "remainingItemCount":3},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},
      "spec":{"containers":[{"name":"c","image":"i","resources":{}}]},"status":{}},
      {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":null},
      "status":{"phase":"Pending"}}]})",
};

TEST(ProtobufRoundTrip, EveryKindComesBackAsItWent) {
  for (const char* text : kObjects) {
    json original = json::parse(text);
    // A list item's null containers is the one value JSON has and protobuf does not.
    if (original["kind"] == "PodList") original["items"][1]["spec"].erase("containers");
    auto encoded = EncodeObject(text);
    ASSERT_TRUE(encoded.ok()) << original["kind"] << ": " << encoded.error().ToString();
    EXPECT_TRUE(encoded->starts_with(kMagic));
    auto decoded = DecodeObject(*encoded);
    ASSERT_TRUE(decoded.ok()) << original["kind"] << ": " << decoded.error().ToString();
    const json back = Parse(*decoded);
    EXPECT_EQ(back, original) << original["kind"]
                              << "\n  diff: " << json::diff(original, back).dump();
    // The message alone round-trips as well (the watch and list paths use it).
    auto message = EncodeMessage(original["apiVersion"].get<std::string>(),
                                 original["kind"].get<std::string>(), text);
    ASSERT_TRUE(message.ok());
    auto again = DecodeMessage(original["apiVersion"].get<std::string>(),
                               original["kind"].get<std::string>(), *message);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(Parse(*again), original);
  }
}

TEST(ProtobufRoundTrip, CoversTheKindsItPromises) {
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"v1", "Pod"},
      {"v1", "Node"},
      {"v1", "Namespace"},
      {"v1", "Service"},
      {"v1", "Endpoints"},
      {"v1", "Event"},
      {"v1", "ConfigMap"},
      {"v1", "Secret"},
      {"v1", "ServiceAccount"},
      {"v1", "PersistentVolumeClaim"},
      {"v1", "PersistentVolume"},
      {"v1", "ReplicationController"},
      {"v1", "ResourceQuota"},
      {"v1", "LimitRange"},
      {"v1", "PodTemplate"},
      {"v1", "Binding"},
      {"apps/v1", "Deployment"},
      {"apps/v1", "ReplicaSet"},
      {"apps/v1", "StatefulSet"},
      {"apps/v1", "DaemonSet"},
      {"apps/v1", "ControllerRevision"},
      {"batch/v1", "Job"},
      {"batch/v1", "CronJob"},
      {"rbac.authorization.k8s.io/v1", "Role"},
      {"rbac.authorization.k8s.io/v1", "RoleBinding"},
      {"rbac.authorization.k8s.io/v1", "ClusterRole"},
      {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"},
      {"scheduling.k8s.io/v1", "PriorityClass"},
      {"policy/v1", "PodDisruptionBudget"},
      {"policy/v1", "Eviction"},
      {"coordination.k8s.io/v1", "Lease"},
      {"networking.k8s.io/v1", "NetworkPolicy"},
      {"networking.k8s.io/v1", "Ingress"},
      {"networking.k8s.io/v1", "IngressClass"},
      {"events.k8s.io/v1", "Event"},
      {"autoscaling/v1", "Scale"},
      {"authorization.k8s.io/v1", "SelfSubjectAccessReview"},
      {"authorization.k8s.io/v1", "SelfSubjectRulesReview"},
      {"v1", "Status"},
      {"apps/v1", "DeleteOptions"},
      {"v1", "PodList"},
      {"apps/v1", "DeploymentList"}};
  std::set<std::pair<std::string, std::string>> fixtures;
  for (const char* text : kObjects) {
    const json j = json::parse(text);
    fixtures.emplace(j["apiVersion"], j["kind"]);
  }
  for (const auto& [api_version, kind] : kinds) {
    EXPECT_TRUE(HasProtobufForm(api_version, kind)) << api_version << " " << kind;
    // Every kind has a round-trip object above (meta kinds at one version).
    if (kind == "DeploymentList" || kind == "DeleteOptions") continue;
    EXPECT_TRUE(fixtures.count({api_version, kind})) << "no round-trip object for " << kind;
  }
  EXPECT_TRUE(fixtures.count({"meta.k8s.io/v1", "DeleteOptions"}));
}

TEST(ProtobufWatch, FramesRoundTrip) {
  std::string stream;
  ASSERT_TRUE(AppendWatchFrame("ADDED", kConfigMapJson.dump(), &stream).ok());
  ASSERT_TRUE(AppendWatchFrame("ERROR",
                               R"({"kind":"Status","apiVersion":"v1","metadata":{},
                                 "status":"Failure","reason":"Expired","code":410})",
                               &stream)
                  .ok());
  // The first frame by hand: length, WatchEvent{type, RawExtension{raw: envelope}}.
  const std::string event =
      Len(1, "ADDED") + Len(2, Len(1, Envelope("v1", "ConfigMap", ConfigMapMessage())));
  const std::string head =
      std::string{static_cast<char>(event.size() >> 24), static_cast<char>(event.size() >> 16),
                  static_cast<char>(event.size() >> 8), static_cast<char>(event.size())} +
      event;
  ASSERT_EQ(stream.substr(0, head.size()), head);

  auto partial = ReadWatchFrame(std::string_view(stream).substr(0, 10));
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->consumed, 0u);
  auto first = ReadWatchFrame(stream);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->type, "ADDED");
  EXPECT_EQ(Parse(first->object_json), kConfigMapJson);
  auto second = ReadWatchFrame(std::string_view(stream).substr(first->consumed));
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second->type, "ERROR");
  EXPECT_EQ(Parse(second->object_json)["code"], 410);
  EXPECT_EQ(first->consumed + second->consumed, stream.size());
}

// ------------------------------------------------ found by tests/fuzz/protobuf_fuzz.cc

std::string ReadFuzzInput(const std::string& name) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) + "/tests/unit/kube_codec/fuzz/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ProtobufFuzzRegression, MapEntriesComeOutSortedWhateverTheWireOrder) {
  // Go unmarshals a map field into a map and encoding/json writes its keys
  // sorted; the decoder wrote them in wire order, so JSON -> protobuf (sorted)
  // -> JSON changed the text.
  const std::string requests =
      Len(2, Len(1, "cpu") + Len(2, Len(1, "1"))) + Len(2, Len(1, "500m") + Len(2, Len(1, "0")));
  const std::string container = Len(1, "c") + Len(2, "img") + Len(8, requests);
  const std::string pod = Len(1, Len(1, "p")) + Len(2, Len(2, container));
  auto decoded = DecodeMessage("v1", "Pod", pod);
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_NE(decoded->find(R"("requests":{"500m":"0","cpu":"1"})"), std::string::npos) << *decoded;

  // The fuzzer's input: the first byte picked DecodeMessage of a v1 Pod.
  const std::string input = ReadFuzzInput("protobuf-map-entry-order");
  ASSERT_FALSE(input.empty());
  auto json1 = DecodeMessage("v1", "Pod", std::string_view(input).substr(1));
  ASSERT_TRUE(json1.ok()) << json1.error().ToString();
  auto message = EncodeMessage("v1", "Pod", *json1);
  ASSERT_TRUE(message.ok()) << message.error().ToString();
  auto json2 = DecodeMessage("v1", "Pod", *message);
  ASSERT_TRUE(json2.ok()) << json2.error().ToString();
  EXPECT_EQ(*json2, *json1);
}

TEST(ProtobufFuzzRegression, ARepeatedMapKeyKeepsItsLastValue) {
  // As Go's unmarshal into a map; the decoder wrote the key twice.
  const std::string data = Len(2, Len(1, "k") + Len(2, "first")) +
                           Len(2, Len(1, "a") + Len(2, "x")) + Len(2, Len(1, "k") + Len(2, "last"));
  auto decoded = DecodeMessage("v1", "ConfigMap", Len(1, Len(1, "cm")) + data);
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(Parse(*decoded)["data"], json::parse(R"({"a":"x","k":"last"})"));
  EXPECT_EQ(decoded->find("first"), std::string::npos) << *decoded;
}

}  // namespace
}  // namespace copse::kube::protobuf
