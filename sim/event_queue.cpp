#include "sim/event_queue.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/error.h"

namespace npusim::sim {

TimeNs us_to_ns(double us) {
  // 9.2e12 µs is about 106 days of simulated time: far beyond any run, and still exact in int64.
  NPUSIM_CHECK(std::isfinite(us) && us >= 0 && us < 9.2e12);
  return static_cast<TimeNs>(std::llround(us * 1e3));
}

EventHandle EventQueue::push(TimeNs time_ns, std::int32_t priority, EventTarget* target,
                             std::uint32_t kind, std::uint64_t payload) {
  NPUSIM_CHECK(priority >= -32768 && priority <= 32767 && next_seq_ <= kSeqMask);
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot] = Slot{seq, target, payload, kind, priority};
  const std::uint64_t order = (static_cast<std::uint64_t>(priority + 32768) << 48) | seq;
  heap_.push_back(Key{time_ns, order, slot});
  sift_up(heap_.size() - 1);
  ++live_;
  return EventHandle{slot, seq};
}

bool EventQueue::pending(EventHandle h) const noexcept {
  return h.seq != 0 && h.slot < slots_.size() && slots_[h.slot].seq == h.seq;
}

bool EventQueue::cancel(EventHandle h) noexcept {
  if (!pending(h)) return false;
  slots_[h.slot].seq = 0;
  free_slots_.push_back(h.slot);
  --live_;
  return true;
}

bool EventQueue::pop_until(TimeNs until_ns, Event& out) {
  while (!heap_.empty()) {
    const Key top = heap_.front();
    if (stale(top)) {
      pop_top();
      continue;
    }
    if (top.time_ns > until_ns) return false;
    Slot& s = slots_[top.slot];
    out.time_ns = top.time_ns;
    out.priority = s.priority;
    out.slot = top.slot;
    out.seq = s.seq;
    out.target = s.target;
    out.kind = s.kind;
    out.payload = s.payload;
    pop_top();
    s.seq = 0;
    free_slots_.push_back(top.slot);
    --live_;
    // Cancel-heavy workloads leave stale entries deep in the heap; rebuild before they dominate.
    if (heap_.size() > 64 && heap_.size() > 4 * (live_ + 1)) compact();
    return true;
  }
  return false;
}

TimeNs EventQueue::next_time() {
  while (!heap_.empty() && stale(heap_.front())) pop_top();
  return heap_.empty() ? kTimeNever : heap_.front().time_ns;
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
