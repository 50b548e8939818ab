#include "kube/leader_election.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "core/json_text.h"
#include "kube/client.h"
#include "kube/lease.h"

namespace copse::kube {
namespace {

using json = nlohmann::json;

// A Lease the server sent, or a discarded value when it is not JSON or nests
// deeper than Kubernetes' limit (as the client's other decoders refuse it;
// dump() below recurses per level).
json ParseLeaseJson(std::string_view text) {
  if (JsonDepthExceeds(text)) return json(json::value_t::discarded);
  return json::parse(text, nullptr, false);
}

std::optional<std::chrono::system_clock::time_point> ParseMicroTime(const std::string& text) {
  int y, mo, d, h, mi;
  double s;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &s) != 6) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = static_cast<int>(s);
  auto t = std::chrono::system_clock::from_time_t(timegm(&tm));
  return t + std::chrono::microseconds(static_cast<int64_t>((s - static_cast<int>(s)) * 1e6));
}

}  // namespace

LeaderElector::LeaderElector(std::shared_ptr<Client> client, IoThread& io,
                             LeaderElectionOptions options)
    : client_(std::move(client)), io_(io), options_(std::move(options)) {}

Result<bool> LeaderElector::TryAcquireOrRenew() {
  const auto now = std::chrono::system_clock::now();
  const std::string now_text = FormatRfc3339Micro(now);
  const int32_t duration_seconds = static_cast<int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count());
  Result<std::string> got =
      io_.Run(client_->Get(resources::kLeases, options_.lease_namespace, options_.lease_name));
  if (!got.ok()) {
    if (got.error().code != ErrorCode::kNotFound) return got.error();
    json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", duration_seconds},
          {"acquireTime", now_text},
          {"renewTime", now_text},
          {"leaseTransitions", 0}}}};
    Result<std::string> created =
        io_.Run(client_->Create(resources::kLeases, options_.lease_namespace, lease.dump()));
    if (!created.ok()) {
      if (created.error().code == ErrorCode::kAlreadyExists) return false;
      return created.error();
    }
    return true;
  }
  Result<Lease> lease = Lease::Decode(*got);
  if (!lease.ok()) return lease.error();
  const std::string holder = lease->spec.holder_identity.value_or("");
  const bool ours = holder == options_.identity;
  if (!ours && !holder.empty()) {
    const auto renew = ParseMicroTime(lease->spec.renew_time.value_or(""));
    const auto duration =
        std::chrono::seconds(lease->spec.lease_duration_seconds.value_or(duration_seconds));
    if (renew.has_value() && *renew + duration > now) return false;  // held by someone else
  }
  json object = ParseLeaseJson(*got);
  if (!object.is_object()) {
    return MakeError(ErrorCode::kInternal, "lease " + options_.lease_namespace + "/" +
                                               options_.lease_name + ": not a JSON object");
  }
  json& spec = object["spec"];
  spec["holderIdentity"] = options_.identity;
  spec["leaseDurationSeconds"] = duration_seconds;
  spec["renewTime"] = now_text;
  if (!ours) {
    spec["acquireTime"] = now_text;
    spec["leaseTransitions"] = lease->spec.lease_transitions.value_or(0) + (holder.empty() ? 0 : 1);
  }
  Result<std::string> updated = io_.Run(client_->Update(
      resources::kLeases, options_.lease_namespace, options_.lease_name, object.dump()));
  if (!updated.ok()) {
    if (updated.error().code == ErrorCode::kConflict) return false;
    return updated.error();
  }
  return true;
}

void LeaderElector::Run() {
  auto last_renew = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (stopping_) break;
    }
    Result<bool> held = TryAcquireOrRenew();
    const auto now = std::chrono::steady_clock::now();
    if (held.ok() && *held) {
      last_renew = now;
      if (!leading_.exchange(true) && options_.on_started_leading) options_.on_started_leading();
    } else if (leading_.load() && now - last_renew > options_.renew_deadline) {
      leading_ = false;
      if (options_.on_stopped_leading) options_.on_stopped_leading();
      return;
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, options_.retry_period, [&] { return stopping_; });
  }
  if (leading_.exchange(false)) Release();
}

void LeaderElector::Release() {
  Result<std::string> got =
      io_.Run(client_->Get(resources::kLeases, options_.lease_namespace, options_.lease_name));
  if (!got.ok()) return;
  json object = ParseLeaseJson(*got);
  if (!object.is_object() || object["spec"].value("holderIdentity", "") != options_.identity) {
    return;
  }
  object["spec"]["holderIdentity"] = nullptr;
  object["spec"]["leaseDurationSeconds"] = 1;
  (void)io_.Run(client_->Update(resources::kLeases, options_.lease_namespace, options_.lease_name,
                                object.dump()));
}

void LeaderElector::Stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

}  // namespace copse::kube
