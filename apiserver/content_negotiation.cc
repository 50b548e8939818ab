#include "apiserver/content_negotiation.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "kube/protobuf/codec.h"

namespace copse::apiserver {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

struct Clause {
  std::string_view type;
  double q = 1.0;
  bool has_as = false;  // as=Table, as=PartialObjectMetadata...
  size_t position = 0;
};

std::vector<Clause> ParseAccept(std::string_view accept) {
  std::vector<Clause> clauses;
  size_t pos = 0;
  while (pos <= accept.size()) {
    size_t end = accept.find(',', pos);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view part = accept.substr(pos, end - pos);
    pos = end + 1;
    Clause clause;
    clause.position = clauses.size();
    const size_t semi = part.find(';');
    clause.type = Trim(part.substr(0, semi));
    if (clause.type.empty()) continue;
    std::string_view params = semi == std::string_view::npos ? "" : part.substr(semi + 1);
    while (!params.empty()) {
      const size_t next = params.find(';');
      std::string_view param = Trim(params.substr(0, next));
      params = next == std::string_view::npos ? "" : params.substr(next + 1);
      const size_t eq = param.find('=');
      const std::string_view key = Trim(param.substr(0, eq));
      const std::string_view value = eq == std::string_view::npos ? "" : Trim(param.substr(eq + 1));
      if (EqualsIgnoreCase(key, "q")) {
        double q = 1.0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
        clause.q = ec == std::errc() ? q : 0.0;
      } else if (EqualsIgnoreCase(key, "as")) {
        clause.has_as = true;
      }
    }
    clauses.push_back(clause);
  }
  std::stable_sort(clauses.begin(), clauses.end(),
                   [](const Clause& a, const Clause& b) { return a.q > b.q; });
  return clauses;
}

}  // namespace

OutputMedia NegotiateOutput(std::string_view accept, bool protobuf_ok) {
  if (Trim(accept).empty()) return OutputMedia::kJson;
  for (const Clause& c : ParseAccept(accept)) {
    if (c.q <= 0) continue;
    if (EqualsIgnoreCase(c.type, kube::protobuf::kMediaType)) {
      if (protobuf_ok && !c.has_as) return OutputMedia::kProtobuf;
      continue;
    }
    if (EqualsIgnoreCase(c.type, "application/json") || c.type == "*/*" ||
        EqualsIgnoreCase(c.type, "application/*")) {
      return OutputMedia::kJson;
    }
  }
  return OutputMedia::kNone;
}

bool IsProtobufContentType(std::string_view content_type) {
  const std::string_view type = Trim(content_type.substr(0, content_type.find(';')));
  return EqualsIgnoreCase(type, kube::protobuf::kMediaType);
}

Result<std::string> ProtobufBodyToJson(std::string_view body) {
  return kube::protobuf::DecodeObject(body);
}

void EncodeForClient(std::string_view accept, bool custom_resource, HttpResponse* response) {
  if (response->watch || accept.find("protobuf") == std::string_view::npos) return;
  if (NegotiateOutput(accept, !custom_resource) != OutputMedia::kProtobuf) return;
  if (!response->content_type.starts_with("application/json")) return;
  auto encoded = kube::protobuf::EncodeObject(response->body);
  if (encoded.ok()) {
    response->body = std::move(encoded).value();
    response->content_type = std::string(kube::protobuf::kMediaType);
    return;
  }
  // Not a built-in type (discovery documents, Tables) or not encodable:
  // JSON when the client takes it, else 406 as kube-apiserver answers.
  if (NegotiateOutput(accept, false) == OutputMedia::kJson) return;
  Error error = MakeError(ErrorCode::kInvalid,
                          "only the following media types are accepted: application/json, "
                          "application/yaml (" +
                              encoded.error().message + ")");
  error.http_status = 406;
  error.reason = "NotAcceptable";
  response->status = 406;
  response->content_type = "application/json";
  response->body = StatusJson(error);
}

}  // namespace copse::apiserver
