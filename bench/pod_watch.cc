#include "bench/pod_watch.h"

#include "kube/object.h"

namespace copse::bench {

namespace api = copse::apiserver;

PodWatchThread::PodWatchThread(api::Store& store, const std::string& ns, Handler handler)
    : handler_(std::move(handler)) {
  api::WatchOptions options;
  options.ns = ns;
  auto watch = store.Watch(kube::resources::kPods, options);
  if (watch.ok()) stream_ = *watch;
  thread_ = std::thread([this] { Run(); });
}

PodWatchThread::~PodWatchThread() {
  stop_.store(true);
  if (stream_) stream_->Close();
  if (thread_.joinable()) thread_.join();
}

void PodWatchThread::Run() {
  if (!stream_) return;
  std::vector<api::WatchEvent> events;
  for (;;) {
    events.clear();
    const bool open = stream_->Take(&events);
    if (!events.empty()) handler_(events, std::chrono::steady_clock::now());
    if (!open || stop_.load()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace copse::bench
