#include "apiserver/apply_request.h"

#include <nlohmann/json.hpp>

#include "apiserver/apply.h"
#include "core/clock.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

HttpResponse Fail(const Error& error, const ResourceInfo& info, std::string_view name,
                  const std::string& causes_json = {}) {
  HttpResponse r;
  r.status = HttpStatusOf(error);
  const std::string_view kind = error.reason == "Invalid" ? info.kind : info.resource;
  if (causes_json.empty()) {
    r.body = StatusJson(error, name, info.group, kind);
    return r;
  }
  json status = json::parse(StatusJson(error, name, info.group, kind));
  status["details"]["causes"] = json::parse(causes_json);
  r.body = status.dump();
  return r;
}

Error Refuse(int status, const char* reason, std::string message) {
  Error e = MakeError(ErrorCode::kInvalid, std::move(message));
  e.http_status = status;
  e.reason = reason;
  return e;
}

}  // namespace

HttpResponse ServeApply(Store& store, const ResourceInfo& info, const ApplyRequest& request) {
  if (request.field_manager.empty()) {
    return Fail(Refuse(400, "BadRequest",
                       "PATCH, application/apply-patch+yaml: fieldManager is required for apply "
                       "requests"),
                info, request.name);
  }
  const json applied = json::parse(request.body, nullptr, false);
  if (applied.is_discarded() || !applied.is_object()) {
    return Fail(Refuse(415, "UnsupportedMediaType",
                       "the applied configuration must be a JSON object (kubectl sends JSON); "
                       "other YAML is not accepted"),
                info, request.name);
  }
  const std::string api_version = info.ApiVersion(request.version);
  if (applied.value("apiVersion", "") != api_version || applied.value("kind", "") != info.kind) {
    return Fail(
        Refuse(400, "BadRequest",
               "the applied object's apiVersion and kind must be " + api_version + " " + info.kind),
        info, request.name);
  }
  if (const json* n = FindPath(applied, "metadata.name");
      n == nullptr || !n->is_string() || *n != request.name) {
    return Fail(Refuse(400, "BadRequest",
                       "metadata.name: the name of the applied object must be \"" +
                           std::string(request.name) + "\", the name in the URL"),
                info, request.name);
  }
  json crd_schema;
  const ApplySchema schema = ResourceApplySchema(info, request.version, &crd_schema);
  ApplyOptions options;
  options.manager = std::string(request.field_manager);
  options.force = request.force;
  options.api_version = api_version;
  options.now = FormatRfc3339(store.clock().WallNow());
  options.ignore_status = info.has_status;
  const ResourceRef ref{std::string(info.group), std::string(request.version), info.resource,
                        info.namespaced};
  // Another writer between the read and the write: read again (bounded).
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto live = store.Get(ref, request.ns, request.name);
    const bool exists = live.ok();
    if (!exists && HttpStatusOf(live.error()) != 404) return Fail(live.error(), info, request.name);
    json current;
    if (exists) {
      current = json::parse((*live)->json);
      current["apiVersion"] = api_version;
    }
    std::string causes;
    auto result = ApplyObject(exists ? &current : nullptr, applied, schema, options, &causes);
    if (!result.ok()) return Fail(result.error(), info, request.name, causes);
    HttpResponse r;
    if (!exists) {
      auto created =
          store.CreateFromJson(ref, request.ns, std::move(result).value(), request.dry_run);
      if (!created.ok()) {
        if (HttpStatusOf(created.error()) == 409 && attempt + 1 < 5) continue;  // created meanwhile
        return Fail(created.error(), info, request.name);
      }
      r.status = 201;
      r.body = (*created)->json;
      return r;
    }
    json next = std::move(result).value();
    next["metadata"]["resourceVersion"] = std::to_string((*live)->rv);
    auto updated = store.Update(ref, request.ns, request.name, next.dump(), {}, request.dry_run);
    if (!updated.ok()) {
      if (updated.error().reason == "Conflict" && attempt + 1 < 5) continue;
      return Fail(updated.error(), info, request.name);
    }
    r.body = (*updated)->json;
    return r;
  }
  return Fail(MakeError(ErrorCode::kConflict, "the object kept changing during apply"), info,
              request.name);
}

}  // namespace copse::apiserver
