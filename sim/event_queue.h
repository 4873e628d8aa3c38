#pragma once
// The simulator's event queue, ordered by (time, priority, insertion sequence), so two events at
// the same nanosecond always run in the same order (CONVENTIONS.md "Simulator kernel"): a sorted
// run while small, a binary heap when large. Events are plain data routed to an EventTarget by a small integer kind, so scheduling
// never allocates once the heap has grown (no std::function per event).

#include <cstdint>
#include <limits>
#include <vector>

#include "model/error.h"

namespace npusim::sim {

/// Simulated time in integer nanoseconds.
using TimeNs = std::int64_t;
/// The largest representable simulated time ("never").
inline constexpr TimeNs kTimeNever = std::numeric_limits<TimeNs>::max();

/// The longest simulated span, in microseconds (about 106 days): well within int64 nanoseconds
/// and still exact. Inputs that could reach it (arrival rates, trace times) are refused when the
/// scenario is read (sim/scenario.h, min_rate_qps).
inline constexpr double kMaxTimeUs = 9.2e12;

/// Converts model microseconds to simulator nanoseconds, rounding to the nearest nanosecond.
/// The one place where the model's unit meets the simulator's. Throws InternalError on a
/// negative, NaN or out-of-range value (a bug upstream, not user input: inputs are validated).
[[nodiscard]] TimeNs us_to_ns(double us);
/// Nanoseconds to microseconds (for reports).
[[nodiscard]] constexpr double ns_to_us(TimeNs ns) noexcept {
  return static_cast<double>(ns) / 1e3;
}

/// Receives events. `kind` and `payload` are whatever the scheduler passed; the target decides.
class EventTarget {
 public:
  /// Handles one event at the simulator's current time.
  virtual void on_event(std::uint32_t kind, std::uint64_t payload) = 0;

 protected:
  EventTarget() = default;
  EventTarget(const EventTarget&) = default;
  EventTarget& operator=(const EventTarget&) = default;
  ~EventTarget() = default;
};

/// Identifies a scheduled event so it can be cancelled. A default handle refers to nothing.
struct EventHandle {
  std::uint32_t slot = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t seq = 0;  ///< 0 = no event
  /// True when this handle was returned by push() (the event may since have run or been cancelled).
  [[nodiscard]] bool valid() const noexcept { return seq != 0; }
};

/// One event as stored in the heap and handed out by pop().
struct Event {
  TimeNs time_ns = 0;
  std::int32_t priority = 0;  ///< lower runs first among events of the same time
  std::uint32_t slot = 0;
  std::uint64_t seq = 0;  ///< insertion order, unique per queue, starts at 1
  EventTarget* target = nullptr;
  std::uint32_t kind = 0;
  std::uint64_t payload = 0;
};

/// Priority queue of events keyed by (time_ns, priority, seq) with O(1) cancellation. Priorities
/// lie in [-32768, 32767] and a queue takes at most 2^48 events (both checked).
///
/// Two layouts of the keys, chosen by their number; keys are unique, so both pop in exactly the
/// same order. Up to kSortedMax entries (a card's few streams and resources: the usual case) the
/// keys lie sorted ascending in the middle of a fixed buffer: pop takes the head, push compares
/// with the middle key and shifts the keys between the nearer end and the new key's place by
/// one (into the free room on that side). Past that they become a binary heap (a sorted run
/// already is one), and they go back to the sorted layout once fewer than kSortedBack remain.
///
/// Cancellation is lazy: each pending event owns a slot whose stored sequence number identifies
/// it; cancel() clears the slot and pop() discards keys whose slot no longer holds their
/// sequence. The heap is compacted when stale entries outnumber live ones, so re-keying an event
/// many times (fluid bandwidth sharing) keeps memory bounded.
class EventQueue {
 public:
  /// Schedules an event; returns the handle to cancel it.
  EventHandle push(TimeNs time_ns, std::int32_t priority, EventTarget* target, std::uint32_t kind,
                   std::uint64_t payload);
  /// Cancels a pending event. Returns false when it already ran, was cancelled, or `h` is empty.
  bool cancel(EventHandle h) noexcept;
  /// True while `h` refers to an event that has neither run nor been cancelled.
  [[nodiscard]] bool pending(EventHandle h) const noexcept;
  /// Removes the earliest live event into `out`; returns false when there is none.
  bool pop(Event& out) { return pop_until(kTimeNever, out); }
  /// Removes the earliest live event into `out` if it is due at or before `until_ns`; returns
  /// false when there is none (the simulator's loop: one call per event).
  bool pop_until(TimeNs until_ns, Event& out);
  /// Where a pending event's handler and arguments are kept (seq and next_free are the
  /// queue's own). The priority is not stored: it lies in the key's order bits. 32 bytes.
  struct Slot {
    std::uint64_t seq = 0;  ///< seq of the live event holding the slot, 0 = free
    EventTarget* target = nullptr;
    std::uint64_t payload = 0;
    std::uint32_t kind = 0;
    std::uint32_t next_free = 0;  ///< a free slot: the next free slot (kNoSlot: none)
  };
  /// What the simulator's loop needs of the event it runs (two registers).
  struct Taken {
    const Slot* slot;  ///< its handler and arguments (nullptr: no event due); valid until the
                       ///< next push(), which may reuse the slot
    TimeNs time_ns;
  };
  /// pop_until() for the simulator's loop: removes the earliest live event due at or before
  /// `until_ns` and hands out only what the loop reads.
  Taken take_until(TimeNs until_ns);
  /// Events pushed so far (cancelled ones included).
  [[nodiscard]] std::uint64_t pushed() const noexcept { return next_seq_ - 1; }
  /// Time of the earliest live event, or kTimeNever when empty (drops stale entries on the way).
  [[nodiscard]] TimeNs next_time();
  /// Live (not cancelled, not yet run) events.
  [[nodiscard]] std::size_t size() const noexcept { return live_; }
  /// True when no live event is pending.
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
  /// Entries in the heap including cancelled ones not yet discarded (for tests and benchmarks).
  [[nodiscard]] std::size_t heap_entries() const noexcept {
    return sorted_ ? tail_ - head_ : heap_.size();
  }

 private:
  // The heap holds small keys only; what an event carries stays in its slot. A key orders by
  // time, then by `order` = (priority + 2^15) << 48 | seq, so one integer compare settles
  // priority and insertion order.
  // The time is kept with its sign bit flipped (biased(): unsigned order = signed order), so
  // (time, order) is one 128-bit unsigned number and a compare is a subtract-with-borrow, no
  // branch to mispredict and no flip per compare.
  struct Key {
    std::uint64_t time;  ///< biased(time_ns)
    std::uint64_t order;
    std::uint32_t slot;
    [[nodiscard]] TimeNs time_ns() const noexcept { return unbiased(time); }
  };
  [[nodiscard]] static constexpr std::uint64_t biased(TimeNs t) noexcept {
    return static_cast<std::uint64_t>(t) ^ (std::uint64_t{1} << 63);
  }
  [[nodiscard]] static constexpr TimeNs unbiased(std::uint64_t b) noexcept {
    return static_cast<TimeNs>(b ^ (std::uint64_t{1} << 63));
  }
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 48) - 1;
  __extension__ using U128 = unsigned __int128;
  [[nodiscard]] static U128 wide(const Key& k) noexcept {
    return (static_cast<U128>(k.time) << 64) | k.order;
  }
  // Stands at heap_[tail_] in the sorted layout, later than every key (nothing is earlier than
  // it), so the scans from the head need no bound check.
  static constexpr Key kSentinel{~std::uint64_t{0}, ~std::uint64_t{0}, 0};
  [[nodiscard]] static bool earlier(const Key& a, const Key& b) noexcept {
    return wide(a) < wide(b);
  }
  [[nodiscard]] bool stale(const Key& k) const noexcept {
    return slots_[k.slot].seq != (k.order & kSeqMask);
  }
  // The sorted layout holds at most kSortedMax keys in a buffer of kBuffer; the heap goes back
  // to it below kSortedBack.
  static constexpr std::size_t kSortedMax = 64;
  static constexpr std::size_t kSortedBack = 16;
  // Up to this many keys insert() scans from the head; past it, from the nearer end.
  static constexpr std::size_t kScanMax = 8;
  static constexpr std::size_t kBuffer = 4 * kSortedMax;
  [[nodiscard]] bool has_keys() const noexcept { return sorted_ ? tail_ > head_ : !heap_.empty(); }
  [[nodiscard]] const Key& front() const noexcept { return heap_[head_]; }
  void insert(const Key& k);
  // (the key's fields as scalars: they stay in registers rather than go through memory)
  void insert_slow(std::uint64_t time, std::uint64_t order, std::uint32_t slot);
  void free_slot(std::uint32_t slot) noexcept;
  /// The event a live key stands for, as pop_until hands it out.
  void read_event(const Key& k, Event& out) const noexcept;
  bool pop_heap_until(TimeNs until_ns, Event& out);
  Taken take_heap_until(TimeNs until_ns);
  void pop_front();
  void recentre() noexcept;
  void to_heap();
  void to_sorted();
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;
  void pop_top() noexcept;
  void compact();

  // The keys: sorted ascending in heap_[head_, tail_) of kBuffer entries (sorted_), else a
  // binary heap in all of heap_ with head_ == 0.
  // (kBuffer + 1 entries: the sentinel's place when the run ends at kBuffer)
  std::vector<Key> heap_ = std::vector<Key>(kBuffer + 1, kSentinel);
  std::size_t head_ = kBuffer / 2;
  std::size_t tail_ = kBuffer / 2;
  bool sorted_ = true;
  std::vector<Slot> slots_;
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  std::uint32_t free_head_ = kNoSlot;  // the free slots, last freed first, linked by next_free
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;
};

// The per-event paths, inline: the simulator's loop runs them once per event.

// Inlined into every caller (always): as a call it cost a prologue and epilogue saving six
// registers, a sixth of its work; a handler's few pushes keep their values in its frame.
[[gnu::always_inline]] inline EventHandle EventQueue::push(TimeNs time_ns, std::int32_t priority,
                                                           EventTarget* target, std::uint32_t kind,
                                                           std::uint64_t payload) {
  // priority in [-32768, 32767], one unsigned compare
  NPUSIM_CHECK(static_cast<std::uint32_t>(priority + 32768) <= 0xFFFFU && next_seq_ <= kSeqMask);
  std::uint32_t slot = free_head_;
  if (slot != kNoSlot) {
    free_head_ = slots_[slot].next_free;
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  Slot& s = slots_[slot];
  s.seq = seq;
  s.target = target;
  s.payload = payload;
  s.kind = kind;
  const std::uint64_t order = (static_cast<std::uint64_t>(priority + 32768) << 48) | seq;
  insert(Key{biased(time_ns), order, slot});
  ++live_;
  return EventHandle{slot, seq};
}

inline bool EventQueue::pending(EventHandle h) const noexcept {
  return h.seq != 0 && h.slot < slots_.size() && slots_[h.slot].seq == h.seq;
}

inline bool EventQueue::cancel(EventHandle h) noexcept {
  if (!pending(h)) return false;
  free_slot(h.slot);
  --live_;
  return true;
}

[[gnu::always_inline]] inline void EventQueue::insert(const Key& k) {
  // The usual case: a short sorted run (a card's streams keep a handful of events pending) and
  // a new key that lands next to the head (measured on the default scenario: 60 % at the
  // second place, 94 % within the first four). Scanned from the head, the earlier keys move
  // down by one; longer runs and the rare cases go to insert_slow().
  const std::size_t n = tail_ - head_;
  // (the heap layout keeps head_ == tail_ == 0, so n - 1 < kScanMax also says "sorted")
  if (n - 1 < kScanMax && head_ > 0) {
    std::size_t i = head_;
    while (earlier(heap_[i], k)) {  // the sentinel at tail_ stops it
      heap_[i - 1] = heap_[i];
      ++i;
    }
    heap_[i - 1] = k;
    --head_;
    return;
  }
  insert_slow(k.time, k.order, k.slot);
}

inline void EventQueue::pop_front() {
  if (sorted_) {
    ++head_;
    return;
  }
  pop_top();
  if (heap_.size() < kSortedBack) to_sorted();
}

inline void EventQueue::free_slot(std::uint32_t slot) noexcept {
  Slot& s = slots_[slot];
  s.seq = 0;
  s.next_free = free_head_;
  free_head_ = slot;
}

inline void EventQueue::read_event(const Key& k, Event& out) const noexcept {
  const Slot& s = slots_[k.slot];
  out.time_ns = k.time_ns();
  out.priority = static_cast<std::int32_t>(k.order >> 48) - 32768;
  out.slot = k.slot;
  out.seq = s.seq;
  out.target = s.target;
  out.kind = s.kind;
  out.payload = s.payload;
}

inline bool EventQueue::pop_until(TimeNs until_ns, Event& out) {
  if (!sorted_) return pop_heap_until(until_ns, out);
  // The sorted run (it never holds enough stale keys to need compact()).
  while (head_ < tail_) {
    const Key& top = heap_[head_];
    if (slots_[top.slot].seq != (top.order & kSeqMask)) {  // cancelled
      ++head_;
      continue;
    }
    if (top.time > biased(until_ns)) return false;
    ++head_;
    read_event(top, out);
    free_slot(out.slot);
    --live_;
    return true;
  }
  return false;
}

inline EventQueue::Taken EventQueue::take_until(TimeNs until_ns) {
  // The heap layout keeps head_ == tail_ == 0, so it skips this loop and takes the heap's way
  // below: the sorted layout, the usual one, pays no test of the layout.
  while (head_ < tail_) {
    const Key& top = heap_[head_];
    Slot& s = slots_[top.slot];
    if (s.seq != (top.order & kSeqMask)) {  // cancelled
      ++head_;
      continue;
    }
    if (top.time > biased(until_ns)) break;
    ++head_;
    s.seq = 0;
    s.next_free = free_head_;
    free_head_ = top.slot;
    --live_;
    return Taken{&s, top.time_ns()};
  }
  if (!sorted_) return take_heap_until(until_ns);
  return Taken{nullptr, 0};
}

}  // namespace npusim::sim
