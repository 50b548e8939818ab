#pragma once
// Runs a fuzz input on a thread with the stack of the API server's request
// threads (net::ServerOptions::kDefaultThreadStackBytes). Request bodies
// nest JSON up to kMaxJsonDepth (10,000) levels, and the server's recursive
// algorithms (merges, patches, validation, printing) rely on that stack, not
// on the 8 MiB of libFuzzer's main thread; a target that ran them there
// would report overflows the server cannot have. One worker thread serves
// every input (ASan clears a new thread's whole stack shadow, so a thread
// per input would be slow); the caller waits for it.

#include <pthread.h>

#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "net/server.h"

namespace copse::fuzz {

class ServerStack {
 public:
  // Runs `fn` on the worker and returns when it is done.
  static void Run(const std::function<void()>& fn) {
    static ServerStack* const stack = new ServerStack();  // lives until exit
    stack->Call(fn);
  }

 private:
  ServerStack() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, net::ServerOptions::kDefaultThreadStackBytes);
    pthread_t thread;
    if (pthread_create(
            &thread, &attr,
            [](void* self) -> void* {
              static_cast<ServerStack*>(self)->Loop();
              return nullptr;
            },
            this) != 0) {
      std::abort();
    }
    pthread_attr_destroy(&attr);
    pthread_detach(thread);
  }

  void Call(const std::function<void()>& fn) {
    std::unique_lock lock(mu_);
    job_ = &fn;
    cv_.notify_all();
    cv_.wait(lock, [&] { return job_ == nullptr; });
  }

  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return job_ != nullptr; });
      (*job_)();
      job_ = nullptr;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
};

}  // namespace copse::fuzz
