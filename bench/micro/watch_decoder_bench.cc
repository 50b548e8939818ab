// The client's watch decoder (kube/watch.h) on its hot path: a stream of
// MODIFIED pod events (about 1.3 KB each, shaped like a scheduler-relevant
// pod) fed in network-sized 16 KiB pieces through the zero-copy path
// (Prepare/Commit) and decoded event by event. The figure is events per
// second (items_per_second); the target is at least 100,000, which an
// informer needs to follow a busy cluster.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "kube/watch.h"

namespace {

std::string PodJson(int i) {
  const std::string n = std::to_string(i);
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-)" + n +
         R"(","namespace":"default","uid":"0b8f3c2e-5b7a-4f7e-9a55-)" + std::to_string(100000 + i) +
         R"(","resourceVersion":")" + std::to_string(1000 + i) +
         R"(","creationTimestamp":"2024-05-01T10:00:00Z","labels":{"app":"trainer","scheduling.copse.dev/pod-group":"gang-a"},"annotations":{"note":"escaped \"quote\" and \\ backslash"},"ownerReferences":[{"apiVersion":"grove.io/v1alpha1","kind":"PodClique","name":"pcs-0-workers","uid":"a1b2","controller":true}]},"spec":{"schedulerName":"copse-scheduler","priorityClassName":"high","containers":[{"name":"main","image":"registry.example.com/trainer:1.2.3","command":["python","train.py","--epochs","10"],"resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"},"limits":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},"env":[{"name":"GROVE_PCS_NAME","value":"pcs"}],"ports":[{"containerPort":8080,"protocol":"TCP"}]}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],"nodeSelector":{"topology.kubernetes.io/zone":"zone-1"},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"copse.dev/rack","operator":"In","values":["rack-1-1-1","rack-1-1-2"]}]}]}}}},"status":{"phase":"Pending"}})";
}

void DecodePodEvents(benchmark::State& state) {
  constexpr int kEventsPerStream = 1000;
  std::string stream;
  for (int i = 0; i < kEventsPerStream; ++i) {
    stream += R"({"type":"MODIFIED","object":)" + PodJson(i) + "}\n";
  }
  copse::kube::WatchEventDecoder decoder;
  copse::kube::WatchEvent event;
  int64_t decoded = 0;
  for (auto _ : state) {
    for (size_t pos = 0; pos < stream.size(); pos += 16384) {
      const size_t n = std::min<size_t>(16384, stream.size() - pos);
      std::memcpy(decoder.Prepare(n), stream.data() + pos, n);
      decoder.Commit(n);
      while (true) {
        auto next = decoder.Next(event);
        if (!next.ok()) {
          state.SkipWithError("decode failed");
          return;
        }
        if (!*next) break;
        ++decoded;
      }
    }
  }
  if (decoded != kEventsPerStream * static_cast<int64_t>(state.iterations())) {
    state.SkipWithError("not every event was decoded");
  }
  state.SetItemsProcessed(decoded);
  state.SetBytesProcessed(static_cast<int64_t>(stream.size()) * state.iterations());
}
BENCHMARK(DecodePodEvents);

}  // namespace

BENCHMARK_MAIN();
