#include "replay/recorder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/log.h"
#include "kube/client.h"
#include "kube/discovery.h"
#include "kube/pod_group.h"
#include "kube/served_informer.h"
#include "kube/topology.h"
#include "kube/workload.h"
#include "replay/trace.h"

namespace copse::replay {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What is watched, in the order init lines are written: a namespace before
// what lives in it, gang objects before their pods.
struct Kind {
  const char* kind;
  const char* api_version;  // as the trace writes it (the replay's versions)
  std::vector<kube::ResourceRef> candidates;
  // copse's CRDs may be installed while recording: keep trying.
  bool wait_until_served;
  const char* without;
};

enum KindIndex : size_t { kPdbKind = 4, kPodKind = 8 };

const std::vector<Kind>& Kinds() {
  namespace r = kube::resources;
  static const std::vector<Kind> kKinds = {
      {"Namespace", "v1", {r::kNamespaces}, false, "the trace has no Namespaces"},
      {"Node", "v1", {r::kNodes}, false, "the trace has no Nodes"},
      {"PriorityClass",
       "scheduling.k8s.io/v1",
       {r::kPriorityClasses},
       false,
       "the trace has no PriorityClasses"},
      {"Topology",
       "scheduling.copse.dev/v1alpha1",
       {r::kTopologies},
       true,
       "Topologies are recorded once its CRD is installed"},
      {"PodDisruptionBudget",
       "policy/v1",
       {r::kPodDisruptionBudgets, r::kPodDisruptionBudgetsV1beta1},
       false,
       "the trace has no PodDisruptionBudgets"},
      {"Workload",
       "scheduling.k8s.io/v1alpha2",
       {r::kWorkloads},
       false,
       "the trace has no KEP-4671 Workloads"},
      {"PodGroup",
       "scheduling.k8s.io/v1alpha2",
       {r::kPodGroups},
       false,
       "the trace has no KEP-4671 PodGroups"},
      {"PodGroup",
       "scheduling.copse.dev/v1alpha1",
       {r::kCopsePodGroups},
       true,
       "copse PodGroups are recorded once its CRD is installed"},
      {"Pod", "v1", {r::kPods}, false, "the trace has no Pods"},
  };
  return kKinds;
}

// An object as the recorder keeps it: reduced at decode time, with the few
// fields of the full object its events depend on.
class TracedObject : public kube::KubeObject {
 public:
  std::string reduced;       // ReduceObject, compact JSON
  std::string node_name;     // pods
  bool terminal = false;     // pods: Succeeded or Failed
  bool gated = false;        // pods: spec.schedulingGates not empty
  bool no_selector = false;  // PDBs: selector absent or empty
};

bool EmptyJson(const json& j) { return j.is_null() || (j.is_structured() && j.empty()); }

// The member `key` of `j` when both are what they should be, else null: a
// server's objects are read without trusting their shape.
const json& At(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

std::string StringAt(const json& j, const char* key) {
  const json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

kube::Decoder DecoderFor(const Kind& k) {
  return [kind = std::string(k.kind), api_version = std::string(k.api_version)](
             std::string_view text) -> Result<std::shared_ptr<kube::KubeObject>> {
    json j = json::parse(text, nullptr, false);
    if (!j.is_object()) return MakeError(ErrorCode::kInvalid, kind + ": not a JSON object");
    auto o = std::make_shared<TracedObject>();
    o->kind = kind;
    o->api_version = api_version;
    const json& meta = At(j, "metadata");
    o->meta.name = StringAt(meta, "name");
    o->meta.namespace_ = StringAt(meta, "namespace");
    o->meta.uid = StringAt(meta, "uid");
    o->meta.resource_version = StringAt(meta, "resourceVersion");
    if (o->meta.name.empty()) return MakeError(ErrorCode::kInvalid, kind + ": no metadata.name");
    const json& spec = At(j, "spec");
    if (kind == "Pod") {
      o->node_name = StringAt(spec, "nodeName");
      o->gated = !EmptyJson(At(spec, "schedulingGates"));
      const std::string phase = StringAt(At(j, "status"), "phase");
      o->terminal = phase == "Succeeded" || phase == "Failed";
    }
    if (kind == "PodDisruptionBudget") {
      const json& selector = At(spec, "selector");
      o->no_selector = !selector.is_object() || (EmptyJson(At(selector, "matchLabels")) &&
                                                 EmptyJson(At(selector, "matchExpressions")));
    }
    // List items of built-in kinds carry no apiVersion/kind; the trace's
    // versions are the ones the replay creates.
    j["apiVersion"] = api_version;
    j["kind"] = kind;
    try {
      o->reduced = ReduceObject(j).dump();
    } catch (const json::exception& e) {  // a field of an unexpected type
      return MakeError(ErrorCode::kInvalid,
                       kind + " " + o->meta.Key() + ": cannot be reduced: " + e.what());
    }
    return std::shared_ptr<kube::KubeObject>(std::move(o));
  };
}

const TracedObject& Traced(const kube::ObjectPtr& p) {
  return static_cast<const TracedObject&>(*p);
}

// Line 1 is rewritten in place at Stop with the final duration: it is padded
// to a width any duration fits in.
constexpr size_t kHeaderPad = 24;

}  // namespace

struct Recorder::Impl {
  struct Track {
    std::string uid;
    bool written = false;  // init or create written (a gated pod waits)
    bool bound = false;
    bool ended = false;
  };

  std::shared_ptr<kube::Client> client;
  RecorderOptions options;
  std::shared_ptr<const Clock> clock;
  std::vector<std::unique_ptr<kube::ServedInformer>> informers;  // by Kinds() index

  mutable std::mutex mu;
  bool started = false;  // t = 0 passed
  bool stopped = false;
  Status stop_result;
  Clock::TimePoint t0{};
  std::vector<std::map<std::string, kube::ObjectPtr>> initial;  // before t = 0
  std::vector<std::unordered_map<std::string, Track>> tracks;   // after
  TraceHeader header;
  size_t header_width = 0;
  std::string tmp_path;
  std::ofstream out;
  bool write_failed = false;
  RecorderStats stats;

  ~Impl() {
    for (auto& informer : informers) informer->Stop();
  }

  // Progress (a kind the server does not serve, a CRD picked up later).
  void Log(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      copse::Log(0, "record", line);
    }
  }
  // A list or watch error (the informer retries).
  void Warn(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      LogWarning("record", line);
    }
  }

  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock->Now() - t0).count();
  }

  std::string PaddedHeader() const {
    std::string line = HeaderLine(header);
    if (line.size() < header_width) line.append(header_width - line.size(), ' ');
    return line;
  }

  void WriteLine(const TraceEvent& e) {
    out << EventLine(e) << '\n';
    if (!out) write_failed = true;
    switch (e.op) {
      case TraceOp::kInit:
        ++stats.init;
        break;
      case TraceOp::kCreate:
        ++stats.create;
        break;
      case TraceOp::kBound:
        ++stats.bound;
        break;
      case TraceOp::kEnd:
        ++stats.end;
        break;
      case TraceOp::kDelete:
        ++stats.deleted;
        break;
    }
    // Every line reaches the file at once: a crash loses at most the line
    // being written, and OUT.tmp can be followed while recording.
    out.flush();
  }

  void WriteObject(TraceOp op, int64_t t, std::string object) {
    TraceEvent e;
    e.t_ms = t;
    e.op = op;
    e.object = std::move(object);
    WriteLine(e);
  }

  void WriteRef(TraceOp op, int64_t t, const TracedObject& o, const std::string& node = {}) {
    TraceEvent e;
    e.t_ms = t;
    e.op = op;
    e.api_version = o.api_version;
    e.kind = o.kind;
    e.ns = o.meta.namespace_;
    e.name = o.meta.name;
    e.node = node;
    WriteLine(e);
  }

  // A v1beta1 PodDisruptionBudget without a selector selects no pod; the
  // trace's policy/v1 one would select all.
  bool Skipped(size_t k, const TracedObject& o) const {
    if (k != kPdbKind || !o.no_selector) return false;
    std::optional<kube::ResourceRef> served = informers[k]->resource();
    return served && served->version == "v1beta1";
  }

  // t = 0: the header, the init lines, `bound` for pods already bound.
  void Begin() {
    std::lock_guard lock(mu);
    started = true;
    t0 = clock->Now();
    header.start = FormatRfc3339(clock->WallNow());
    header.duration_ms = 0;
    header_width = HeaderLine(header).size() + kHeaderPad;
    out << PaddedHeader() << '\n';
    std::vector<const TracedObject*> bound_pods;
    for (size_t k = 0; k < initial.size(); ++k) {
      for (const auto& [key, p] : initial[k]) {
        const TracedObject& o = Traced(p);
        if (Skipped(k, o)) continue;
        Track track{o.meta.uid};
        if (k != kPodKind) {
          WriteObject(TraceOp::kInit, 0, o.reduced);
          track.written = true;
          tracks[k][key] = track;
          continue;
        }
        if (o.terminal) continue;  // holds nothing; the replay would schedule it again
        if (o.gated) {
          tracks[k][key] = track;  // written when its gates are lifted
          continue;
        }
        std::string object = o.reduced;
        if (!o.node_name.empty()) {
          json pod = json::parse(object);
          pod["spec"]["nodeName"] = o.node_name;
          object = pod.dump();
          track.bound = true;
          bound_pods.push_back(&o);
        }
        WriteObject(TraceOp::kInit, 0, std::move(object));
        track.written = true;
        tracks[k][key] = track;
      }
    }
    for (const TracedObject* o : bound_pods) WriteRef(TraceOp::kBound, 0, *o, o->node_name);
    out.flush();
    if (!out) write_failed = true;
    initial.clear();
  }

  void Seen(size_t k, const kube::ObjectPtr& p) {
    const TracedObject& o = Traced(p);
    const std::string key = o.meta.Key();
    std::lock_guard lock(mu);
    if (stopped) return;
    if (!started) {
      initial[k][key] = p;
      return;
    }
    const int64_t t = NowMs();
    auto& kind_tracks = tracks[k];
    auto it = kind_tracks.find(key);
    if (k != kPodKind) {
      const bool skipped = Skipped(k, o);
      if (it != kind_tracks.end()) {
        if (it->second.uid == o.meta.uid && !skipped) return;  // an update
        WriteRef(TraceOp::kDelete, t, o);                      // replaced under the same name
        kind_tracks.erase(it);
      }
      if (skipped) return;
      WriteObject(TraceOp::kCreate, t, o.reduced);
      kind_tracks[key] = Track{o.meta.uid, true};
      return;
    }
    if (it != kind_tracks.end() && it->second.uid != o.meta.uid) {
      PodGone(t, it->second, o);  // deleted and created again between two events
      kind_tracks.erase(it);
      it = kind_tracks.end();
    }
    if (it == kind_tracks.end()) {
      if (o.terminal) return;
      it = kind_tracks.emplace(key, Track{o.meta.uid}).first;
    }
    Track& track = it->second;
    if (!track.written) {
      if (o.terminal) {  // ended while still gated: never schedulable
        kind_tracks.erase(it);
        return;
      }
      if (o.gated) return;
      WriteObject(TraceOp::kCreate, t, o.reduced);
      track.written = true;
    }
    if (!track.bound && !o.node_name.empty()) {
      WriteRef(TraceOp::kBound, t, o, o.node_name);
      track.bound = true;
    }
    if (o.terminal && !track.ended) {
      WriteRef(track.bound ? TraceOp::kEnd : TraceOp::kDelete, t, o);
      track.ended = true;
    }
  }

  // A pod left: `end` when it ran, `delete` when it never did.
  void PodGone(int64_t t, const Track& track, const TracedObject& o) {
    if (!track.written || track.ended) return;
    WriteRef(track.bound ? TraceOp::kEnd : TraceOp::kDelete, t, o);
  }

  void Gone(size_t k, const kube::ObjectPtr& p) {
    const TracedObject& o = Traced(p);
    const std::string key = o.meta.Key();
    std::lock_guard lock(mu);
    if (stopped) return;
    if (!started) {
      initial[k].erase(key);
      return;
    }
    auto it = tracks[k].find(key);
    if (it == tracks[k].end()) return;
    const int64_t t = NowMs();
    if (k == kPodKind) {
      PodGone(t, it->second, o);
    } else {
      WriteRef(TraceOp::kDelete, t, o);
    }
    tracks[k].erase(it);
  }

  Status Finish() {
    for (auto& informer : informers) informer->Stop();  // no handler runs after this
    std::lock_guard lock(mu);
    if (stopped) return stop_result;
    stopped = true;
    stats.duration_ms = NowMs();
    header.duration_ms = stats.duration_ms;
    out.flush();
    out.seekp(0);
    out << PaddedHeader();
    out.flush();
    if (!out) write_failed = true;
    out.close();
    if (write_failed) {
      stop_result = MakeError(ErrorCode::kInvalid,
                              "cannot write " + tmp_path + " (the partial " + "trace stays there)");
      return stop_result;
    }
    std::error_code ec;
    fs::rename(tmp_path, options.out, ec);
    if (ec) {
      stop_result = MakeError(ErrorCode::kInvalid, "cannot rename " + tmp_path + " to " +
                                                       options.out + ": " + ec.message());
    }
    return stop_result;
  }
};

Recorder::Recorder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Recorder::~Recorder() {
  if (impl_) (void)Stop();
}

Result<std::unique_ptr<Recorder>> Recorder::Start(std::shared_ptr<kube::Client> client,
                                                  RecorderOptions options) {
  if (options.out.empty()) return MakeError(ErrorCode::kInvalid, "no trace file given");
  auto impl = std::make_shared<Impl>();
  Impl& r = *impl;
  r.client = std::move(client);
  r.clock = options.clock ? options.clock : std::make_shared<RealClock>();
  r.options = std::move(options);
  r.header.source = "record";
  r.header.rack_label = r.options.rack_label;
  r.header.block_label = r.options.block_label;
  r.header.gpu_resource = r.options.gpu_resource;
  r.tmp_path = r.options.out + ".tmp";
  r.out.open(r.tmp_path, std::ios::out | std::ios::trunc);
  if (!r.out) {
    return MakeError(ErrorCode::kInvalid,
                     "cannot write " + r.tmp_path + ": " + std::strerror(errno));
  }
  // Whatever fails from here leaves nothing behind.
  auto fail = [&r](Error error) -> Error {
    for (auto& informer : r.informers) informer->Stop();
    r.out.close();
    std::error_code ec;
    fs::remove(r.tmp_path, ec);
    return error;
  };

  auto discovery = kube::Discovery::ReadBlocking(
      r.client, {"", "policy", "scheduling.k8s.io", "scheduling.copse.dev"},
      std::chrono::seconds(30));
  if (!discovery.ok()) {
    Error e = std::move(discovery).error();
    e.message = "cannot read the API server's discovery: " + e.message;
    return fail(std::move(e));
  }

  const std::vector<Kind>& kinds = Kinds();
  r.initial.resize(kinds.size());
  r.tracks.resize(kinds.size());
  Impl* self = impl.get();  // informers are stopped before the Impl goes
  for (size_t k = 0; k < kinds.size(); ++k) {
    kube::ServedInformerOptions o;
    o.candidates = kinds[k].candidates;
    o.without = kinds[k].without;
    o.wait_until_served = kinds[k].wait_until_served;
    o.informer.decoder = DecoderFor(kinds[k]);
    o.log = [self](const std::string& line) { self->Log(line); };
    const std::string what = kinds[k].candidates.front().resource;
    // A CRD not installed yet answers 404 on every retry: not worth a line.
    o.informer.on_error = [self, what](const Error& e) {
      if (e.code != ErrorCode::kNotFound) self->Warn(what + ": " + e.ToString());
    };
    auto informer = std::make_unique<kube::ServedInformer>(r.client, std::move(o));
    kube::EventHandler handler;
    handler.on_add = [self, k](const kube::ObjectPtr& p) { self->Seen(k, p); };
    handler.on_update = [self, k](const kube::ObjectPtr&, const kube::ObjectPtr& p) {
      self->Seen(k, p);
    };
    handler.on_delete = [self, k](const kube::ObjectPtr& p) { self->Gone(k, p); };
    informer->AddEventHandler(std::move(handler));
    r.informers.push_back(std::move(informer));
  }
  for (auto& informer : r.informers) informer->Start(&discovery.value());

  // t = 0 is when every kind the server serves has listed. A copse CRD not
  // served yet is not waited for: its objects arrive as creates.
  const auto deadline = r.clock->Now() + r.options.sync_timeout;
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k].wait_until_served && !discovery->FirstServed(kinds[k].candidates)) continue;
    const auto left =
        std::max(std::chrono::milliseconds(0),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - r.clock->Now()));
    if (!r.informers[k]->WaitForSync(left)) {
      return fail(MakeError(ErrorCode::kTimeout,
                            "listing " + r.informers[k]->Describe() + " did not complete within " +
                                std::to_string(r.options.sync_timeout.count() / 1000) + "s"));
    }
  }
  r.Begin();
  if (r.write_failed) return fail(MakeError(ErrorCode::kInvalid, "cannot write " + r.tmp_path));
  return std::unique_ptr<Recorder>(new Recorder(std::move(impl)));
}

Status Recorder::Stop() { return impl_->Finish(); }

RecorderStats Recorder::stats() const {
  std::lock_guard lock(impl_->mu);
  RecorderStats s = impl_->stats;
  if (!impl_->stopped) s.duration_ms = impl_->NowMs();
  return s;
}

}  // namespace copse::replay
