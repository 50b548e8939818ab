#include "bench/harness.h"

#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "core/quantity.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "plugins/defaults/defaults.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"

namespace copse::bench {

namespace asio = boost::asio;
namespace api = copse::apiserver;

namespace {

// "https://127.0.0.1:6443/prefix" -> "127.0.0.1"; "[::1]" for IPv6.
std::string HostOf(const std::string& url) {
  size_t begin = url.find("://");
  begin = begin == std::string::npos ? 0 : begin + 3;
  if (begin < url.size() && url[begin] == '[') {
    const size_t end = url.find(']', begin);
    return url.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
  }
  const size_t end = url.find_first_of(":/", begin);
  return url.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.starts_with("127.") || host == "[::1]" || host == "::1";
}

// The synthetic node JSON with the bench label added to its labels.
std::string LabelNode(const std::string& node) {
  constexpr std::string_view kLabels = R"("labels":{)";
  std::string out = node;
  const size_t at = out.find(kLabels);
  if (at != std::string::npos) {
    out.insert(at + kLabels.size(), "\"" + std::string(kBenchNodeLabel) + "\":\"true\",");
  }
  return out;
}

// metadata.name of an object's JSON text ("" if it has none).
std::string NameOf(const std::string& body) {
  // The benchmark's own bodies start metadata with its name: no parse needed
  // (this runs on the measured path, before the creates).
  constexpr std::string_view kPrefix = R"("metadata":{"name":")";
  if (const size_t at = body.find(kPrefix); at != std::string::npos) {
    const size_t begin = at + kPrefix.size();
    const size_t end = body.find('"', begin);
    if (end != std::string::npos && body.find('\\', begin) > end) {
      return body.substr(begin, end - begin);
    }
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return {};
  auto meta = j.find("metadata");
  if (meta == j.end() || !meta->is_object()) return {};
  return meta->value("name", "");
}

}  // namespace

// ---------------------------------------------------------------- timeline

struct Timeline::Impl {
  std::unique_ptr<kube::IoThread> io;
  std::shared_ptr<kube::Client> client;
  std::string ns;
  kube::Watch* watch = nullptr;  // the open watch; touched on io only
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bound{0};
  std::atomic<int64_t> deleted{0};
  mutable std::mutex mu;
  Records records;
  std::string error;
  bool started = false;
  std::future<void> done;
  simdjson::ondemand::parser parser;

  void Fail(const std::string& message) {
    std::lock_guard lock(mu);
    if (error.empty()) error = message;
  }

  void Record(std::vector<kube::WatchEvent>& events, size_t n, TimePoint now) {
    std::lock_guard lock(mu);
    for (size_t i = 0; i < n; ++i) {
      kube::WatchEvent& e = events[i];
      if (e.type == kube::WatchEventType::kBookmark) continue;
      e.object.reserve(e.object.size() + simdjson::SIMDJSON_PADDING);
      std::string_view name, node;
      simdjson::ondemand::document doc;
      if (parser.iterate(e.object.data(), e.object.size(), e.object.capacity()).get(doc)) continue;
      simdjson::ondemand::object root;
      if (doc.get_object().get(root)) continue;
      // Fields in document order: metadata comes before spec in every server's output.
      for (auto field : root) {
        std::string_view key;
        if (field.unescaped_key().get(key)) break;
        if (key == "metadata") {
          simdjson::ondemand::object meta;
          if (field.value().get_object().get(meta)) break;
          std::string_view v;
          if (!meta.find_field_unordered("name").get_string().get(v)) name = v;
        } else if (key == "spec") {
          simdjson::ondemand::object spec;
          if (field.value().get_object().get(spec)) break;
          std::string_view v;
          if (!spec.find_field_unordered("nodeName").get_string().get(v)) node = v;
          break;
        }
      }
      if (name.empty()) continue;
      PodRecord& r = records[std::string(name)];
      if (e.type == kube::WatchEventType::kDeleted) {
        if (!r.deleted) {
          r.deleted = true;
          r.deleted_at = now;
          r.deleted_json = e.object;
          deleted.fetch_add(1);
        }
        continue;
      }
      if (node.empty() || r.bound) continue;
      r.bound = true;
      r.bound_at = now;
      r.node = std::string(node);
      bound.fetch_add(1);
    }
  }

  // `self` keeps this alive while the coroutine runs.
  asio::awaitable<void> Run(std::shared_ptr<Impl> self) {
    (void)self;
    std::string rv;
    std::vector<kube::WatchEvent> events;
    while (!stop.load()) {
      kube::WatchOptions options;
      options.resource_version = rv;
      options.allow_bookmarks = true;
      auto opened = co_await client->Watch(kube::resources::kPods, ns, options);
      if (!opened.ok()) {
        Fail(opened.error().ToString());
        co_return;
      }
      std::unique_ptr<kube::Watch> w = std::move(opened).value();
      watch = w.get();
      {
        std::lock_guard lock(mu);
        started = true;
      }
      for (;;) {
        auto n = co_await w->NextBatch(events);
        if (!n.ok()) {
          watch = nullptr;
          if (!stop.load()) Fail(n.error().ToString());
          co_return;
        }
        if (*n == 0) break;  // ended (server timeout) or cancelled
        const TimePoint now = BenchClock::now();
        Record(events, *n, now);
        for (size_t i = *n; i-- > 0;) {
          if (!events[i].resource_version.empty()) {
            rv = events[i].resource_version;
            break;
          }
        }
      }
      watch = nullptr;
    }
  }
};

Timeline::Timeline(const kube::ClientConfig& config, std::string ns)
    : impl_(std::make_shared<Impl>()) {
  impl_->ns = std::move(ns);
  impl_->io = std::make_unique<kube::IoThread>(1);
  auto client = kube::Client::Create(config, impl_->io->executor());
  if (!client.ok()) {
    impl_->Fail(client.error().ToString());
    return;
  }
  impl_->client = *client;
  impl_->done = impl_->io->Spawn(impl_->Run(impl_));
}

Timeline::~Timeline() {
  impl_->stop.store(true);
  if (impl_->done.valid()) {
    asio::post(impl_->io->executor(), [impl = impl_] {
      if (impl->watch != nullptr) impl->watch->Cancel();
    });
    impl_->done.wait();
  }
  impl_->client.reset();
  impl_->io.reset();
}

int64_t Timeline::bound() const { return impl_->bound.load(); }
int64_t Timeline::deleted() const { return impl_->deleted.load(); }

std::string Timeline::error() const {
  std::lock_guard lock(impl_->mu);
  return impl_->error;
}

Timeline::Records Timeline::Snapshot() const {
  std::lock_guard lock(impl_->mu);
  return impl_->records;
}

Status Timeline::WaitStarted(std::chrono::seconds timeout) {
  const TimePoint deadline = BenchClock::now() + timeout;
  for (;;) {
    {
      std::lock_guard lock(impl_->mu);
      if (impl_->started) return Status::Ok();
      if (!impl_->error.empty()) {
        return MakeError(ErrorCode::kUnavailable, "timeline watch: " + impl_->error);
      }
    }
    if (BenchClock::now() > deadline) {
      return MakeError(ErrorCode::kTimeout, "timeline watch: not established in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// ---------------------------------------------------------------- harness

Harness::Harness() = default;

namespace {
// Runs fn(i) for i in [0, total) from `workers` coroutines on `io`; blocks
// until all finished; the first error, if any.
Status ForEach(kube::IoThread& io, int workers, int64_t total, std::string_view phase,
               Progress& progress, const std::function<asio::awaitable<Status>(int64_t)>& fn) {
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> remaining{workers};
  std::mutex mu;
  std::optional<Error> first;
  std::promise<void> finished;
  for (int w = 0; w < workers; ++w) {
    asio::co_spawn(
        io.executor(),
        [&]() -> asio::awaitable<void> {
          for (;;) {
            const int64_t i = next.fetch_add(1);
            if (i >= total) break;
            Status s = co_await fn(i);
            if (!s.ok()) {
              std::lock_guard lock(mu);
              if (!first) first = s.error();
            }
            done.fetch_add(1);
          }
        },
        [&](std::exception_ptr) {
          if (remaining.fetch_sub(1) == 1) finished.set_value();
        });
  }
  auto future = finished.get_future();
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    progress.Update(phase, done.load(), total);
  }
  if (first) return *first;
  return Status::Ok();
}
}  // namespace

Result<std::unique_ptr<Harness>> Harness::Start(const BenchOptions& options,
                                                const ClusterSpec& spec, Progress& progress) {
  if (options.scheduler != "copse" && options.scheduler != "external") {
    return MakeError(ErrorCode::kInvalid,
                     "--scheduler: \"" + options.scheduler + "\" (want copse or external)");
  }
  if (options.scheduler == "external" && options.kubeconfig.empty()) {
    return MakeError(ErrorCode::kInvalid,
                     "--scheduler external: needs --kubeconfig (the server that scheduler uses)");
  }
  if (options.connections < 1 || options.connections > 1024) {
    return MakeError(ErrorCode::kInvalid, "--connections: must be in [1, 1024]");
  }
  std::unique_ptr<Harness> h(new Harness());
  h->options_ = options;
  h->spec_ = spec;
  if (!options.scheduler_name.empty()) {
    h->scheduler_name_ = options.scheduler_name;
  } else if (options.scheduler == "external") {
    h->scheduler_name_ = "default-scheduler";
  }
  if (!options.kubeconfig.empty()) h->node_prefix_ = "copse-bench-node";
  if (Status s = h->Setup(progress); !s.ok()) return s.error();
  return h;
}

Result<std::unordered_map<std::string, std::string>> Harness::NodeLabelValues(
    std::string_view label) const {
  auto shape = ParseResourceList(spec_.node_shape);
  if (!shape.ok()) return shape.error();
  auto topology = api::ParseTopology(spec_.topology);
  if (!topology.ok()) return topology.error();
  auto nodes =
      api::MakeSyntheticNodes(static_cast<int>(spec_.nodes), *shape, *topology, node_prefix_);
  if (!nodes.ok()) return nodes.error();
  std::unordered_map<std::string, std::string> out;
  out.reserve(nodes->size());
  for (const std::string& node : *nodes) {
    const nlohmann::json j = nlohmann::json::parse(node);
    const nlohmann::json& labels = j["metadata"]["labels"];
    auto value = labels.find(std::string(label));
    out[j["metadata"]["name"].get<std::string>()] =
        value != labels.end() && value->is_string() ? value->get<std::string>() : "";
  }
  return out;
}

Status Harness::Setup(Progress& progress) {
  auto shape = ParseResourceList(spec_.node_shape);
  if (!shape.ok()) return shape.error();
  auto topology = api::ParseTopology(spec_.topology);
  if (!topology.ok()) return topology.error();
  auto nodes =
      api::MakeSyntheticNodes(static_cast<int>(spec_.nodes), *shape, *topology, node_prefix_);
  if (!nodes.ok()) return nodes.error();
  const std::string ns_json =
      std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") +
      kBenchNamespace + "\"}}";

  kube::ClientConfig config;
  if (options_.kubeconfig.empty()) {
    NameThisThread(kServerThreadName);
    api::StoreOptions store_options;
    store_options.watch_history = std::max<size_t>(spec_.watch_history, 200'000);
    store_ = api::NewStore(store_options);
    for (const std::string& node : *nodes) {
      auto c = store_->Create(kube::resources::kNodes, "", std::string_view(LabelNode(node)));
      if (!c.ok()) return c.error();
    }
    if (auto c = store_->Create(kube::resources::kNamespaces, "", std::string_view(ns_json));
        !c.ok()) {
      return c.error();
    }
    for (const auto& [ref, body] : spec_.setup_objects) {
      if (auto c = store_->Create(ref, "", std::string_view(body)); !c.ok()) return c.error();
    }
    api::Options server_options;
    server_options.store = store_;
    server_options.threads = 1;
    server_options.serve_https = options_.tls;
    server_options.serve_http = !options_.tls;
    auto server = api::ApiServer::Start(server_options);
    if (!server.ok()) return server.error();
    server_ = std::move(server).value();
    config.server = options_.tls ? server_->https_url() : server_->http_url();
    config.ca_pem = server_->ca_pem();
  } else {
    auto loaded = kube::LoadKubeconfigFile(options_.kubeconfig);
    if (!loaded.ok()) return loaded.error();
    config = *loaded;
    const std::string host = HostOf(config.server);
    if (!IsLoopback(host) && !options_.allow_remote) {
      return MakeError(ErrorCode::kInvalid,
                       "--kubeconfig: server " + config.server +
                           " is not on loopback; the benchmark creates and deletes nodes and "
                           "pods there (pass --allow-remote to run it anyway)");
    }
  }

  NameThisThread(kBenchThreadName);
  kube::ClientConfig creator = config;
  creator.max_connections = static_cast<size_t>(options_.connections);
  creator.timeout = std::chrono::seconds(60);
  io_ = std::make_unique<kube::IoThread>(1);
  auto client = kube::Client::Create(creator, io_->executor());
  if (!client.ok()) return client.error();
  client_ = *client;

  if (external_server()) {
    // Leftovers of an interrupted run first, then the nodes over HTTP.
    Cleanup();
    auto ns = io_->Run(client_->Create(kube::resources::kNamespaces, "", ns_json));
    if (!ns.ok() && ns.error().code != ErrorCode::kAlreadyExists) return ns.error();
    for (const auto& [ref, body] : spec_.setup_objects) {
      auto c = io_->Run(client_->Create(ref, "", body));
      if (!c.ok() && c.error().code != ErrorCode::kAlreadyExists) return c.error();
    }
    std::vector<std::string> bodies;
    bodies.reserve(nodes->size());
    for (const std::string& node : *nodes) bodies.push_back(LabelNode(node));
    created_nodes_ = true;
    if (Status s = Create(kube::resources::kNodes, "", bodies, nullptr, "nodes", progress);
        !s.ok()) {
      return s;
    }
    // A server may drop status on create: set allocatable through status.
    std::vector<std::string> names;
    for (int64_t k = 1; k <= spec_.nodes; ++k)
      names.push_back(node_prefix_ + "-" + std::to_string(k));
    std::vector<std::string> patches;
    for (const std::string& node : *nodes) {
      const size_t at = node.find(R"("status":)");
      patches.push_back(at == std::string::npos ? std::string("{}")
                                                : "{" + node.substr(at, node.size() - at));
    }
    if (Status s = ForEach(*io_, options_.connections, static_cast<int64_t>(names.size()),
                           "node status", progress,
                           [&](int64_t i) -> asio::awaitable<Status> {
                             kube::PatchOptions po;
                             po.subresource = "status";
                             auto r = co_await client_->Patch(
                                 kube::resources::kNodes, "", names[static_cast<size_t>(i)],
                                 kube::PatchType::kMerge, patches[static_cast<size_t>(i)], po);
                             co_return r.ok() ? Status::Ok() : Status(r.error());
                           });
        !s.ok()) {
      return s;
    }
  }

  if (spec_.start_scheduler && options_.scheduler == "copse") {
    // Threads created from here on (scheduler I/O, loop, oneTBB workers)
    // carry the scheduler's name.
    NameThisThread(kSchedulerThreadName);
    kube::ClientConfig sched_config = config;
    sched_config.max_connections = 128;
    sched_config.pipelined_connections = kube::kCopsePipelinedConnections;
    sched_io_ = std::make_unique<kube::IoThread>(1);
    auto sc = kube::Client::Create(sched_config, sched_io_->executor());
    if (!sc.ok()) return sc.error();
    sched_client_ = *sc;
    scheduler::SchedulerOptions so;
    if (!options_.scheduler_config.empty()) {
      auto loaded = scheduler::LoadSchedulerOptionsFile(options_.scheduler_config);
      if (!loaded.ok()) {
        return MakeError(ErrorCode::kInvalid,
                         "--config " + options_.scheduler_config + ": " + loaded.error().message);
      }
      so = std::move(loaded).value();
      if (so.profiles.empty()) so.profiles.push_back(plugins::DefaultProfile(scheduler_name_));
      const bool named = std::any_of(
          so.profiles.begin(), so.profiles.end(),
          [&](const plugins::Profile& p) { return p.scheduler_name == scheduler_name_; });
      if (!named) {
        return MakeError(ErrorCode::kInvalid, "--config " + options_.scheduler_config +
                                                  ": no profile has schedulerName " +
                                                  scheduler_name_ + ", the pods' schedulerName");
      }
    } else {
      so.profiles.push_back(plugins::DefaultProfile(scheduler_name_));
    }
    if (spec_.scheduler_options) spec_.scheduler_options(so);
    auto created = scheduler::Scheduler::Create(sched_client_, so);
    if (!created.ok()) return created.error();
    sched_ = std::move(created).value();
    sched_->Start();
    NameThisThread(kBenchThreadName);
    if (!sched_->WaitForSync(std::chrono::seconds(60))) {
      return MakeError(ErrorCode::kInternal, "scheduler informers did not sync");
    }
  }
  NameThisThread(kBenchThreadName);
  timeline_ = std::make_unique<Timeline>(config, kBenchNamespace);
  return timeline_->WaitStarted(std::chrono::seconds(30));
}

Harness::~Harness() {
  timeline_.reset();
  if (sched_) sched_->Stop();
  sched_.reset();
  sched_client_.reset();
  sched_io_.reset();
  if (external_server() && client_) Cleanup();
  client_.reset();
  io_.reset();
  if (server_) server_->Stop();
}

void Harness::Cleanup() {
  // Pods at once (grace 0: no kubelet will confirm), the scenario's own
  // kinds, then the bench's nodes only.
  DeleteCollection(std::string("/api/v1/namespaces/") + kBenchNamespace +
                   "/pods?gracePeriodSeconds=0");
  for (const kube::ResourceRef& ref : cleanup_) DeleteCollection(ref.Path(kBenchNamespace));
  DeleteCollection(std::string("/api/v1/nodes?labelSelector=") + kBenchNodeLabel + "%3Dtrue");
}

void Harness::DeleteCollection(const std::string& path) {
  auto r = io_->Run(client_->Request(kube::HttpMethod::kDelete, path, "", ""));
  if (!r.ok() || (r->status >= 300 && r->status != 404)) {
    std::fprintf(
        stderr, "copse bench: cleanup DELETE %s: %s\n", path.c_str(),
        r.ok() ? ("HTTP " + std::to_string(r->status)).c_str() : r.error().ToString().c_str());
  }
}

void Harness::AddCleanup(const kube::ResourceRef& ref) {
  if (!external_server()) return;  // the embedded store goes with the run
  DeleteCollection(ref.Path(kBenchNamespace));
  cleanup_.push_back(ref);
}

Result<kube::ListResult> Harness::List(const kube::ResourceRef& ref, const std::string& ns) {
  return io_->Run(client_->List(ref, ns));
}

Status Harness::Create(const kube::ResourceRef& ref, const std::string& ns,
                       std::vector<std::string> bodies, std::vector<Created>* created,
                       std::string_view phase, Progress& progress) {
  std::vector<TimePoint> at(created != nullptr ? bodies.size() : 0);
  std::vector<std::string> names;
  if (created != nullptr) {
    names.reserve(bodies.size());
    for (const std::string& body : bodies) names.push_back(NameOf(body));
  }
  const TimePoint start = BenchClock::now();
  Status s = ForEach(*io_, options_.connections, static_cast<int64_t>(bodies.size()), phase,
                     progress, [&](int64_t i) -> asio::awaitable<Status> {
                       const size_t k = static_cast<size_t>(i);
                       if (created != nullptr) at[k] = BenchClock::now();
                       auto r = co_await client_->Create(ref, ns, std::move(bodies[k]));
                       co_return r.ok() ? Status::Ok() : Status(r.error());
                     });
  progress.Done(phase, static_cast<int64_t>(at.empty() ? bodies.size() : at.size()),
                std::chrono::duration<double>(BenchClock::now() - start).count());
  if (!s.ok()) return s;
  if (created != nullptr) {
    created->reserve(created->size() + names.size());
    for (size_t k = 0; k < names.size(); ++k) created->push_back({std::move(names[k]), at[k]});
  }
  return Status::Ok();
}

bool Harness::WaitFor(const std::function<int64_t()>& done, int64_t target, std::string_view phase,
                      std::chrono::seconds timeout, Progress& progress) {
  const TimePoint deadline = BenchClock::now() + timeout;
  for (int64_t n = done(); n < target; n = done()) {
    if (BenchClock::now() > deadline) return false;
    if (!timeline_->error().empty()) return false;
    progress.Update(phase, n, target);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::optional<double> Harness::SchedulerCpuSeconds() const {
  if (sched_) return NamedThreadsCpuSeconds(kSchedulerThreadName);
  if (options_.scheduler_pid > 0) return PidCpuSeconds(options_.scheduler_pid);
  return std::nullopt;
}

std::optional<double> Harness::ApiServerCpuSeconds() const {
  if (server_) return NamedThreadsCpuSeconds(kServerThreadName);
  return std::nullopt;
}

// ---------------------------------------------------------------- figures

std::optional<double> PidCpuSeconds(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = content.rfind(')');
  if (close == std::string::npos || close + 2 > content.size()) return std::nullopt;
  std::istringstream fields(content.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

TimePoint ApplyFigures(const FiguresInput& in, BenchResult& result) {
  std::vector<int64_t> latencies;
  latencies.reserve(in.created.size());
  TimePoint last = in.start;
  result.bind_seconds.clear();
  result.latencies_ms.clear();
  for (const Created& c : in.created) {
    auto it = in.records.find(c.name);
    if (it == in.records.end() || !it->second.bound) continue;
    last = std::max(last, it->second.bound_at);
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(it->second.bound_at - c.at).count();
    latencies.push_back(ns);
    result.latencies_ms.push_back(static_cast<double>(ns) / 1e6);
    result.bind_seconds.push_back(
        std::chrono::duration<double>(it->second.bound_at - in.start).count());
  }
  std::sort(result.bind_seconds.begin(), result.bind_seconds.end());
  result.placement.clear();
  for (const auto& [name, r] : in.records) {
    if (r.bound && !r.deleted) result.placement.emplace(name, r.node);
  }
  result.pods = static_cast<int64_t>(in.created.size());
  result.pods_bound = static_cast<int64_t>(latencies.size());
  const double seconds = std::chrono::duration<double>(last - in.start).count();
  result.pods_per_second.reset();
  if (result.pods_bound > 0 && seconds > 0) {
    result.pods_per_second = static_cast<double>(result.pods_bound) / seconds;
  }
  result.p50_ms.reset();
  result.p99_ms.reset();
  if (!latencies.empty()) {
    result.p50_ms = PercentileMs(latencies, 50);
    result.p99_ms = PercentileMs(latencies, 99);
  }
  result.scheduler_cpu_seconds = in.scheduler_cpu_seconds;
  result.api_server_cpu_seconds = in.api_server_cpu_seconds;
  result.timed_out = in.timed_out;
  result.peak_rss_bytes = PeakRssBytes();
  return last;
}

std::string CopseCrdJson(const std::string& plural, const std::string& kind, bool namespaced) {
  nlohmann::json version = {
      {"name", "v1alpha1"},
      {"served", true},
      {"storage", true},
      {"schema",
       {{"openAPIV3Schema",
         {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}};
  if (namespaced) version["subresources"] = {{"status", nlohmann::json::object()}};
  const nlohmann::json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
                              {"kind", "CustomResourceDefinition"},
                              {"metadata", {{"name", plural + ".scheduling.copse.dev"}}},
                              {"spec",
                               {{"group", "scheduling.copse.dev"},
                                {"names",
                                 {{"plural", plural},
                                  {"singular", kind == "PodGroup" ? "podgroup" : "topology"},
                                  {"kind", kind},
                                  {"listKind", kind + "List"}}},
                                {"scope", namespaced ? "Namespaced" : "Cluster"},
                                {"versions", nlohmann::json::array({version})}}}};
  return crd.dump();
}

}  // namespace copse::bench
