#include "topology/fit.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "core/check.h"

namespace copse::topology {
namespace {

// Per-node counts are int32 while computed (so that the loops below
// vectorise with SSE2: double <-> int32 conversions) and saturate here.
constexpr int32_t kMaxFit = std::numeric_limits<int32_t>::max();
// Below 2^52 both operands are exact doubles and floor(f / q) computed in
// double precision equals the integer quotient: if f / q is not an integer k,
// it is at least 1/q below k + 1, more than half an ulp since q * (k + 1) <
// 2^53, so rounding never reaches k + 1.
constexpr int64_t kExactDoubleLimit = int64_t{1} << 52;

int32_t ClampFit(int64_t v) noexcept {
  return v <= 0 ? 0 : v >= int64_t{kMaxFit} ? kMaxFit : static_cast<int32_t>(v);
}

// 0 <= v < 2^52 to double without cvtsi2sd (which SSE2 cannot vectorise):
// place v in the mantissa of 2^52 and subtract 2^52.
double ExactToDouble(int64_t v) noexcept {
  return std::bit_cast<double>(static_cast<uint64_t>(v) | 0x4330000000000000ull) - 0x1p52;
}

// c[n] = min(c[n], free[n] / q) for one resource; every free[n] and q < 2^52.
void LimitByDouble(int32_t* c, const int64_t* free, size_t n_nodes, int64_t q) noexcept {
  const double qd = static_cast<double>(q);
  for (size_t n = 0; n < n_nodes; ++n) {
    const double k = std::min(ExactToDouble(free[n]) / qd, static_cast<double>(c[n]));
    c[n] = static_cast<int32_t>(k);
  }
}

void LimitByInteger(int32_t* c, const int64_t* free, size_t n_nodes, int64_t q) noexcept {
  for (size_t n = 0; n < n_nodes; ++n) {
    if (c[n] == 0) continue;
    c[n] = std::min(c[n], ClampFit(free[n] / q));
  }
}

}  // namespace

uint32_t NodeFit(const DomainTree& tree, const ResourceVector& request, NodeIndex n) noexcept {
  int32_t fit = ClampFit(tree.node_free(n, kResourceIdPods));
  for (size_t r = 0; r < request.size() && fit > 0; ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t q = request.Get(rid);
    if (rid == kResourceIdPods || q <= 0) continue;
    fit = std::min(fit, ClampFit(tree.node_free(n, rid) / q));
  }
  return static_cast<uint32_t>(fit);
}

void CountFits(const DomainTree& tree, const PodClass& cls, FitCounts& out) noexcept {
  const size_t n_nodes = tree.num_nodes();
  COPSE_CHECK(cls.feasible.empty() || cls.feasible.size() >= n_nodes)
      << "feasibility mask has " << cls.feasible.size() << " entries for " << n_nodes << " nodes";
  out.per_node_.resize(n_nodes);
  // Same object, signed view (values stay in [0, 2^31)).
  int32_t* c = reinterpret_cast<int32_t*>(out.per_node_.data());

  // Pod slots and the feasibility mask.
  const int64_t* pods = tree.node_free_column(kResourceIdPods).data();
  if (cls.feasible.empty()) {
    for (size_t n = 0; n < n_nodes; ++n) c[n] = ClampFit(pods[n]);
  } else {
    const uint8_t* mask = cls.feasible.data();
    for (size_t n = 0; n < n_nodes; ++n) c[n] = mask[n] != 0 ? ClampFit(pods[n]) : 0;
  }

  // Each requested resource.
  for (size_t r = 0; r < cls.request.size(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t q = cls.request.Get(rid);
    if (rid == kResourceIdPods || q <= 0) continue;
    if (r >= tree.num_resources()) {  // no node has any of it
      std::fill(c, c + n_nodes, 0);
      break;
    }
    const int64_t* free = tree.node_free_column(rid).data();
    if (tree.node_free_bound(rid) < kExactDoubleLimit && q < kExactDoubleLimit) {
      LimitByDouble(c, free, n_nodes, q);
    } else {
      LimitByInteger(c, free, n_nodes, q);
    }
  }

  // Domain sums: a prefix sum over the node order, where every domain is a range.
  const std::span<const NodeIndex> order = tree.node_order();
  out.prefix_.resize(n_nodes + 1);
  uint64_t* prefix = out.prefix_.data();
  prefix[0] = 0;
  for (size_t i = 0; i < n_nodes; ++i)
    prefix[i + 1] = prefix[i] + static_cast<uint64_t>(c[order[i]]);
  out.total_ = prefix[n_nodes];

  size_t offset = 0;
  for (uint32_t l = 0; l < tree.num_levels(); ++l) {
    out.level_offset_[l] = offset;
    offset += tree.num_domains(l);
  }
  out.level_offset_[tree.num_levels()] = offset;
  out.per_domain_.resize(offset);
  for (uint32_t l = 0; l < tree.num_levels(); ++l) {
    uint64_t* counts = out.per_domain_.data() + out.level_offset_[l];
    const size_t n_domains = tree.num_domains(l);
    for (DomainId d = 0; d < n_domains; ++d) {
      const PositionRange p = tree.positions(l, d);
      counts[d] = prefix[p.end] - prefix[p.begin];
    }
  }
  out.structure_version_ = tree.structure_version();
}

void UpdateFits(const DomainTree& tree, const PodClass& cls, std::span<const NodeIndex> rows,
                FitCounts& out) noexcept {
  COPSE_CHECK(out.structure_version_ == tree.structure_version() &&
              out.per_node_.size() == tree.num_nodes())
      << "UpdateFits on counts from another tree structure";
  for (NodeIndex n : rows) {
    COPSE_CHECK(n < tree.num_nodes()) << "row " << n << " >= " << tree.num_nodes();
    const bool feasible = cls.feasible.empty() || cls.feasible[n] != 0;
    const uint32_t fit = feasible ? NodeFit(tree, cls.request, n) : 0;
    const uint32_t old = out.per_node_[n];
    if (fit == old) continue;
    out.per_node_[n] = fit;
    // Unsigned wrap-around adds the (possibly negative) difference.
    const uint64_t delta = static_cast<uint64_t>(fit) - static_cast<uint64_t>(old);
    out.total_ += delta;
    for (uint32_t l = 0; l < tree.depth(n); ++l)
      out.per_domain_[out.level_offset_[l] + tree.domain_of(n, l)] += delta;
  }
}

}  // namespace copse::topology
