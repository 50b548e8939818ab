// `copse bench SCENARIO [--json FILE] [--plot FILE.svg] [--kubeconfig FILE]`:
// runs a benchmark scenario on a synthetic cluster, printing progress and a
// table, and writing JSON results (bench/README.md). Exit status: 0 done, 1
// failed or timed out (the results are still printed and written), 2 usage.
#include "bench/bench.h"

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <string>

#include "cmd/copse/commands.h"

namespace copse::cmd {
namespace po = boost::program_options;

int RunBench(int argc, char** argv) {
  std::string scenario;
  std::string json_out;
  std::string plot_out;
  bench::BenchOptions options;
  po::options_description desc("copse bench SCENARIO [flags]");
  desc.add_options()("help,h", "show this help")("list", "list the scenarios")(
      "scenario", po::value(&scenario), "scenario to run")(
      "json", po::value(&json_out), "write the results as JSON to this file")(
      "pods", po::value(&options.pods), "number of pods (default: the scenario's)")(
      "nodes", po::value(&options.nodes), "number of nodes (default: the scenario's)")(
      "tls", po::bool_switch(&options.tls), "use HTTPS instead of plain HTTP on loopback")(
      "quiet", po::bool_switch(&options.quiet), "no progress lines")(
      "plot", po::value(&plot_out), "write an SVG of pods bound over time and the latency CDF")(
      "connections", po::value(&options.connections)->default_value(8),
      "concurrent client connections the pods are created from")(
      "timeout", po::value(&options.timeout_seconds),
      "seconds to wait for the measured pods (default: the scenario's); a timeout fails")(
      "kubeconfig", po::value(&options.kubeconfig),
      "run against this external API server (loopback only unless --allow-remote)")(
      "allow-remote", po::bool_switch(&options.allow_remote),
      "allow a --kubeconfig server that is not on loopback")(
      "scheduler", po::value(&options.scheduler)->default_value("copse"),
      "copse (in-process) or external (already running against --kubeconfig)")(
      "scheduler-name", po::value(&options.scheduler_name),
      "the pods' schedulerName (default copse-scheduler; default-scheduler with --scheduler "
      "external)")("scheduler-pid", po::value(&options.scheduler_pid),
                   "pid of the external scheduler, for its CPU figure")(
      "config", po::value(&options.scheduler_config),
      "the in-process scheduler's configuration file (as copse run --config); default: copse's "
      "default profile")("gang-size", po::value(&options.gang_shape.gang_size),
                         "workload-gang: pods per gang (default 4)")(
      "gpus-per-pod", po::value(&options.gang_shape.gpus_per_pod),
      "workload-gang: GPUs each pod requests (default 2)")(
      "gpus-per-node", po::value(&options.gang_shape.gpus_per_node),
      "workload-gang: GPUs of each node (default 8)")(
      "racks", po::value(&options.gang_shape.racks),
      "workload-gang: racks the nodes are spread over (default: one per 8 nodes)")(
      "rack-share", po::value<double>(),
      "workload-gang: share of the gangs that require one rack (default 0.5)")(
      "over-capacity", po::value<double>(),
      "workload-gang: gangs offered / gangs the GPU slots hold (default 1.1); --pods sets the "
      "gang count instead")("settle", po::value(&options.gang_shape.settle_seconds),
                            "workload-gang: the run ends this many seconds after the last bind "
                            "(default 15)")(
      "data-dir", po::value(&options.data_dir),
      "apiserver: keep the embedded store in this (new) directory, as copse local --data-dir "
      "does")("detail", po::bool_switch(&options.detail),
              "quality: print one line per instance (gangs, copse, optimum, first fit) on "
              "stderr");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse bench: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (vm.count("list") || scenario.empty()) {
    std::ostream& out = scenario.empty() && !vm.count("list") ? std::cerr : std::cout;
    out << "scenarios:\n";
    for (const auto& s : bench::Scenarios()) out << "  " << s.name << "  " << s.summary << "\n";
    return vm.count("list") ? 0 : 2;
  }
  if (options.pods < 0) {
    std::cerr << "copse bench: --pods: must not be negative\n";
    return 2;
  }
  if (options.nodes < 0) {
    std::cerr << "copse bench: --nodes: must not be negative\n";
    return 2;
  }
  if (options.timeout_seconds < 0) {
    std::cerr << "copse bench: --timeout: must not be negative\n";
    return 2;
  }
  if (vm.count("rack-share")) options.gang_shape.rack_share = vm["rack-share"].as<double>();
  if (vm.count("over-capacity")) {
    options.gang_shape.over_capacity = vm["over-capacity"].as<double>();
  }
  const bool gang_shape_given = vm.count("gang-size") || vm.count("gpus-per-pod") ||
                                vm.count("gpus-per-node") || vm.count("racks") ||
                                vm.count("rack-share") || vm.count("over-capacity") ||
                                vm.count("settle");
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"--gang-size", options.gang_shape.gang_size},
        {"--gpus-per-pod", options.gang_shape.gpus_per_pod},
        {"--gpus-per-node", options.gang_shape.gpus_per_node},
        {"--racks", options.gang_shape.racks},
        {"--settle", options.gang_shape.settle_seconds}}) {
    if (value < 0) {
      std::cerr << "copse bench: " << flag << ": must not be negative\n";
      return 2;
    }
  }
  if (options.scheduler_pid < 0) {
    std::cerr << "copse bench: --scheduler-pid: must not be negative\n";
    return 2;
  }
  for (const auto& s : bench::Scenarios()) {
    if (s.name != scenario) continue;
    if (!options.kubeconfig.empty() && !s.external) {
      std::cerr << "copse bench " << scenario
                << ": --kubeconfig: this scenario runs only against the embedded API server "
                   "(see bench/README.md)\n";
      return 2;
    }
    if (gang_shape_given && !s.takes_gang_shape) {
      std::cerr << "copse bench " << scenario
                << ": --gang-size, --gpus-per-pod, --gpus-per-node, --racks, --rack-share, "
                   "--over-capacity and --settle are workload-gang's\n";
      return 2;
    }
    if (!options.scheduler_config.empty() && (!s.takes_config || options.scheduler != "copse")) {
      std::cerr << "copse bench " << scenario
                << ": --config: only for scenarios that start copse's scheduler in-process "
                   "(see bench/README.md)\n";
      return 2;
    }
    bench::Progress progress(options.quiet);
    std::cerr << "copse bench " << scenario << ": running\n";
    auto result = s.run(options, progress);
    if (!result.ok()) {
      std::cerr << "copse bench " << scenario << ": " << result.error().ToString() << "\n";
      return 1;
    }
    std::cout << bench::FormatTable(*result);
    if (!json_out.empty()) {
      std::ofstream out(json_out, std::ios::trunc);
      out << bench::ToJson(*result) << "\n";
      if (!out) {
        std::cerr << "copse bench: --json: cannot write " << json_out << "\n";
        return 1;
      }
    }
    if (!plot_out.empty()) {
      std::ofstream out(plot_out, std::ios::trunc);
      out << bench::PlotSvg(*result);
      if (!out) {
        std::cerr << "copse bench: --plot: cannot write " << plot_out << "\n";
        return 1;
      }
    }
    for (const std::string& failure : result->failures) {
      std::cerr << "copse bench " << scenario << ": FAILED: " << failure << "\n";
    }
    if (!result->failures.empty()) return 1;
    if (result->timed_out) {
      std::cerr << "copse bench " << scenario << ": timed out with " << result->pods_bound << "/"
                << result->pods << " pods bound\n";
      return 1;
    }
    return 0;
  }
  std::cerr << "copse bench: unknown scenario \"" << scenario << "\" (copse bench --list)\n";
  return 2;
}

}  // namespace copse::cmd
