// Scenario "apiserver": the HTTP client against the embedded API server on
// loopback, both in this process (2 cores: one I/O thread each).
//
//  1. Start a store with `nodes` synthetic nodes and the server (HTTP, or
//     HTTPS with --tls).
//  2. create: `pods` pods by kWorkers concurrent coroutines; per-request latency.
//     The same again first with protobuf bodies (application/vnd.kubernetes.protobuf,
//     as client-go sends built-in types; answers in JSON) into another
//     namespace, whose pods are then deleted.
//  3. list: every pod, paginated (limit 10,000).
//  4. bind: every pod to a node (pods/binding).
//  5. watch: replay every event since step 1 (ADDED + MODIFIED) on a new
//     watch; events/s delivered to the client, decoded.
// Targets (issue 2): >= 10,000 creates/s, >= 15,000 binds/s, >= 100,000 watch
// events/s, and the pods held in <= 1 GiB RSS.
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/commit_log.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "bench/harness.h"
#include "core/quantity.h"
#include "kube/client.h"
#include "kube/protobuf/codec.h"

namespace copse::bench {
namespace {

namespace asio = boost::asio;
namespace api = copse::apiserver;
using Clock = std::chrono::steady_clock;

constexpr int kWorkers = 64;

std::string PodJson(int64_t i, std::string_view ns = "bench") {
  std::string n = std::to_string(i);
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bench-pod-)" + n +
         R"(","namespace":")" + std::string(ns) +
         R"(","labels":{"app":"bench","tier":"batch","shard":")" + std::to_string(i % 64) +
         R"("},"annotations":{"copse.dev/bench":"apiserver"}},"spec":{"schedulerName":"copse-scheduler","priority":0,"terminationGracePeriodSeconds":30,"restartPolicy":"Always","containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"200m","memory":"256Mi"}},"ports":[{"containerPort":8080,"protocol":"TCP"}],"env":[{"name":"SHARD","value":")" +
         std::to_string(i % 64) +
         R"("}]}],"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}})";
}

// Runs `fn(i)` for i in [0, total) on `workers` coroutines; blocks until done.
template <typename Fn>
double RunConcurrently(kube::IoThread& io, int64_t total, int workers, Progress& progress,
                       std::string_view phase, Fn fn) {
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> remaining{workers};
  std::promise<void> finished;
  const auto start = Clock::now();
  for (int w = 0; w < workers; ++w) {
    asio::co_spawn(
        io.executor(),
        [&]() -> asio::awaitable<void> {
          for (;;) {
            const int64_t i = next.fetch_add(1);
            if (i >= total) break;
            co_await fn(i);
            done.fetch_add(1);
          }
        },
        [&](std::exception_ptr) {
          if (remaining.fetch_sub(1) == 1) finished.set_value();
        });
  }
  auto future = finished.get_future();
  while (future.wait_for(std::chrono::milliseconds(250)) != std::future_status::ready) {
    progress.Update(phase, done.load(), total);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  progress.Done(phase, total, seconds);
  return seconds;
}

}  // namespace

Result<BenchResult> RunApiServerBench(const BenchOptions& options, Progress& progress) {
  const int64_t pods = options.pods > 0 ? options.pods : 100'000;
  const int64_t nodes = options.nodes > 0 ? options.nodes : 1'000;

  api::StoreOptions store_options;
  store_options.watch_history = static_cast<size_t>(pods) * 2 + 1024;
  std::shared_ptr<api::Store> store;
  if (options.data_dir.empty()) {
    store = api::NewStore(store_options);
  } else {
    api::CommitLogOptions log_options;
    log_options.dir = options.data_dir;
    api::RecoveryReport report;
    auto opened = api::OpenPersistentStore(store_options, log_options, &report);
    if (!opened.ok()) return opened.error();
    if (!report.fresh) {
      return MakeError(ErrorCode::kInvalid,
                       "--data-dir " + options.data_dir + ": must be new or empty");
    }
    store = std::move(opened).value();
  }
  auto shape = ParseResourceList("cpu=64,memory=512Gi,pods=1000");
  if (!shape.ok()) return shape.error();
  auto node_objects = api::MakeSyntheticNodes(static_cast<int>(nodes), *shape, {});
  if (!node_objects.ok()) return node_objects.error();
  for (const auto& node : *node_objects) {
    auto created = store->Create(kube::resources::kNodes, "", std::string_view(node));
    if (!created.ok()) return created.error();
  }
  {
    auto ns = store->Create(
        kube::resources::kNamespaces, "",
        std::string_view(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})"));
    if (!ns.ok()) return ns.error();
    auto pb_ns = store->Create(
        kube::resources::kNamespaces, "",
        std::string_view(
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench-pb"}})"));
    if (!pb_ns.ok()) return pb_ns.error();
  }

  NameThisThread(kServerThreadName);
  api::Options server_options;
  server_options.store = store;
  // With a data dir a request's thread waits for its batch's fsync: more
  // threads let concurrent writers share one (copse local --data-dir uses 8).
  server_options.threads = options.data_dir.empty() ? 2 : 8;
  server_options.serve_http = !options.tls;
  server_options.serve_https = options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();

  NameThisThread(kBenchThreadName);
  kube::ClientConfig config;
  config.server = options.tls ? (*server)->https_url() : (*server)->http_url();
  config.ca_pem = (*server)->ca_pem();
  config.max_connections = kWorkers;
  config.timeout = std::chrono::seconds(60);
  kube::IoThread io(2);
  auto client_or = kube::Client::Create(config, io.executor());
  if (!client_or.ok()) return client_or.error();
  auto client = *client_or;

  std::atomic<int64_t> errors{0};
  std::string first_error;
  std::mutex error_mu;
  auto note_error = [&](const Error& e) {
    if (errors.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(error_mu);
      first_error = e.ToString();
    }
  };

  // Creates with protobuf bodies, encoded per request as a client would.
  std::vector<int64_t> pb_create_latency(static_cast<size_t>(pods));
  double phase_cpu = ProcessCpuSeconds();
  const double pb_create_s = RunConcurrently(
      io, pods, kWorkers, progress, "create (protobuf)", [&](int64_t i) -> asio::awaitable<void> {
        const auto t0 = Clock::now();
        auto body = kube::protobuf::EncodeObject(PodJson(i, "bench-pb"));
        if (!body.ok()) {
          note_error(body.error());
          co_return;
        }
        auto r = co_await client->Request(
            kube::HttpMethod::kPost, "/api/v1/namespaces/bench-pb/pods", std::move(body).value(),
            std::string(kube::protobuf::kMediaType));
        pb_create_latency[static_cast<size_t>(i)] = (Clock::now() - t0).count();
        if (!r.ok()) {
          note_error(r.error());
        } else if (r->status != 201) {
          note_error(MakeError(ErrorCode::kInternal, "protobuf create: HTTP " +
                                                         std::to_string(r->status) + ": " +
                                                         r->body.substr(0, 300)));
        }
      });
  const double pb_create_cpu = ProcessCpuSeconds() - phase_cpu;
  {
    api::ListOptions pb_pods;
    pb_pods.ns = "bench-pb";
    auto deleted = store->DeleteCollection(kube::resources::kPods, pb_pods);
    if (!deleted.ok()) return deleted.error();
  }

  const std::string start_rv = std::to_string(store->CurrentResourceVersion());
  const double cpu_start = ProcessCpuSeconds();
  const double api_cpu_start = NamedThreadsCpuSeconds(kServerThreadName);

  kube::WatchOptions watch_options;
  watch_options.resource_version = start_rv;
  watch_options.allow_bookmarks = false;

  std::vector<int64_t> create_latency(static_cast<size_t>(pods));
  phase_cpu = ProcessCpuSeconds();
  const double create_s = RunConcurrently(
      io, pods, kWorkers, progress, "create", [&](int64_t i) -> asio::awaitable<void> {
        const auto t0 = Clock::now();
        auto r = co_await client->Create(kube::resources::kPods, "bench", PodJson(i));
        create_latency[static_cast<size_t>(i)] = (Clock::now() - t0).count();
        if (!r.ok()) note_error(r.error());
      });
  const double create_cpu = ProcessCpuSeconds() - phase_cpu;
  const int64_t rss_after_create = CurrentRssBytes();

  // List everything, paginated.
  const auto list_start = Clock::now();
  int64_t listed = 0;
  std::string cont;
  do {
    kube::ListOptions list_options;
    list_options.limit = 10'000;
    list_options.continue_token = cont;
    auto page = io.Run(client->List(kube::resources::kPods, "bench", list_options));
    if (!page.ok()) return page.error();
    listed += static_cast<int64_t>(page->items.size());
    cont = page->continue_token;
    progress.Update("list", listed, pods);
  } while (!cont.empty());
  const double list_s = std::chrono::duration<double>(Clock::now() - list_start).count();
  progress.Done("list", listed, list_s);

  std::vector<int64_t> bind_latency(static_cast<size_t>(pods));
  phase_cpu = ProcessCpuSeconds();
  const double bind_s = RunConcurrently(
      io, pods, kWorkers, progress, "bind", [&](int64_t i) -> asio::awaitable<void> {
        const auto t0 = Clock::now();
        Status st = co_await client->Bind("bench", "bench-pod-" + std::to_string(i),
                                          "node-" + std::to_string(i % nodes + 1));
        bind_latency[static_cast<size_t>(i)] = (Clock::now() - t0).count();
        if (!st.ok()) note_error(st.error());
      });
  const double bind_cpu = ProcessCpuSeconds() - phase_cpu;

  // Replay every event since the start on a fresh watch.
  const int64_t expected_events = pods * 2;
  auto replay_or = io.Run(client->Watch(kube::resources::kPods, "bench", watch_options));
  if (!replay_or.ok()) return replay_or.error();
  std::unique_ptr<kube::Watch> replay = std::move(*replay_or);
  const auto watch_start = Clock::now();
  int64_t replayed = 0;
  io.Run([&]() -> asio::awaitable<void> {
    kube::WatchEvent event;
    while (replayed < expected_events) {
      auto next = co_await replay->Next(event);
      if (!next.ok() || !*next) break;
      ++replayed;
    }
  }());
  const double watch_s = std::chrono::duration<double>(Clock::now() - watch_start).count();
  progress.Done("watch", replayed, watch_s);
  const double cpu_total = ProcessCpuSeconds() - cpu_start;
  const double api_cpu = NamedThreadsCpuSeconds(kServerThreadName) - api_cpu_start;

  io.Run([&]() -> asio::awaitable<void> {
    replay->Cancel();
    co_return;
  }());

  if (errors.load() > 0) {
    return MakeError(ErrorCode::kInternal,
                     std::to_string(errors.load()) + " requests failed; first: " + first_error);
  }
  if (listed != pods) {
    return MakeError(ErrorCode::kInternal,
                     "listed " + std::to_string(listed) + " pods, want " + std::to_string(pods));
  }
  // The watch must have replayed every event since the start: one ADDED and
  // one MODIFIED (the bind) per pod.
  if (replayed != expected_events) {
    return MakeError(ErrorCode::kInternal, "watch replayed " + std::to_string(replayed) +
                                               " events, want " + std::to_string(expected_events));
  }

  BenchResult result;
  result.scenario = "apiserver";
  result.nodes = nodes;
  result.pods = pods;
  // No scheduler runs here: pods/s, the create -> bound latencies and the
  // scheduler's CPU are not measured (null); the request figures are extras.
  result.pods_bound = pods;  // bound by the benchmark itself (pods/binding)
  result.api_server_cpu_seconds = api_cpu;
  result.peak_rss_bytes = PeakRssBytes();
  result.extras["create_p50_ms"] = PercentileMs(create_latency, 50);
  result.extras["create_p99_ms"] = PercentileMs(create_latency, 99);
  const double creates_per_s = static_cast<double>(pods) / create_s;
  const double binds_per_s = static_cast<double>(pods) / bind_s;
  const double events_per_s = static_cast<double>(replayed) / watch_s;
  result.extras["creates_per_second"] = creates_per_s;
  result.extras["protobuf_creates_per_second"] = static_cast<double>(pods) / pb_create_s;
  result.extras["protobuf_create_p50_ms"] = PercentileMs(pb_create_latency, 50);
  result.extras["protobuf_create_p99_ms"] = PercentileMs(pb_create_latency, 99);
  result.extras["protobuf_create_cpu_us_per_pod"] = pb_create_cpu * 1e6 / static_cast<double>(pods);
  result.extras["binds_per_second"] = binds_per_s;
  result.extras["bind_p50_ms"] = PercentileMs(bind_latency, 50);
  result.extras["bind_p99_ms"] = PercentileMs(bind_latency, 99);
  // CPU (client and server together, this process) per request: less
  // sensitive than throughput to other load on the machine.
  result.extras["create_cpu_us_per_pod"] = create_cpu * 1e6 / static_cast<double>(pods);
  result.extras["bind_cpu_us_per_pod"] = bind_cpu * 1e6 / static_cast<double>(pods);
  result.extras["list_seconds"] = list_s;
  result.extras["watch_events"] = static_cast<double>(replayed);
  result.extras["watch_events_per_second"] = events_per_s;
  result.extras["rss_after_create_bytes"] = static_cast<double>(rss_after_create);
  result.extras["process_cpu_seconds"] = cpu_total;
  result.targets["creates>=10000/s"] = creates_per_s >= 10'000;
  result.targets["binds>=15000/s"] = binds_per_s >= 15'000;
  result.targets["watch>=100000 events/s"] = events_per_s >= 100'000;
  result.targets["rss<=1GiB"] = result.peak_rss_bytes <= (int64_t{1} << 30);
  return result;
}

}  // namespace copse::bench
