#pragma once
// A real kube-apiserver (upstream v1.20.2, with etcd and the real
// kube-scheduler) for the e2e tests, started through
// scripts/real-apiserver.sh in a fresh temporary directory and stopped (the
// directory removed) when the RealCluster goes. The binaries must have been
// built (`scripts/real-apiserver.sh build`, which scripts/test.sh runs); a
// missing binary or kubectl fails the tests.
//
// It also installs what a deployment would: copse's and Grove's CRDs, and the
// ClusterRoles and Roles of deploy/manifests, bound to the static-token users
// copse-scheduler and copse-grove (who are in no group but
// system:authenticated), so `copse run` and `copse grove` run with exactly
// the permissions they are deployed with.
//
// Thread-safety: one thread.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace copse::e2e {

class RealCluster {
 public:
  RealCluster();
  ~RealCluster();
  RealCluster(const RealCluster&) = delete;
  RealCluster& operator=(const RealCluster&) = delete;

  // Empty when the cluster is up and set up; else what went wrong.
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }
  std::string admin_kubeconfig() const { return dir_ + "/admin.kubeconfig"; }
  std::string scheduler_kubeconfig() const { return dir_ + "/copse-scheduler.kubeconfig"; }
  std::string grove_kubeconfig() const { return dir_ + "/copse-grove.kubeconfig"; }

  // kubectl with the admin credentials (or `kubeconfig`).
  CommandResult Kubectl(const std::vector<std::string>& args, const std::string& stdin_text = {},
                        const std::string& kubeconfig = {});
  // `kubectl get <args> -o json`, parsed; null when kubectl failed.
  nlohmann::json GetJson(const std::vector<std::string>& args);
  // Applies JSON or YAML objects (stdin) with the admin credentials.
  CommandResult Apply(const std::string& objects);

  // Ready synthetic Nodes PREFIX-1..COUNT (scripts/real-apiserver.sh nodes).
  CommandResult AddNodes(const std::string& prefix, int count, const std::string& labels,
                         const std::string& resources);

  // Writes a file in the cluster's directory; returns its path.
  std::string WriteFile(const std::string& name, const std::string& content);

  // Reads the logs of processes the tests started (their pipes must not fill).
  void Watch(Process* process) { watched_.push_back(process); }
  void Unwatch(Process* process);
  void DrainWatched();

  // A value of the script's env file (KUBE_SCHEDULER_URL, SERVER_URL); "" when absent.
  std::string Env(const std::string& key) const;
  // The cluster's CA (it signs the serving certificate and client certificates).
  std::string ca_cert_file() const { return dir_ + "/pki/ca.crt"; }
  std::string ca_key_file() const { return dir_ + "/pki/ca.key"; }

  // The tail of a log of the script's processes ("kube-apiserver", "kube-scheduler").
  std::string LogTail(const std::string& name, size_t bytes = 4000) const;

 private:
  std::string Setup();
  std::vector<std::string> KubectlArgv(const std::string& kubeconfig,
                                       const std::vector<std::string>& args) const;

  std::string dir_;
  std::string error_;
  bool started_ = false;
  std::vector<Process*> watched_;
};

// Polls `fn` every 100 ms until it is true or the deadline passes, reading
// the watched processes' output meanwhile.
bool Eventually(RealCluster& cluster, const std::function<bool()>& fn,
                std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The status condition of `type`, or an empty object.
nlohmann::json Condition(const nlohmann::json& object, const std::string& type);

// Nodes whose bound, non-terminal pods request more than the node's
// allocatable (cpu, memory, pods, nvidia.com/gpu); one line per violation.
std::vector<std::string> OverAllocatable(const nlohmann::json& nodes, const nlohmann::json& pods);

}  // namespace copse::e2e
