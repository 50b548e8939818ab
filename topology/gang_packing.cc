#include "topology/gang_packing.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>

namespace copse::topology {
namespace {

int32_t PerPod(const PackingGang& g) { return std::max<int32_t>(1, g.per_pod); }

int32_t NumRacks(std::span<const PackingNode> nodes) {
  int32_t racks = 0;
  for (const PackingNode& n : nodes) racks = std::max(racks, n.rack + 1);
  return racks;
}

// First fit of one gang on `free` (pods to the first node with room, among
// nodes of `rack`, or every node when rack < 0), its pods per node in
// `where`. On failure `free` is as before.
bool FirstFit(std::span<const PackingNode> nodes, std::vector<int32_t>& free,
              const PackingGang& gang, int32_t rack, std::vector<PodsOnNode>& where) {
  const int32_t p = PerPod(gang);
  where.clear();
  for (int32_t pod = 0; pod < gang.pods; ++pod) {
    bool ok = false;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (rack >= 0 && nodes[n].rack != rack) continue;
      if (free[n] >= p) {
        free[n] -= p;
        if (where.empty() || where.back().node != static_cast<int32_t>(n)) {
          where.push_back({static_cast<int32_t>(n), 0});
        }
        ++where.back().pods;
        ok = true;
        break;
      }
    }
    if (!ok) {
      for (const PodsOnNode& w : where) free[static_cast<size_t>(w.node)] += w.pods * p;
      where.clear();
      return false;
    }
  }
  return true;
}

bool FirstFitGang(std::span<const PackingNode> nodes, std::vector<int32_t>& free,
                  const PackingGang& gang, int32_t racks, std::vector<PodsOnNode>& where) {
  if (!gang.rack_required) return FirstFit(nodes, free, gang, -1, where);
  for (int32_t r = 0; r < racks; ++r) {
    if (FirstFit(nodes, free, gang, r, where)) return true;
  }
  return false;
}

class Search {
 public:
  Search(std::span<const PackingNode> nodes, std::span<const PackingGang> gangs, uint64_t budget,
         std::chrono::steady_clock::time_point deadline)
      : nodes_(nodes),
        input_(gangs),
        budget_(budget),
        deadline_(deadline),
        racks_(NumRacks(nodes)) {
    order_.resize(gangs.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      const PackingGang& x = gangs[a];
      const PackingGang& y = gangs[b];
      if (x.rack_required != y.rack_required) return x.rack_required;
      return int64_t{x.pods} * PerPod(x) < int64_t{y.pods} * PerPod(y);
    });
    for (size_t i : order_) gangs_.push_back(gangs[i]);
    first_free_ = static_cast<size_t>(std::count_if(
        gangs_.begin(), gangs_.end(), [](const PackingGang& g) { return g.rack_required; }));
    free_.resize(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) free_[n] = std::max<int32_t>(0, nodes[n].free);
    current_.assign(gangs_.size(), 0);
    best_placed_.assign(gangs_.size(), 0);
    current_assign_.resize(gangs_.size());
  }

  PackingResult Run() {
    // Incumbent: the better of first fit in the search order and first fit
    // in the input order (so a search cut short never does worse than
    // FirstFitGangs).
    for (bool input_order : {false, true}) {
      std::vector<size_t> sequence(gangs_.size());
      std::iota(sequence.begin(), sequence.end(), size_t{0});
      if (input_order) {
        std::sort(sequence.begin(), sequence.end(),
                  [&](size_t a, size_t b) { return order_[a] < order_[b]; });
      }
      std::vector<int32_t> free = free_;
      int32_t placed = 0;
      std::vector<uint8_t> flags(gangs_.size(), 0);
      std::vector<std::vector<PodsOnNode>> assign(gangs_.size());
      for (size_t i : sequence) {
        if (FirstFitGang(nodes_, free, gangs_[i], racks_, assign[i])) {
          flags[i] = 1;
          ++placed;
        }
      }
      if (!input_order || placed > best_) Record(placed, flags, free, assign);
    }
    Decide(0, 0);
    PackingResult out;
    out.gangs = best_;
    out.placed.assign(input_.size(), 0);
    out.assignment.resize(input_.size());
    for (size_t i = 0; i < order_.size(); ++i) {
      out.placed[order_[i]] = best_placed_[i];
      std::vector<PodsOnNode>& where = out.assignment[order_[i]];
      if (best_placed_[i]) where = best_assign_[i];
      std::sort(where.begin(), where.end(),
                [](const PodsOnNode& a, const PodsOnNode& b) { return a.node < b.node; });
    }
    out.free = best_free_;
    out.proven = !aborted_;
    out.explored = explored_;
    return out;
  }

 private:
  // Pods of `gang` that nodes can take, over all nodes or one rack.
  int64_t Slots(const PackingGang& gang, int32_t rack) const {
    const int32_t p = PerPod(gang);
    int64_t slots = 0;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (rack >= 0 && nodes_[n].rack != rack) continue;
      slots += free_[n] / p;
    }
    return slots;
  }

  bool FitsAlone(const PackingGang& gang) const {
    if (!gang.rack_required) return Slots(gang, -1) >= gang.pods;
    for (int32_t r = 0; r < racks_; ++r) {
      if (Slots(gang, r) >= gang.pods) return true;
    }
    return false;
  }

  int32_t Bound(size_t i) const {
    std::vector<int64_t> demands;
    for (size_t j = i; j < gangs_.size(); ++j) {
      if (FitsAlone(gangs_[j])) demands.push_back(int64_t{gangs_[j].pods} * PerPod(gangs_[j]));
    }
    std::sort(demands.begin(), demands.end());
    int64_t total = std::accumulate(free_.begin(), free_.end(), int64_t{0});
    int32_t k = 0;
    for (int64_t d : demands) {
      if (d > total) break;
      total -= d;
      ++k;
    }
    return k;
  }

  // Counts one state; false (and aborted) past the budget or the deadline.
  bool Explore() {
    if (++explored_ > budget_ ||
        ((explored_ & 255) == 0 && std::chrono::steady_clock::now() >= deadline_)) {
      aborted_ = true;
    }
    return !aborted_;
  }

  void Decide(size_t i, int32_t placed) {
    if (aborted_ || !Explore()) return;
    if (placed > best_) Record(placed, current_, free_, current_assign_);
    if (i == gangs_.size()) return;
    if (placed + Bound(i) <= best_) return;
    if (i >= first_free_) {
      // Only gangs without a rack requirement are left: nodes are
      // interchangeable by free count, so the rest is solved exactly, with
      // results memoised by state.
      const int32_t rest = Solve(i);
      if (aborted_ || placed + rest <= best_) return;
      std::vector<uint8_t> flags = current_;
      std::vector<int32_t> free;
      std::vector<std::vector<PodsOnNode>> assign;
      Reconstruct(i, flags, free, assign);
      if (aborted_ || assign.size() != gangs_.size()) return;
      Record(placed + rest, flags, free, assign);
      return;
    }
    const PackingGang& gang = gangs_[i];
    if (FitsAlone(gang)) {
      current_[i] = 1;
      auto next = [&] {
        Decide(i + 1, placed + 1);
        return aborted_;
      };
      std::set<std::vector<int32_t>> tried;
      for (int32_t r = 0; r < racks_ && !aborted_; ++r) {
        if (Slots(gang, r) < gang.pods) continue;
        std::vector<size_t> candidates;
        std::vector<int32_t> key;
        for (size_t n = 0; n < nodes_.size(); ++n) {
          if (nodes_[n].rack != r) continue;
          candidates.push_back(n);
          key.push_back(free_[n]);
        }
        std::sort(key.begin(), key.end());
        if (!tried.insert(key).second) continue;
        Distribute(i, std::move(candidates), next);
      }
      current_[i] = 0;
    }
    Decide(i + 1, placed);
  }

  void Record(int32_t placed, const std::vector<uint8_t>& flags, const std::vector<int32_t>& free,
              const std::vector<std::vector<PodsOnNode>>& assign) {
    best_ = placed;
    best_placed_ = flags;
    best_free_ = free;
    best_assign_ = assign;
  }

  std::vector<size_t> AllNodes() const {
    std::vector<size_t> all(nodes_.size());
    std::iota(all.begin(), all.end(), size_t{0});
    return all;
  }

  // The most gangs of gangs_[i..] (none rack-required) placeable from free_.
  int32_t Solve(size_t i) {
    if (i == gangs_.size() || aborted_) return 0;
    std::string key(reinterpret_cast<const char*>(&i), sizeof(i));
    std::vector<int32_t> sorted = free_;
    std::sort(sorted.begin(), sorted.end());
    key.append(reinterpret_cast<const char*>(sorted.data()), sorted.size() * sizeof(int32_t));
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    if (!Explore()) return 0;
    int32_t best = Solve(i + 1);
    const int32_t cap = Bound(i);
    if (best < cap && FitsAlone(gangs_[i])) {
      Distribute(i, AllNodes(), [&] {
        best = std::max(best, 1 + Solve(i + 1));
        return best >= cap || aborted_;
      });
    }
    if (!aborted_) memo_.emplace(std::move(key), best);
    return best;
  }

  // Follows Solve's values from free_: the flags of gangs i.., the free
  // counts and every gang's pods per node of one placement that reaches Solve(i).
  void Reconstruct(size_t i, std::vector<uint8_t>& flags, std::vector<int32_t>& free_out,
                   std::vector<std::vector<PodsOnNode>>& assign_out) {
    if (i == gangs_.size()) {
      free_out = free_;
      assign_out = current_assign_;
      return;
    }
    const int32_t target = Solve(i);
    if (Solve(i + 1) == target) {
      flags[i] = 0;
      Reconstruct(i + 1, flags, free_out, assign_out);
      return;
    }
    flags[i] = 1;
    Distribute(i, AllNodes(), [&] {
      if (1 + Solve(i + 1) != target) return false;
      Reconstruct(i + 1, flags, free_out, assign_out);
      return true;
    });
  }

  // Every count-per-node distribution of gang i's pods over `candidates`,
  // interchangeable nodes (equal free) taking non-increasing counts, kept in
  // current_assign_[i] while `next` runs at each; `next` returns true to
  // stop. Returns whether it was stopped.
  template <typename Next>
  bool Distribute(size_t i, std::vector<size_t> candidates, const Next& next) {
    const PackingGang& gang = gangs_[i];
    std::vector<PodsOnNode>& where = current_assign_[i];
    const int32_t p = PerPod(gang);
    std::erase_if(candidates, [&](size_t n) { return free_[n] < p; });
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](size_t a, size_t b) { return free_[a] > free_[b]; });
    std::vector<int64_t> suffix(candidates.size() + 1, 0);
    for (size_t k = candidates.size(); k-- > 0;)
      suffix[k] = suffix[k + 1] + free_[candidates[k]] / p;
    std::vector<int32_t> class_free(candidates.size());
    for (size_t k = 0; k < candidates.size(); ++k) class_free[k] = free_[candidates[k]];
    auto rec = [&](auto& self, size_t pos, int32_t remaining, int32_t previous) -> bool {
      if (aborted_) return true;
      if (remaining == 0) return next();
      if (pos == candidates.size() || suffix[pos] < remaining) return false;
      const size_t n = candidates[pos];
      int32_t cap = std::min(free_[n] / p, remaining);
      if (pos > 0 && class_free[pos] == class_free[pos - 1]) cap = std::min(cap, previous);
      for (int32_t c = cap; c >= 0; --c) {
        free_[n] -= c * p;
        if (c > 0) where.push_back({static_cast<int32_t>(n), c});
        const bool stop = self(self, pos + 1, remaining - c, c);
        if (c > 0) where.pop_back();
        free_[n] += c * p;
        if (stop) return true;
      }
      return false;
    };
    return rec(rec, 0, gang.pods, gang.pods);
  }

  std::span<const PackingNode> nodes_;
  std::span<const PackingGang> input_;
  uint64_t budget_;
  std::chrono::steady_clock::time_point deadline_;
  int32_t racks_;
  size_t first_free_ = 0;  // search position of the first gang without a rack
  // Solve: (position, sorted free counts) -> gangs.
  std::unordered_map<std::string, int32_t> memo_;
  std::vector<size_t> order_;       // search position -> input index
  std::vector<PackingGang> gangs_;  // in search order
  std::vector<int32_t> free_;
  std::vector<uint8_t> current_;
  std::vector<std::vector<PodsOnNode>> current_assign_;  // per search position
  int32_t best_ = 0;
  std::vector<std::vector<PodsOnNode>> best_assign_;
  std::vector<uint8_t> best_placed_;
  std::vector<int32_t> best_free_;
  uint64_t explored_ = 0;
  bool aborted_ = false;
};

}  // namespace

PackingResult OptimalGangs(std::span<const PackingNode> nodes, std::span<const PackingGang> gangs,
                           uint64_t budget, std::chrono::steady_clock::time_point deadline) {
  return Search(nodes, gangs, budget, deadline).Run();
}

PackingResult FirstFitGangs(std::span<const PackingNode> nodes,
                            std::span<const PackingGang> gangs) {
  PackingResult out;
  out.free.resize(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) out.free[n] = std::max<int32_t>(0, nodes[n].free);
  out.placed.assign(gangs.size(), 0);
  out.assignment.resize(gangs.size());
  const int32_t racks = NumRacks(nodes);
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (FirstFitGang(nodes, out.free, gangs[g], racks, out.assignment[g])) {
      out.placed[g] = 1;
      ++out.gangs;
    }
  }
  return out;
}

int64_t StrandedCapacity(std::span<const int64_t> node_free,
                         std::span<const int64_t> pending_requests) noexcept {
  if (pending_requests.empty()) return 0;
  const int64_t smallest = *std::min_element(pending_requests.begin(), pending_requests.end());
  int64_t stranded = 0;
  for (int64_t f : node_free) {
    if (f > 0 && f < smallest) stranded += f;
  }
  return stranded;
}

}  // namespace copse::topology
