// deploy/manifests rendered with the machine's `kubectl kustomize` (the test
// fails when kubectl is missing): the objects each kustomization makes, the
// Deployments' security context, probes and resources, the scheduler config,
// the webhook wiring, no `*` in any RBAC rule, and RBAC coverage: every entry
// of each component's API access table (kube/api_access.h) is granted to its
// ServiceAccount (by its own roles, or by the built-in role the table
// names), and its roles grant nothing beyond the table.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/crds.h"
#include "grove/webhook/webhook.h"
#include "kube/api_access.h"
#include "kube/yaml.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::deploy {
namespace {

using nlohmann::json;

const std::string kManifests = std::string(COPSE_SOURCE_DIR) + "/deploy/manifests";

struct Rendered {
  std::vector<json> objects;

  const json* Find(const std::string& kind, const std::string& name) const {
    for (const json& o : objects) {
      if (o.value("kind", "") == kind && o["metadata"].value("name", "") == name) return &o;
    }
    return nullptr;
  }
  std::set<std::string> Ids() const {
    std::set<std::string> ids;
    for (const json& o : objects) {
      ids.insert(o.value("kind", "") + "/" + o["metadata"].value("namespace", "") + "/" +
                 o["metadata"].value("name", ""));
    }
    return ids;
  }
};

// `kubectl kustomize <dir>`, parsed. Fails the test (not skips) without kubectl.
Rendered Render(const std::string& dir) {
  Rendered out;
  e2e::CommandResult r = e2e::RunCommand({"kubectl", "kustomize", dir});
  EXPECT_EQ(r.exit_code, 0)
      << "kubectl kustomize " << dir
      << " (kubectl is required: Debian package kubectl, or /usr/bin/kubectl)\n"
      << r.out;
  if (r.exit_code != 0) return out;
  auto docs = kube::YamlDocumentsToJson(r.out);
  EXPECT_TRUE(docs.ok()) << docs.error().ToString();
  if (!docs.ok()) return out;
  for (const std::string& doc : *docs) out.objects.push_back(json::parse(doc));
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::set<std::string> kNamespace = {"Namespace//copse-system"};
const std::set<std::string> kSchedulerObjects = {
    "CustomResourceDefinition//podgroups.scheduling.copse.dev",
    "CustomResourceDefinition//topologies.scheduling.copse.dev",
    "ServiceAccount/copse-system/copse-scheduler",
    "ClusterRole//copse-scheduler",
    "ClusterRoleBinding//copse-scheduler",
    "ClusterRoleBinding//copse-scheduler-auth-delegator",
    "RoleBinding/kube-system/copse-scheduler-authentication-reader",
    "Role/kube-system/copse-scheduler-leader-election",
    "RoleBinding/kube-system/copse-scheduler-leader-election",
    "Deployment/copse-system/copse-scheduler",
    "PodDisruptionBudget/copse-system/copse-scheduler",
    "Service/copse-system/copse-scheduler-metrics",
};
const std::set<std::string> kGroveObjects = {
    "CustomResourceDefinition//clustertopologybindings.grove.io",
    "CustomResourceDefinition//podcliques.grove.io",
    "CustomResourceDefinition//podcliquescalinggroups.grove.io",
    "CustomResourceDefinition//podcliquesets.grove.io",
    "CustomResourceDefinition//podgangs.scheduler.grove.io",
    "ServiceAccount/copse-system/copse-grove-operator",
    "ClusterRole//copse-grove-operator",
    "ClusterRoleBinding//copse-grove-operator",
    "Role/copse-system/copse-grove-operator-leader-election",
    "RoleBinding/copse-system/copse-grove-operator-leader-election",
    "Role/copse-system/copse-grove-operator-webhook-cert",
    "RoleBinding/copse-system/copse-grove-operator-webhook-cert",
    "Deployment/copse-system/copse-grove-operator",
    "Service/copse-system/copse-grove-webhook",
    "ValidatingWebhookConfiguration//copse-grove",
};

// The generated ConfigMap's name carries a content hash.
std::set<std::string> WithoutConfigMaps(const std::set<std::string>& ids, std::string* config_map) {
  std::set<std::string> out;
  for (const std::string& id : ids) {
    if (id.starts_with("ConfigMap/")) {
      *config_map = id;
    } else {
      out.insert(id);
    }
  }
  return out;
}

std::set<std::string> Union(std::initializer_list<std::set<std::string>> sets) {
  std::set<std::string> out;
  for (const auto& s : sets) out.insert(s.begin(), s.end());
  return out;
}

TEST(Manifests, EachKustomizationMakesItsObjects) {
  struct Want {
    std::string dir;
    std::set<std::string> ids;
  };
  const std::vector<Want> wants = {
      {kManifests, Union({kNamespace, kSchedulerObjects, kGroveObjects})},
      {kManifests + "/overlays/with-grove", Union({kNamespace, kSchedulerObjects, kGroveObjects})},
      {kManifests + "/overlays/scheduler-only", Union({kNamespace, kSchedulerObjects})},
  };
  for (const Want& want : wants) {
    SCOPED_TRACE(want.dir);
    Rendered r = Render(want.dir);
    std::string config_map;
    EXPECT_EQ(WithoutConfigMaps(r.Ids(), &config_map), want.ids);
    EXPECT_TRUE(config_map.starts_with("ConfigMap/copse-system/copse-scheduler-config-"))
        << config_map;
    for (const json& o : r.objects) {
      if (o["kind"] != "Deployment") continue;
      for (const json& c : o["spec"]["template"]["spec"]["containers"]) {
        EXPECT_EQ(c["image"], "copse:0.1.0") << o["metadata"]["name"];
      }
    }
  }
}

void ExpectRestricted(const json& deployment) {
  const std::string name = deployment["metadata"]["name"];
  SCOPED_TRACE(name);
  const json& pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  ASSERT_EQ(pod["containers"].size(), 1u);
  const json& c = pod["containers"][0];
  const json& sc = c["securityContext"];
  EXPECT_EQ(sc["runAsNonRoot"], true);
  EXPECT_EQ(sc["readOnlyRootFilesystem"], true);
  EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
  EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"}));
  EXPECT_FALSE(sc["capabilities"].contains("add"));
  EXPECT_EQ(sc["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_FALSE(sc.value("privileged", false));
  EXPECT_TRUE(c["resources"]["requests"].contains("cpu"));
  EXPECT_TRUE(c["resources"]["requests"].contains("memory"));
  EXPECT_EQ(c["command"], json::array({"copse"}));
}

TEST(Manifests, TheSchedulerDeploymentIsRestrictedProbedAndLeaderElected) {
  Rendered r = Render(kManifests);
  const json* d = r.Find("Deployment", "copse-scheduler");
  ASSERT_NE(d, nullptr);
  ExpectRestricted(*d);
  EXPECT_EQ((*d)["spec"]["replicas"], 2);
  const json& pod = (*d)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "copse-scheduler");
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["args"],
            json::array({"run", "--in-cluster", "--config=/etc/copse/copse-scheduler.yaml"}));
  // The probes ask the HTTPS ops port for paths it serves to anyone.
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"], "https");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["scheme"], "HTTPS");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], "https");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["scheme"], "HTTPS");
  ASSERT_EQ(c["ports"].size(), 1u);
  EXPECT_EQ(c["ports"][0]["name"], "https");

  // The config mounted is deploy/config/copse-scheduler.yaml, byte for byte,
  // and it elects a leader on the ops port the probes use.
  const std::string config_map = pod["volumes"][0]["configMap"]["name"];
  const json* cm = r.Find("ConfigMap", config_map);
  ASSERT_NE(cm, nullptr) << config_map;
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/etc/copse");
  const std::string text = (*cm)["data"]["copse-scheduler.yaml"];
  EXPECT_EQ(text, ReadFile(std::string(COPSE_SOURCE_DIR) + "/deploy/config/copse-scheduler.yaml"));
  auto config = kube::YamlToJson(text);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  const json cfg = json::parse(*config);
  EXPECT_EQ(cfg["leaderElection"]["leaderElect"], true);
  EXPECT_EQ(cfg["opsServer"]["securePort"], c["ports"][0]["containerPort"]);
  EXPECT_EQ(cfg["opsServer"]["port"], 0) << "no plain HTTP port";
  const std::vector<std::string> health = {"/healthz", "/readyz", "/livez"};
  EXPECT_EQ(cfg["opsServer"]["authorization"]["alwaysAllowPaths"], json(health));
  // Its Lease is where the Role lets it write.
  const json* role = r.Find("Role", "copse-scheduler-leader-election");
  ASSERT_NE(role, nullptr);
  EXPECT_EQ((*role)["metadata"]["namespace"], cfg["leaderElection"]["resourceNamespace"]);
  EXPECT_EQ((*role)["rules"][1]["resourceNames"],
            json::array({cfg["leaderElection"]["resourceName"]}));

  const json* pdb = r.Find("PodDisruptionBudget", "copse-scheduler");
  ASSERT_NE(pdb, nullptr);
  EXPECT_EQ((*pdb)["spec"]["selector"]["matchLabels"], (*d)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*pdb)["spec"]["minAvailable"], 1);
  const json* metrics = r.Find("Service", "copse-scheduler-metrics");
  ASSERT_NE(metrics, nullptr);
  EXPECT_EQ((*metrics)["spec"]["selector"], (*d)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*metrics)["spec"]["ports"][0]["targetPort"], "https");
  EXPECT_EQ((*metrics)["spec"]["ports"][0]["port"], 10259);
}

TEST(Manifests, TheGroveOperatorIsRestrictedLeaderElectedAndItsWebhookWired) {
  Rendered r = Render(kManifests);
  const json* d = r.Find("Deployment", "copse-grove-operator");
  ASSERT_NE(d, nullptr);
  ExpectRestricted(*d);
  const json& pod = (*d)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "copse-grove-operator");
  const json& c = pod["containers"][0];
  const std::set<std::string> args(c["args"].begin(), c["args"].end());
  for (const char* want :
       {"grove", "--in-cluster", "--leader-elect", "--lease-namespace=copse-system",
        "--lease-name=copse-grove", "--webhook-port=9443"}) {
    EXPECT_TRUE(args.contains(want)) << want;
  }
  EXPECT_EQ(c["ports"][0]["containerPort"], 9443);
  // A follower does not listen on the webhook port: the probes use the ops
  // port every replica serves (liveness /healthz, readiness /readyz, which
  // passes only on the serving leader).
  EXPECT_TRUE(args.contains("--ops-port=8081"));
  EXPECT_EQ(c["ports"][1]["name"], "ops");
  EXPECT_EQ(c["ports"][1]["containerPort"], 8081);
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"], "ops");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], "ops");
  // The serving certificate comes from the Secret copse grove maintains (no
  // certificate files), for the Service and webhook configuration below.
  for (const char* want :
       {"--webhook-namespace=copse-system", "--webhook-secret=copse-grove-webhook-cert",
        "--webhook-service=copse-grove-webhook", "--webhook-configuration=copse-grove"}) {
    EXPECT_TRUE(args.contains(want)) << want;
  }
  for (const std::string& arg : args) EXPECT_FALSE(arg.starts_with("--webhook-cert=")) << arg;
  const json* secret_role = r.Find("Role", "copse-grove-operator-webhook-cert");
  ASSERT_NE(secret_role, nullptr);
  EXPECT_EQ((*secret_role)["metadata"]["namespace"], "copse-system");
  EXPECT_EQ((*secret_role)["rules"][0]["resources"], json::array({"secrets"}));
  // It reads its own Pod (for the init container's image) by name.
  std::set<std::string> env;
  for (const json& e : c["env"]) env.insert(e["valueFrom"]["fieldRef"]["fieldPath"]);
  EXPECT_EQ(env, (std::set<std::string>{"metadata.name", "metadata.namespace"}));

  const json* webhook = r.Find("ValidatingWebhookConfiguration", "copse-grove");
  ASSERT_NE(webhook, nullptr);
  const json& hook = (*webhook)["webhooks"][0];
  EXPECT_EQ(hook["clientConfig"]["service"]["name"], "copse-grove-webhook");
  EXPECT_EQ(hook["clientConfig"]["service"]["namespace"], "copse-system");
  EXPECT_EQ(hook["clientConfig"]["service"]["path"], std::string(grove::webhook::kValidatePath));
  EXPECT_EQ(hook["rules"][0]["resources"], json::array({"podcliquesets"}));
  const json* service = r.Find("Service", "copse-grove-webhook");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ((*service)["spec"]["selector"], (*d)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*service)["spec"]["ports"][0]["port"], hook["clientConfig"]["service"]["port"]);
  EXPECT_EQ((*service)["spec"]["ports"][0]["targetPort"], "webhook");
}

TEST(Manifests, NoRbacRuleUsesAWildcard) {
  Rendered r = Render(kManifests);
  int rules = 0;
  for (const json& o : r.objects) {
    if (o["kind"] != "ClusterRole" && o["kind"] != "Role") continue;
    for (const json& rule : o["rules"]) {
      ++rules;
      for (const char* field : {"apiGroups", "resources", "verbs", "resourceNames"}) {
        for (const json& v : rule.value(field, json::array())) {
          EXPECT_EQ(v.get<std::string>().find('*'), std::string::npos)
              << o["metadata"]["name"] << " " << field << ": " << v;
        }
      }
      EXPECT_FALSE(rule.contains("nonResourceURLs")) << o["metadata"]["name"];
    }
  }
  EXPECT_GT(rules, 10);
}

// What is bound (by ClusterRoleBinding or RoleBinding) to the ServiceAccount:
// the rules of the roles the manifests render, and the built-in roles (RBAC's
// bootstrap policy, which every cluster has), as kube/api_access.h names
// them: "ClusterRole system:auth-delegator", "Role kube-system/<name>".
struct Bound {
  std::vector<json> rules;
  std::set<std::string> builtin;
};

Bound BoundTo(const Rendered& r, const std::string& service_account) {
  Bound out;
  for (const json& binding : r.objects) {
    const std::string kind = binding["kind"];
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    bool bound = false;
    for (const json& s : binding["subjects"]) {
      bound |= s["kind"] == "ServiceAccount" && s["name"] == service_account &&
               s["namespace"] == "copse-system";
    }
    if (!bound) continue;
    const std::string role_kind = binding["roleRef"]["kind"];
    const std::string role_name = binding["roleRef"]["name"];
    const json* role = r.Find(role_kind, role_name);
    if (role == nullptr) {
      out.builtin.insert(role_kind == "Role"
                             ? "Role " + binding["metadata"]["namespace"].get<std::string>() + "/" +
                                   role_name
                             : "ClusterRole " + role_name);
      continue;
    }
    if (kind == "RoleBinding" && (*role)["kind"] == "Role") {
      EXPECT_EQ((*role)["metadata"]["namespace"], binding["metadata"]["namespace"]);
    }
    for (const json& rule : (*role)["rules"]) out.rules.push_back(rule);
  }
  return out;
}

bool Contains(const json& list, const std::string& value) {
  for (const json& v : list) {
    if (v == value) return true;
  }
  return false;
}

void ExpectCoverage(const Rendered& r, const std::string& service_account,
                    const kube::ApiAccessTable& table) {
  SCOPED_TRACE(table.component);
  const Bound bound = BoundTo(r, service_account);
  const std::vector<json>& rules = bound.rules;
  ASSERT_FALSE(rules.empty());
  // Built-in roles are bound only where the table says what they grant
  // (tests/e2e/real checks, on a real server, that they grant it).
  std::set<std::string> named;
  for (const kube::ApiAccessRule& entry : table.rules) {
    if (!entry.granted_by.empty()) named.insert(entry.granted_by);
  }
  EXPECT_EQ(bound.builtin, named) << "bindings to roles that are not rendered";
  // Every call in the table is granted...
  for (const kube::ApiAccessRule& entry : table.rules) {
    if (!entry.granted_by.empty()) continue;  // by the built-in role, bound above
    const std::string resource =
        entry.subresource.empty() ? entry.resource : entry.resource + "/" + entry.subresource;
    for (const std::string& verb : entry.verbs) {
      bool granted = false;
      for (const json& rule : rules) {
        granted |= Contains(rule["apiGroups"], entry.group) &&
                   Contains(rule["resources"], resource) && Contains(rule["verbs"], verb);
      }
      EXPECT_TRUE(granted) << verb << " " << entry.Name()
                           << " is in the table but no role grants it";
    }
  }
  // ...and the roles grant nothing else.
  for (const json& rule : rules) {
    for (const json& group : rule["apiGroups"]) {
      for (const json& resource : rule["resources"]) {
        const std::string name = resource;
        const size_t slash = name.find('/');
        const std::string plural = name.substr(0, slash);
        const std::string sub = slash == std::string::npos ? "" : name.substr(slash + 1);
        for (const json& verb : rule["verbs"]) {
          EXPECT_TRUE(table.Allows(verb.get<std::string>(), group.get<std::string>(), plural, sub))
              << "a role grants " << verb << " " << name << " in group \""
              << group.get<std::string>() << "\", which the table does not list";
        }
      }
    }
  }
}

TEST(Manifests, RolesGrantExactlyTheSchedulersApiAccessTable) {
  ExpectCoverage(Render(kManifests), "copse-scheduler", kube::SchedulerApiAccess());
}

TEST(Manifests, RolesGrantExactlyTheGroveOperatorsApiAccessTable) {
  ExpectCoverage(Render(kManifests), "copse-grove-operator", kube::GroveApiAccess());
}

// The CRDs are the ones copse embeds (deploy/crds), unchanged.
TEST(Manifests, CrdsAreTheEmbeddedOnes) {
  Rendered r = Render(kManifests);
  int checked = 0;
  for (const EmbeddedFile& file : BuiltinCrds()) {
    if (file.path.starts_with("crds/kubernetes/")) continue;  // built into the API server
    auto docs = kube::YamlDocumentsToJson(file.content);
    ASSERT_TRUE(docs.ok()) << file.path;
    for (const std::string& doc : *docs) {
      const json crd = json::parse(doc);
      const json* rendered = r.Find("CustomResourceDefinition", crd["metadata"]["name"]);
      ASSERT_NE(rendered, nullptr) << crd["metadata"]["name"];
      EXPECT_EQ(*rendered, crd) << crd["metadata"]["name"];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7);
  EXPECT_EQ(r.Find("CustomResourceDefinition", "podgroups.scheduling.k8s.io"), nullptr)
      << "scheduling.k8s.io belongs to the API server";
}

}  // namespace
}  // namespace copse::deploy
