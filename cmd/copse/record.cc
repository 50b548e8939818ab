// `copse record --kubeconfig K --out trace.jsonl [--duration D]`: watches a
// cluster and writes its history as a trace for `copse replay`
// (replay/recorder.h), until --duration passes or SIGINT/SIGTERM.
#include <signal.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <string>

#include "cmd/copse/commands.h"
#include "core/duration.h"
#include "core/log.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "replay/recorder.h"

namespace copse::cmd {
namespace po = boost::program_options;

int RunRecord(int argc, char** argv) {
  std::string kubeconfig;
  std::string context;
  std::string out_path;
  std::string duration_text = "0";
  replay::RecorderOptions options;
  int64_t sync_timeout = 60;
  int verbosity = 0;
  po::options_description desc("copse record --kubeconfig FILE --out TRACE [--duration D]");
  desc.add_options()("help,h", "show this help")("kubeconfig", po::value(&kubeconfig),
                                                 "kubeconfig of the cluster to record")(
      "context", po::value(&context), "kubeconfig context (default: its current-context)")(
      "out,o", po::value(&out_path), "the trace file to write (JSON Lines, replay/README.md)")(
      "duration", po::value(&duration_text)->default_value(duration_text),
      "how long to record (Go duration, e.g. 2h); 0: until SIGINT/SIGTERM")(
      "rack-label", po::value(&options.rack_label)->default_value(options.rack_label),
      "node label of racks, for the replay's report")(
      "block-label", po::value(&options.block_label)->default_value(options.block_label),
      "node label of blocks, for the replay's report")(
      "gpu-resource", po::value(&options.gpu_resource)->default_value(options.gpu_resource),
      "the resource the replay counts GPUs in")(
      "sync-timeout", po::value(&sync_timeout)->default_value(sync_timeout),
      "seconds the initial lists may take")(
      "v,v", po::value(&verbosity)->default_value(verbosity),
      "log verbosity, as klog's -v (0 what an operator always wants, 1 actions, 2 details)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse record: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto bad = [](const std::string& msg) {
    std::cerr << "copse record: " << msg << "\n";
    return 2;
  };
  if (verbosity < 0) return bad("-v: must not be negative");
  SetLogVerbosity(verbosity);
  if (kubeconfig.empty()) return bad("--kubeconfig: required (the cluster to record)");
  if (out_path.empty()) return bad("--out: required (the trace file to write)");
  auto duration = ParseGoDuration(duration_text);
  if (!duration.ok()) return bad("--duration: " + duration.error().message);
  if (duration->count() < 0) return bad("--duration: must not be negative");
  if (sync_timeout < 1) return bad("--sync-timeout: must be at least 1");
  for (auto [flag, value] : {std::pair{"--rack-label", &options.rack_label},
                             std::pair{"--block-label", &options.block_label},
                             std::pair{"--gpu-resource", &options.gpu_resource}}) {
    if (value->empty()) return bad(std::string(flag) + ": must not be empty");
  }
  kube::KubeconfigOptions kubeconfig_options;
  kubeconfig_options.context = context;
  auto client_config = kube::LoadKubeconfigFile(kubeconfig, kubeconfig_options);
  if (!client_config.ok()) {
    return bad("--kubeconfig " + kubeconfig + ": " + client_config.error().message);
  }
  const std::string server = client_config->server;

  // Blocked before any thread starts, so that they reach sigtimedwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kube::IoThread io(1);
  auto client = kube::Client::Create(*client_config, io.executor());
  if (!client.ok()) {
    return bad("--kubeconfig " + kubeconfig + ": " + client.error().message);
  }
  options.out = out_path;
  options.sync_timeout = std::chrono::seconds(sync_timeout);
  auto recorder = replay::Recorder::Start(*client, options);
  if (!recorder.ok()) {
    const Error& e = recorder.error();
    if (e.code == ErrorCode::kInvalid) {
      std::cerr << "copse record: --out: " << e.message << "\n";
      return 2;
    }
    std::cerr << "copse record: --kubeconfig " << kubeconfig << ": the API server at " << server
              << ": " << e.ToString() << "\n";
    return 1;
  }
  std::cout << "copse record: recording " << server << " to " << out_path
            << (duration->count() > 0 ? " for " + FormatGoDuration(*duration)
                                      : std::string(" until SIGINT/SIGTERM"))
            << std::endl;

  int sig = 0;
  if (duration->count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + *duration;
    while (true) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
      timespec ts{static_cast<time_t>(secs.count()),
                  static_cast<long>(std::chrono::nanoseconds(left - secs).count())};
      sig = sigtimedwait(&signals, nullptr, &ts);
      if (sig > 0 || (sig < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
  } else {
    sigwait(&signals, &sig);
  }
  Status stopped = (*recorder)->Stop();
  const replay::RecorderStats s = (*recorder)->stats();
  if (!stopped.ok()) {
    std::cerr << "copse record: --out: " << stopped.error().message << "\n";
    return 1;
  }
  std::cout << "copse record: wrote " << out_path << ": " << s.duration_ms / 1000 << "s, " << s.init
            << " init, " << s.create << " create, " << s.bound << " bound, " << s.end << " end, "
            << s.deleted << " delete" << std::endl;
  return 0;
}

}  // namespace copse::cmd
