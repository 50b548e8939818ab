#pragma once
// core/v1 Service: the selector, cluster IP(s) and ports (headless services
// for Grove pod discovery use clusterIP "None" and publishNotReadyAddresses).
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

inline constexpr std::string_view kClusterIPNone = "None";

struct ServicePort {
  std::string name;
  std::string protocol;  // empty means TCP
  std::optional<std::string> app_protocol;
  int32_t port = 0;
  std::optional<IntOrString> target_port;  // number or container port name
  int32_t node_port = 0;
  bool operator==(const ServicePort&) const = default;
};

struct ServiceSpec {
  std::string type;  // "ClusterIP" (also when empty), "NodePort", "LoadBalancer", ...
  Labels selector;
  std::string cluster_ip;                // "clusterIP"; "None" for headless
  std::vector<std::string> cluster_ips;  // "clusterIPs"
  std::vector<ServicePort> ports;
  bool publish_not_ready_addresses = false;
  bool operator==(const ServiceSpec&) const = default;
};

class Service : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "v1";
  static constexpr std::string_view kKind = "Service";

  ServiceSpec spec;

  bool IsHeadless() const noexcept { return spec.cluster_ip == kClusterIPNone; }

  static Result<Service> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
