#include "scheduler/cycle_env.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <random>
#include <thread>

namespace copse::scheduler {

struct CycleEnv::Arena {
  explicit Arena(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

namespace {

uint64_t SeedOf(const CycleEnvOptions& options) {
  return options.seed != 0 ? options.seed : std::random_device{}();
}

}  // namespace

CycleEnv::CycleEnv(ResourceNames& names, const CycleEnvOptions& options)
    : options_(options), snapshot_(names), random_(SeedOf(options)) {
  const int threads = options.parallelism > 0
                          ? options.parallelism
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads > 1) {
    arena_ = std::make_unique<Arena>(threads);
    tbb::task_arena* arena = &arena_->arena;
    parallel_for_ = [arena](size_t count, const std::function<void(size_t)>& body) {
      // tbb::parallel_for returns after every body has run, but Debian's
      // oneTBB is not built with ThreadSanitizer, which then cannot see that
      // join and reports the caller's later writes (the cycle's state the
      // bodies read) as races. Each chunk's release and the caller's acquire
      // make the join visible to it; one atomic add per chunk.
      std::atomic<size_t> done{0};
      arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                          [&](const tbb::blocked_range<size_t>& r) {
                            for (size_t i = r.begin(); i != r.end(); ++i) body(i);
                            done.fetch_add(r.size(), std::memory_order_release);
                          });
      });
      [[maybe_unused]] const size_t ran = done.load(std::memory_order_acquire);
      assert(ran == count);
    };
  }
}

CycleEnv::~CycleEnv() = default;

void CycleEnv::Advance(size_t evaluated_nodes) noexcept {
  if (snapshot_.num_nodes() > 0) {
    next_start_index_ = (next_start_index_ + evaluated_nodes) % snapshot_.num_nodes();
  }
}

void CycleEnv::InvalidateGangBatch() noexcept {
  gang_batch_.Invalidate();
  gang_batch_rows_ = 0;
}

void CycleEnv::InvalidateBatches() noexcept {
  pod_batch_.Invalidate();
  InvalidateGangBatch();
}

}  // namespace copse::scheduler
