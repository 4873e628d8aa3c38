#include "sim/event_queue.h"

#include <cmath>
#include <utility>

#include "model/error.h"

namespace npusim::sim {

namespace {

// Strict (time, priority, seq) order; seq is unique, so no two events compare equal and the
// order of a run never depends on the heap's internal layout.
inline bool earlier(const Event& a, const Event& b) noexcept {
  if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
  if (a.priority != b.priority) return a.priority < b.priority;
  return a.seq < b.seq;
}

}  // namespace

TimeNs us_to_ns(double us) {
  // 9.2e12 µs is about 106 days of simulated time: far beyond any run, and still exact in int64.
  NPUSIM_CHECK(std::isfinite(us) && us >= 0 && us < 9.2e12);
  return static_cast<TimeNs>(std::llround(us * 1e3));
}

EventHandle EventQueue::push(TimeNs time_ns, std::int32_t priority, EventTarget* target,
                             std::uint32_t kind, std::uint64_t payload) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slot_seq_.size());
    slot_seq_.push_back(0);
  }
  const std::uint64_t seq = next_seq_++;
  slot_seq_[slot] = seq;
  heap_.push_back(Event{time_ns, priority, slot, seq, target, kind, payload});
  sift_up(heap_.size() - 1);
  ++live_;
  return EventHandle{slot, seq};
}

bool EventQueue::pending(EventHandle h) const noexcept {
  return h.seq != 0 && h.slot < slot_seq_.size() && slot_seq_[h.slot] == h.seq;
}

bool EventQueue::cancel(EventHandle h) noexcept {
  if (!pending(h)) return false;
  slot_seq_[h.slot] = 0;
  free_slots_.push_back(h.slot);
  --live_;
  return true;
}

bool EventQueue::pop(Event& out) {
  while (!heap_.empty()) {
    if (stale(heap_.front())) {
      pop_top();
      continue;
    }
    out = heap_.front();
    pop_top();
    slot_seq_[out.slot] = 0;
    free_slots_.push_back(out.slot);
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
  Event e = std::move(heap_[i]);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = std::move(heap_[parent]);
    i = parent;
  }
  heap_[i] = std::move(e);
}

void EventQueue::sift_down(std::size_t i) noexcept {
  const std::size_t n = heap_.size();
  Event e = std::move(heap_[i]);
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], e)) break;
    heap_[i] = std::move(heap_[child]);
    i = child;
  }
  heap_[i] = std::move(e);
}

void EventQueue::pop_top() noexcept {
  heap_.front() = std::move(heap_.back());
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::compact() {
  std::size_t w = 0;
  for (std::size_t r = 0; r < heap_.size(); ++r) {
    if (!stale(heap_[r])) heap_[w++] = heap_[r];
  }
  heap_.resize(w);
  // Floyd's bottom-up heap construction: O(n).
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
}

}  // namespace npusim::sim
