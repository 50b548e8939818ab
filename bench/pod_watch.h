#pragma once
// A thread that follows the pods of one namespace straight from the store
// (not over HTTP) and hands every batch of watch events, with the time it
// was taken, to a handler. The scenarios record when pods were created,
// bound or deleted with it.
//
// It polls every millisecond instead of being notified per event: a notified
// watcher that sleeps between events costs the store's writer (the measured
// create and bind paths) a futex wake-up per event. Times are therefore
// exact to about a millisecond.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/store.h"

namespace copse::bench {

class PodWatchThread {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Handler =
      std::function<void(const std::vector<apiserver::WatchEvent>& events, TimePoint now)>;

  // Starts watching at once; `handler` runs on the watch thread only.
  PodWatchThread(apiserver::Store& store, const std::string& ns, Handler handler);
  ~PodWatchThread();  // stops the watch and joins
  PodWatchThread(const PodWatchThread&) = delete;
  PodWatchThread& operator=(const PodWatchThread&) = delete;

  bool ok() const { return stream_ != nullptr; }

 private:
  void Run();

  Handler handler_;
  std::shared_ptr<apiserver::WatchStream> stream_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace copse::bench
