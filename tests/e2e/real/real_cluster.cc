#include "tests/e2e/real/real_cluster.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/quantity.h"
#include "deploy/crds.h"
#include "kube/yaml.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

const std::string kSource = COPSE_SOURCE_DIR;
const std::string kScript = kSource + "/scripts/real-apiserver.sh";

// The user each component's ServiceAccount stands for here.
const std::map<std::string, std::string> kComponentUsers = {
    {"copse-scheduler", "copse-scheduler"},
    {"copse-grove-operator", "copse-grove"},
};

}  // namespace

RealCluster::RealCluster() {
  char tmpl[] = "/tmp/copse-real-XXXXXX";
  const char* made = mkdtemp(tmpl);
  if (made == nullptr) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = made;
  error_ = Setup();
}

RealCluster::~RealCluster() {
  if (started_) RunCommand({"bash", kScript, "stop", dir_}, {}, std::chrono::seconds(60));
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string RealCluster::Setup() {
  if (!HaveKubectl()) return "kubectl is required (/usr/bin/kubectl) and was not found";
  CommandResult started = RunCommand({"bash", kScript, "start", dir_, "--with-kube-scheduler"}, {},
                                     std::chrono::seconds(180));
  started_ = true;  // stop whatever part of it did start
  if (started.exit_code != 0) {
    return "scripts/real-apiserver.sh start failed (run `scripts/real-apiserver.sh build` "
           "first):\n" +
           started.out;
  }
  // copse's and Grove's CRDs, as deploy/manifests installs them.
  for (const char* crds : {"/deploy/crds/copse", "/deploy/crds/grove"}) {
    CommandResult applied = Kubectl({"apply", "-k", kSource + crds});
    if (applied.exit_code != 0)
      return std::string("kubectl apply -k ") + crds + ":\n" + applied.out;
  }
  CommandResult established = Kubectl(
      {"wait", "--for=condition=Established", "--timeout=60s", "crd/podgroups.scheduling.copse.dev",
       "crd/topologies.scheduling.copse.dev", "crd/podcliquesets.grove.io",
       "crd/podcliques.grove.io", "crd/podcliquescalinggroups.grove.io",
       "crd/podgangs.scheduler.grove.io", "crd/clustertopologybindings.grove.io"});
  if (established.exit_code != 0) return "CRDs not established:\n" + established.out;

  // The roles of deploy/manifests, bound to the token users instead of the
  // ServiceAccounts (this cluster runs no pods).
  CommandResult rendered = RunCommand({"kubectl", "kustomize", kSource + "/deploy/manifests"});
  if (rendered.exit_code != 0) return "kubectl kustomize deploy/manifests:\n" + rendered.out;
  auto docs = kube::YamlDocumentsToJson(rendered.out);
  if (!docs.ok()) return "rendered manifests: " + docs.error().ToString();
  json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
  int bindings = 0;
  for (const std::string& doc : *docs) {
    json o = json::parse(doc);
    const std::string kind = o["kind"];
    if (kind == "Namespace" || kind == "ClusterRole" || kind == "Role") {
      list["items"].push_back(o);
    } else if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
      json subjects = json::array();
      for (const json& s : o["subjects"]) {
        auto user = kComponentUsers.find(s.value("name", ""));
        if (s["kind"] != "ServiceAccount" || user == kComponentUsers.end()) continue;
        subjects.push_back(
            {{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user->second}});
      }
      if (subjects.empty()) continue;
      o["subjects"] = subjects;
      list["items"].push_back(o);
      ++bindings;
    }
  }
  // Per component a ClusterRoleBinding and a leader-election RoleBinding,
  // plus the Grove operator's RoleBinding for its webhook certificate Secret
  // and the scheduler's two for its ops port's delegation (system:auth-delegator,
  // extension-apiserver-authentication-reader).
  if (bindings != 7)
    return "expected 7 bindings in deploy/manifests, found " + std::to_string(bindings);
  CommandResult rbac = Apply(list.dump());
  if (rbac.exit_code != 0) return "applying the RBAC of deploy/manifests:\n" + rbac.out;
  return "";
}

std::vector<std::string> RealCluster::KubectlArgv(const std::string& kubeconfig,
                                                  const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {
      "kubectl",     "--kubeconfig",          kubeconfig.empty() ? admin_kubeconfig() : kubeconfig,
      "--cache-dir", dir_ + "/kubectl-cache", "--request-timeout",
      "30s"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

CommandResult RealCluster::Kubectl(const std::vector<std::string>& args,
                                   const std::string& stdin_text, const std::string& kubeconfig) {
  return RunCommand(KubectlArgv(kubeconfig, args), stdin_text);
}

json RealCluster::GetJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"get"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("-o");
  argv.push_back("json");
  CommandResult r = Kubectl(argv);
  if (r.exit_code != 0) return json();
  // kubectl may print a version-skew warning before the JSON.
  const size_t start = r.out.find('{');
  if (start == std::string::npos) return json();
  return json::parse(r.out.substr(start), nullptr, false);
}

CommandResult RealCluster::Apply(const std::string& objects) {
  return Kubectl({"apply", "-f", "-"}, objects);
}

CommandResult RealCluster::AddNodes(const std::string& prefix, int count, const std::string& labels,
                                    const std::string& resources) {
  return RunCommand({"bash", kScript, "nodes", dir_, prefix, std::to_string(count), "--labels",
                     labels, "--resources", resources},
                    {}, std::chrono::seconds(120));
}

std::string RealCluster::WriteFile(const std::string& name, const std::string& content) {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << content;
  return path;
}

void RealCluster::Unwatch(Process* process) { std::erase(watched_, process); }

void RealCluster::DrainWatched() {
  for (Process* p : watched_) p->Drain();
}

std::string RealCluster::Env(const std::string& key) const {
  std::ifstream in(dir_ + "/env");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(key + "=")) return line.substr(key.size() + 1);
  }
  return "";
}

std::string RealCluster::LogTail(const std::string& name, size_t bytes) const {
  std::ifstream in(dir_ + "/" + name + ".log");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

bool Eventually(RealCluster& cluster, const std::function<bool()>& fn,
                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    cluster.DrainWatched();
    if (fn()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cluster.DrainWatched();
  return fn();
}

json Condition(const json& object, const std::string& type) {
  if (!object.is_object() || !object.contains("status") || !object["status"].is_object()) {
    return json::object();
  }
  for (const json& c : object["status"].value("conditions", json::array())) {
    if (c.is_object() && c.value("type", "") == type) return c;
  }
  return json::object();
}

namespace {

// Requests of one pod as the scheduler counts them: the larger of the sum
// over containers and each init container, per resource.
std::map<std::string, int64_t> PodRequests(const json& pod) {
  std::map<std::string, int64_t> sum;
  auto add = [](std::map<std::string, int64_t>& into, const json& container, bool max) {
    const json* requests = nullptr;
    if (container.contains("resources") && container["resources"].contains("requests")) {
      requests = &container["resources"]["requests"];
    }
    if (requests == nullptr) return;
    for (const auto& [name, value] : requests->items()) {
      auto q = Quantity::Parse(value.get<std::string>());
      if (!q.ok()) continue;
      const int64_t milli = q->MilliValue();
      into[name] = max ? std::max(into[name], milli) : into[name] + milli;
    }
  };
  const json& spec = pod["spec"];
  for (const json& c : spec.value("containers", json::array())) add(sum, c, false);
  for (const json& c : spec.value("initContainers", json::array())) add(sum, c, true);
  sum["pods"] = 1000;
  return sum;
}

}  // namespace

std::vector<std::string> OverAllocatable(const json& nodes, const json& pods) {
  std::vector<std::string> out;
  std::map<std::string, std::map<std::string, int64_t>> used;
  for (const json& pod : pods.value("items", json::array())) {
    const std::string node = pod["spec"].value("nodeName", "");
    const std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    for (const auto& [name, milli] : PodRequests(pod)) used[node][name] += milli;
  }
  for (const json& node : nodes.value("items", json::array())) {
    const std::string name = node["metadata"]["name"];
    const json allocatable = node["status"].value("allocatable", json::object());
    for (const auto& [resource, milli] : used[name]) {
      if (!allocatable.contains(resource)) {
        if (milli > 0) out.push_back(name + ": " + resource + " requested but not allocatable");
        continue;
      }
      auto q = Quantity::Parse(allocatable[resource].get<std::string>());
      if (q.ok() && milli > q->MilliValue()) {
        out.push_back(name + ": " + resource + " requests " + std::to_string(milli) +
                      "m > allocatable " + std::to_string(q->MilliValue()) + "m");
      }
    }
  }
  return out;
}

}  // namespace copse::e2e
