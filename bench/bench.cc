#include "bench/bench.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace copse::bench {

std::span<const Scenario> Scenarios() {
  static const std::array<Scenario, 13> kScenarios{{
      {"apiserver",
       "HTTP client <-> embedded API server on loopback: create, list, bind and watch 100,000 pods",
       &RunApiServerBench, false, false},
      {"basic",
       "scheduler_perf SchedulingBasic: 5,000 nodes, 1,000 init + 10,000 measured pods, end to end",
       &RunBasicBench, true},
      {"gang", "kube-scheduler GangScheduling shape: 5,000 nodes, 3,000 gangs x 3 pods, end to end",
       &RunGangBench},
      {"gang-large", "5,000 nodes x 8 GPUs, 100 gangs x 256 pods of 1 GPU, end to end",
       &RunGangLargeBench},
      {"gang-preempt",
       "1,000 full nodes of low-priority gangs, then 100 high-priority 8-pod gangs that preempt",
       &RunGangPreemptBench},
      {"topology",
       "KEP-5732 shape: 5,000 nodes in 50 racks, 750 gangs x 4 pods with a required rack, end to "
       "end",
       &RunTopologyBench},
      {"topology-large",
       "15,000 nodes in 3 zones x 10 blocks x 10 racks, 2,000 hierarchical copse PodGroups of "
       "16-256 pods (block required, rack preferred per replica), end to end",
       &RunTopologyLargeBench},
      {"grove",
       "500 disaggregated PodCliqueSets on 2,000 nodes x 8 GPUs: Grove operator + copse, end to "
       "end",
       &RunGroveBench, false, false},
      {"quality",
       "200 small GPU clusters, gangs all at once: copse's gangs placed against the exact "
       "optimum and first fit, stranded GPUs",
       &RunQualityBench, false, false},
      {"quality-burst",
       "quality with the gang burst window on (100 ms): gangs of a burst ordered to place more",
       &RunQualityBurstBench, false, false},
      {"scale",
       "50,000 nodes in zones, blocks and racks; 500,000 pods (70% single, 30% in gangs of 8-64 "
       "with a required rack), end to end; peak RSS and RSS per node and per pod",
       &RunScaleBench},
      {"replay",
       "copse replay of a synthetic 24-hour trace (2,000 nodes x 8 GPUs, ~100k pods) under "
       "pack.yaml and spread.yaml (or --config): seconds, CPU, steps and peak RSS per config",
       &RunReplayBench},
      {"workload-gang",
       "upstream scheduling.k8s.io Workloads + PodGroups: 1,000 nodes x 8 GPUs in 125 racks, "
       "1,100 gangs of 4 pods x 2 GPUs (110% of capacity), every second one in one rack; end to "
       "end, also against --kubeconfig with --scheduler external (the side by side)",
       &RunWorkloadGangBench, true, true, true},
  }};
  return kScenarios;
}

namespace {
int64_t ReadStatusKb(std::string_view key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() &&
        line[key.size()] == ':') {
      return std::atoll(line.c_str() + key.size() + 1);
    }
  }
  return 0;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

int64_t PeakRssBytes() { return ReadStatusKb("VmHWM") * 1024; }
int64_t CurrentRssBytes() { return ReadStatusKb("VmRSS") * 1024; }

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double NamedThreadsCpuSeconds(const std::string& name) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(base + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    // schedstat's first field: nanoseconds on a CPU (user + system), exact
    // where stat's clock ticks (10 ms) would round a short run to 0.
    std::ifstream schedstat(base + "/schedstat");
    unsigned long long run_ns = 0;
    if (schedstat >> run_ns) {
      total += static_cast<double>(run_ns) / 1e9;
      continue;
    }
    std::ifstream stat(base + "/stat");
    std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
    const size_t close = content.rfind(')');
    if (close == std::string::npos || close + 2 > content.size()) continue;
    std::istringstream fields(content.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    total += static_cast<double>(utime + stime) / ticks;
  }
  closedir(dir);
  return total;
}

void NameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

double PercentileMs(std::vector<int64_t>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t idx = static_cast<size_t>(p / 100.0 * static_cast<double>(samples.size() - 1) + 0.5);
  idx = std::min(idx, samples.size() - 1);
  return static_cast<double>(samples[idx]) / 1e6;
}

void Progress::Update(std::string_view phase, int64_t done, int64_t total) {
  if (quiet_) return;
  const int64_t now = NowNs();
  if (done != total && now - last_print_ns_ < 250'000'000) return;
  last_print_ns_ = now;
  std::fprintf(stderr, "\r  %-10.*s %9lld / %lld", static_cast<int>(phase.size()), phase.data(),
               static_cast<long long>(done), static_cast<long long>(total));
  std::fflush(stderr);
}

void Progress::Done(std::string_view phase, int64_t total, double seconds) {
  if (quiet_) return;
  std::fprintf(stderr, "\r  %-10.*s %9lld in %.2f s (%.0f/s)\n", static_cast<int>(phase.size()),
               phase.data(), static_cast<long long>(total), seconds,
               seconds > 0 ? static_cast<double>(total) / seconds : 0.0);
  last_print_ns_ = 0;
}

std::string FormatTable(const BenchResult& r) {
  std::ostringstream out;
  char line[160];
  auto row = [&](std::string_view name, const std::string& value) {
    std::snprintf(line, sizeof(line), "  %-28.*s %s\n", static_cast<int>(name.size()), name.data(),
                  value.c_str());
    out << line;
  };
  auto num = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
    return std::string(buf);
  };
  // Not measured is "n/a", never 0.
  auto opt = [&](const std::optional<double>& v, int decimals) {
    return v ? num(*v, decimals) : std::string("n/a");
  };
  out << "scenario " << r.scenario << "\n";
  row("nodes", std::to_string(r.nodes));
  row("pods", std::to_string(r.pods));
  row("pods bound", std::to_string(r.pods_bound));
  row("pods/s", opt(r.pods_per_second, 0));
  row("p50 latency (ms)", opt(r.p50_ms, 3));
  row("p99 latency (ms)", opt(r.p99_ms, 3));
  row("scheduler CPU (s)", opt(r.scheduler_cpu_seconds, 3));
  row("API server CPU (s)", opt(r.api_server_cpu_seconds, 3));
  row("peak RSS (MiB)", num(static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0), 1));
  row("timed out", r.timed_out ? "YES" : "no");
  for (const auto& [name, value] : r.extras) {
    row(name, std::isnan(value) ? std::string("n/a") : num(value, value < 100 ? 3 : 0));
  }
  for (const auto& [name, met] : r.targets) row("target " + name, met ? "met" : "MISSED");
  return out.str();
}

std::string ToJson(const BenchResult& r) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json j{{"scenario", r.scenario},
                   {"nodes", r.nodes},
                   {"pods", r.pods},
                   {"pods_bound", r.pods_bound},
                   {"pods_per_second", opt(r.pods_per_second)},
                   {"p50_ms", opt(r.p50_ms)},
                   {"p99_ms", opt(r.p99_ms)},
                   {"scheduler_cpu_seconds", opt(r.scheduler_cpu_seconds)},
                   {"api_server_cpu_seconds", opt(r.api_server_cpu_seconds)},
                   {"peak_rss_bytes", r.peak_rss_bytes},
                   {"timed_out", r.timed_out}};
  // An extra that was not measured is NaN: null here.
  for (const auto& [name, value] : r.extras) {
    j[name] = std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
  }
  nlohmann::json targets = nlohmann::json::object();
  for (const auto& [name, met] : r.targets) targets[name] = met;
  j["targets_met"] = targets;
  if (!r.failures.empty()) j["failures"] = r.failures;
  return j.dump(2);
}

std::string PlotSvg(const BenchResult& r) {
  // Two panels side by side, 480 x 320 each: bound pods over time, and the
  // share of pods bound within a latency (CDF).
  constexpr double kW = 480, kH = 320, kPad = 50;
  std::ostringstream svg;
  char buf[1024];  // the longest line (axis labels) is ~450 characters
  svg << R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="960" height="360" )svg"
      << R"svg(font-family="sans-serif" font-size="12">)svg"
      << "\n";
  svg << R"svg(<rect width="960" height="360" fill="white"/>)svg"
      << "\n";
  std::snprintf(buf, sizeof(buf),
                R"svg(<text x="480" y="18" text-anchor="middle" font-size="14">copse bench %s: )svg"
                R"svg(%lld of %lld pods bound%s</text>)svg",
                r.scenario.c_str(), static_cast<long long>(r.pods_bound),
                static_cast<long long>(r.pods), r.timed_out ? " (TIMED OUT)" : "");
  svg << buf << "\n";
  auto panel = [&](double x0, const std::vector<double>& xs, double y_max, const char* title,
                   const char* xlabel, const char* ylabel, bool cdf) {
    const double left = x0 + kPad, right = x0 + kW - 10, top = 40, bottom = 40 + kH - kPad;
    std::snprintf(buf, sizeof(buf),
                  R"svg(<text x="%.0f" y="34" text-anchor="middle">%s</text>)svg"
                  R"svg(<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>)svg"
                  R"svg(<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>)svg",
                  (left + right) / 2, title, left, bottom, right, bottom, left, top, left, bottom);
    svg << buf << "\n";
    const double x_max = xs.empty() ? 1 : std::max(xs.back(), 1e-9);
    std::snprintf(buf, sizeof(buf),
                  R"svg(<text x="%.0f" y="%.0f" text-anchor="middle">%s (max %.3g)</text>)svg"
                  R"svg(<text x="%.0f" y="%.0f" text-anchor="end">%.6g</text>)svg"
                  R"svg(<text x="%.0f" y="%.0f" text-anchor="end">0</text>)svg"
                  R"svg(<text x="%.0f" y="%.0f" transform="rotate(-90 %.0f %.0f)" )svg"
                  R"svg(text-anchor="middle">%s</text>)svg",
                  (left + right) / 2, bottom + 30, xlabel, x_max, left - 4, top + 4, y_max,
                  left - 4, bottom, x0 + 14, (top + bottom) / 2, x0 + 14, (top + bottom) / 2,
                  ylabel);
    svg << buf << "\n";
    if (xs.empty()) return;
    svg << R"svg(<polyline fill="none" stroke=")svg" << (cdf ? "#c0392b" : "#2e86c1")
        << R"svg(" stroke-width="1.5" points=")svg";
    // At most ~400 points: a step every n samples.
    const size_t step = std::max<size_t>(1, xs.size() / 400);
    for (size_t i = 0; i < xs.size(); i += step) {
      const double y = cdf ? static_cast<double>(i + 1) / static_cast<double>(xs.size())
                           : static_cast<double>(i + 1);
      std::snprintf(buf, sizeof(buf), "%.1f,%.1f ", left + (right - left) * xs[i] / x_max,
                    bottom - (bottom - top) * y / y_max);
      svg << buf;
    }
    const double y_last = cdf ? 1.0 : static_cast<double>(xs.size());
    std::snprintf(buf, sizeof(buf), "%.1f,%.1f", right, bottom - (bottom - top) * y_last / y_max);
    svg << buf << R"svg("/>)svg"
        << "\n";
  };
  std::vector<double> latencies = r.latencies_ms;
  std::sort(latencies.begin(), latencies.end());
  panel(0, r.bind_seconds, static_cast<double>(std::max<int64_t>(r.pods, 1)),
        "pods bound over time", "seconds since the first create", "pods bound", false);
  panel(kW, latencies, 1.0, "latency CDF (create -> bound)", "ms", "fraction of bound pods", true);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace copse::bench
