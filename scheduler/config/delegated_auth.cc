// DelegatedAuth: kube's delegating authenticator and authorizer for the ops
// port (see the header for the order of the steps and the answers).

#include "scheduler/config/delegated_auth.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "net/cert.h"

namespace copse::scheduler::config {

namespace {

using nlohmann::json;

constexpr std::string_view kComponent = "ops";

// A v1 Status as kube's responsewriters.ErrorNegotiated writes it: Go's
// json.Encoder, fields in the struct's order, and a newline.
std::string StatusBody(int code, std::string_view reason, const std::string& message,
                       bool details) {
  nlohmann::ordered_json out = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::ordered_json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason}};
  if (details) out["details"] = nlohmann::ordered_json::object();
  out["code"] = code;
  return out.dump() + "\n";
}

AccessDecision Refuse(int status, std::string content_type, std::string body,
                      kube::UserInfo user = {}) {
  AccessDecision d;
  d.allowed = false;
  d.status = status;
  d.content_type = std::move(content_type);
  d.body = std::move(body);
  d.user = std::move(user);
  return d;
}

AccessDecision Unauthorized() {
  return Refuse(401, "application/json",
                StatusBody(401, "Unauthorized", "Unauthorized", /*details=*/false));
}

// Go's %q for the names kube quotes (user names and paths are printable).
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

AccessDecision Forbidden(const kube::UserInfo& user, std::string_view verb, std::string_view path,
                         const std::string& reason) {
  // kube's forbiddenMessage for a non-resource request, then ": <reason>".
  std::string message =
      "User " + GoQuote(user.username) + " cannot " + std::string(verb) + " path " + GoQuote(path);
  if (!reason.empty()) message += ": " + reason;
  return Refuse(403, "application/json",
                StatusBody(403, "Forbidden", "forbidden: " + message, /*details=*/true), user);
}

AccessDecision InternalError(std::string_view path, const std::string& why) {
  return Refuse(500, "text/plain", "Internal Server Error: " + GoQuote(path) + ": " + why);
}

AccessDecision TooManyRequests() {
  return Refuse(429, "text/plain; charset=utf-8", "Too many requests, please try again later.\n");
}

// "Bearer <token>" (the scheme in any case), as kube's bearertoken
// authenticator reads it; empty when there is none.
std::string_view BearerToken(std::string_view header) {
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.front())))
    header.remove_prefix(1);
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.back())))
    header.remove_suffix(1);
  const size_t space = header.find(' ');
  if (space == std::string_view::npos) return {};
  std::string scheme(header.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "bearer") return {};
  std::string_view token = header.substr(space + 1);
  return token.substr(0, token.find(' '));
}

bool HasGroup(const kube::UserInfo& user, std::string_view group) {
  return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

// kube's AuthenticatedGroupAdder.
void AddAuthenticatedGroup(kube::UserInfo& user) {
  if (user.username == kube::kAnonymousUser || HasGroup(user, kube::kAuthenticatedGroup) ||
      HasGroup(user, kube::kUnauthenticatedGroup)) {
    return;
  }
  user.groups.emplace_back(kube::kAuthenticatedGroup);
}

std::string LowerMethod(std::string_view method) {
  std::string verb(method);
  std::transform(verb.begin(), verb.end(), verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return verb;
}

}  // namespace

DelegatedAuth::DelegatedAuth(DelegatedAuthOptions options, Reviewers reviewers)
    : options_(std::move(options)),
      reviewers_(std::move(reviewers)),
      clock_(options_.clock
                 ? options_.clock
                 : std::shared_ptr<const Clock>(std::shared_ptr<const Clock>(), &RealClock::Get())),
      token_cache_(options_.cache_size, *clock_),
      access_cache_(options_.cache_size, *clock_) {}

void DelegatedAuth::SetClientCa(std::string ca_pem) {
  std::lock_guard<std::mutex> lock(ca_mu_);
  client_ca_ = std::move(ca_pem);
}

std::string DelegatedAuth::client_ca() const {
  std::lock_guard<std::mutex> lock(ca_mu_);
  return client_ca_;
}

DelegatedAuthStats DelegatedAuth::stats() const {
  DelegatedAuthStats s;
  s.token_reviews = token_reviews_.load();
  s.access_reviews = access_reviews_.load();
  s.token_cache_hits = token_cache_hits_.load();
  s.access_cache_hits = access_cache_hits_.load();
  s.throttled = throttled_.load();
  return s;
}

bool DelegatedAuth::Enter() {
  size_t now = in_flight_.load();
  do {
    if (now >= options_.max_in_flight) return false;
  } while (!in_flight_.compare_exchange_weak(now, now + 1));
  return true;
}

void DelegatedAuth::Leave() { in_flight_.fetch_sub(1); }

DelegatedAuth::Authenticated DelegatedAuth::Authenticate(const AccessRequest& request,
                                                         bool* throttled) {
  Authenticated out;
  bool errors = false;
  // 1. A client certificate, against the client CA when there is one.
  if (!request.client_certificate_chain.empty()) {
    const std::string ca = client_ca();
    if (!ca.empty()) {
      auto identity =
          net::VerifyClientCertificate(request.client_certificate_chain, ca, clock_->WallNow());
      if (!identity.ok()) {
        errors = true;
        Log(2, kComponent, "client certificate refused: " + identity.error().message);
      } else if (!identity->common_name.empty()) {
        out.ok = true;
        out.user.username = identity->common_name;
        out.user.groups = identity->organizations;
      }
    }
  }
  // 2. A bearer token, by TokenReview.
  const std::string_view token = out.ok ? std::string_view() : BearerToken(request.authorization);
  if (!token.empty() && reviewers_.review_token) {
    const std::string key = net::Sha256(token);
    std::optional<kube::TokenReview> answer = token_cache_.Get(key);
    if (answer) {
      token_cache_hits_.fetch_add(1);
    } else if (!Enter()) {
      *throttled = true;
      return out;
    } else {
      kube::TokenReview review;
      review.token = std::string(token);
      token_reviews_.fetch_add(1);
      Result<kube::TokenReview> created = reviewers_.review_token(review);
      Leave();
      if (created.ok()) {
        created->token.clear();  // the cache keeps no token
        token_cache_.Put(key, *created, options_.token_cache_ttl);
        answer = std::move(created).value();
      } else {
        LogWarning(kComponent, "TokenReview failed: " + created.error().ToString());
      }
    }
    if (answer && answer->authenticated) {
      out.ok = true;
      out.user = answer->user;
    } else {
      errors = true;
    }
  }
  if (out.ok) {
    AddAuthenticatedGroup(out.user);
    return out;
  }
  if (errors) {
    out.failed = true;
    return out;
  }
  out.ok = true;
  out.user.username = std::string(kube::kAnonymousUser);
  out.user.groups = {std::string(kube::kUnauthenticatedGroup)};
  return out;
}

bool DelegatedAuth::AlwaysAllowed(const kube::UserInfo& user, std::string_view path) const {
  for (const std::string& group : options_.always_allow_groups) {
    if (HasGroup(user, group)) return true;
  }
  // kube's path authorizer: a leading "/" is optional on both sides.
  const auto trim = [](std::string_view p) { return p.starts_with('/') ? p.substr(1) : p; };
  const std::string_view want = trim(path);
  for (const std::string& entry : options_.always_allow_paths) {
    const std::string_view allowed = trim(entry);
    if (allowed.ends_with('*')) {
      if (want.starts_with(allowed.substr(0, allowed.size() - 1))) return true;
    } else if (want == allowed) {
      return true;
    }
  }
  return false;
}

AccessDecision DelegatedAuth::Decide(const AccessRequest& request) {
  bool throttled = false;
  Authenticated who = Authenticate(request, &throttled);
  if (throttled) {
    throttled_.fetch_add(1);
    return TooManyRequests();
  }
  if (who.failed) return Unauthorized();
  const std::string verb = LowerMethod(request.method);
  AccessDecision allowed;
  allowed.allowed = true;
  allowed.user = who.user;
  if (AlwaysAllowed(who.user, request.path)) return allowed;
  if (!reviewers_.review_access) return Forbidden(who.user, verb, request.path, "");

  kube::SubjectAccessReview review;
  review.user = who.user;
  review.non_resource_attributes = kube::NonResourceAttributes{std::string(request.path), verb};
  const std::string key = review.Encode();
  std::optional<kube::SubjectAccessReview> answer = access_cache_.Get(key);
  if (answer) {
    access_cache_hits_.fetch_add(1);
  } else {
    if (!Enter()) {
      throttled_.fetch_add(1);
      return TooManyRequests();
    }
    access_reviews_.fetch_add(1);
    Result<kube::SubjectAccessReview> created = reviewers_.review_access(review);
    Leave();
    if (!created.ok()) {
      LogWarning(kComponent, "SubjectAccessReview failed: " + created.error().ToString());
      return InternalError(request.path, created.error().message);
    }
    access_cache_.Put(key, *created,
                      created->allowed ? options_.allow_cache_ttl : options_.deny_cache_ttl);
    answer = std::move(created).value();
  }
  if (answer->allowed) return allowed;
  return Forbidden(who.user, verb, request.path, answer->reason);
}

Reviewers ApiReviewers(std::shared_ptr<kube::Client> authentication,
                       std::shared_ptr<kube::Client> authorization, kube::IoThread& io,
                       std::chrono::milliseconds timeout) {
  Reviewers out;
  if (authentication) {
    out.review_token = [client = std::move(authentication), &io,
                        timeout](const kube::TokenReview& review) -> Result<kube::TokenReview> {
      kube::WriteOptions options;
      options.timeout = timeout;
      Result<std::string> created =
          io.Run(client->Create(kube::resources::kTokenReviews, "", review.Encode(), options));
      if (!created.ok()) return std::move(created).error();
      return kube::TokenReview::Decode(*created);
    };
  }
  if (authorization) {
    out.review_access =
        [client = std::move(authorization), &io,
         timeout](const kube::SubjectAccessReview& review) -> Result<kube::SubjectAccessReview> {
      kube::WriteOptions options;
      options.timeout = timeout;
      Result<std::string> created = io.Run(
          client->Create(kube::resources::kSubjectAccessReviews, "", review.Encode(), options));
      if (!created.ok()) return std::move(created).error();
      return kube::SubjectAccessReview::Decode(*created);
    };
  }
  return out;
}

std::string ClientCaOf(std::string_view config_map_json) {
  json parsed = json::parse(config_map_json, nullptr, false);
  if (!parsed.is_object()) return {};
  auto data = parsed.find("data");
  if (data == parsed.end() || !data->is_object()) return {};
  auto ca = data->find(kClientCaKey);
  return ca != data->end() && ca->is_string() ? ca->get<std::string>() : std::string();
}

ClientCaWatcher::ClientCaWatcher(std::shared_ptr<kube::Client> client, DelegatedAuth& auth) {
  kube::InformerOptions options;
  options.resource = kube::ResourceRef{"", "v1", "configmaps", true};
  options.namespace_ = std::string(kAuthenticationConfigMapNamespace);
  // One object, by name: what the extension-apiserver-authentication-reader
  // Role allows (its rule names the ConfigMap).
  options.field_selector = "metadata.name=" + std::string(kAuthenticationConfigMapName);
  options.on_error = [](const Error& error) {
    Log(1, kComponent,
        "watching ConfigMap kube-system/extension-apiserver-authentication: " + error.ToString());
  };
  informer_ = std::make_unique<kube::Informer>(std::move(client), std::move(options));
  auto update = [&auth](const kube::ObjectPtr& object) {
    std::string ca = ClientCaOf(object->raw);
    if (ca != auth.client_ca()) {
      Log(0, kComponent,
          ca.empty() ? "the cluster's client CA is gone: client certificates are not accepted"
                     : "client certificates are verified against the cluster's client CA "
                       "(ConfigMap kube-system/extension-apiserver-authentication)");
    }
    auth.SetClientCa(std::move(ca));
  };
  kube::EventHandler handler;
  handler.on_add = update;
  handler.on_update = [update](const kube::ObjectPtr&, const kube::ObjectPtr& now) { update(now); };
  handler.on_delete = [&auth](const kube::ObjectPtr&) { auth.SetClientCa(""); };
  informer_->AddEventHandler(std::move(handler));
}

ClientCaWatcher::~ClientCaWatcher() { Stop(); }

void ClientCaWatcher::Start() { informer_->Start(); }

void ClientCaWatcher::Stop() {
  if (informer_) informer_->Stop();
}

bool ClientCaWatcher::HasSynced() const { return informer_->HasSynced(); }

}  // namespace copse::scheduler::config
