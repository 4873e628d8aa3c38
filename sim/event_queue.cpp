#include "sim/event_queue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "model/error.h"

namespace npusim::sim {

TimeNs us_to_ns(double us) {
  NPUSIM_CHECK(std::isfinite(us) && us >= 0 && us < kMaxTimeUs);
  return static_cast<TimeNs>(std::llround(us * 1e3));
}

bool EventQueue::pop_heap_until(TimeNs until_ns, Event& out) {
  while (has_keys()) {
    const Key top = front();
    if (stale(top)) {
      pop_front();
      continue;
    }
    if (top.time > biased(until_ns)) return false;
    read_event(top, out);
    pop_front();
    free_slot(top.slot);
    --live_;
    // Cancel-heavy workloads leave stale entries deep in the heap; rebuild before they dominate.
    if (heap_entries() > kSortedMax && heap_entries() > 4 * (live_ + 1)) compact();
    return true;
  }
  return false;
}

EventQueue::Taken EventQueue::take_heap_until(TimeNs until_ns) {
  while (has_keys()) {
    const Key top = front();
    if (stale(top)) {
      pop_front();
      continue;
    }
    if (top.time > biased(until_ns)) break;
    pop_front();
    free_slot(top.slot);
    --live_;
    if (heap_entries() > kSortedMax && heap_entries() > 4 * (live_ + 1)) compact();
    return Taken{&slots_[top.slot], top.time_ns()};
  }
  return Taken{nullptr, 0};
}

// insert() past its common case: an empty or longer run, no room before the head, or the heap.
void EventQueue::insert_slow(std::uint64_t time, std::uint64_t order, std::uint32_t slot) {
  const Key k{time, order, slot};
  if (sorted_) {
    const std::size_t n = tail_ - head_;
    if (n < kSortedMax) {
      if (n == 0) {
        head_ = tail_ = kBuffer / 2;
        heap_[tail_++] = k;
        heap_[tail_] = kSentinel;
        return;
      }
      if (earlier(k, heap_[head_ + n / 2])) {
        // into the front half: the earlier keys move down by one
        if (head_ == 0) recentre();
        std::size_t i = head_;
        while (earlier(heap_[i], k)) {
          heap_[i - 1] = heap_[i];
          ++i;
        }
        heap_[i - 1] = k;
        --head_;
      } else {
        // into the back half: the later keys move up by one
        if (tail_ == kBuffer) recentre();
        std::size_t i = tail_;
        while (earlier(k, heap_[i - 1])) {
          heap_[i] = heap_[i - 1];
          --i;
        }
        heap_[i] = k;
        ++tail_;
        heap_[tail_] = kSentinel;
      }
      return;
    }
    to_heap();
  }
  heap_.push_back(k);
  sift_up(heap_.size() - 1);
}

TimeNs EventQueue::next_time() {
  while (has_keys() && stale(front())) pop_front();
  return has_keys() ? front().time_ns() : kTimeNever;
}

void EventQueue::recentre() noexcept {
  // The sorted run reached one end of the buffer: move it to the middle (it holds fewer than
  // kSortedMax of kBuffer entries, so both sides get room).
  const std::size_t n = tail_ - head_;
  const std::size_t to = (kBuffer - n) / 2;
  std::memmove(&heap_[to], &heap_[head_], n * sizeof(Key));
  head_ = to;
  tail_ = to + n;
  heap_[tail_] = kSentinel;
}

void EventQueue::to_heap() {
  // A sorted run is a binary min-heap as it stands.
  std::vector<Key> keys(heap_.begin() + static_cast<std::ptrdiff_t>(head_),
                        heap_.begin() + static_cast<std::ptrdiff_t>(tail_));
  heap_.swap(keys);
  head_ = 0;
  tail_ = 0;
  sorted_ = false;
}

void EventQueue::to_sorted() {
  std::sort(heap_.begin(), heap_.end(), earlier);
  const std::size_t n = heap_.size();
  heap_.resize(kBuffer + 1);
  const std::size_t to = (kBuffer - n) / 2;
  std::memmove(&heap_[to], &heap_[0], n * sizeof(Key));
  head_ = to;
  tail_ = to + n;
  heap_[tail_] = kSentinel;
  sorted_ = true;
}

void EventQueue::sift_up(std::size_t i) noexcept {
  const Key k = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(k, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

void EventQueue::sift_down(std::size_t i) noexcept {
  const std::size_t n = heap_.size();
  const Key k = heap_[i];
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    // the earlier child, chosen without a branch (which child wins is data-dependent)
    if (child + 1 < n) child += static_cast<std::size_t>(earlier(heap_[child + 1], heap_[child]));
    if (!earlier(heap_[child], k)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = k;
}

void EventQueue::pop_top() noexcept {
  // Bottom-up deletion: the hole at the root moves down along the earlier child to a leaf (one
  // compare per level), then the last key, which is usually among the latest, rises from there.
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n) child += static_cast<std::size_t>(earlier(heap_[child + 1], heap_[child]));
    heap_[i] = heap_[child];
    i = child;
  }
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(last, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = last;
}

void EventQueue::compact() {
  // Keeps the live keys in their order: a sorted run stays sorted.
  if (sorted_) {
    std::size_t w = head_;
    for (std::size_t r = head_; r < tail_; ++r) {
      if (!stale(heap_[r])) heap_[w++] = heap_[r];
    }
    tail_ = w;
    heap_[tail_] = kSentinel;
    return;
  }
  std::size_t w = 0;
  for (std::size_t r = 0; r < heap_.size(); ++r) {
    if (!stale(heap_[r])) heap_[w++] = heap_[r];
  }
  heap_.resize(w);
  // Floyd's bottom-up heap construction: O(n).
  for (std::size_t i = heap_.size() / 2 + 1; i-- > 0;) {
    if (i < heap_.size()) sift_down(i);
  }
}

}  // namespace npusim::sim
