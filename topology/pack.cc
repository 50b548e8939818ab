#include "topology/pack.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/check.h"

namespace copse::topology {

void DomainPacker::Reset(const DomainTree& tree, uint32_t level, DomainId d) {
  const PositionRange p = tree.positions(level, d);
  Start(tree, level, d, p.begin, p.end);
}

void DomainPacker::ResetAll(const DomainTree& tree) {
  Start(tree, 0, kNoDomain, 0, static_cast<uint32_t>(tree.num_nodes()));
}

void DomainPacker::Start(const DomainTree& tree, uint32_t level, DomainId domain, uint32_t begin,
                         uint32_t end) {
  tree_ = &tree;
  level_ = level;
  domain_ = domain;
  begin_ = begin;
  end_ = end;
  stride_ = tree.num_resources();
  remaining_.resize(static_cast<size_t>(end - begin) * stride_);
  const std::span<const NodeIndex> order = tree.node_order();
  for (size_t r = 0; r < stride_; ++r) {
    const int64_t* free = tree.node_free_column(static_cast<ResourceId>(r)).data();
    for (uint32_t pos = begin; pos < end; ++pos)
      remaining_[(pos - begin) * stride_ + r] = free[order[pos]];
  }
  assignments_.clear();
  assignment_shape_.clear();
  shapes_.clear();
}

DomainPacker::Shape DomainPacker::MakeShape(const ResourceVector& request) const noexcept {
  Shape shape;
  for (size_t r = 0; r < request.size(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t q = request.Get(rid);
    if (rid == kResourceIdPods || q <= 0) continue;
    if (r >= stride_) {
      shape.impossible = true;
      continue;
    }
    shape.ids[shape.size] = rid;
    shape.amounts[shape.size] = q;
    ++shape.size;
  }
  return shape;
}

int64_t DomainPacker::SlotFit(const Shape& shape, size_t slot) const noexcept {
  const int64_t* rem = remaining_.data() + slot * stride_;
  int64_t fit = rem[kResourceIdPods];
  for (uint32_t j = 0; j < shape.size && fit > 0; ++j)
    fit = std::min(fit, rem[shape.ids[j]] / shape.amounts[j]);
  return fit;
}

void DomainPacker::Apply(size_t slot, const Shape& shape, int64_t pods) noexcept {
  int64_t* rem = remaining_.data() + slot * stride_;
  rem[kResourceIdPods] -= pods;
  for (uint32_t j = 0; j < shape.size; ++j) rem[shape.ids[j]] -= pods * shape.amounts[j];
}

PackResult DomainPacker::TryPlace(std::span<const ClassDemand> classes) noexcept {
  return Place(classes, begin_, end_);
}

PackResult DomainPacker::TryPlace(std::span<const ClassDemand> classes, uint32_t level,
                                  DomainId d) noexcept {
  const PositionRange p = tree_->positions(level, d);
  COPSE_CHECK(p.begin >= begin_ && p.end <= end_) << "domain outside the packer's domain";
  return Place(classes, p.begin, p.end);
}

PackResult DomainPacker::Place(std::span<const ClassDemand> classes, uint32_t begin,
                               uint32_t end) noexcept {
  COPSE_CHECK(tree_ != nullptr) << "DomainPacker used before Reset";
  const size_t shapes_base = shapes_.size();
  const size_t k = classes.size();
  const size_t n_nodes = tree_->num_nodes();

  // 1. Largest pods first.
  class_order_.resize(k);
  class_key_.resize(k);
  std::iota(class_order_.begin(), class_order_.end(), 0u);
  for (size_t i = 0; i < k; ++i) {
    COPSE_CHECK(classes[i].cls.feasible.empty() || classes[i].cls.feasible.size() >= n_nodes)
        << "feasibility mask of class " << i << " is too short";
    shapes_.push_back(MakeShape(classes[i].cls.request));
    const Shape& shape = shapes_.back();
    double size = 0;
    for (uint32_t j = 0; j < shape.size; ++j) {
      const int64_t total = tree_->total_allocatable(shape.ids[j]);
      const double share = total > 0 ? static_cast<double>(shape.amounts[j]) / total
                                     : std::numeric_limits<double>::infinity();
      size = std::max(size, share);
    }
    class_key_[i] = {0, size};
  }
  auto by_key = [&](uint32_t a, uint32_t b) {
    if (class_key_[a].slack != class_key_[b].slack)
      return class_key_[a].slack < class_key_[b].slack;
    if (class_key_[a].size != class_key_[b].size) return class_key_[a].size > class_key_[b].size;
    if (classes[a].count != classes[b].count) return classes[a].count > classes[b].count;
    return a < b;
  };
  std::sort(class_order_.begin(), class_order_.end(), by_key);
  const PackResult first = Attempt(classes, shapes_base, begin, end);
  if (first.ok) return first;

  // 4. Retry once, most constrained class first: the fewest spare pods when
  //    placed alone (e.g. a class that fits on one node only).
  if (k > 1) {
    for (size_t i = 0; i < k; ++i) {
      const uint64_t alone = CountRange(shapes_[shapes_base + i], classes[i].cls, begin, end);
      class_key_[i].slack = static_cast<int64_t>(alone) - static_cast<int64_t>(classes[i].count);
    }
    retry_order_.assign(class_order_.begin(), class_order_.end());
    std::sort(class_order_.begin(), class_order_.end(), by_key);
    if (class_order_ != retry_order_) {
      const PackResult second = Attempt(classes, shapes_base, begin, end);
      if (second.ok) return second;
    }
  }
  shapes_.resize(shapes_base);
  return first;
}

PackResult DomainPacker::Attempt(std::span<const ClassDemand> classes, size_t shapes_base,
                                 uint32_t begin, uint32_t end) noexcept {
  // 2. First fit over the nodes, as many pods per node as fit.
  const size_t mark = assignments_.size();
  const NodeIndex* order = tree_->node_order().data();
  for (uint32_t ci : class_order_) {
    const ClassDemand& demand = classes[ci];
    const Shape& shape = shapes_[shapes_base + ci];
    int64_t need = demand.count;
    if (need > 0 && !shape.impossible) {
      const uint8_t* mask = demand.cls.feasible.empty() ? nullptr : demand.cls.feasible.data();
      for (uint32_t pos = begin; pos < end && need > 0; ++pos) {
        const NodeIndex n = order[pos];
        if (mask != nullptr && mask[n] == 0) continue;
        const size_t slot = pos - begin_;
        const int64_t fit = SlotFit(shape, slot);
        if (fit <= 0) continue;
        const int64_t take = std::min(fit, need);
        Apply(slot, shape, take);
        assignments_.push_back({ci, n, static_cast<uint32_t>(take)});
        assignment_shape_.push_back(static_cast<uint32_t>(shapes_base + ci));
        need -= take;
      }
    }
    // 3. All or nothing.
    if (need > 0) {
      RollbackTo(mark);
      return {false, ci, demand.count - static_cast<uint32_t>(need)};
    }
  }
  return {true, 0, 0};
}

uint64_t DomainPacker::CountRange(const Shape& shape, const PodClass& cls, uint32_t begin,
                                  uint32_t end) const noexcept {
  if (shape.impossible) return 0;
  const NodeIndex* order = tree_->node_order().data();
  uint64_t sum = 0;
  for (uint32_t pos = begin; pos < end; ++pos) {
    if (!cls.feasible.empty() && cls.feasible[order[pos]] == 0) continue;
    sum += static_cast<uint64_t>(std::max<int64_t>(0, SlotFit(shape, pos - begin_)));
  }
  return sum;
}

void DomainPacker::RollbackTo(size_t mark) noexcept {
  while (assignments_.size() > mark) {
    const Assignment& a = assignments_.back();
    const size_t slot = tree_->position_of(a.node) - begin_;
    Apply(slot, shapes_[assignment_shape_.back()], -static_cast<int64_t>(a.count));
    assignments_.pop_back();
    assignment_shape_.pop_back();
  }
}

int64_t DomainPacker::remaining(NodeIndex n, ResourceId r) const noexcept {
  const uint32_t pos = tree_->position_of(n);
  if (pos < begin_ || pos >= end_ || r >= stride_) return 0;
  return remaining_[(pos - begin_) * stride_ + r];
}

int64_t DomainPacker::RemainingFree(uint32_t level, DomainId d, ResourceId r) const noexcept {
  const PositionRange p = tree_->positions(level, d);
  COPSE_CHECK(p.begin >= begin_ && p.end <= end_) << "domain outside the packer's domain";
  if (r >= stride_) return 0;
  int64_t sum = 0;
  for (uint32_t pos = p.begin; pos < p.end; ++pos) sum += remaining_[(pos - begin_) * stride_ + r];
  return sum;
}

uint64_t DomainPacker::CountFit(const PodClass& cls, uint32_t level, DomainId d) const noexcept {
  const PositionRange p = tree_->positions(level, d);
  COPSE_CHECK(p.begin >= begin_ && p.end <= end_) << "domain outside the packer's domain";
  return CountRange(MakeShape(cls.request), cls, p.begin, p.end);
}

void DomainPacker::RankRemaining(uint32_t level, std::span<const ClassDemand> classes,
                                 const RankOptions& options, std::vector<RankedDomain>& out) const {
  COPSE_CHECK(tree_ != nullptr) << "DomainPacker used before Reset";
  COPSE_CHECK(level < tree_->num_levels() && (domain_ == kNoDomain || level >= level_))
      << "level " << level << " outside the packer's domain";
  out.clear();
  Demand demand;
  for (const ClassDemand& c : classes) demand.Add(c.cls.request, c.count);
  const ResourceId measure = options.measure.value_or(DominantResource(*tree_, demand.total));
  const int64_t needed = demand.total.Get(measure);
  const bool tightest = options.order == RankOrder::kTightestFirst;
  const DomainRange range =
      domain_ == kNoDomain ? tree_->domains(level) : tree_->Descendants(level_, domain_, level);
  for (DomainId d : range) {
    if (options.require_fit) {
      bool fits = true;
      for (size_t r = 0; r < demand.total.size() && fits; ++r) {
        const auto rid = static_cast<ResourceId>(r);
        const int64_t amount = demand.total.Get(rid);
        if (amount > 0 && RemainingFree(level, d, rid) < amount) fits = false;
      }
      for (size_t i = 0; i < classes.size() && fits; ++i) {
        if (classes[i].count > 0 && CountFit(classes[i].cls, level, d) < classes[i].count)
          fits = false;
      }
      if (!fits) continue;
    }
    const int64_t free = RemainingFree(level, d, measure);
    out.push_back({d, tightest ? free - needed : free});
  }
  OrderAndCap(*tree_, level, options, out);
}

}  // namespace copse::topology
