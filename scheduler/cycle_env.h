#pragma once
// CycleEnv: what the pod cycle and the Workload Scheduling Cycle share: the
// snapshot they refresh from the cache, the framework's reusable buffers, the
// injected random source, the oneTBB arena that runs Filter/Score chunks in
// parallel, the rotating start of the node walk, and the kept pod-class
// passes (KEP-5598 batching: the last single pod's and the last single-class
// gang's).
//
// Thread-safety: none; owned by the scheduling loop (the arena's worker
// threads only ever run Filter/Score chunks the loop hands them).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/snapshot.h"
#include "plugins/framework/framework.h"
#include "plugins/framework/random.h"
#include "scheduler/placement.h"

namespace copse::scheduler {

struct CycleEnvOptions {
  int parallelism = 0;  // Filter/Score threads (0: hardware concurrency)
  size_t filter_chunk_size = 256;
  bool batch_pod_classes = true;
  uint64_t seed = 0;  // 0: random
};

class CycleEnv {
 public:
  CycleEnv(ResourceNames& names, const CycleEnvOptions& options);
  ~CycleEnv();
  CycleEnv(const CycleEnv&) = delete;
  CycleEnv& operator=(const CycleEnv&) = delete;

  const CycleEnvOptions& options() const noexcept { return options_; }
  Snapshot& snapshot() noexcept { return snapshot_; }
  plugins::Workspace& workspace() noexcept { return workspace_; }
  plugins::RandomSource& random() noexcept { return random_; }
  // Runs body(i) for i in [0, count) on the arena; empty with one thread.
  const ParallelForFn& parallel_for() const noexcept { return parallel_for_; }

  // kube's nextStartNodeIndex: where the next walk over the nodes starts.
  size_t start_index() const noexcept { return next_start_index_; }
  void Advance(size_t evaluated_nodes) noexcept;

  // The single pod's kept pass, and the last single-class gang's with the
  // number of snapshot rows its placement changed.
  PodClassReuse& pod_batch() noexcept { return pod_batch_; }
  PodClassReuse& gang_batch() noexcept { return gang_batch_; }
  size_t gang_batch_rows() const noexcept { return gang_batch_rows_; }
  void set_gang_batch_rows(size_t rows) noexcept { gang_batch_rows_ = rows; }
  void InvalidateGangBatch() noexcept;
  // Both kept passes (they counted a pod that is no longer where they think).
  void InvalidateBatches() noexcept;

 private:
  struct Arena;
  CycleEnvOptions options_;
  Snapshot snapshot_;
  plugins::Workspace workspace_;
  plugins::Mt19937Random random_;
  std::unique_ptr<Arena> arena_;
  ParallelForFn parallel_for_;
  size_t next_start_index_ = 0;
  PodClassReuse pod_batch_;
  PodClassReuse gang_batch_;
  size_t gang_batch_rows_ = 0;
};

}  // namespace copse::scheduler
