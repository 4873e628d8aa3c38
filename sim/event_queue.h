#pragma once
// The simulator's event queue: a binary heap ordered by (time, priority, insertion sequence), so
// two events at the same nanosecond always run in the same order (CONVENTIONS.md "Simulator
// kernel"). Events are plain data routed to an EventTarget by a small integer kind, so scheduling
// never allocates once the heap has grown (no std::function per event).

#include <cstdint>
#include <limits>
#include <vector>

namespace npusim::sim {

/// Simulated time in integer nanoseconds.
using TimeNs = std::int64_t;
/// The largest representable simulated time ("never").
inline constexpr TimeNs kTimeNever = std::numeric_limits<TimeNs>::max();

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

/// Min-heap of events keyed by (time_ns, priority, seq) with O(1) cancellation. Priorities lie in
/// [-32768, 32767] and a queue takes at most 2^48 events (both checked).
///
/// Cancellation is lazy: each pending event owns a slot whose stored sequence number identifies
/// it; cancel() clears the slot and pop() discards heap entries whose slot no longer holds their
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
  /// Time of the earliest live event, or kTimeNever when empty (drops stale entries on the way).
  [[nodiscard]] TimeNs next_time();
  /// Live (not cancelled, not yet run) events.
  [[nodiscard]] std::size_t size() const noexcept { return live_; }
  /// True when no live event is pending.
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
  /// Entries in the heap including cancelled ones not yet discarded (for tests and benchmarks).
  [[nodiscard]] std::size_t heap_entries() const noexcept { return heap_.size(); }

 private:
  // The heap holds small keys only; what an event carries stays in its slot. A key orders by
  // time, then by `order` = (priority + 2^15) << 48 | seq, so one integer compare settles
  // priority and insertion order.
  struct Key {
    TimeNs time_ns;
    std::uint64_t order;
    std::uint32_t slot;
  };
  struct Slot {
    std::uint64_t seq = 0;  ///< seq of the live event holding the slot, 0 = free
    EventTarget* target = nullptr;
    std::uint64_t payload = 0;
    std::uint32_t kind = 0;
    std::int32_t priority = 0;
  };
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 48) - 1;
  // (time, order) as one 128-bit unsigned number (the sign bit of time flipped to keep its
  // order): the compare compiles to a subtract-with-borrow, no branch to mispredict.
  __extension__ using U128 = unsigned __int128;
  [[nodiscard]] static U128 wide(const Key& k) noexcept {
    return (static_cast<U128>(static_cast<std::uint64_t>(k.time_ns) ^ (std::uint64_t{1} << 63))
            << 64) |
           k.order;
  }
  [[nodiscard]] static bool earlier(const Key& a, const Key& b) noexcept {
    return wide(a) < wide(b);
  }
  [[nodiscard]] bool stale(const Key& k) const noexcept {
    return slots_[k.slot].seq != (k.order & kSeqMask);
  }
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;
  void pop_top() noexcept;
  void compact();

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;
};

}  // namespace npusim::sim
