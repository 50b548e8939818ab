// The embedded API server's store write paths, one call at a time on one
// core, as the end-to-end scenarios use them (README, "A scheduling cycle"):
//
//   CreatePod            Store::Create of a gang member pod (the body the
//                        `topology` scenario writes), with one pod watch open
//                        (the scheduler's) and drained as it goes.
//   CreateEvent          Store::Create of a core/v1 Event as copse's ApiWriter
//                        writes it (one per bound pod).
//   BindPod              Store::Bind (pods/binding) of a pending pod.
//   PatchPodGroupStatus  merge patch of a v1alpha2 PodGroup's status (the
//                        PodGroupScheduled condition), on the status
//                        subresource.
//   PatchPodGroupFinalizer  merge patch of a PodGroup's metadata.finalizers.
//
// Each iteration is one write; the figure is time per write. The objects a
// write needs (pods to bind, groups to patch) are made outside the timing.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "kube/object.h"
#include "kube/pod_group.h"

namespace {

namespace api = copse::apiserver;
namespace resources = copse::kube::resources;

std::string PodJson(const std::string& name, const std::string& group) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"bench","labels":{"gang":")" + group +
         R"("}},"spec":{"schedulerName":"copse-scheduler","schedulingGroup":{"podGroupName":")" +
         group +
         R"("},"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

std::string GroupJson(const std::string& name) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name +
         R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}},"schedulingConstraints":{"topology":[{"key":"copse.dev/rack"}]}}})";
}

std::string EventJson(const std::string& pod) {
  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + pod +
         R"(.1879a3c2d0e1f2a3","namespace":"bench"},"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"bench","name":")" +
         pod +
         R"(","uid":"0d6f4b8e-3c2a-4e55-9d8c-7b1a2f3e4d5c"},"reason":"Scheduled","message":"Successfully assigned bench/)" +
         pod +
         R"( to node-00042","type":"Normal","source":{"component":"copse-scheduler"},"reportingComponent":"copse-scheduler","firstTimestamp":"2026-11-25T18:00:00Z","lastTimestamp":"2026-11-25T18:00:00Z","count":1})";
}

struct Fixture {
  std::shared_ptr<api::Store> store;
  std::shared_ptr<api::WatchStream> watch;

  explicit Fixture(const copse::kube::ResourceRef& watched) {
    api::StoreOptions options;
    options.watch_history = 4096;
    store = api::NewStore(options);
    auto ns =
        store->Create(resources::kNamespaces, "",
                      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
    if (!ns.ok()) std::abort();
    api::WatchOptions watch_options;
    watch_options.ns = "bench";
    auto w = store->Watch(watched, watch_options);
    if (!w.ok()) std::abort();
    watch = *w;
  }
  void Drain() {
    std::vector<api::WatchEvent> events;
    watch->Take(&events);
  }
};

void BM_CreatePod(benchmark::State& state) {
  Fixture f(resources::kPods);
  std::vector<std::string> bodies;
  for (int i = 0; i < 200'000; ++i) bodies.push_back(PodJson("p-" + std::to_string(i), "g"));
  size_t i = 0;
  for (auto _ : state) {
    if (i == bodies.size()) state.SkipWithError("out of bodies");
    auto created = f.store->Create(resources::kPods, "bench", bodies[i++]);
    if (!created.ok()) state.SkipWithError(created.error().message.c_str());
    if ((i & 63) == 0) f.Drain();
  }
}
BENCHMARK(BM_CreatePod)->Iterations(20'000);

void BM_CreateEvent(benchmark::State& state) {
  Fixture f(resources::kPods);
  std::vector<std::string> bodies;
  for (int i = 0; i < 200'000; ++i) bodies.push_back(EventJson("p-" + std::to_string(i)));
  size_t i = 0;
  for (auto _ : state) {
    auto created = f.store->Create(resources::kEvents, "bench", bodies[i++]);
    if (!created.ok()) state.SkipWithError(created.error().message.c_str());
  }
}
BENCHMARK(BM_CreateEvent)->Iterations(20'000);

void BM_BindPod(benchmark::State& state) {
  Fixture f(resources::kPods);
  constexpr int kPods = 20'000;
  std::vector<std::string> bindings;
  for (int i = 0; i < kPods; ++i) {
    const std::string name = "p-" + std::to_string(i);
    auto created = f.store->Create(resources::kPods, "bench", PodJson(name, "g"));
    if (!created.ok()) std::abort();
    bindings.push_back(
        R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":")" + name +
        R"(","namespace":"bench"},"target":{"kind":"Node","apiVersion":"v1","name":"node-00042"}})");
    if ((i & 63) == 0) f.Drain();
  }
  f.Drain();
  size_t i = 0;
  for (auto _ : state) {
    const std::string name = "p-" + std::to_string(i);
    if (auto s = f.store->Bind("bench", name, bindings[i]); !s.ok()) {
      state.SkipWithError(s.error().message.c_str());
    }
    if ((++i & 63) == 0) f.Drain();
  }
}
BENCHMARK(BM_BindPod)->Iterations(20'000);

void PatchGroups(benchmark::State& state, std::string_view subresource, const std::string& patch) {
  Fixture f(copse::kube::resources::kPodGroups);
  constexpr int kGroups = 20'000;
  for (int i = 0; i < kGroups; ++i) {
    auto created = f.store->Create(copse::kube::resources::kPodGroups, "bench",
                                   GroupJson("g-" + std::to_string(i)));
    if (!created.ok()) std::abort();
    if ((i & 63) == 0) f.Drain();
  }
  f.Drain();
  size_t i = 0;
  for (auto _ : state) {
    auto patched =
        f.store->Patch(copse::kube::resources::kPodGroups, "bench", "g-" + std::to_string(i),
                       api::PatchType::kMerge, patch, subresource);
    if (!patched.ok()) state.SkipWithError(patched.error().message.c_str());
    if ((++i & 63) == 0) f.Drain();
  }
}

void BM_PatchPodGroupStatus(benchmark::State& state) {
  PatchGroups(
      state, "status",
      R"j({"status":{"conditions":[{"type":"PodGroupScheduled","status":"True","reason":"Scheduled","message":"4/4 members bound (minCount 4)","lastTransitionTime":"2026-11-25T18:00:00Z"}]}})j");
}
BENCHMARK(BM_PatchPodGroupStatus)->Iterations(20'000);

void BM_PatchPodGroupFinalizer(benchmark::State& state) {
  PatchGroups(state, "",
              R"({"metadata":{"finalizers":["scheduling.copse.dev/pod-group-protection"]}})");
}
BENCHMARK(BM_PatchPodGroupFinalizer)->Iterations(20'000);

}  // namespace

BENCHMARK_MAIN();
