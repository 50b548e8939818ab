#include "apiserver/table.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/jsonpath.h"

namespace copse::apiserver {
namespace table_test {

using json = nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

json J(const char* text) { return json::parse(text); }

// 2024-05-01T12:00:00Z
const std::chrono::system_clock::time_point kNow{seconds(1714564800)};

std::vector<std::string> ColumnNames(const std::vector<PrinterColumn>& columns) {
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.name);
  return out;
}

// The cells of a single object's row, by column name.
json Cells(std::string_view group, std::string_view resource, const json& obj) {
  const std::vector<PrinterColumn> columns = BuiltinColumns(group, resource);
  json table = BuildTable(columns, {&obj}, "None", kNow);
  json by_name = json::object();
  for (size_t i = 0; i < columns.size(); ++i)
    by_name[columns[i].name] = table["rows"][0]["cells"][i];
  return by_name;
}

TEST(HumanDuration, MatchesApimachinery) {
  EXPECT_EQ(HumanDuration(seconds(-5)), "<invalid>");
  EXPECT_EQ(HumanDuration(seconds(-1)), "0s");
  EXPECT_EQ(HumanDuration(seconds(0)), "0s");
  EXPECT_EQ(HumanDuration(seconds(45)), "45s");
  EXPECT_EQ(HumanDuration(seconds(119)), "119s");
  EXPECT_EQ(HumanDuration(seconds(120)), "2m");
  EXPECT_EQ(HumanDuration(minutes(5) + seconds(3)), "5m3s");
  EXPECT_EQ(HumanDuration(minutes(10) + seconds(59)), "10m");
  EXPECT_EQ(HumanDuration(minutes(179)), "179m");
  EXPECT_EQ(HumanDuration(hours(3)), "3h");
  EXPECT_EQ(HumanDuration(hours(3) + minutes(4)), "3h4m");
  EXPECT_EQ(HumanDuration(hours(8) + minutes(30)), "8h");
  EXPECT_EQ(HumanDuration(hours(47)), "47h");
  EXPECT_EQ(HumanDuration(hours(72)), "3d");
  EXPECT_EQ(HumanDuration(hours(76)), "3d4h");
  EXPECT_EQ(HumanDuration(hours(24 * 8 + 5)), "8d");
  EXPECT_EQ(HumanDuration(hours(24 * 400)), "400d");
  EXPECT_EQ(HumanDuration(hours(24 * 730)), "2y");
  EXPECT_EQ(HumanDuration(hours(24 * 740)), "2y10d");
  EXPECT_EQ(HumanDuration(hours(24 * 365 * 9)), "9y");
}

TEST(TranslateTimestampSince, ParsesRfc3339) {
  EXPECT_EQ(TranslateTimestampSince("2024-05-01T11:54:57Z", kNow), "5m3s");
  EXPECT_EQ(TranslateTimestampSince("2024-04-28T12:00:00Z", kNow), "3d");
  EXPECT_EQ(TranslateTimestampSince("2024-05-01T13:55:00+02:00", kNow), "5m");
  EXPECT_EQ(TranslateTimestampSince("2024-05-01T11:59:30.123456Z", kNow), "29s");
  EXPECT_EQ(TranslateTimestampSince("", kNow), "<unknown>");
  EXPECT_EQ(TranslateTimestampSince("yesterday", kNow), "<unknown>");
}

TEST(BuiltinColumns, PodsAndNodesAsKubeApiserver) {
  const auto pods = BuiltinColumns("", "pods");
  EXPECT_EQ(ColumnNames(pods),
            (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                      "Nominated Node", "Readiness Gates"}));
  EXPECT_EQ(pods[0].format, "name");
  EXPECT_EQ(pods[4].priority, 0);
  EXPECT_EQ(pods[5].priority, 1);
  const auto nodes = BuiltinColumns("", "nodes");
  EXPECT_EQ(
      ColumnNames(nodes),
      (std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version", "Internal-IP",
                                "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}));
  EXPECT_EQ(ColumnNames(BuiltinColumns("", "namespaces")),
            (std::vector<std::string>{"Name", "Status", "Age"}));
  EXPECT_EQ(ColumnNames(BuiltinColumns("apiextensions.k8s.io", "customresourcedefinitions")),
            (std::vector<std::string>{"Name", "Created At"}));
  EXPECT_EQ(
      ColumnNames(BuiltinColumns("scheduling.k8s.io", "priorityclasses")),
      (std::vector<std::string>{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}));
  EXPECT_EQ(ColumnNames(BuiltinColumns("grove.io", "podcliques")),
            (std::vector<std::string>{"Name", "Age"}));
}

TEST(PodCells, RunningPodReadyCount) {
  json pod = J(R"({
    "metadata": {"name": "web-0", "creationTimestamp": "2024-05-01T11:54:57Z"},
    "spec": {"nodeName": "node-1", "containers": [{"name": "a"}, {"name": "b"}]},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.1.0.7"}],
      "containerStatuses": [
        {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
        {"name": "b", "ready": false, "restartCount": 0, "state": {"running": {}}}]}
  })");
  json c = Cells("", "pods", pod);
  EXPECT_EQ(c["Name"], "web-0");
  EXPECT_EQ(c["Ready"], "1/2");
  EXPECT_EQ(c["Status"], "Running");
  EXPECT_EQ(c["Restarts"], "0");
  EXPECT_EQ(c["Age"], "5m3s");
  EXPECT_EQ(c["IP"], "10.1.0.7");
  EXPECT_EQ(c["Node"], "node-1");
  EXPECT_EQ(c["Nominated Node"], "<none>");
  EXPECT_EQ(c["Readiness Gates"], "<none>");
}

TEST(PodCells, WaitingReasonAndRestartsWithLastRestart) {
  json pod = J(R"({
    "metadata": {"name": "crash"},
    "spec": {"containers": [{"name": "a"}]},
    "status": {"phase": "Running", "containerStatuses": [
      {"name": "a", "ready": false, "restartCount": 3,
       "state": {"waiting": {"reason": "CrashLoopBackOff"}},
       "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-05-01T11:55:00Z"}}}]}
  })");
  json c = Cells("", "pods", pod);
  EXPECT_EQ(c["Status"], "CrashLoopBackOff");
  EXPECT_EQ(c["Restarts"], "3 (5m ago)");
  EXPECT_EQ(c["Ready"], "0/1");
  EXPECT_EQ(c["Age"], "<unknown>");
}

TEST(PodCells, PhasesGatesInitAndTerminating) {
  json pending = J(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
    "status":{"phase":"Pending"}})");
  EXPECT_EQ(Cells("", "pods", pending)["Status"], "Pending");

  json gated = J(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})");
  EXPECT_EQ(Cells("", "pods", gated)["Status"], "SchedulingGated");

  json init = J(
      R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"a"}]},
    "status":{"phase":"Pending","initContainerStatuses":[{"name":"i","state":{"running":{}}}]}})");
  EXPECT_EQ(Cells("", "pods", init)["Status"], "Init:0/1");

  json terminating = J(R"({"metadata":{"name":"p","deletionTimestamp":"2024-05-01T11:59:00Z"},
    "spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}})");
  EXPECT_EQ(Cells("", "pods", terminating)["Status"], "Terminating");

  json completed = J(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
    "status":{"phase":"Succeeded","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}})");
  const std::vector<PrinterColumn> columns = BuiltinColumns("", "pods");
  json table = BuildTable(columns, {&completed}, "None", kNow);
  EXPECT_EQ(table["rows"][0]["cells"][2], "Completed");
  EXPECT_EQ(table["rows"][0]["conditions"][0]["type"], "Completed");
  EXPECT_EQ(table["rows"][0]["conditions"][0]["reason"], "Succeeded");
}

TEST(NodeCells, StatusRolesAndWideColumns) {
  json node = J(R"({
    "metadata": {"name": "n1", "creationTimestamp": "2024-04-28T12:00:00Z",
      "labels": {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": "", "kubernetes.io/role": "edge"}},
    "spec": {"unschedulable": true},
    "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
      "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "n1"}],
      "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": ""}}
  })");
  json c = Cells("", "nodes", node);
  EXPECT_EQ(c["Status"], "Ready,SchedulingDisabled");
  EXPECT_EQ(c["Roles"], "edge,gpu,worker");
  EXPECT_EQ(c["Age"], "3d");
  EXPECT_EQ(c["Version"], "v1.32.0");
  EXPECT_EQ(c["Internal-IP"], "10.0.0.1");
  EXPECT_EQ(c["External-IP"], "<none>");
  EXPECT_EQ(c["Container-Runtime"], "<unknown>");

  json not_ready = J(
      R"({"metadata":{"name":"n2"},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})");
  EXPECT_EQ(Cells("", "nodes", not_ready)["Status"], "NotReady");
  EXPECT_EQ(Cells("", "nodes", not_ready)["Roles"], "<none>");
  json no_conditions = J(R"({"metadata":{"name":"n3"}})");
  EXPECT_EQ(Cells("", "nodes", no_conditions)["Status"], "Unknown");
}

TEST(OtherCells, ServicesEventsLeasesPriorityClassesPdbs) {
  json svc =
      J(R"({"metadata":{"name":"s"},"spec":{"clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],
    "ports":[{"port":80,"protocol":"TCP"},{"port":443,"nodePort":30443}],"selector":{"b":"2","a":"1"}}})");
  json s = Cells("", "services", svc);
  EXPECT_EQ(s["Type"], "ClusterIP");
  EXPECT_EQ(s["Cluster-IP"], "10.96.0.10");
  EXPECT_EQ(s["External-IP"], "<none>");
  EXPECT_EQ(s["Port(s)"], "80/TCP,443:30443/TCP");
  EXPECT_EQ(s["Selector"], "a=1,b=2");

  json ev = J(R"({"metadata":{"name":"p.1"},"type":"Warning","reason":"FailedScheduling",
    "involvedObject":{"kind":"Pod","name":"p"},"message":" 0/5 nodes are available \n",
    "source":{"component":"copse-scheduler"},"firstTimestamp":"2024-05-01T11:50:00Z",
    "lastTimestamp":"2024-05-01T11:59:00Z","count":4})");
  json e = Cells("", "events", ev);
  EXPECT_EQ(e["Last Seen"], "60s");
  EXPECT_EQ(e["First Seen"], "10m");
  EXPECT_EQ(e["Object"], "pod/p");
  EXPECT_EQ(e["Message"], "0/5 nodes are available");
  EXPECT_EQ(e["Source"], "copse-scheduler");
  EXPECT_EQ(e["Count"], 4);

  json ev_v1 = J(R"({"metadata":{"name":"p.2"},"type":"Normal","reason":"Scheduled",
    "regarding":{"kind":"Pod","name":"q"},"note":"bound","reportingController":"copse","eventTime":"2024-05-01T11:58:00.000000Z"})");
  json e1 = Cells("events.k8s.io", "events", ev_v1);
  EXPECT_EQ(e1["Object"], "pod/q");
  EXPECT_EQ(e1["Message"], "bound");
  EXPECT_EQ(e1["Last Seen"], "2m");
  EXPECT_EQ(e1["Count"], 1);

  json lease = J(R"({"metadata":{"name":"l"},"spec":{"holderIdentity":"copse-1"}})");
  EXPECT_EQ(Cells("coordination.k8s.io", "leases", lease)["Holder"], "copse-1");

  json pc = J(R"({"metadata":{"name":"high"},"value":1000,"globalDefault":true})");
  json p = Cells("scheduling.k8s.io", "priorityclasses", pc);
  EXPECT_EQ(p["Value"], 1000);
  EXPECT_EQ(p["Global-Default"], true);
  EXPECT_EQ(p["PreemptionPolicy"], "");

  json pdb = J(
      R"({"metadata":{"name":"d"},"spec":{"minAvailable":"50%"},"status":{"disruptionsAllowed":2}})");
  json d = Cells("policy", "poddisruptionbudgets", pdb);
  EXPECT_EQ(d["Min Available"], "50%");
  EXPECT_EQ(d["Max Unavailable"], "N/A");
  EXPECT_EQ(d["Allowed Disruptions"], 2);

  json crd = J(
      R"({"metadata":{"name":"podgangs.scheduler.grove.io","creationTimestamp":"2024-05-01T13:00:00+02:00"}})");
  EXPECT_EQ(Cells("apiextensions.k8s.io", "customresourcedefinitions", crd)["Created At"],
            "2024-05-01T11:00:00Z");
}

TEST(CrdColumns, NameFirstAndAgeOnlyWhenNoneDeclared) {
  EXPECT_EQ(ColumnNames(ColumnsFromCrd(J(R"({"name":"v1"})"))),
            (std::vector<std::string>{"Name", "Age"}));
  const auto columns = ColumnsFromCrd(J(R"({"name":"v1","additionalPrinterColumns":[
    {"name":"Replicas","type":"integer","jsonPath":".spec.replicas"},
    {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","priority":1,"description":"ready?"},
    {"name":"Started","type":"date","jsonPath":".status.startTime"},
    {"name":"First","type":"string","jsonPath":".spec.items[0].name"}]})"));
  EXPECT_EQ(ColumnNames(columns),
            (std::vector<std::string>{"Name", "Replicas", "Ready", "Started", "First"}));
  EXPECT_EQ(columns[1].description,
            "Custom resource definition column (in JSONPath format): .spec.replicas");
  EXPECT_EQ(columns[2].priority, 1);
  EXPECT_EQ(columns[2].description, "ready?");

  json cr = J(
      R"({"metadata":{"name":"pcs-0"},"spec":{"replicas":3,"items":[{"name":"first"},{"name":"second"}]},
    "status":{"startTime":"2024-05-01T09:00:00Z","conditions":[{"type":"Scheduled","status":"True"},{"type":"Ready","status":"False"}]}})");
  json table = BuildTable(columns, {&cr}, "Metadata", kNow);
  EXPECT_EQ(table["rows"][0]["cells"], J(R"(["pcs-0", 3, "False", "3h", "first"])"));

  json missing = J(R"({"metadata":{"name":"bare"}})");
  json t2 = BuildTable(columns, {&missing}, "None", kNow);
  EXPECT_EQ(t2["rows"][0]["cells"], J(R"(["bare", null, null, null, null])"));
}

TEST(BuildTable, IncludeObjectVariants) {
  json pod = J(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","labels":{"app":"x"}},
    "spec":{"containers":[{"name":"a"}]}})");
  const auto columns = BuiltinColumns("", "pods");
  json meta = BuildTable(columns, {&pod}, "Metadata", kNow);
  EXPECT_EQ(meta["kind"], "Table");
  EXPECT_EQ(meta["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(meta["columnDefinitions"].size(), 9u);
  EXPECT_EQ(meta["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(meta["columnDefinitions"][0]["format"], "name");
  EXPECT_EQ(meta["rows"][0]["object"],
            J(R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
                  "metadata":{"name":"p","namespace":"ns","labels":{"app":"x"}}})"));
  EXPECT_EQ(BuildTable(columns, {&pod}, "", kNow)["rows"][0]["object"]["kind"],
            "PartialObjectMetadata");
  EXPECT_EQ(BuildTable(columns, {&pod}, "Object", kNow)["rows"][0]["object"], pod);
  EXPECT_TRUE(BuildTable(columns, {&pod}, "None", kNow)["rows"][0]["object"].is_null());
  EXPECT_EQ(BuildTable(columns, {}, "None", kNow)["rows"], json::array());

  EXPECT_TRUE(CheckIncludeObject("Metadata").ok());
  EXPECT_TRUE(CheckIncludeObject("").ok());
  Status bad = CheckIncludeObject("Everything");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http_status, 400);
  EXPECT_EQ(bad.error().message, "unrecognized includeObject value: \"Everything\"");
}

TEST(BuildTable, WatchEventsCarryColumnsOnlyFirst) {
  json pod = J(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]}})");
  const auto columns = BuiltinColumns("", "pods");
  json first = BuildTableWatchEvent(columns, pod, "Metadata", kNow, true);
  json later = BuildTableWatchEvent(columns, pod, "Metadata", kNow, false);
  EXPECT_EQ(first["columnDefinitions"].size(), 9u);
  EXPECT_EQ(later["columnDefinitions"], json::array());
  EXPECT_EQ(later["rows"].size(), 1u);
  EXPECT_EQ(later["rows"][0]["cells"][0], "p");
}

TEST(JsonPathTest, FieldsIndexesWildcardsFilters) {
  json doc = J(R"({"spec":{"replicas":3,"ratio":0.5,"big":1500000.0,"a.b":"dotted",
    "items":[{"n":1,"tag":"x"},{"n":2,"tag":"y"},{"n":3,"tag":"y"}]},"status":{"ok":true}})");
  auto text = [&](std::string_view path) {
    Result<JsonPath> p = JsonPath::Parse(path);
    EXPECT_TRUE(p.ok()) << path;
    if (!p.ok()) return std::string("<parse error>");
    auto r = p->Find(doc);
    std::string out;
    for (const json* v : r) {
      if (!out.empty()) out += " ";
      out += JsonPathText(*v);
    }
    return out;
  };
  EXPECT_EQ(text(".spec.replicas"), "3");
  EXPECT_EQ(text("{.spec.replicas}"), "3");
  EXPECT_EQ(text("$.spec.replicas"), "3");
  EXPECT_EQ(text(".spec.ratio"), "0.5");
  EXPECT_EQ(text(".spec.big"), "1.5e+06");
  EXPECT_EQ(text(".spec['a.b']"), "dotted");
  EXPECT_EQ(text(".spec.items[1].n"), "2");
  EXPECT_EQ(text(".spec.items[-1].n"), "3");
  EXPECT_EQ(text(".spec.items[7].n"), "");
  EXPECT_EQ(text(".spec.items[*].n"), "1 2 3");
  EXPECT_EQ(text(".spec.items[?(@.tag==\"y\")].n"), "2 3");
  EXPECT_EQ(text(".spec.items[?(@.tag=='x')].n"), "1");
  EXPECT_EQ(text(".spec.items[?(@.n > 1)].tag"), "y y");
  EXPECT_EQ(text(".spec.items[?(@.n != 2)].n"), "1 3");
  EXPECT_EQ(text(".spec.items[?(@.missing)].n"), "");
  EXPECT_EQ(text(".status.ok"), "true");
  EXPECT_EQ(text(".spec.items[0]"), "{\"n\":1,\"tag\":\"x\"}");
  EXPECT_EQ(text(".nothing.here"), "");

  EXPECT_FALSE(JsonPath::Parse("..spec").ok());
  EXPECT_FALSE(JsonPath::Parse(".spec.items[1:2]").ok());
  EXPECT_FALSE(JsonPath::Parse(".spec[").ok());
  EXPECT_FALSE(JsonPath::Parse("").ok());
  EXPECT_FALSE(JsonPath::Parse("spec").ok());
}

// kubectl's apps and batch printers: what `kubectl get deploy,rs,sts,ds,jobs`
// shows against kube-apiserver.
TEST(WorkloadCells, DeploymentReplicaSetStatefulSetDaemonSetAndJob) {
  const json deployment =
      J(R"({"metadata":{"name":"web","creationTimestamp":"2024-05-01T11:00:00Z"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
      "template":{"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"envoy"}]}}},
    "status":{"replicas":3,"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}})");
  json cells = Cells("apps", "deployments", deployment);
  EXPECT_EQ(cells["Ready"], "2/3");
  EXPECT_EQ(cells["Up-to-date"], 3);
  EXPECT_EQ(cells["Available"], 2);
  EXPECT_EQ(cells["Age"], "60m");
  EXPECT_EQ(cells["Containers"], "a,b");
  EXPECT_EQ(cells["Images"], "nginx,envoy");
  EXPECT_EQ(cells["Selector"], "app=web");

  cells = Cells("apps", "replicasets", deployment);
  EXPECT_EQ(cells["Desired"], 3);
  EXPECT_EQ(cells["Current"], 3);
  EXPECT_EQ(cells["Ready"], 2);
  EXPECT_EQ(Cells("apps", "statefulsets", deployment)["Ready"], "2/3");

  const json daemonset = J(R"({"metadata":{"name":"agent"},
    "spec":{"template":{"spec":{"nodeSelector":{"gpu":"yes"},"containers":[{"name":"a"}]}}},
    "status":{"desiredNumberScheduled":4,"currentNumberScheduled":3,"numberReady":2,
              "updatedNumberScheduled":3,"numberAvailable":1}})");
  cells = Cells("apps", "daemonsets", daemonset);
  EXPECT_EQ(cells["Desired"], 4);
  EXPECT_EQ(cells["Current"], 3);
  EXPECT_EQ(cells["Ready"], 2);
  EXPECT_EQ(cells["Up-to-date"], 3);
  EXPECT_EQ(cells["Available"], 1);
  EXPECT_EQ(cells["Node Selector"], "gpu=yes");

  const json done = J(R"({"metadata":{"name":"j"},"spec":{"completions":4},
    "status":{"succeeded":4,"startTime":"2024-05-01T11:50:00Z",
              "completionTime":"2024-05-01T11:52:30Z"}})");
  cells = Cells("batch", "jobs", done);
  EXPECT_EQ(cells["Completions"], "4/4");
  EXPECT_EQ(cells["Duration"], "2m30s");
  const json running = J(R"({"metadata":{"name":"r"},"spec":{"parallelism":3},
    "status":{"succeeded":0,"startTime":"2024-05-01T11:59:50Z"}})");
  cells = Cells("batch", "jobs", running);
  EXPECT_EQ(cells["Completions"], "0/1 of 3");
  EXPECT_EQ(cells["Duration"], "10s");
}

}  // namespace table_test
}  // namespace copse::apiserver
