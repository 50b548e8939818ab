#include "grove/initc/initc.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "grove/api/names.h"

namespace copse::grove::initc {

Result<std::vector<Dependency>> ParsePodCliques(const std::vector<std::string>& values) {
  std::vector<Dependency> out;
  for (const auto& value : values) {
    std::string_view rest = value;
    constexpr std::string_view kFlag = "--podcliques=";
    if (rest.substr(0, kFlag.size()) == kFlag) rest.remove_prefix(kFlag.size());
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view entry = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (entry.empty()) continue;
      size_t colon = entry.rfind(':');
      if (colon == std::string_view::npos || colon == 0) {
        return MakeError(ErrorCode::kInvalid, "--podcliques: \"" + std::string(entry) +
                                                  "\": expected <podclique>:<minAvailable>");
      }
      auto min = api::ParseIndex(entry.substr(colon + 1));
      if (!min.has_value()) {
        return MakeError(ErrorCode::kInvalid,
                         "--podcliques: \"" + std::string(entry) +
                             "\": minAvailable must be a non-negative integer");
      }
      out.push_back({std::string(entry.substr(0, colon)), *min});
    }
  }
  return out;
}

std::map<std::string, int32_t> ReadyPerClique(const std::vector<kube::Pod>& pods) {
  std::map<std::string, int32_t> out;
  for (const auto& pod : pods) {
    if (pod.meta.deletion_timestamp) continue;
    auto it = pod.meta.labels.find(api::kLabelPodClique);
    if (it == pod.meta.labels.end()) continue;
    const kube::Condition* ready = kube::FindCondition(pod.status.conditions, "Ready");
    if (ready != nullptr && ready->status == "True") ++out[it->second];
  }
  return out;
}

bool Satisfied(const std::vector<Dependency>& deps, const std::map<std::string, int32_t>& ready) {
  for (const auto& dep : deps) {
    auto it = ready.find(dep.pclq);
    if ((it == ready.end() ? 0 : it->second) < dep.min_available) return false;
  }
  return true;
}

boost::asio::awaitable<Status> Wait(std::shared_ptr<kube::Client> client, std::string ns,
                                    std::vector<Dependency> deps,
                                    std::chrono::milliseconds timeout) {
  if (deps.empty()) co_return Status::Ok();
  std::string selector = std::string(api::kLabelPodClique) + " in (";
  for (size_t i = 0; i < deps.size(); ++i) selector += (i ? "," : "") + deps[i].pclq;
  selector += ")";
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  while (left().count() > 0) {
    kube::ListOptions list_options;
    list_options.label_selector = selector;
    Result<kube::ListResult> list = co_await client->List(kube::resources::kPods, ns, list_options);
    if (!list.ok()) {
      boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
      timer.expires_after(std::chrono::milliseconds(500));
      co_await timer.async_wait(boost::asio::use_awaitable);
      continue;
    }
    std::map<std::string, kube::Pod> pods;
    for (const auto& item : list->items) {
      auto pod = kube::Pod::Decode(item);
      if (pod.ok()) pods[pod->meta.name] = std::move(pod).value();
    }
    auto check = [&] {
      std::vector<kube::Pod> all;
      for (const auto& [name, pod] : pods) all.push_back(pod);
      return Satisfied(deps, ReadyPerClique(all));
    };
    if (check()) co_return Status::Ok();
    kube::WatchOptions watch_options;
    watch_options.label_selector = selector;
    watch_options.resource_version = list->resource_version;
    watch_options.timeout_seconds = std::max<int64_t>(1, left().count() / 1000);
    auto watch = co_await client->Watch(kube::resources::kPods, ns, watch_options);
    if (!watch.ok()) continue;
    kube::WatchEvent event;
    while (true) {
      Result<bool> next = co_await (*watch)->Next(event);
      if (!next.ok() || !*next) break;
      auto pod = kube::Pod::Decode(event.object);
      if (!pod.ok()) continue;
      if (event.type == kube::WatchEventType::kDeleted) {
        pods.erase(pod->meta.name);
      } else if (event.type != kube::WatchEventType::kBookmark) {
        pods[pod->meta.name] = std::move(pod).value();
      }
      if (check()) co_return Status::Ok();
      if (left().count() <= 0) break;
    }
  }
  co_return MakeError(ErrorCode::kTimeout, "initc: dependencies not ready in time");
}

}  // namespace copse::grove::initc
