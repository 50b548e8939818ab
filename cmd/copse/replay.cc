// `copse replay TRACE --config A.yaml [--config B.yaml ...]`: replays a trace
// under each scheduler configuration (replay/replayer.h) and compares them
// (replay/report.h): a table on stdout, --json and --report (HTML) files.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cmd/copse/commands.h"
#include "core/log.h"
#include "replay/replayer.h"
#include "replay/report.h"
#include "replay/trace.h"
#include "scheduler/options_from_config.h"

namespace copse::cmd {
namespace po = boost::program_options;

namespace {

Status WriteText(const std::string& flag, const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorCode::kInvalid, flag + ": cannot write " + path);
  return Status::Ok();
}

}  // namespace

int RunReplay(int argc, char** argv) {
  std::string trace_path;
  std::vector<std::string> configs;
  std::string json_path;
  std::string report_path;
  double speed = 0;
  int64_t step_timeout = 120;
  uint64_t seed = 1;
  bool quiet = false;
  po::options_description desc(
      "copse replay TRACE --config A.yaml [--config B.yaml ...] [--json F] [--report F.html]");
  desc.add_options()("help,h", "show this help")("trace", po::value(&trace_path),
                                                 "the trace (JSON Lines, replay/README.md)")(
      "config", po::value(&configs)->composing(),
      "scheduler configuration file (YAML, as for copse run); repeat to compare")(
      "json", po::value(&json_path), "write the comparison as JSON")(
      "report", po::value(&report_path), "write the comparison as a self-contained HTML page")(
      "speed", po::value(&speed)->default_value(speed),
      "0: a virtual clock, as fast as possible; N: N times the trace's pace")(
      "step-timeout", po::value(&step_timeout)->default_value(step_timeout),
      "seconds one step may take before the replay fails")(
      "seed", po::value(&seed)->default_value(seed), "the scheduler's random seed")(
      "quiet", po::bool_switch(&quiet), "no progress lines");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse replay: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto bad = [](const std::string& msg) {
    std::cerr << "copse replay: " << msg << "\n";
    return 2;
  };
  if (trace_path.empty()) return bad("TRACE: required (the trace file)");
  if (configs.empty()) return bad("--config: at least one");
  if (speed < 0) return bad("--speed: must not be negative");
  if (step_timeout < 1) return bad("--step-timeout: must be at least 1");
  std::vector<replay::ReplayConfig> replay_configs;
  for (const std::string& path : configs) {
    auto loaded = scheduler::LoadSchedulerOptionsFile(path);
    if (!loaded.ok()) return bad("--config " + path + ": " + loaded.error().message);
    replay::ReplayConfig rc;
    rc.name = std::filesystem::path(path).filename().string();
    for (const replay::ReplayConfig& other : replay_configs) {
      if (other.name == rc.name) rc.name = path;  // two files of one name: their paths
    }
    rc.options = std::move(loaded).value();
    replay_configs.push_back(std::move(rc));
  }
  auto trace = replay::ReadTraceFile(trace_path);
  if (!trace.ok()) return bad(trace.error().message);

  replay::ReplayOptions options;
  options.speed = speed;
  options.step_timeout = std::chrono::seconds(step_timeout);
  options.seed = seed;
  if (!quiet) options.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  std::vector<replay::ConfigResult> results;
  for (const replay::ReplayConfig& rc : replay_configs) {
    if (!quiet) std::cerr << "replay " << rc.name << ": starting" << std::endl;
    auto result = replay::ReplayTrace(*trace, rc, options);
    if (!result.ok()) {
      std::cerr << "copse replay: " << rc.name << ": " << result.error().ToString() << "\n";
      return 1;
    }
    results.push_back(std::move(result).value());
  }
  const replay::Comparison comparison = replay::Compare(std::move(results));
  std::printf("%-28s %8s %8s %10s %10s %8s %9s %8s %8s\n", "config", "gangs", "pods", "wait p50",
              "wait p99", "GPU use", "stranded", "1-rack", "victims");
  for (const replay::ConfigResult& r : comparison.results) {
    std::printf("%-28s %8lld %8lld %9.1fs %9.1fs %7.1f%% %9.1f %7.1f%% %8lld   (%.1fs wall)\n",
                r.name.c_str(), static_cast<long long>(r.gangs_placed),
                static_cast<long long>(r.pods_placed), r.wait_all.p50_ms / 1000,
                r.wait_all.p99_ms / 1000, 100 * r.mean_gpu_utilization, r.mean_stranded_gpus,
                r.gangs_placed > 0 ? 100.0 * r.gangs_one_rack / r.gangs_placed : 0.0,
                static_cast<long long>(r.victims), r.wall_seconds);
  }
  std::printf("decisions that differ: %lld\n", static_cast<long long>(comparison.differing));
  if (!json_path.empty()) {
    if (Status s = WriteText("--json", json_path, replay::ReportJson(trace->header, comparison));
        !s.ok())
      return bad(s.error().message);
  }
  if (!report_path.empty()) {
    if (Status s =
            WriteText("--report", report_path, replay::ReportHtml(trace->header, comparison));
        !s.ok())
      return bad(s.error().message);
  }
  return 0;
}

}  // namespace copse::cmd
