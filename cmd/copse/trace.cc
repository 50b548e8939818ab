// `copse trace synth`: writes a synthetic trace (replay/synth.h) for
// `copse replay`.
#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cmd/copse/commands.h"
#include "core/duration.h"
#include "replay/synth.h"

namespace copse::cmd {
namespace po = boost::program_options;

namespace {

Result<std::vector<int>> ParseInts(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      return MakeError(ErrorCode::kInvalid, flag + ": \"" + item + "\" is not an integer");
    }
  }
  return out;
}

}  // namespace

int RunTrace(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "synth") {
    std::cerr << "usage: copse trace synth --out FILE [flags] (copse trace synth --help)\n";
    return (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) ? 0
                                                                                             : 2;
  }
  replay::SynthOptions o;
  std::string out_path;
  std::string duration = "2h";
  std::string median_runtime = "20m";
  std::string gang_sizes = "2,4,8,16";
  std::string gpus_per_pod = "1,2,4,8";
  po::options_description desc("copse trace synth --out FILE [flags]");
  desc.add_options()("help,h", "show this help")("out,o", po::value(&out_path),
                                                 "trace file to write")(
      "seed", po::value(&o.seed)->default_value(o.seed), "random seed (same seed, same trace)")(
      "nodes", po::value(&o.nodes)->default_value(o.nodes), "synthetic nodes")(
      "node-shape", po::value(&o.node_shape)->default_value(o.node_shape), "allocatable per node")(
      "topology", po::value(&o.topology)->default_value(o.topology),
      "domains per parent, e.g. block=2,rack=4")(
      "duration", po::value(&duration)->default_value(duration), "trace length (Go duration)")(
      "jobs-per-hour", po::value(&o.jobs_per_hour)->default_value(o.jobs_per_hour),
      "mean arrival rate of jobs")(
      "diurnal-amplitude", po::value(&o.diurnal_amplitude)->default_value(o.diurnal_amplitude),
      "day/night swing of the rate, in [0, 1)")(
      "gang-fraction", po::value(&o.gang_fraction)->default_value(o.gang_fraction),
      "share of jobs that are gangs")(
      "gang-sizes", po::value(&gang_sizes)->default_value(gang_sizes), "gang sizes, drawn evenly")(
      "gpus-per-pod", po::value(&gpus_per_pod)->default_value(gpus_per_pod),
      "GPUs per pod, drawn evenly")(
      "rack-required-fraction",
      po::value(&o.rack_required_fraction)->default_value(o.rack_required_fraction),
      "share of gangs that require one rack (the others require one block)")(
      "median-runtime", po::value(&median_runtime)->default_value(median_runtime),
      "median job runtime (log-normal)")(
      "runtime-sigma", po::value(&o.runtime_sigma)->default_value(o.runtime_sigma),
      "log-normal shape of runtimes")(
      "high-priority-fraction",
      po::value(&o.high_priority_fraction)->default_value(o.high_priority_fraction),
      "share of jobs in PriorityClass trace-high")(
      "scheduler-name", po::value(&o.scheduler_name)->default_value(o.scheduler_name),
      "the pods' schedulerName");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc - 1, argv + 1).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse trace synth: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto bad = [](const std::string& msg) {
    std::cerr << "copse trace synth: " << msg << "\n";
    return 2;
  };
  if (out_path.empty()) return bad("--out: required");
  auto d = ParseGoDuration(duration);
  if (!d.ok()) return bad("--duration: " + d.error().message);
  o.duration = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  auto m = ParseGoDuration(median_runtime);
  if (!m.ok()) return bad("--median-runtime: " + m.error().message);
  o.median_runtime = std::chrono::duration_cast<std::chrono::milliseconds>(*m);
  auto sizes = ParseInts("--gang-sizes", gang_sizes);
  if (!sizes.ok()) return bad(sizes.error().message);
  o.gang_sizes = *sizes;
  auto gpus = ParseInts("--gpus-per-pod", gpus_per_pod);
  if (!gpus.ok()) return bad(gpus.error().message);
  o.gpus_per_pod = *gpus;
  // Generated first, so that bad options leave no file behind.
  std::ostringstream text;
  if (Status s = replay::WriteSynthTrace(o, text); !s.ok()) {
    return bad("--" + s.error().message);
  }
  std::ofstream out(out_path, std::ios::trunc);
  out << text.str();
  out.close();
  if (!out) return bad("--out: cannot write " + out_path);
  return 0;
}

}  // namespace copse::cmd
