#include "grove/backend/common.h"

#include <map>
#include <set>

#include "grove/api/names.h"
#include "kube/controller/sync.h"

namespace copse::grove::backend {

using Json = nlohmann::json;

GangTree BuildGangTree(const api::PodGang& gang) {
  GangTree tree;
  std::map<std::string, const api::PodGroup*> groups;
  for (const auto& g : gang.spec.pod_groups) groups[g.name] = &g;
  std::map<std::string, std::string> parent_of;
  for (const auto& cfg : gang.spec.topology_constraint_group_configs) {
    if (cfg.pod_group_names.empty()) continue;
    GangNode parent;
    parent.name = cfg.name;
    parent.min_sub_group = 0;
    for (const auto& name : cfg.pod_group_names) {
      auto it = groups.find(name);
      if (it == groups.end() || parent_of.count(name)) continue;
      parent_of[name] = cfg.name;
      parent.min_member += it->second->min_replicas;
      ++*parent.min_sub_group;
    }
    if (cfg.topology_constraint.has_value()) parent.topology = &*cfg.topology_constraint;
    if (*parent.min_sub_group == 0) continue;
    tree.nodes.push_back(parent);
    ++tree.min_sub_group;
  }
  for (const auto& g : gang.spec.pod_groups) {
    GangNode leaf;
    leaf.name = g.name;
    auto it = parent_of.find(g.name);
    if (it != parent_of.end()) {
      leaf.parent = it->second;
    } else {
      ++tree.min_sub_group;
    }
    leaf.min_member = g.min_replicas;
    if (g.topology_constraint.has_value()) leaf.topology = &*g.topology_constraint;
    tree.min_member += g.min_replicas;
    tree.nodes.push_back(leaf);
  }
  return tree;
}

bool HasTopologyConstraints(const api::PodGang& gang) {
  if (gang.spec.topology_constraint.has_value()) return true;
  for (const auto& cfg : gang.spec.topology_constraint_group_configs) {
    if (cfg.topology_constraint.has_value()) return true;
  }
  for (const auto& g : gang.spec.pod_groups) {
    if (g.topology_constraint.has_value()) return true;
  }
  return false;
}

std::string TopologyReference(const BackendContext& context, std::string_view backend_name,
                              const api::PodGang& gang) {
  auto it = gang.meta.annotations.find(api::kAnnotationTopologyName);
  if (it == gang.meta.annotations.end() || it->second.empty()) return {};
  if (context.topology) {
    if (auto binding = context.topology(it->second); binding.has_value()) {
      for (const auto& b : binding->spec.scheduler_topology_bindings) {
        if (b.scheduler_name == backend_name && !b.topology_reference.empty()) {
          return b.topology_reference;
        }
      }
    }
  }
  return it->second;
}

Json GangOwnerReference(const api::PodGang& gang) {
  return Json{{"apiVersion", api::PodGang::kApiVersion},
              {"kind", api::PodGang::kKind},
              {"name", gang.meta.name},
              {"uid", gang.meta.uid},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

Status ApplyObject(const BackendContext& context, const kube::ResourceRef& resource,
                   const Json& desired) {
  const std::string ns = desired["metadata"].value("namespace", "");
  const std::string name = desired["metadata"].value("name", "");
  kube::Client& client = *context.client;
  Result<std::string> current = kube::controller::Await(client, client.Get(resource, ns, name));
  if (!current.ok()) {
    if (current.error().code != ErrorCode::kNotFound) return current.error();
    Result<std::string> created =
        kube::controller::Await(client, client.Create(resource, ns, desired.dump()));
    if (created.ok() || created.error().code == ErrorCode::kAlreadyExists) return Status::Ok();
    return created.error();
  }
  Json existing = Json::parse(*current, nullptr, false);
  if (!existing.is_object()) return MakeError(ErrorCode::kInternal, "malformed object from server");
  bool changed = false;
  auto merge = [&](const char* key) {
    const Json& want =
        desired["metadata"].contains(key) ? desired["metadata"][key] : Json::object();
    Json& have = existing["metadata"][key];
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!have.is_object() || !have.contains(it.key()) || have[it.key()] != it.value()) {
        have[it.key()] = it.value();
        changed = true;
      }
    }
  };
  merge("labels");
  merge("annotations");
  if (!existing.contains("spec") || existing["spec"] != desired["spec"]) {
    existing["spec"] = desired["spec"];
    changed = true;
  }
  if (!changed) return Status::Ok();
  Result<std::string> updated =
      kube::controller::Await(client, client.Update(resource, ns, name, existing.dump()));
  if (!updated.ok()) return updated.error();
  return Status::Ok();
}

Status DeleteObject(const BackendContext& context, const kube::ResourceRef& resource,
                    std::string_view ns, std::string_view name) {
  kube::Client& client = *context.client;
  Status deleted =
      kube::controller::Await(client, client.Delete(resource, std::string(ns), std::string(name)));
  if (!deleted.ok() && deleted.error().code != ErrorCode::kNotFound) return deleted;
  return Status::Ok();
}

}  // namespace copse::grove::backend
