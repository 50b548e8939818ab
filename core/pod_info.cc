#include "core/pod_info.h"

#include <algorithm>
#include <cstring>

namespace copse {
namespace {

// A fast, deterministic 64-bit hash (splitmix64 mixing over 8-byte words).
// Stable across runs and processes so that signatures can be logged and compared.
class Hasher {
 public:
  void U64(uint64_t v) noexcept {
    h_ = Mix(h_ ^ (v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2)));
  }
  void I64(int64_t v) noexcept { U64(static_cast<uint64_t>(v)); }
  void Str(std::string_view s) noexcept {
    U64(s.size());
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      U64(w);
    }
    uint64_t tail = 0;
    if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
    U64(tail);
  }
  void Tag(char c) noexcept {
    U64(static_cast<uint64_t>(static_cast<unsigned char>(c)) | 0xA5A5000000000000ULL);
  }

  void Req(const copse::Requirement& r) noexcept {
    Str(r.key);
    U64(static_cast<uint64_t>(r.op));
    U64(r.values.size());
    for (const std::string& v : r.values) Str(v);
  }
  void Selector(const std::optional<LabelSelector>& s) noexcept {
    if (!s.has_value()) {
      Tag('n');
      return;
    }
    Tag(s->MatchesNothing() ? 'N' : 's');
    U64(s->requirements().size());
    for (const copse::Requirement& r : s->requirements()) Req(r);
  }
  void Term(const NodeSelectorTerm& t) noexcept {
    U64(t.match_expressions.size());
    for (const copse::Requirement& r : t.match_expressions) Req(r);
    U64(t.match_fields.size());
    for (const copse::Requirement& r : t.match_fields) Req(r);
  }
  void LabelMap(const copse::Labels& labels) noexcept {
    U64(labels.size());
    for (const auto& [k, v] : labels) {
      Str(k);
      Str(v);
    }
  }
  void AffinityTerm(const PodAffinityTerm& t) noexcept {
    Selector(t.label_selector);
    U64(t.namespaces.size());
    for (const std::string& ns : t.namespaces) Str(ns);
    Selector(t.namespace_selector);
    Str(t.topology_key);
  }

  uint64_t value() const noexcept { return Mix(h_); }

 private:
  static uint64_t Mix(uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t h_ = 0x243f6a8885a308d3ULL;
};

// Rebuilds `selector` with one more requirement per key present in `labels`.
Status MergeLabelKeys(std::optional<LabelSelector>& selector, const std::vector<std::string>& keys,
                      SelectorOp op, const Labels& labels, const std::string& field) {
  if (keys.empty() || !selector.has_value() || selector->MatchesNothing()) return Status::Ok();
  std::vector<Requirement> reqs;
  for (const Requirement& r : selector->requirements()) {
    Requirement copy = r;
    // FromParts takes the set-based operators only.
    if (copy.op == SelectorOp::kEquals) copy.op = SelectorOp::kIn;
    if (copy.op == SelectorOp::kNotEquals) copy.op = SelectorOp::kNotIn;
    reqs.push_back(std::move(copy));
  }
  bool added = false;
  for (const std::string& key : keys) {
    auto it = labels.find(key);
    if (it == labels.end()) continue;
    reqs.push_back(Requirement{key, op, {it->second}});
    added = true;
  }
  if (!added) return Status::Ok();
  Result<LabelSelector> merged = LabelSelector::FromParts({}, std::move(reqs));
  if (!merged.ok()) {
    Error e = std::move(merged).error();
    e.message = field + ": " + e.message;
    return e;
  }
  selector = std::move(*merged);
  return Status::Ok();
}

void ResolveNamespaces(PodAffinityTerm& term, const std::string& own_namespace) {
  if (term.namespaces.empty() && !term.namespace_selector.has_value()) {
    term.namespaces.push_back(own_namespace);
  }
  std::sort(term.namespaces.begin(), term.namespaces.end());
  term.namespaces.erase(std::unique(term.namespaces.begin(), term.namespaces.end()),
                        term.namespaces.end());
}

}  // namespace

bool PodAffinityTerm::NamespaceListed(std::string_view ns) const noexcept {
  return std::binary_search(namespaces.begin(), namespaces.end(), ns,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

bool PodAffinityTerm::Matches(std::string_view pod_namespace, const Labels& pod_labels,
                              const Labels* namespace_labels) const noexcept {
  bool ns_ok = NamespaceListed(pod_namespace);
  if (!ns_ok && namespace_selector.has_value()) {
    static const Labels kNoLabels;
    ns_ok =
        namespace_selector->Matches(namespace_labels != nullptr ? *namespace_labels : kNoLabels);
  }
  return ns_ok && MatchesLabels(pod_labels);
}

Status PodInfo::Finalize() {
  const auto merge_terms = [&](std::vector<PodAffinityTerm>& terms, const char* field) -> Status {
    for (size_t i = 0; i < terms.size(); ++i) {
      PodAffinityTerm& t = terms[i];
      const std::string path = std::string(field) + "[" + std::to_string(i) + "]";
      Status s = MergeLabelKeys(t.label_selector, t.match_label_keys, SelectorOp::kIn, labels,
                                path + ".matchLabelKeys");
      if (!s.ok()) return s;
      s = MergeLabelKeys(t.label_selector, t.mismatch_label_keys, SelectorOp::kNotIn, labels,
                         path + ".mismatchLabelKeys");
      if (!s.ok()) return s;
      t.match_label_keys.clear();
      t.mismatch_label_keys.clear();
      ResolveNamespaces(t, namespace_name);
    }
    return Status::Ok();
  };
  const auto merge_weighted = [&](std::vector<WeightedPodAffinityTerm>& terms,
                                  const char* field) -> Status {
    for (size_t i = 0; i < terms.size(); ++i) {
      PodAffinityTerm& t = terms[i].term;
      const std::string path = std::string(field) + "[" + std::to_string(i) + "].podAffinityTerm";
      Status s = MergeLabelKeys(t.label_selector, t.match_label_keys, SelectorOp::kIn, labels,
                                path + ".matchLabelKeys");
      if (!s.ok()) return s;
      s = MergeLabelKeys(t.label_selector, t.mismatch_label_keys, SelectorOp::kNotIn, labels,
                         path + ".mismatchLabelKeys");
      if (!s.ok()) return s;
      t.match_label_keys.clear();
      t.mismatch_label_keys.clear();
      ResolveNamespaces(t, namespace_name);
    }
    return Status::Ok();
  };
  Status s =
      merge_terms(required_affinity,
                  "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  if (!s.ok()) return s;
  s = merge_terms(required_anti_affinity,
                  "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  if (!s.ok()) return s;
  s = merge_weighted(preferred_affinity,
                     "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution");
  if (!s.ok()) return s;
  s = merge_weighted(
      preferred_anti_affinity,
      "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution");
  if (!s.ok()) return s;
  for (size_t i = 0; i < topology_spread_constraints.size(); ++i) {
    TopologySpreadConstraint& c = topology_spread_constraints[i];
    s = MergeLabelKeys(c.label_selector, c.match_label_keys, SelectorOp::kIn, labels,
                       "spec.topologySpreadConstraints[" + std::to_string(i) + "].matchLabelKeys");
    if (!s.ok()) return s;
    c.match_label_keys.clear();
    if (c.min_domains < 1) c.min_domains = 1;
  }

  if (non_zero_cpu_milli < 0) {
    const int64_t cpu = requests.Get(kResourceIdCpu);
    non_zero_cpu_milli = cpu > 0 ? cpu : kDefaultMilliCpuRequest;
  }
  if (non_zero_memory < 0) {
    const int64_t mem = requests.Get(kResourceIdMemory);
    non_zero_memory = mem > 0 ? mem : kDefaultMemoryRequest;
  }
  requests.Set(kResourceIdPods, 0);

  has_pod_affinity = !required_affinity.empty() || !required_anti_affinity.empty() ||
                     !preferred_affinity.empty() || !preferred_anti_affinity.empty();
  signature = ComputePodClassSignature(*this);
  finalized = true;
  return Status::Ok();
}

bool PodInfo::MatchesRequiredNodeAffinity(const Labels& node_labels,
                                          std::string_view node) const noexcept {
  for (const auto& [key, value] : node_selector) {
    auto it = node_labels.find(key);
    if (it == node_labels.end() || it->second != value) return false;
  }
  if (required_node_affinity.has_value()) return required_node_affinity->Matches(node_labels, node);
  return true;
}

uint64_t ComputePodClassSignature(const PodInfo& pod, bool with_labels) noexcept {
  Hasher h;
  h.Tag('P');
  h.Str(pod.namespace_name);
  h.Str(pod.scheduler_name);
  if (with_labels) {
    h.LabelMap(pod.labels);
  } else {
    h.Tag('-');
  }
  h.Tag('R');
  h.U64(pod.requests.size());
  for (size_t i = 0; i < pod.requests.size(); ++i) {
    if (i == kResourceIdPods) continue;
    h.I64(pod.requests.Get(static_cast<ResourceId>(i)));
  }
  h.Tag('S');
  h.LabelMap(pod.node_selector);
  h.Tag('A');
  if (pod.required_node_affinity.has_value()) {
    h.U64(pod.required_node_affinity->terms.size());
    for (const NodeSelectorTerm& t : pod.required_node_affinity->terms) h.Term(t);
  } else {
    h.Tag('-');
  }
  h.Tag('T');
  h.U64(pod.tolerations.size());
  for (const Toleration& t : pod.tolerations) {
    h.Str(t.key);
    h.U64(static_cast<uint64_t>(t.op));
    h.Str(t.value);
    h.U64(t.effect.has_value() ? static_cast<uint64_t>(*t.effect) + 1 : 0);
  }
  h.Tag('H');
  h.U64(pod.host_ports.size());
  for (const HostPort& p : pod.host_ports) {
    h.Str(p.ip);
    h.U64(static_cast<uint64_t>(p.protocol));
    h.I64(p.port);
  }
  h.Tag('a');
  h.U64(pod.required_affinity.size());
  for (const PodAffinityTerm& t : pod.required_affinity) h.AffinityTerm(t);
  h.Tag('x');
  h.U64(pod.required_anti_affinity.size());
  for (const PodAffinityTerm& t : pod.required_anti_affinity) h.AffinityTerm(t);
  h.Tag('C');
  h.U64(pod.topology_spread_constraints.size());
  for (const TopologySpreadConstraint& c : pod.topology_spread_constraints) {
    h.I64(c.max_skew);
    h.Str(c.topology_key);
    h.U64(static_cast<uint64_t>(c.when_unsatisfiable));
    h.Selector(c.label_selector);
    h.I64(c.min_domains);
    h.U64(static_cast<uint64_t>(c.node_affinity_policy));
    h.U64(static_cast<uint64_t>(c.node_taints_policy));
  }
  h.Tag('D');
  h.Selector(pod.default_spread_selector);
  h.Tag('c');
  h.U64(pod.resource_claims.size());
  for (const PodClaimRef& c : pod.resource_claims) {
    h.Str(c.name);
    h.Str(c.claim_name);
    h.U64(static_cast<uint64_t>(c.state));
  }
  h.Tag('N');
  h.Str(pod.node_name);
  return h.value();
}

bool PodDisruptionBudgetInfo::Covers(const PodInfo& pod) const noexcept {
  if (pod.labels.empty() || pod.namespace_name != namespace_name) return false;
  if (!selector.has_value() || selector->Empty() || selector->MatchesNothing()) return false;
  return selector->Matches(pod.labels);
}

bool PodDisruptionBudgetInfo::AlreadyDisrupted(std::string_view pod_name) const noexcept {
  return std::binary_search(disrupted_pods.begin(), disrupted_pods.end(), pod_name,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

}  // namespace copse
