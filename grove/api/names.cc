#include "grove/api/names.h"

#include <charconv>

namespace copse::grove::api {

std::string HeadlessServiceName(std::string_view pcs, int replica) {
  return std::string(pcs) + "-" + std::to_string(replica);
}

std::string HeadlessServiceAddress(std::string_view pcs, int replica, std::string_view ns) {
  return HeadlessServiceName(pcs, replica) + "." + std::string(ns) + ".svc.cluster.local";
}

std::string PodCliqueName(std::string_view owner, int replica, std::string_view clique) {
  return std::string(owner) + "-" + std::to_string(replica) + "-" + std::string(clique);
}

std::string ScalingGroupName(std::string_view pcs, int replica, std::string_view group) {
  return PodCliqueName(pcs, replica, group);
}

std::string BasePodGangName(std::string_view pcs, int replica) {
  return std::string(pcs) + "-" + std::to_string(replica);
}

std::string ScaledPodGangName(std::string_view pcsg_fqn, int scaled_index) {
  return std::string(pcsg_fqn) + "-" + std::to_string(scaled_index);
}

std::string PodGangNameForGroupReplica(std::string_view pcs, int pcs_replica,
                                       std::string_view pcsg_fqn, int group_replica,
                                       int min_available) {
  if (group_replica < min_available) return BasePodGangName(pcs, pcs_replica);
  return ScaledPodGangName(pcsg_fqn, group_replica - min_available);
}

std::string PodHostname(std::string_view pclq, int index) {
  return std::string(pclq) + "-" + std::to_string(index);
}

Labels DefaultLabels(std::string_view pcs) {
  Labels labels;
  labels.emplace(kLabelManagedBy, kManagedByValue);
  labels.emplace(kLabelPartOf, pcs);
  return labels;
}

std::optional<int> ParseIndex(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  if (text.size() > 1 && text[0] == '0') return std::nullopt;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::optional<int> IndexFromHostname(std::string_view hostname, std::string_view pclq) {
  if (hostname.size() <= pclq.size() + 1) return std::nullopt;
  if (hostname.substr(0, pclq.size()) != pclq || hostname[pclq.size()] != '-') return std::nullopt;
  return ParseIndex(hostname.substr(pclq.size() + 1));
}

}  // namespace copse::grove::api
