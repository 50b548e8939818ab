#include "kube/controller/controller.h"

#include <pthread.h>

#include "core/log.h"

namespace copse::kube::controller {

Controller::Controller(std::string name, int workers, ReconcileFn reconcile,
                       std::shared_ptr<const Clock> clock, std::string thread_name)
    : name_(std::move(name)),
      thread_name_(thread_name.substr(0, 15)),
      workers_(workers < 1 ? 1 : workers),
      reconcile_(std::move(reconcile)),
      queue_(std::move(clock)) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  if (started_) return;
  started_ = true;
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { Worker(); });
}

void Controller::Stop() {
  queue_.ShutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Controller::Worker() {
  pthread_setname_np(pthread_self(), thread_name_.c_str());
  std::string key;
  while (queue_.Get(&key)) {
    ReconcileResult result;
    try {
      result = reconcile_(key);
    } catch (const std::exception& e) {
      result = ReconcileResult::Failed(MakeError(ErrorCode::kInternal, e.what()));
    }
    reconciles_.fetch_add(1);
    if (!result.status.ok()) {
      errors_.fetch_add(1);
      copse::Log(1, name_, key + ": " + result.status.error().ToString());
      queue_.AddRateLimited(key);
    } else {
      queue_.Forget(key);
      if (result.requeue_after.has_value()) queue_.AddAfter(key, *result.requeue_after);
    }
    queue_.Done(key);
  }
}

}  // namespace copse::kube::controller
