// The Workload API as Kubernetes serves it, replayed against the embedded
// server: tests/data/kube-1.36.3/workload-api-corpus.json (46 requests and
// what a real kube-apiserver v1.36.3 answered) and
// tests/data/workload-api/v1alpha3-v1beta1-cases.json (v1alpha3 and v1beta1
// cases written from the upstream types' validation tags), in the corpus
// tool's format. Each answer is reduced as tests/data/kube-1.36.3/
// workload_corpus.py reduces it (code; reason and the causes' fields and
// types; the object without volatile metadata, of a pod only
// spec.schedulingGroup; Table column names; discovery resources) and must
// equal the recorded one. Messages are not compared.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/apiserver/test_util.h"
#include "tests/support/paths.h"

namespace copse::apiserver::testing {
namespace workload_api_corpus_test {

json ReadJsonFile(const std::string& relative) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in.good()) << "cannot read " << relative;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, false);
}

const std::set<std::string>& Volatile() {
  static const std::set<std::string> kVolatile = {
      "uid",        "resourceVersion",   "creationTimestamp", "managedFields",
      "generation", "deletionTimestamp", "selfLink",          "lastTransitionTime"};
  return kVolatile;
}

json Strip(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, item] : v.items()) {
      if (!Volatile().count(k)) out[k] = Strip(item);
    }
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const json& item : v) out.push_back(Strip(item));
    return out;
  }
  return v;
}

// workload_corpus.py's summary().
json Summary(int status, const json& parsed) {
  const json body = parsed.is_object() ? parsed : json::object();
  json s = {{"code", status}};
  const std::string kind = body.value("kind", "");
  if (kind == "Status") {
    s["reason"] = body.contains("reason") ? body["reason"] : json();
    std::set<std::pair<std::string, std::string>> causes;
    if (body.contains("details") && body["details"].is_object()) {
      for (const json& c : body["details"].value("causes", json::array())) {
        causes.emplace(c.value("field", ""), c.value("reason", ""));
      }
    }
    json list = json::array();
    for (const auto& [field, reason] : causes) list.push_back({field, reason});
    s["causes"] = std::move(list);
    s["message"] = body.contains("message") ? body["message"] : json();
  } else if (kind == "Table") {
    json columns = json::array();
    for (const json& c : body.value("columnDefinitions", json::array()))
      columns.push_back(c["name"]);
    s["columns"] = std::move(columns);
  } else if (kind == "APIResourceList") {
    std::vector<json> resources;
    for (const json& r : body.value("resources", json::array())) {
      std::vector<std::string> verbs = r.value("verbs", std::vector<std::string>{});
      std::sort(verbs.begin(), verbs.end());
      std::string joined;
      for (const std::string& v : verbs) joined += (joined.empty() ? "" : ",") + v;
      resources.push_back({r.value("name", ""), r.value("kind", ""), joined, r["namespaced"]});
    }
    std::sort(resources.begin(), resources.end(),
              [](const json& a, const json& b) { return a.dump() < b.dump(); });
    s["resources"] = resources;
  } else if (body.contains("metadata")) {
    json o = Strip(body);
    if (o["metadata"].is_object() && !o["metadata"].value("generateName", "").empty()) {
      o["metadata"].erase("name");
    }
    if (o.value("kind", "") == "Pod") {
      const json& spec = o.contains("spec") ? o["spec"] : json::object();
      o = {{"spec.schedulingGroup",
            spec.contains("schedulingGroup") ? spec["schedulingGroup"] : json()}};
    }
    s["object"] = std::move(o);
  }
  return s;
}

class WorkloadApiCorpus : public ApiServerTest {
 protected:
  // Replays every case in order; returns how many matched and adds a
  // failure per difference.
  int Replay(const json& corpus) {
    int same = 0;
    for (const json& c : corpus["cases"]) {
      const std::string id = c["id"];
      const std::string body = c["body"].is_null() ? std::string() : c["body"].dump();
      const std::string ctype =
          c["contentType"].is_string() ? c["contentType"].get<std::string>() : "application/json";
      const std::string accept =
          c["accept"].is_string() ? c["accept"].get<std::string>() : "application/json";
      Response r = client().Request(c["method"].get<std::string>(), c["path"].get<std::string>(),
                                    body, ctype, accept);
      json got = Summary(r.status, r.Json());
      json want = c["response"];
      const json message = got.contains("message") ? got["message"] : json();
      got.erase("message");
      want.erase("message");
      if (got == want) {
        ++same;
      } else {
        ADD_FAILURE() << "case " << id << "\n  want " << want.dump() << "\n  got  " << got.dump()
                      << "\n  message " << message.dump();
      }
    }
    return same;
  }
};

TEST_F(WorkloadApiCorpus, RecordedKubeApiserver1363AnswersMatch) {
  const json corpus = ReadJsonFile("tests/data/kube-1.36.3/workload-api-corpus.json");
  ASSERT_TRUE(corpus.is_object() && corpus["cases"].is_array());
  const int total = static_cast<int>(corpus["cases"].size());
  ASSERT_EQ(total, 46);
  const int same = Replay(corpus);
  std::printf("workload API corpus (kube-apiserver v1.36.3): %d/%d cases match\n", same, total);
  EXPECT_EQ(same, total);
}

TEST_F(WorkloadApiCorpus, V1alpha3AndV1beta1CasesMatch) {
  const json corpus = ReadJsonFile("tests/data/workload-api/v1alpha3-v1beta1-cases.json");
  ASSERT_TRUE(corpus.is_object() && corpus["cases"].is_array());
  const int total = static_cast<int>(corpus["cases"].size());
  ASSERT_GT(total, 0);
  const int same = Replay(corpus);
  std::printf("workload API v1alpha3/v1beta1 cases: %d/%d match\n", same, total);
  EXPECT_EQ(same, total);
}

}  // namespace workload_api_corpus_test
}  // namespace copse::apiserver::testing
