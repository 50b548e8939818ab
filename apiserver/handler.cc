#include "apiserver/handler.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <span>

#include "apiserver/admission.h"
#include "apiserver/apply_request.h"
#include "apiserver/authz_review.h"
#include "apiserver/content_negotiation.h"
#include "apiserver/field_error.h"
#include "apiserver/field_validation.h"
#include "apiserver/limits.h"
#include "apiserver/scheduling_api.h"
#include "apiserver/strategic_merge.h"
#include "apiserver/table.h"
#include "kube/protobuf/codec.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

Error MakeHttpError(ErrorCode code, int status, std::string reason, std::string message) {
  Error error = MakeError(code, std::move(message));
  error.http_status = status;
  error.reason = std::move(reason);
  return error;
}

Error NotFoundPath() {
  return MakeHttpError(ErrorCode::kNotFound, 404, "NotFound",
                       "the server could not find the requested resource");
}

Error MethodNotAllowed(std::string_view method) {
  return MakeHttpError(ErrorCode::kInvalid, 405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource (" +
                           std::string(method) + ")");
}

Error UnsupportedMediaType(std::string_view accepted) {
  return MakeHttpError(ErrorCode::kInvalid, 415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types "
                       "include: " +
                           std::string(accepted));
}

std::string UrlDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < in.size()) {
      int value = 0;
      auto [p, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, value, 16);
      if (ec == std::errc() && p == in.data() + i + 3) {
        out += static_cast<char>(value);
        i += 2;
      } else {
        out += c;
      }
    } else {
      out += c;
    }
  }
  return out;
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse ErrorResponse(const Error& error, std::string_view name = {},
                           std::string_view group = {}, std::string_view kind = {}) {
  return JsonResponse(HttpStatusOf(error), StatusJson(error, name, group, kind));
}

// {"apiVersion":"v1","code":N,"kind":"Status","metadata":{},"status":"Success"}
// (keys sorted, as nlohmann dumps objects); text only: every bind answers it.
std::string SuccessStatus(int code) {
  std::string out = R"({"apiVersion":"v1","code":)";
  out += std::to_string(code);
  out += R"(,"kind":"Status","metadata":{},"status":"Success"})";
  return out;
}

bool ParseInt64(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool IsTrue(std::string_view v) { return v == "true" || v == "1" || v == "True"; }

// kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io,...`.
bool WantsTable(std::string_view accept) {
  size_t pos = 0;
  while (pos <= accept.size()) {
    size_t end = accept.find(',', pos);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view part = accept.substr(pos, end - pos);
    if (part.find("protobuf") == std::string_view::npos &&  // Tables are JSON only
        part.find("as=Table") != std::string_view::npos &&
        part.find("g=meta.k8s.io") != std::string_view::npos &&
        (part.find("v=v1;") != std::string_view::npos || part.ends_with("v=v1") ||
         part.find("v=v1beta1") != std::string_view::npos)) {
      return true;
    }
    pos = end + 1;
  }
  return false;
}

std::string ObjectForVersion(const ObjectVersion& v, const std::string& api_version,
                             uint64_t event_rv = 0) {
  if (v.api_version == api_version && (event_rv == 0 || event_rv == v.rv)) return v.json;
  json obj = json::parse(v.json);
  obj["apiVersion"] = api_version;
  if (event_rv != 0) obj["metadata"]["resourceVersion"] = std::to_string(event_rv);
  return obj.dump();
}

std::vector<PrinterColumn> ColumnsFor(const ResourceInfo& info, std::string_view version) {
  if (!info.crd) return BuiltinColumns(info.group, info.resource);
  for (size_t i = 0; i < info.versions.size() && i < info.crd_versions.size(); ++i) {
    if (info.versions[i] == version) {
      return ColumnsFromCrd(json::parse(info.crd_versions[i]));
    }
  }
  return ColumnsFromCrd(json::object());
}

}  // namespace

int HttpStatusOf(const Error& error) {
  if (error.http_status != 0) return error.http_status;
  switch (error.code) {
    case ErrorCode::kInvalid:
      return 400;
    case ErrorCode::kUnauthorized:
      return 401;
    case ErrorCode::kForbidden:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
    case ErrorCode::kAlreadyExists:
      return 409;
    case ErrorCode::kGone:
      return 410;
    case ErrorCode::kTooManyRequests:
      return 429;
    case ErrorCode::kTimeout:
      return 504;
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

std::string StatusJson(const Error& error, std::string_view name, std::string_view group,
                       std::string_view kind) {
  const int code = HttpStatusOf(error);
  std::string reason = error.reason;
  if (reason.empty()) {
    switch (code) {
      case 400:
        reason = "BadRequest";
        break;
      case 401:
        reason = "Unauthorized";
        break;
      case 403:
        reason = "Forbidden";
        break;
      case 404:
        reason = "NotFound";
        break;
      case 405:
        reason = "MethodNotAllowed";
        break;
      case 409:
        reason = "Conflict";
        break;
      case 410:
        reason = "Expired";
        break;
      case 415:
        reason = "UnsupportedMediaType";
        break;
      case 422:
        reason = "Invalid";
        break;
      case 429:
        reason = "TooManyRequests";
        break;
      default:
        reason = "InternalError";
        break;
    }
  }
  json status = {{"kind", "Status"},    {"apiVersion", "v1"},       {"metadata", json::object()},
                 {"status", "Failure"}, {"message", error.message}, {"reason", reason},
                 {"code", code}};
  if (!name.empty() || !kind.empty()) {
    json details = json::object();
    if (!name.empty()) details["name"] = name;
    if (!group.empty()) details["group"] = group;
    if (!kind.empty()) details["kind"] = kind;
    status["details"] = details;
  }
  if (code == 422) {
    // kubectl prints Invalid errors from details.causes ("* field: message"),
    // so split the aggregate message back into its field errors, as
    // apierrors.NewInvalid carries them upstream.
    const std::string_view marker = " is invalid: ";
    const size_t at = error.message.find(marker);
    if (at != std::string::npos) {
      std::string rest = error.message.substr(at + marker.size());
      if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') {
        rest = rest.substr(1, rest.size() - 2);
      }
      static const std::regex kSplit(R"(, (?=[A-Za-z][\w.\[\]/-]*: ))");
      json causes = json::array();
      for (std::sregex_token_iterator it(rest.begin(), rest.end(), kSplit, -1), end; it != end;
           ++it) {
        const std::string part = *it;
        const size_t colon = part.find(": ");
        json cause = {{"reason", "FieldValueInvalid"}};
        if (colon != std::string::npos) {
          cause["field"] = part.substr(0, colon);
          cause["message"] = part.substr(colon + 2);
          // The cause's type is the text field.Error wrote after the field.
          cause["reason"] = CauseReasonOfMessage(std::string_view(part).substr(colon + 2));
        } else {
          cause["message"] = part;
        }
        causes.push_back(std::move(cause));
      }
      if (!causes.empty()) status["details"]["causes"] = std::move(causes);
    }
  }
  if (code == 429) status["details"]["retryAfterSeconds"] = 1;
  return status.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------
// WatchSession

struct WatchSession::Format {
  std::string api_version;
  std::string kind;
  bool table = false;
  bool protobuf = false;  // length-prefixed WatchEvent frames instead of JSON lines
  std::vector<PrinterColumn> columns;
  std::string include_object;
  bool first = true;
  const Clock* clock = nullptr;
};

WatchSession::WatchSession(std::shared_ptr<WatchStream> stream, std::unique_ptr<Format> format)
    : stream_(std::move(stream)), format_(std::move(format)) {}

WatchSession::~WatchSession() {
  if (stream_) stream_->Close();
}

void WatchSession::Serialize(const std::vector<WatchEvent>& events, std::string* out) {
  for (const WatchEvent& e : events) {
    const std::string_view type = WatchEventTypeName(e.type);
    if (format_->protobuf) {
      const std::string object =
          e.object->api_version == format_->api_version && e.object->rv == e.rv
              ? e.object->json
              : ObjectForVersion(*e.object, format_->api_version, e.rv);
      Status framed = kube::protobuf::AppendWatchFrame(type, object, out);
      if (!framed.ok()) {  // a stored object that does not fit its schema: tell the client
        (void)kube::protobuf::AppendWatchFrame(
            "ERROR", StatusJson(MakeError(ErrorCode::kInternal, framed.error().message)), out);
      }
      continue;
    }
    out->append("{\"type\":\"");
    out->append(type);
    out->append("\",\"object\":");
    if (format_->table) {
      json obj = json::parse(ObjectForVersion(*e.object, format_->api_version, e.rv));
      json table = BuildTableWatchEvent(format_->columns, obj, format_->include_object,
                                        format_->clock->WallNow(), format_->first);
      format_->first = false;
      table["metadata"]["resourceVersion"] = std::to_string(e.rv);
      out->append(table.dump(-1, ' ', false, json::error_handler_t::replace));
    } else if (e.object->api_version == format_->api_version && e.object->rv == e.rv) {
      out->append(e.object->json);
    } else {
      out->append(ObjectForVersion(*e.object, format_->api_version, e.rv));
    }
    out->append("}\n");
  }
}

void WatchSession::AppendBookmark(uint64_t rv, std::string* out) const {
  if (format_->protobuf) {
    (void)kube::protobuf::AppendWatchFrame(
        "BOOKMARK",
        "{\"kind\":\"" + format_->kind + "\",\"apiVersion\":\"" + format_->api_version +
            "\",\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) +
            "\",\"creationTimestamp\":null}}",
        out);
    return;
  }
  out->append("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"");
  out->append(format_->table ? "Table" : format_->kind);
  out->append("\",\"apiVersion\":\"");
  out->append(format_->table ? "meta.k8s.io/v1" : format_->api_version);
  out->append("\",\"metadata\":{\"resourceVersion\":\"");
  out->append(std::to_string(rv));
  out->append("\",\"creationTimestamp\":null}}}\n");
}

// ---------------------------------------------------------------------------
// Handler

Handler::Handler(std::shared_ptr<Store> store, HandlerOptions options)
    : store_(std::move(store)),
      options_(std::move(options)),
      authentication_(std::make_shared<const ServerAuthentication>(ServerAuthentication{
          {options_.token, options_.component_token}, !options_.require_authentication})),
      rng_(options_.seed) {}

bool Handler::InjectBindFailure() {
  if (options_.bind_failure_rate <= 0.0) return false;
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < options_.bind_failure_rate;
}

bool Handler::InjectLostBindReply() {
  if (options_.bind_lost_reply_rate <= 0.0) return false;
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < options_.bind_lost_reply_rate;
}

HttpResponse Handler::Handle(const HttpRequest& http) {
  Request req;
  req.http = &http;
  std::string_view target = http.target;
  const size_t q = target.find('?');
  req.path = UrlDecode(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    size_t pos = 0;
    while (pos <= query.size()) {
      size_t end = query.find('&', pos);
      if (end == std::string_view::npos) end = query.size();
      std::string_view part = query.substr(pos, end - pos);
      if (!part.empty()) {
        const size_t eq = part.find('=');
        std::string key = UrlDecode(part.substr(0, eq));
        std::string value = eq == std::string_view::npos ? "" : UrlDecode(part.substr(eq + 1));
        req.query[std::move(key)] = std::move(value);
      }
      pos = end + 1;
    }
  }
  {
    size_t pos = 0;
    const std::string& p = req.path;
    req.segs.reserve(8);  // /api/v1/namespaces/NS/RESOURCE/NAME/SUB: one allocation
    while (pos < p.size()) {
      if (p[pos] == '/') {
        ++pos;
        continue;
      }
      size_t end = p.find('/', pos);
      if (end == std::string::npos) end = p.size();
      req.segs.emplace_back(p.substr(pos, end - pos));
      pos = end;
    }
  }
  const bool health = req.segs.size() == 1 && (req.segs[0] == "healthz" || req.segs[0] == "livez" ||
                                               req.segs[0] == "readyz");
  if (options_.require_authentication && !health && !http.client_certificate) {
    // As kube-apiserver's authenticators: a verified client certificate or a
    // known bearer token. An anonymous request would be system:anonymous,
    // which nothing here authorizes: 401.
    const std::string_view auth = http.authorization;
    constexpr std::string_view kBearer = "Bearer ";
    const std::string_view bearer =
        auth.starts_with(kBearer) ? auth.substr(kBearer.size()) : std::string_view();
    if (!AuthenticateToken(*authentication_, bearer)) {
      Error error = MakeHttpError(ErrorCode::kUnauthorized, 401, "Unauthorized", "Unauthorized");
      return ErrorResponse(error);
    }
  }
  if (health) {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    return r;
  }
  // A protobuf body becomes JSON here: everything after sees JSON.
  HttpRequest decoded;
  std::string decoded_body;
  if (IsProtobufContentType(http.content_type)) {
    auto body = ProtobufBodyToJson(http.body);
    if (!body.ok()) {
      HttpResponse r = ErrorResponse(body.error());
      EncodeForClient(http.accept, false, &r);
      return r;
    }
    decoded_body = std::move(body).value();
    decoded = http;
    decoded.body = decoded_body;
    decoded.content_type = "application/json";
    req.http = &decoded;
  }
  // Before anything parses the body, whatever its declared type
  // (kube-apiserver's limits).
  if (auto refused = CheckRequestBody(req.http->body)) {
    HttpResponse r = ErrorResponse(*refused);
    EncodeForClient(http.accept, false, &r);
    return r;
  }
  try {
    HttpResponse r = Route(req);
    EncodeForClient(http.accept, req.info != nullptr && req.info->crd, &r);
    return r;
  } catch (const std::exception& e) {
    return ErrorResponse(MakeHttpError(ErrorCode::kInternal, 500, "InternalError",
                                       std::string("Internal error occurred: ") + e.what()));
  }
}

HttpResponse Handler::Route(Request& req) {
  bool handled = false;
  HttpResponse discovery = Discovery(req, &handled);
  if (handled) return discovery;
  HttpResponse openapi = OpenApi(req, &handled);
  if (handled) return openapi;
  const auto& segs = req.segs;
  size_t i = 0;
  if (segs.size() >= 2 && segs[0] == "api") {
    req.group = "";
    req.version = segs[1];
    i = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    req.group = segs[1];
    req.version = segs[2];
    i = 3;
  } else {
    return ErrorResponse(NotFoundPath());
  }
  if (req.group == kAuthorizationGroup) {  // every authenticated request is the local admin's
    return HandleAuthorizationReview(LocalAdmin(), *authentication_, req.http->method, req.version,
                                     std::span<const std::string>(segs).subspan(i), req.http->body);
  }
  if (req.group == kAuthenticationGroup) {
    return HandleAuthenticationReview(*authentication_, req.http->method, req.version,
                                      std::span<const std::string>(segs).subspan(i),
                                      req.http->body);
  }
  if (i < segs.size() && segs[i] == "watch") {
    req.watch_path = true;
    ++i;
  }
  const std::span<const std::string> rest(segs.data() + i, segs.size() - i);
  if (rest.empty()) return ErrorResponse(NotFoundPath());
  std::string resource;
  if (rest[0] == "namespaces" && rest.size() >= 3 && rest[2] != "status" && rest[2] != "finalize") {
    req.ns = rest[1];
    resource = rest[2];
    if (rest.size() >= 4) req.name = rest[3];
    if (rest.size() >= 5) req.subresource = rest[4];
    if (rest.size() > 5) return ErrorResponse(NotFoundPath());
  } else {
    resource = rest[0];
    if (rest.size() >= 2) req.name = rest[1];
    if (rest.size() >= 3) req.subresource = rest[2];
    if (rest.size() > 3) return ErrorResponse(NotFoundPath());
  }
  // Legacy POST /api/v1/namespaces/{ns}/bindings.
  if (req.group.empty() && resource == "bindings" && req.http->method == "POST" &&
      req.name.empty()) {
    json binding = json::parse(req.http->body, nullptr, false);
    if (binding.is_discarded() || !binding.is_object()) {
      return ErrorResponse(BadRequest("couldn't get version/kind; json parse error"));
    }
    const json* n = FindPath(binding, "metadata.name");
    if (n == nullptr || !n->is_string()) {
      return ErrorResponse(BadRequest("name is required in a Binding"));
    }
    req.name = n->get<std::string>();
    req.subresource = "binding";
    resource = "pods";
  }
  auto info = store_->Resolve(req.group, req.version, resource);
  if (!info.ok()) return ErrorResponse(info.error());
  req.info = std::move(info).value();
  if (!req.info->namespaced && !req.ns.empty()) return ErrorResponse(NotFoundPath());
  return HandleResource(req);
}

HttpResponse Handler::HandleResource(Request& req) {
  const ResourceInfo& info = *req.info;
  const ResourceRef ref = req.Ref();
  const std::string_view method = req.http->method;
  const std::string api_version = info.ApiVersion(req.version);
  const bool dry_run = req.HasQuery("dryRun");
  auto fail = [&](const Error& error) {
    std::string_view kind = info.resource;
    if (error.reason == "Invalid") kind = info.kind;
    return ErrorResponse(error, req.name, info.group, kind);
  };
  const OutputMedia media = NegotiateOutput(req.http->accept, !info.crd);
  if (media == OutputMedia::kNone) {
    return ErrorResponse(
        MakeHttpError(ErrorCode::kInvalid, 406, "NotAcceptable",
                      info.crd ? "only the following media types are accepted: application/json, "
                                 "application/yaml"
                               : "only the following media types are accepted: application/json, "
                                 "application/yaml, application/vnd.kubernetes.protobuf"));
  }
  const bool table = WantsTable(req.http->accept);
  const std::string include_object(req.Query("includeObject"));
  if (table) {
    Status ok = CheckIncludeObject(include_object);
    if (!ok.ok()) return fail(ok.error());
  }
  auto object_body = [&](const ObjectVersion& v) { return ObjectForVersion(v, api_version); };
  auto render_table = [&](const std::vector<ObjectPtr>& items, uint64_t rv,
                          const std::string& cont) {
    std::vector<json> parsed;
    parsed.reserve(items.size());
    for (const auto& item : items) parsed.push_back(json::parse(object_body(*item)));
    std::vector<const json*> ptrs;
    ptrs.reserve(parsed.size());
    for (const auto& p : parsed) ptrs.push_back(&p);
    json t =
        BuildTable(ColumnsFor(info, req.version), ptrs, include_object, store_->clock().WallNow());
    t["metadata"]["resourceVersion"] = std::to_string(rv);
    if (!cont.empty()) t["metadata"]["continue"] = cont;
    return JsonResponse(200, t.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  const std::string_view field_manager = req.Query("fieldManager");
  // Server-side field validation of written bodies (apiserver/field_validation.h).
  auto check_fields = [&](std::string_view body, bool patch) -> Result<std::vector<std::string>> {
    auto directive = ParseFieldValidation(req.Query("fieldValidation"));
    if (!directive.ok()) return directive.error();
    return ValidateFields(*directive, info, req.version, body, patch);
  };
  const std::string_view content_type = req.http->content_type;
  const bool json_body = content_type.empty() || content_type.starts_with("application/json") ||
                         content_type.starts_with("*/*");
  // Validating admission webhooks (apiserver/admission.h) for writes of main resources.
  if (auto denied = AdmitWrite(*store_, info, req.version, method, req.ns, req.name,
                               req.subresource, req.http->body, content_type, dry_run)) {
    std::string name = req.name;
    if (name.empty()) {  // a create: the name is in the body
      json body = json::parse(req.http->body, nullptr, false);
      if (const json* n = body.is_object() ? FindPath(body, "metadata.name") : nullptr;
          n != nullptr && n->is_string()) {
        name = n->get<std::string>();
      }
    }
    std::string_view kind =
        denied->reason == "Invalid" ? std::string_view(info.kind) : info.resource;
    return ErrorResponse(*denied, name, info.group, kind);
  }

  // ---- collection
  if (req.name.empty()) {
    if (method == "GET") {
      const bool watch = req.watch_path || IsTrue(req.Query("watch"));
      if (watch) {
        WatchOptions wo;
        wo.ns = req.ns;
        wo.label_selector = std::string(req.Query("labelSelector"));
        wo.field_selector = std::string(req.Query("fieldSelector"));
        std::string_view rv = req.Query("resourceVersion");
        if (!rv.empty()) {
          int64_t value = 0;
          if (!ParseInt64(rv, &value) || value < 0) {
            return fail(MakeHttpError(ErrorCode::kInvalid, 400, "BadRequest",
                                      "resourceVersion: Invalid value: \"" + std::string(rv) +
                                          "\": must be a non-negative integer"));
          }
          wo.resource_version = static_cast<uint64_t>(value);
        }
        auto stream = store_->Watch(ref, wo);
        if (!stream.ok()) {
          const Error& error = stream.error();
          if (HttpStatusOf(error) != 410) return fail(error);
          // As kube-apiserver: 200 and one ERROR event carrying the 410 Status.
          HttpResponse r;
          if (media == OutputMedia::kProtobuf && !table) {
            r.content_type = std::string(kube::protobuf::kWatchMediaType);
            (void)kube::protobuf::AppendWatchFrame("ERROR", StatusJson(error), &r.body);
            return r;
          }
          r.body = "{\"type\":\"ERROR\",\"object\":" + StatusJson(error) + "}\n";
          return r;
        }
        auto format = std::make_unique<WatchSession::Format>();
        format->api_version = api_version;
        format->kind = info.kind;
        format->table = table;
        format->protobuf = media == OutputMedia::kProtobuf && !table;
        if (table) format->columns = ColumnsFor(info, req.version);
        format->include_object = include_object;
        format->clock = &store_->clock();
        const bool format_protobuf = format->protobuf;
        auto session = std::make_shared<WatchSession>(std::move(stream).value(), std::move(format));
        session->bookmarks = IsTrue(req.Query("allowWatchBookmarks"));
        if (format_protobuf) session->content_type = std::string(kube::protobuf::kWatchMediaType);
        if (std::string_view t = req.Query("timeoutSeconds"); !t.empty()) {
          int64_t seconds = 0;
          if (ParseInt64(t, &seconds) && seconds > 0) {
            session->timeout = std::chrono::seconds(seconds);
          }
        }
        HttpResponse r;
        r.watch = std::move(session);
        return r;
      }
      ListOptions lo;
      lo.ns = req.ns;
      lo.label_selector = std::string(req.Query("labelSelector"));
      lo.field_selector = std::string(req.Query("fieldSelector"));
      if (std::string_view l = req.Query("limit"); !l.empty()) {
        if (!ParseInt64(l, &lo.limit) || lo.limit < 0) {
          return fail(MakeHttpError(ErrorCode::kInvalid, 400, "BadRequest",
                                    "limit: Invalid value: \"" + std::string(l) + "\""));
        }
      }
      lo.continue_token = std::string(req.Query("continue"));
      auto list = store_->List(ref, lo);
      if (!list.ok()) return fail(list.error());
      if (table) return render_table(list->items, list->resource_version, list->continue_token);
      std::string body;
      size_t total = 128;
      for (const auto& item : list->items) total += item->json.size() + 1;
      body.reserve(total);
      body += "{\"kind\":\"";
      body += info.list_kind;
      body += "\",\"apiVersion\":\"";
      body += api_version;
      body += "\",\"metadata\":{\"resourceVersion\":\"";
      body += std::to_string(list->resource_version);
      body += '"';
      if (!list->continue_token.empty()) {
        body += ",\"continue\":\"";
        body += list->continue_token;
        body += '"';
        if (list->remaining_items >= 0) {
          body += ",\"remainingItemCount\":";
          body += std::to_string(list->remaining_items);
        }
      }
      body += "},\"items\":[";
      bool first = true;
      for (const auto& item : list->items) {
        if (!first) body += ',';
        first = false;
        if (item->api_version == api_version) {
          body += item->json;
        } else {
          body += object_body(*item);
        }
      }
      body += "]}";
      return JsonResponse(200, std::move(body));
    }
    if (method == "POST") {
      if (!json_body) {
        return fail(UnsupportedMediaType("application/json, application/yaml"));
      }
      auto warnings = check_fields(req.http->body, false);
      if (!warnings.ok()) return fail(warnings.error());
      auto created = store_->Create(ref, req.ns, req.http->body, dry_run, field_manager);
      if (!created.ok()) {
        // Name from the body for details, when it parses.
        json body = json::parse(req.http->body, nullptr, false);
        std::string name;
        if (body.is_object()) {
          if (const json* n = FindPath(body, "metadata.name"); n && n->is_string()) {
            name = n->get<std::string>();
          }
        }
        std::string_view kind = info.resource;
        if (created.error().reason == "Invalid") kind = info.kind;
        return ErrorResponse(created.error(), name, info.group, kind);
      }
      HttpResponse r = JsonResponse(201, object_body(**created));
      r.warnings = std::move(warnings).value();
      return r;
    }
    if (method == "DELETE") {
      ListOptions lo;
      lo.ns = req.ns;
      lo.label_selector = std::string(req.Query("labelSelector"));
      lo.field_selector = std::string(req.Query("fieldSelector"));
      DeleteOptions dopts;
      dopts.dry_run = dry_run;
      auto deleted = store_->DeleteCollection(ref, lo, dopts);
      if (!deleted.ok()) return fail(deleted.error());
      std::string body = "{\"kind\":\"" + info.list_kind + "\",\"apiVersion\":\"" + api_version +
                         "\",\"metadata\":{\"resourceVersion\":\"" +
                         std::to_string(deleted->resource_version) + "\"},\"items\":[";
      for (size_t k = 0; k < deleted->items.size(); ++k) {
        if (k) body += ',';
        body += object_body(*deleted->items[k]);
      }
      body += "]}";
      return JsonResponse(200, std::move(body));
    }
    return fail(MethodNotAllowed(method));
  }

  // ---- subresources
  const std::string& sub = req.subresource;
  if (!sub.empty()) {
    const bool known = (sub == "status" && info.has_status) || (sub == "scale" && info.has_scale) ||
                       (std::find(info.post_subresources.begin(), info.post_subresources.end(),
                                  sub) != info.post_subresources.end()) ||
                       (sub == "finalize" && info.group.empty() && info.resource == "namespaces");
    if (!known) return fail(NotFoundPath());
  }
  if (sub == "binding" || sub == "eviction") {
    if (method != "POST") return fail(MethodNotAllowed(method));
    if (sub == "binding") {
      if (!options_.bind_reject_prefix.empty() &&
          req.name.starts_with(options_.bind_reject_prefix)) {
        return fail(MakeHttpError(
            ErrorCode::kForbidden, 403, "Forbidden",
            "pods \"" + req.name + "\" is forbidden: binding rejected by test policy"));
      }
      if (InjectBindFailure()) {
        return fail(MakeHttpError(ErrorCode::kInternal, 500, "InternalError",
                                  "Internal error occurred: injected binding failure"));
      }
      Status bound = store_->Bind(req.ns, req.name, req.http->body);
      if (!bound.ok()) return ErrorResponse(bound.error(), req.name, "", "pods/binding");
      if (InjectLostBindReply()) {
        return fail(
            MakeHttpError(ErrorCode::kInternal, 500, "InternalError",
                          "Internal error occurred: injected lost reply (the pod was bound)"));
      }
      return JsonResponse(201, SuccessStatus(201));
    }
    Status evicted = store_->Evict(req.ns, req.name, req.http->body);
    if (!evicted.ok()) return fail(evicted.error());
    return JsonResponse(201, SuccessStatus(201));
  }
  if (sub == "scale") {
    if (method == "GET") {
      auto scale = store_->GetScale(ref, req.ns, req.name);
      if (!scale.ok()) return fail(scale.error());
      return JsonResponse(200, std::move(scale).value());
    }
    if (method == "PUT") {
      auto scale = store_->UpdateScale(ref, req.ns, req.name, req.http->body);
      if (!scale.ok()) return fail(scale.error());
      return JsonResponse(200, std::move(scale).value());
    }
    if (method == "PATCH") {
      auto current = store_->GetScale(ref, req.ns, req.name);
      if (!current.ok()) return fail(current.error());
      json scale = json::parse(*current);
      json patch = json::parse(req.http->body, nullptr, false);
      if (patch.is_discarded())
        return fail(BadRequest("couldn't get version/kind; json parse error"));
      if (content_type.starts_with("application/json-patch+json")) {
        auto patched = ApplyJsonPatch(scale, patch);
        if (!patched.ok()) return fail(patched.error());
        scale = std::move(patched).value();
      } else {
        scale.merge_patch(patch);
      }
      auto updated = store_->UpdateScale(ref, req.ns, req.name, scale.dump());
      if (!updated.ok()) return fail(updated.error());
      return JsonResponse(200, std::move(updated).value());
    }
    return fail(MethodNotAllowed(method));
  }
  const std::string_view store_sub = sub == "status" ? "status" : "";

  if (method == "GET") {
    auto got = store_->Get(ref, req.ns, req.name);
    if (!got.ok()) return fail(got.error());
    if (table) return render_table({*got}, (*got)->rv, "");
    return JsonResponse(200, object_body(**got));
  }
  if (method == "PUT") {
    if (!json_body) return fail(UnsupportedMediaType("application/json, application/yaml"));
    auto warnings = check_fields(req.http->body, false);
    if (!warnings.ok()) return fail(warnings.error());
    auto updated =
        store_->Update(ref, req.ns, req.name, req.http->body, store_sub, dry_run, field_manager);
    if (!updated.ok()) return fail(updated.error());
    HttpResponse r = JsonResponse(200, object_body(**updated));
    r.warnings = std::move(warnings).value();
    return r;
  }
  if (method == "PATCH" && content_type.starts_with("application/apply-patch") &&
      store_sub.empty()) {
    return ServeApply(*store_, info,
                      ApplyRequest{req.version, req.ns, req.name, req.http->body,
                                   req.Query("fieldManager"), IsTrue(req.Query("force")), dry_run});
  }
  if (method == "PATCH") {
    PatchType type;
    if (content_type.starts_with("application/json-patch+json")) {
      type = PatchType::kJson;
    } else if (content_type.starts_with("application/merge-patch+json")) {
      type = PatchType::kMerge;
    } else if (content_type.starts_with("application/strategic-merge-patch+json")) {
      type = PatchType::kStrategicMerge;
    } else {
      return fail(UnsupportedMediaType(
          "application/json-patch+json, application/merge-patch+json, "
          "application/strategic-merge-patch+json, application/apply-patch+yaml"));
    }
    Result<std::vector<std::string>> warnings = std::vector<std::string>();
    if (type != PatchType::kJson) warnings = check_fields(req.http->body, true);
    if (!warnings.ok()) return fail(warnings.error());
    auto patched = store_->Patch(ref, req.ns, req.name, type, req.http->body, store_sub, dry_run,
                                 field_manager);
    if (!patched.ok()) return fail(patched.error());
    HttpResponse r = JsonResponse(200, object_body(**patched));
    r.warnings = std::move(warnings).value();
    return r;
  }
  if (method == "DELETE") {
    DeleteOptions dopts;
    dopts.dry_run = dry_run;
    bool orphan_false = req.Query("orphanDependents") == "false";
    if (!req.http->body.empty()) {
      json body = json::parse(req.http->body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        return fail(
            BadRequest("couldn't get version/kind; json parse error: invalid "
                       "DeleteOptions"));
      }
      if (auto g = body.find("gracePeriodSeconds"); g != body.end() && g->is_number_integer()) {
        dopts.grace_period_seconds = g->get<int64_t>();
      }
      if (auto p = body.find("propagationPolicy"); p != body.end() && p->is_string()) {
        dopts.propagation_policy = p->get<std::string>();
      }
      if (auto o = body.find("orphanDependents"); o != body.end() && o->is_boolean()) {
        if (o->get<bool>() && dopts.propagation_policy.empty()) dopts.propagation_policy = "Orphan";
        orphan_false = orphan_false || !o->get<bool>();
      }
      if (const json* u = FindPath(body, "preconditions.uid"); u && u->is_string()) {
        dopts.precondition_uid = u->get<std::string>();
      }
      if (const json* r = FindPath(body, "preconditions.resourceVersion"); r && r->is_string()) {
        dopts.precondition_resource_version = r->get<std::string>();
      }
      if (auto d = body.find("dryRun"); d != body.end() && d->is_array() && !d->empty()) {
        dopts.dry_run = true;
      }
    }
    if (std::string_view g = req.Query("gracePeriodSeconds"); !g.empty()) {
      int64_t value = 0;
      if (!ParseInt64(g, &value)) return fail(BadRequest("gracePeriodSeconds: invalid integer"));
      dopts.grace_period_seconds = value;
    }
    if (std::string_view p = req.Query("propagationPolicy"); !p.empty()) {
      dopts.propagation_policy = std::string(p);
    }
    if (IsTrue(req.Query("orphanDependents")) && dopts.propagation_policy.empty()) {
      dopts.propagation_policy = "Orphan";
    }
    auto deleted = store_->Delete(ref, req.ns, req.name, dopts);
    if (!deleted.ok()) return fail(deleted.error());
    if (deleted->removed && IsSchedulingApiKind(info.group, info.kind)) {
      // These registries answer a completed deletion with a Status.
      return JsonResponse(200, json({{"kind", "Status"},
                                     {"apiVersion", "v1"},
                                     {"metadata", json::object()},
                                     {"status", "Success"},
                                     {"details",
                                      {{"name", req.name},
                                       {"group", info.group},
                                       {"kind", info.resource},
                                       {"uid", deleted->object->uid}}}})
                                   .dump());
    }
    // As kube-apiserver: 202 only when orphanDependents=false was asked for
    // and the object is not gone yet; a deletion held by finalizers or a
    // grace period is otherwise 200.
    return JsonResponse(deleted->removed || !orphan_false ? 200 : 202,
                        object_body(*deleted->object));
  }
  return fail(MethodNotAllowed(method));
}

}  // namespace copse::apiserver
