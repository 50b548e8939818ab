#include "scheduler/api_writer.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <unordered_map>
#include <utility>

#include "core/clock.h"
#include "core/json_text.h"
#include "kube/client.h"
#include "scheduler/convert.h"

namespace copse::scheduler {
namespace net = boost::asio;
using json = nlohmann::json;

namespace {

std::string EventName(std::string_view object_name, std::chrono::system_clock::time_point now) {
  // kube's recorder names events "<object>.<unix nanos in hex>".
  static std::atomic<uint64_t> counter{0};
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char buf[40];
  std::snprintf(buf, sizeof(buf), ".%llx",
                static_cast<unsigned long long>(nanos) + counter.fetch_add(1));
  return std::string(object_name) + buf;
}

}  // namespace

struct ApiWriter::Impl : std::enable_shared_from_this<Impl> {
  std::shared_ptr<kube::Client> client;
  ApiWriterOptions options;
  const Clock& clock() const { return options.clock ? *options.clock : RealClock::Get(); }

  mutable std::mutex mu;
  std::condition_variable idle;
  size_t in_flight = 0;
  size_t events_in_flight = 0;
  // An event is queued as its fields and written out as JSON only when it
  // is sent (on the writes' I/O thread while binds hold events back, not on
  // the loop that records it).
  struct PendingEvent {
    std::string api_version;
    std::string kind;
    PodId object;
    std::string type;
    std::string reason;
    std::string message;
    std::chrono::system_clock::time_point at;
    std::chrono::steady_clock::time_point queued_at;
  };
  std::string EventBody(const PendingEvent& e) const;
  std::deque<PendingEvent> event_queue;
  struct PendingBind {
    PodId pod;
    std::string node;
    std::function<void(Status)> done;
  };
  size_t binds_in_flight = 0;
  std::deque<PendingBind> bind_queue;  // counted in in_flight already
  ApiWriterStats stats;

  void Begin() {
    std::lock_guard lock(mu);
    ++in_flight;
  }
  void End() {
    std::lock_guard lock(mu);
    if (--in_flight == 0) idle.notify_all();
  }

  // Coroutines are free functions taking their arguments by value (a
  // capturing lambda coroutine would outlive its captures).
  void Spawn(net::awaitable<void> task) {
    Begin();
    auto self = shared_from_this();
    net::co_spawn(client->executor(), std::move(task), [self](std::exception_ptr) { self->End(); });
  }

  void PumpBinds();

  // Writes to one object, by "resource/namespace/name/subresource": the
  // front one is in flight, the others wait their turn (each counted in
  // in_flight from the start).
  using Write = std::function<net::awaitable<void>()>;
  std::unordered_map<std::string, std::deque<Write>> object_writes;

  void SpawnOrdered(std::string key, Write write) {
    {
      std::lock_guard lock(mu);
      ++in_flight;
      std::deque<Write>& queue = object_writes[key];
      queue.push_back(std::move(write));
      if (queue.size() > 1) return;  // sent when the ones before it are done
    }
    StartOrdered(std::move(key));
  }

  void StartOrdered(std::string key) {
    net::awaitable<void> task;
    {
      std::lock_guard lock(mu);
      task = object_writes.at(key).front()();  // stays queued: marks the key busy
    }
    auto self = shared_from_this();
    net::co_spawn(client->executor(), std::move(task),
                  [self, key = std::move(key)](std::exception_ptr) {
                    bool more = false;
                    {
                      std::lock_guard lock(self->mu);
                      auto it = self->object_writes.find(key);
                      it->second.pop_front();
                      more = !it->second.empty();
                      if (!more) self->object_writes.erase(it);
                      if (--self->in_flight == 0) self->idle.notify_all();
                    }
                    if (more) self->StartOrdered(key);
                  });
  }

  // When a bind was last queued or finished.
  std::chrono::steady_clock::time_point last_bind_activity{};
  // Wakes PumpEvents when the quiet spell events wait for is over.
  std::unique_ptr<net::steady_timer> event_timer;
  bool event_timer_armed = false;

  // Whether the oldest queued event may go now: binding has been idle for
  // event_quiet, or the event has waited max_event_defer.
  bool EventMayGoLocked(std::chrono::steady_clock::time_point now) const {
    if (binds_in_flight == 0 && bind_queue.empty() &&
        now - last_bind_activity >= options.event_quiet) {
      return true;
    }
    return now - event_queue.front().queued_at >= options.max_event_defer;
  }

  // Events held back while binding is idle but not yet quiet: look again
  // when the quiet spell would be over (nothing else may call PumpEvents).
  // No-op with nothing queued or binds outstanding (their completions look).
  void ArmEventTimerLocked(std::chrono::steady_clock::time_point now) {
    if (event_timer_armed || event_queue.empty() || binds_in_flight != 0 || !bind_queue.empty()) {
      return;
    }
    if (!event_timer) event_timer = std::make_unique<net::steady_timer>(client->executor());
    event_timer_armed = true;
    ++in_flight;  // Drain waits for the events the timer will send
    event_timer->expires_at(std::max(now, last_bind_activity + options.event_quiet));
    event_timer->async_wait([self = shared_from_this()](boost::system::error_code) {
      {
        std::lock_guard lock(self->mu);
        self->event_timer_armed = false;
        if (--self->in_flight == 0) self->idle.notify_all();
      }
      self->PumpEvents();
    });
  }

  void PumpEvents() {
    std::unique_lock lock(mu);
    const auto now = std::chrono::steady_clock::now();
    while (events_in_flight < options.max_events_in_flight && !event_queue.empty() &&
           EventMayGoLocked(now)) {
      PendingEvent event = std::move(event_queue.front());
      event_queue.pop_front();
      ++events_in_flight;
      ++in_flight;
      lock.unlock();
      std::string ns = event.object.namespace_name;
      std::string body = EventBody(event);
      auto self = shared_from_this();
      net::co_spawn(
          client->executor(),
          [](std::shared_ptr<Impl> self, std::string ns, std::string body) -> net::awaitable<void> {
            kube::ResourceRef resource = kube::resources::kEvents;
            Result<std::string> r =
                co_await self->client->Create(std::move(resource), std::move(ns), std::move(body));
            std::lock_guard lock(self->mu);
            if (r.ok())
              ++self->stats.events_sent;
            else
              ++self->stats.events_dropped;
          }(self, std::move(ns), std::move(body)),
          [self](std::exception_ptr) {
            {
              std::lock_guard lock(self->mu);
              --self->events_in_flight;
              if (--self->in_flight == 0) self->idle.notify_all();
            }
            self->PumpEvents();
          });
      lock.lock();
    }
    // Still queued with room to send: held back for the quiet time (an event
    // completion also looks again, so a full window needs no timer).
    if (events_in_flight < options.max_events_in_flight) ArmEventTimerLocked(now);
  }
};

net::awaitable<void> BindTask(std::shared_ptr<ApiWriter::Impl> self, PodId pod, std::string node,
                              std::function<void(Status)> done);
net::awaitable<void> PatchTask(std::shared_ptr<ApiWriter::Impl> self, PodId pod, std::string body);
net::awaitable<void> PreemptTask(std::shared_ptr<ApiWriter::Impl> self, PodId victim,
                                 std::string body, std::function<void(Status)> done);
net::awaitable<void> MergePatchTask(std::shared_ptr<ApiWriter::Impl> self,
                                    kube::ResourceRef resource, std::string ns, std::string name,
                                    std::string body, std::string subresource);

ApiWriter::ApiWriter(std::shared_ptr<kube::Client> client, ApiWriterOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->client = std::move(client);
  impl_->options = std::move(options);
}

ApiWriter::~ApiWriter() { Drain(std::chrono::milliseconds(5000)); }

net::awaitable<void> BindTask(std::shared_ptr<ApiWriter::Impl> self, PodId pod, std::string node,
                              std::function<void(Status)> done) {
  kube::BindOptions options;
  options.pod_uid = pod.uid;
  options.timeout = self->options.bind_timeout;
  std::string ns = pod.namespace_name;
  std::string name = pod.name;
  std::string target = node;
  Status s = co_await self->client->Bind(std::move(ns), std::move(name), std::move(target),
                                         std::move(options));
  {
    std::lock_guard lock(self->mu);
    if (s.ok())
      ++self->stats.binds_ok;
    else
      ++self->stats.binds_failed;
  }
  done(std::move(s));
}

void ApiWriter::Impl::PumpBinds() {
  std::unique_lock lock(mu);
  while (binds_in_flight < std::max<size_t>(options.max_binds_in_flight, 1) &&
         !bind_queue.empty()) {
    PendingBind bind = std::move(bind_queue.front());
    bind_queue.pop_front();
    ++binds_in_flight;
    lock.unlock();
    auto self = shared_from_this();
    net::co_spawn(client->executor(),
                  BindTask(self, std::move(bind.pod), std::move(bind.node), std::move(bind.done)),
                  [self](std::exception_ptr) {
                    {
                      std::lock_guard lock(self->mu);
                      --self->binds_in_flight;
                      self->last_bind_activity = std::chrono::steady_clock::now();
                      if (--self->in_flight == 0) self->idle.notify_all();
                    }
                    self->PumpBinds();
                    // Deferred events go once binding is idle (or they are old).
                    self->PumpEvents();
                  });
    lock.lock();
  }
}

void ApiWriter::Bind(PodId pod, std::string node, std::function<void(Status)> done) {
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->in_flight;
    impl_->last_bind_activity = std::chrono::steady_clock::now();
    impl_->bind_queue.push_back({std::move(pod), std::move(node), std::move(done)});
  }
  impl_->PumpBinds();
}

net::awaitable<void> GetPodNodeNameTask(std::shared_ptr<ApiWriter::Impl> self, PodId pod,
                                        std::function<void(Result<std::string>)> done) {
  kube::ResourceRef resource = kube::resources::kPods;
  std::string ns = pod.namespace_name;
  std::string name = pod.name;
  Result<std::string> got =
      co_await self->client->Get(std::move(resource), std::move(ns), std::move(name));
  if (!got.ok()) {
    done(got.error());
    co_return;
  }
  json object = json::parse(*got, nullptr, false);
  if (!object.is_object()) {
    done(MakeError(ErrorCode::kInternal, "pod " + pod.name + ": the server returned no object"));
    co_return;
  }
  const json& meta = object.contains("metadata") ? object["metadata"] : json::object();
  if (!pod.uid.empty() && meta.is_object() && meta.value("uid", "") != pod.uid) {
    done(MakeError(ErrorCode::kNotFound, "pod " + pod.name + " was recreated"));
    co_return;
  }
  const json& spec = object.contains("spec") ? object["spec"] : json::object();
  done(spec.is_object() ? spec.value("nodeName", "") : std::string());
}

void ApiWriter::GetPodNodeName(PodId pod, std::function<void(Result<std::string>)> done) {
  impl_->Spawn(GetPodNodeNameTask(impl_, std::move(pod), std::move(done)));
}

void ApiWriter::PatchPodStatus(PodId pod, std::optional<PodConditionUpdate> condition,
                               std::optional<std::string> nominated_node) {
  json status = json::object();
  if (condition.has_value()) {
    status["conditions"] = json::array({json{
        {"type", condition->type},
        {"status", condition->status},
        {"reason", condition->reason},
        {"message", condition->message},
        {"lastProbeTime", nullptr},
        {"lastTransitionTime", FormatRfc3339(impl_->clock().WallNow())},
    }});
  }
  if (nominated_node.has_value()) {
    status["nominatedNodeName"] = nominated_node->empty() ? json(nullptr) : json(*nominated_node);
  }
  std::string key = "pods/" + pod.namespace_name + "/" + pod.name + "/status";
  impl_->SpawnOrdered(std::move(key), [self = impl_, pod = std::move(pod),
                                       body = json{{"status", status}}.dump()]() {
    return PatchTask(self, pod, body);
  });
}

net::awaitable<void> PatchTask(std::shared_ptr<ApiWriter::Impl> self, PodId pod, std::string body) {
  kube::PatchOptions options;
  options.subresource = "status";
  kube::ResourceRef resource = kube::resources::kPods;
  std::string ns = pod.namespace_name;
  std::string name = pod.name;
  std::string patch = body;
  Result<std::string> r = co_await self->client->Patch(
      std::move(resource), std::move(ns), std::move(name), kube::PatchType::kStrategicMerge,
      std::move(patch), std::move(options));
  std::lock_guard lock(self->mu);
  if (r.ok())
    ++self->stats.status_patches;
  else
    ++self->stats.status_patch_errors;
}

void ApiWriter::PreemptVictim(PodId victim, std::string preemptor_message,
                              std::function<void(Status)> done, std::string_view reason) {
  json patch = {
      {"status",
       {{"conditions", json::array({json{
                           {"type", kConditionDisruptionTarget},
                           {"status", "True"},
                           {"reason", reason},
                           {"message", preemptor_message},
                           {"lastTransitionTime", FormatRfc3339(impl_->clock().WallNow())},
                       }})}}}};
  impl_->Spawn(PreemptTask(impl_, std::move(victim), patch.dump(), std::move(done)));
}

net::awaitable<void> PreemptTask(std::shared_ptr<ApiWriter::Impl> self, PodId victim,
                                 std::string body, std::function<void(Status)> done) {
  {
    kube::PatchOptions options;
    options.subresource = "status";
    kube::ResourceRef resource = kube::resources::kPods;
    std::string ns = victim.namespace_name;
    std::string name = victim.name;
    std::string patch_body = body;
    // A failed condition patch does not stop the preemption (kube logs it too).
    Result<std::string> r = co_await self->client->Patch(
        std::move(resource), std::move(ns), std::move(name), kube::PatchType::kStrategicMerge,
        std::move(patch_body), std::move(options));
    (void)r;
  }
  kube::DeleteOptions options;
  options.precondition_uid = victim.uid;
  kube::ResourceRef resource = kube::resources::kPods;
  std::string ns = victim.namespace_name;
  std::string name = victim.name;
  Status s = co_await self->client->Delete(std::move(resource), std::move(ns), std::move(name),
                                           std::move(options));
  if (!s.ok() && s.error().code == ErrorCode::kNotFound) s = Status::Ok();
  {
    std::lock_guard lock(self->mu);
    ++self->stats.deletes;
  }
  done(std::move(s));
}

void ApiWriter::MergePatch(const kube::ResourceRef& resource, std::string ns, std::string name,
                           std::string body, std::string subresource) {
  std::string key =
      resource.group + "/" + resource.resource + "/" + ns + "/" + name + "/" + subresource;
  impl_->SpawnOrdered(std::move(key),
                      [self = impl_, resource, ns = std::move(ns), name = std::move(name),
                       body = std::move(body), subresource = std::move(subresource)]() {
                        return MergePatchTask(self, resource, ns, name, body, subresource);
                      });
}

net::awaitable<void> MergePatchTask(std::shared_ptr<ApiWriter::Impl> self,
                                    kube::ResourceRef resource, std::string ns, std::string name,
                                    std::string body, std::string subresource) {
  kube::PatchOptions options;
  options.subresource = std::move(subresource);
  Result<std::string> r =
      co_await self->client->Patch(std::move(resource), std::move(ns), std::move(name),
                                   kube::PatchType::kMerge, std::move(body), std::move(options));
  std::lock_guard lock(self->mu);
  if (r.ok())
    ++self->stats.status_patches;
  else
    ++self->stats.status_patch_errors;
}

void ApiWriter::RecordPodEvent(const PodId& pod, std::string_view type, std::string_view reason,
                               std::string message) {
  RecordEvent("v1", "Pod", pod, type, reason, std::move(message));
}

void ApiWriter::RecordEvent(std::string api_version, std::string kind, PodId object,
                            std::string_view type, std::string_view reason, std::string message) {
  if (!impl_->options.record_events) return;
  Impl::PendingEvent event{std::move(api_version),   std::move(kind),
                           std::move(object),        std::string(type),
                           std::string(reason),      std::move(message),
                           impl_->clock().WallNow(), std::chrono::steady_clock::now()};
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->event_queue.size() >= impl_->options.max_queued_events) {
      ++impl_->stats.events_dropped;
      return;
    }
    impl_->event_queue.push_back(std::move(event));
  }
  impl_->PumpEvents();
}

// A core/v1 Event as kube's recorder writes it, as text (a JSON DOM built and
// dumped per event was a few percent of all CPU in a burst). Its timestamps
// are the time it was recorded.
std::string ApiWriter::Impl::EventBody(const PendingEvent& e) const {
  const std::string at = FormatRfc3339(e.at);
  std::string body;
  body.reserve(448 + e.message.size());
  body += R"({"apiVersion":"v1","kind":"Event","metadata":{"name":)";
  AppendJsonString(body, EventName(e.object.name, e.at));
  body += R"(,"namespace":)";
  AppendJsonString(body, e.object.namespace_name);
  body += R"(},"involvedObject":{"apiVersion":)";
  AppendJsonString(body, e.api_version);
  body += R"(,"kind":)";
  AppendJsonString(body, e.kind);
  body += R"(,"namespace":)";
  AppendJsonString(body, e.object.namespace_name);
  body += R"(,"name":)";
  AppendJsonString(body, e.object.name);
  body += R"(,"uid":)";
  AppendJsonString(body, e.object.uid);
  body += R"(},"reason":)";
  AppendJsonString(body, e.reason);
  body += R"(,"message":)";
  AppendJsonString(body, e.message);
  body += R"(,"type":)";
  AppendJsonString(body, e.type);
  body += R"(,"source":{"component":)";
  AppendJsonString(body, options.component);
  body += R"(},"reportingComponent":)";
  AppendJsonString(body, options.component);
  body += R"(,"firstTimestamp":")";
  body += at;
  body += R"(","lastTimestamp":")";
  body += at;
  body += R"(","count":1})";
  return body;
}

bool ApiWriter::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  return impl_->idle.wait_for(lock, timeout,
                              [&] { return impl_->in_flight == 0 && impl_->event_queue.empty(); });
}

ApiWriterStats ApiWriter::stats() const {
  std::lock_guard lock(impl_->mu);
  ApiWriterStats s = impl_->stats;
  s.in_flight = impl_->in_flight;
  s.binds_queued = impl_->bind_queue.size();
  return s;
}

}  // namespace copse::scheduler
