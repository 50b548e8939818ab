// A gang's status as users read it (issue 15, item 4): on `copse local`,
// `kubectl get cpg` (the short name of scheduling.copse.dev PodGroups) shows
// the columns the CRD declares, MINMEMBER, PHASE, SCHEDULED, READY, for a
// gang that runs (its members bound, then Ready by the node simulator) and
// for one still waiting for members (Pending, nothing scheduled).

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"

namespace copse::e2e {
namespace {

std::string Member(const std::string& group, const std::string& name) {
  return R"(---
apiVersion: v1
kind: Pod
metadata:
  name: )" +
         name +
         R"(
  namespace: default
  labels:
    scheduling.copse.dev/pod-group: )" +
         group + R"(
spec:
  schedulerName: copse-scheduler
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: "1"
        memory: 1Gi
)";
}

std::string Group(const std::string& name, int min_member) {
  return R"(---
apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: )" +
         name +
         R"(
  namespace: default
spec:
  minMember: )" +
         std::to_string(min_member) + "\n";
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// `kubectl get cpg` as rows of words, the header first.
std::vector<std::vector<std::string>> GetTable(LocalCluster& cluster) {
  std::vector<std::vector<std::string>> rows;
  CommandResult r = cluster.Kubectl({"get", "cpg", "--sort-by=.metadata.name"});
  if (r.exit_code != 0) return rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) rows.push_back(Words(line));
  }
  return rows;
}

TEST(GangStatusE2E, KubectlGetCpgShowsPhaseAndCounts) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "2", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  // serve: three members, two required; short: one of the two it needs.
  const std::string manifest = Group("serve", 2) + Member("serve", "serve-0") +
                               Member("serve", "serve-1") + Member("serve", "serve-2") +
                               Group("short", 2) + Member("short", "short-0");
  auto applied = cluster.Kubectl({"apply", "-f", cluster.WriteFile("gangs.yaml", manifest)});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;

  std::vector<std::vector<std::string>> table;
  const std::vector<std::string> want_header = {"NAME",      "MINMEMBER", "PHASE",
                                                "SCHEDULED", "READY",     "AGE"};
  // AGE varies; the rest is what copse wrote.
  auto row_without_age = [](std::vector<std::string> row) {
    if (!row.empty()) row.pop_back();
    return row;
  };
  ASSERT_TRUE(Eventually([&] {
    table = GetTable(cluster);
    return table.size() == 3 &&
           row_without_age(table[1]) ==
               std::vector<std::string>{"serve", "2", "Running", "3", "3"} &&
           row_without_age(table[2]) == std::vector<std::string>{"short", "2", "Pending", "0", "0"};
  })) << cluster.Kubectl({"get", "cpg"}).out;
  EXPECT_EQ(table[0], want_header);
}

}  // namespace
}  // namespace copse::e2e
