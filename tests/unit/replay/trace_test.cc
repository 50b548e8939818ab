// The trace format (replay/trace.h) and the synthetic generator (replay/synth.h).
#include "replay/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "replay/synth.h"

namespace copse::replay {
namespace {

using nlohmann::json;

Result<Trace> Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseTrace(in);
}

const char* kHeader = R"({"format":"copse-trace","version":1,"source":"test","duration_ms":1000})";

TEST(TraceTest, ParsesEventsAndRuntimes) {
  const std::string text =
      std::string(kHeader) + "\n" +
      R"({"t":0,"op":"init","object":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}})"
      "\n"
      R"({"t":5,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"}},"runtime_ms":70})"
      "\n"
      R"({"t":6,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q","namespace":"a"}}})"
      "\n"
      R"({"t":9,"op":"bound","namespace":"a","name":"q","node":"n1"})"
      "\n"
      R"({"t":40,"op":"end","namespace":"a","name":"q"})"
      "\n";
  Result<Trace> t = Parse(text);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header.source, "test");
  EXPECT_EQ(t->header.rack_label, "copse.dev/rack");
  ASSERT_EQ(t->events.size(), 5u);
  EXPECT_EQ(t->events[0].op, TraceOp::kInit);
  EXPECT_EQ(t->events[1].name, "p");
  EXPECT_EQ(t->events[1].ns, "a");
  EXPECT_EQ(t->events[1].runtime_ms, 70);
  EXPECT_EQ(t->events[2].runtime_ms, 31);  // end - bound
}

// A name used again (a StatefulSet's pod, a Job's retry) is another pod: each
// create gets the runtime of its own bound and end, not the first pod's.
TEST(TraceTest, ANameUsedAgainHasTheRuntimeOfEachPod) {
  const std::string text =
      std::string(kHeader) + "\n" +
      R"({"t":1,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"a"}}})"
      "\n"
      R"({"t":2,"op":"bound","namespace":"a","name":"w","node":"n1"})"
      "\n"
      R"({"t":12,"op":"end","namespace":"a","name":"w"})"
      "\n"
      R"({"t":20,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"a"}}})"
      "\n"
      R"({"t":25,"op":"bound","namespace":"a","name":"w","node":"n2"})"
      "\n"
      R"({"t":325,"op":"end","namespace":"a","name":"w"})"
      "\n"
      // Recreated, never bound: no runtime (its end is not the bound pod's).
      R"({"t":400,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"a"}}})"
      "\n"
      R"({"t":410,"op":"end","namespace":"a","name":"w"})"
      "\n"
      // A runtime_ms given stays, whatever bound and end say.
      R"({"t":500,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"a"}},"runtime_ms":7})"
      "\n"
      R"({"t":501,"op":"bound","namespace":"a","name":"w","node":"n1"})"
      "\n"
      R"({"t":900,"op":"end","namespace":"a","name":"w"})"
      "\n";
  Result<Trace> t = Parse(text);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->events.size(), 11u);
  EXPECT_EQ(t->events[0].runtime_ms, 10);
  EXPECT_EQ(t->events[3].runtime_ms, 300);
  EXPECT_EQ(t->events[6].runtime_ms, std::nullopt);
  EXPECT_EQ(t->events[8].runtime_ms, 7);
}

TEST(TraceTest, RejectsBadInputNamingTheLineAndField) {
  struct Case {
    std::string text;
    std::string want;
  } cases[] = {
      {"", "no header"},
      {R"({"format":"other","version":1})", "format"},
      {R"({"format":"copse-trace","version":2})", "version"},
      {std::string(kHeader) + "\nnot json", "line 2: not a JSON object"},
      {std::string(kHeader) + "\n" + R"({"t":1,"op":"fly","name":"x"})", "op \"fly\""},
      {std::string(kHeader) + "\n" + R"({"t":-1,"op":"end","name":"x"})", "t must be"},
      {std::string(kHeader) + "\n" + R"({"t":1,"op":"create","object":{"kind":"Pod"}})",
       "apiVersion, kind and metadata.name"},
      {std::string(kHeader) + "\n" + R"({"t":5,"op":"end","name":"x"})" + "\n" +
           R"({"t":4,"op":"end","name":"y"})",
       "line 3: t goes back"},
      {std::string(kHeader) + "\n" +
           R"({"t":1,"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},"runtime_ms":-3})",
       "runtime_ms"},
      {std::string(kHeader) + "\n" + R"({"t":1,"op":"bound","name":"x"})", "node missing"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = Parse(c.text);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().message.find(c.want), std::string::npos)
        << c.text << " -> " << t.error().message;
  }
}

TEST(TraceTest, ReducedPodKeepsSchedulingFieldsOnly) {
  const json pod = json::parse(R"({
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"a","labels":{"app":"x"},"uid":"u1",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"o1",
        "controller":true,"blockOwnerDeletion":true}],
      "annotations":{"copse.dev/simulate-run-for":"1m","team.example.com/secret-note":"hunter2"},
      "managedFields":[{"manager":"kubectl"}]},
    "spec":{"schedulerName":"copse-scheduler","priorityClassName":"high","nodeSelector":{"k":"v"},
      "tolerations":[{"key":"t","operator":"Exists"}],"serviceAccountName":"sa",
      "volumes":[{"name":"s","secret":{"secretName":"db-password"}}],
      "containers":[{"name":"c","image":"img","command":["run"],
        "env":[{"name":"PASSWORD","value":"hunter2"}],
        "envFrom":[{"secretRef":{"name":"db"}}],
        "resources":{"requests":{"cpu":"1","nvidia.com/gpu":"2"}}}]},
    "status":{"phase":"Running"}})");
  const json r = ReduceObject(pod);
  const std::string text = r.dump();
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_EQ(text.find("db-password"), std::string::npos) << text;
  EXPECT_EQ(text.find("secretRef"), std::string::npos) << text;
  EXPECT_EQ(text.find("PASSWORD"), std::string::npos) << text;
  EXPECT_FALSE(r["metadata"].contains("uid"));
  EXPECT_FALSE(r["metadata"].contains("managedFields"));
  EXPECT_FALSE(r.contains("status"));
  EXPECT_EQ(r["metadata"]["annotations"], json({{"copse.dev/simulate-run-for", "1m"}}));
  EXPECT_EQ(r["spec"]["schedulerName"], "copse-scheduler");
  EXPECT_EQ(r["spec"]["priorityClassName"], "high");
  EXPECT_EQ(r["spec"]["nodeSelector"], json({{"k", "v"}}));
  EXPECT_EQ(r["spec"]["tolerations"].size(), 1u);
  EXPECT_EQ(r["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "2");
  EXPECT_FALSE(r["spec"]["containers"][0].contains("command"));
  // A replay creates the pod: an API server refuses an owner without its uid.
  EXPECT_EQ(r["metadata"]["ownerReferences"],
            json::parse(R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"o1",
              "controller":true}])"));
}

TEST(SynthTest, SameSeedSameTraceAndItParses) {
  SynthOptions o;
  o.nodes = 16;
  o.duration = std::chrono::hours(1);
  o.jobs_per_hour = 200;
  std::ostringstream a, b, c;
  ASSERT_TRUE(WriteSynthTrace(o, a).ok());
  ASSERT_TRUE(WriteSynthTrace(o, b).ok());
  o.seed = 2;
  ASSERT_TRUE(WriteSynthTrace(o, c).ok());
  EXPECT_EQ(a.str(), b.str());
  EXPECT_NE(a.str(), c.str());

  std::istringstream in(a.str());
  Result<Trace> t = ParseTrace(in);
  ASSERT_TRUE(t.ok()) << t.error().message;
  int64_t nodes = 0, pods = 0, groups = 0, rack_groups = 0;
  std::map<std::string, int64_t> members, min_member;
  for (const TraceEvent& e : t->events) {
    if (e.kind == "Node") ++nodes;
    if (e.op != TraceOp::kCreate) continue;
    EXPECT_LT(e.t_ms, 3'600'000);
    const json object = json::parse(e.object);
    if (e.kind == "Pod") {
      ++pods;
      ASSERT_TRUE(e.runtime_ms.has_value());
      const std::string group =
          object["metadata"]["labels"].value("scheduling.copse.dev/pod-group", "");
      if (!group.empty()) ++members[group];
      // A rack holds 16 nodes / 8 racks * 8 GPUs = 16: a rack-required gang fits it.
    } else if (e.kind == "PodGroup") {
      ++groups;
      min_member[e.name] = object["spec"]["minMember"].get<int64_t>();
      if (object["spec"]["topologyConstraint"]["requiredTopologyLevel"] == "rack") ++rack_groups;
    }
  }
  EXPECT_EQ(nodes, 16);
  EXPECT_GT(pods, 100);
  EXPECT_GT(groups, 10);
  EXPECT_GT(rack_groups, 0);
  EXPECT_LT(rack_groups, groups);
  for (const auto& [name, min] : min_member) EXPECT_EQ(members[name], min) << name;
}

TEST(SynthTest, RackRequiredGangsFitOneRack) {
  SynthOptions o;
  o.nodes = 8;
  o.topology = "rack=4";  // 2 nodes x 8 GPUs = 16 GPUs per rack
  o.gang_fraction = 1;
  o.rack_required_fraction = 1;
  o.gang_sizes = {4};
  o.gpus_per_pod = {8};
  std::ostringstream out;
  ASSERT_TRUE(WriteSynthTrace(o, out).ok());
  std::istringstream in(out.str());
  Result<Trace> t = ParseTrace(in);
  ASSERT_TRUE(t.ok());
  int64_t pods = 0;
  for (const TraceEvent& e : t->events) {
    if (e.op != TraceOp::kCreate || e.kind != "Pod") continue;
    ++pods;
    const json pod = json::parse(e.object);
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "4");
  }
  EXPECT_GT(pods, 0);
}

TEST(SynthTest, BadOptionsNameTheOption) {
  SynthOptions o;
  o.nodes = 0;
  std::ostringstream out;
  Status s = WriteSynthTrace(o, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("nodes"), std::string::npos);
  o = SynthOptions();
  o.gang_fraction = 1.5;
  s = WriteSynthTrace(o, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("gang-fraction"), std::string::npos);
  o = SynthOptions();
  o.topology = "row=2";
  s = WriteSynthTrace(o, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("topology"), std::string::npos);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace copse::replay
