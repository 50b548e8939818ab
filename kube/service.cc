#include "kube/service.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutOpt;
using codec::Read;
using codec::Reader;

namespace {

bool ReadServicePort(Reader& r, Element e, ServicePort& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "protocol") return Read(r, v, out.protocol);
    if (key == "appProtocol") return Read(r, v, out.app_protocol);
    if (key == "port") return Read(r, v, out.port);
    if (key == "targetPort") return Read(r, v, out.target_port);
    if (key == "nodePort") return Read(r, v, out.node_port);
    return true;
  });
}

bool ReadServiceSpec(Reader& r, Element e, ServiceSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, out.type);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "clusterIP") return Read(r, v, out.cluster_ip);
    if (key == "clusterIPs") return Read(r, v, out.cluster_ips);
    if (key == "ports") return codec::ReadArray(r, v, out.ports, ReadServicePort);
    if (key == "publishNotReadyAddresses") return Read(r, v, out.publish_not_ready_addresses);
    return true;
  });
}

void OverlayServicePort(Json& j, const ServicePort& now, const ServicePort* before) {
  Put(j, "name", now.name, Prev(before, &ServicePort::name));
  Put(j, "protocol", now.protocol, Prev(before, &ServicePort::protocol));
  PutOpt(j, "appProtocol", now.app_protocol, Prev(before, &ServicePort::app_protocol));
  Put(j, "port", now.port, Prev(before, &ServicePort::port), Emit::kAlways);
  PutOpt(j, "targetPort", now.target_port, Prev(before, &ServicePort::target_port));
  Put(j, "nodePort", now.node_port, Prev(before, &ServicePort::node_port));
}

void OverlayServiceSpec(Json& j, const ServiceSpec& now, const ServiceSpec* before) {
  Put(j, "type", now.type, Prev(before, &ServiceSpec::type));
  Put(j, "selector", now.selector, Prev(before, &ServiceSpec::selector));
  Put(j, "clusterIP", now.cluster_ip, Prev(before, &ServiceSpec::cluster_ip));
  Put(j, "clusterIPs", now.cluster_ips, Prev(before, &ServiceSpec::cluster_ips));
  codec::PutArray(j, "ports", now.ports, Prev(before, &ServiceSpec::ports), OverlayServicePort,
                  [](const ServicePort& a, const ServicePort& b) {
                    return a.port == b.port && a.protocol == b.protocol;
                  });
  Put(j, "publishNotReadyAddresses", now.publish_not_ready_addresses,
      Prev(before, &ServiceSpec::publish_not_ready_addresses));
}

}  // namespace

Result<Service> Service::Decode(std::string_view json) {
  return codec::DecodeObject<Service>(json, kKind,
                                      [](Reader& r, std::string_view key, Element v, Service& out) {
                                        if (key == "spec") return ReadServiceSpec(r, v, out.spec);
                                        return true;
                                      });
}

std::string Service::Encode() const {
  auto same = [this](const Service& before) { return spec == before.spec; };
  return codec::EncodeObject(*this, kApiVersion, kKind, same,
                             [this](Json& root, const Service* before) {
                               codec::PutObject(root, "spec", [&](Json& j) {
                                 OverlayServiceSpec(j, spec, Prev(before, &Service::spec));
                               });
                             });
}

}  // namespace copse::kube
