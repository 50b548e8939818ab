#pragma once
// IndexedHeap: a binary heap of pointers whose items remember their position
// (an intrusive `heap_index` member), so that erase and re-key are O(log n)
// without a side map. Top() is the item that goes first under `Less`
// (Less(a, b): a before b).
//
// Algorithm:
//   1. Push appends and sifts up; Pop swaps the last item into the root and
//      sifts down; every move writes the item's new position to heap_index.
//   2. Erase(item) moves the last item into item's slot and sifts it up or
//      down; Fix(item) does the same after the item's ordering key changed.
//
// Allocation: only the backing vector grows (amortised); no per-operation
// allocation once it has reached its high-water mark.
// Thread-safety: none; the owner synchronises.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "core/check.h"

namespace copse::queue {

template <typename T, typename Less>
class IndexedHeap {
 public:
  explicit IndexedHeap(Less less = Less()) : less_(std::move(less)) {}

  bool empty() const noexcept { return items_.empty(); }
  size_t size() const noexcept { return items_.size(); }
  T* Top() const noexcept { return items_.empty() ? nullptr : items_.front(); }
  std::span<T* const> items() const noexcept { return items_; }

  void Push(T* item) {
    item->heap_index = items_.size();
    items_.push_back(item);
    SiftUp(items_.size() - 1);
  }

  T* Pop() noexcept {
    if (items_.empty()) return nullptr;
    T* top = items_.front();
    RemoveAt(0);
    return top;
  }

  void Erase(T* item) noexcept {
    COPSE_CHECK(item->heap_index < items_.size() && items_[item->heap_index] == item)
        << "item not in this heap";
    RemoveAt(item->heap_index);
  }

  void Fix(T* item) noexcept {
    COPSE_CHECK(item->heap_index < items_.size() && items_[item->heap_index] == item)
        << "item not in this heap";
    if (!SiftUp(item->heap_index)) SiftDown(item->heap_index);
  }

 private:
  void RemoveAt(size_t i) noexcept {
    const size_t last = items_.size() - 1;
    if (i != last) {
      items_[i] = items_[last];
      items_[i]->heap_index = i;
    }
    items_.pop_back();
    if (i < items_.size() && !SiftUp(i)) SiftDown(i);
  }

  // True when the item moved.
  bool SiftUp(size_t i) noexcept {
    T* item = items_[i];
    const size_t start = i;
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!less_(*item, *items_[parent])) break;
      items_[i] = items_[parent];
      items_[i]->heap_index = i;
      i = parent;
    }
    items_[i] = item;
    item->heap_index = i;
    return i != start;
  }

  void SiftDown(size_t i) noexcept {
    T* item = items_[i];
    const size_t n = items_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less_(*items_[child + 1], *items_[child])) ++child;
      if (!less_(*items_[child], *item)) break;
      items_[i] = items_[child];
      items_[i]->heap_index = i;
      i = child;
    }
    items_[i] = item;
    item->heap_index = i;
  }

  std::vector<T*> items_;
  Less less_;
};

}  // namespace copse::queue
