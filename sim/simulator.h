#pragma once
// The discrete-event kernel: one Simulator object owns the clock, the event queue, the random
// number generator (seeded from the scenario) and the kernel's counters. No globals and no wall
// clock, so a sweep can run many simulations on many threads in one process and each run is a
// pure function of its inputs and seed.

#include <cstdint>
#include <random>

#include "sim/event_queue.h"

namespace npusim::sim {

/// Counters the kernel keeps about itself.
struct KernelStats {
  std::uint64_t events_scheduled = 0;
  std::uint64_t events_processed = 0;
  std::uint64_t events_cancelled = 0;
};

/// Clock + queue + RNG. Events scheduled in the past are refused (InternalError).
class Simulator {
 public:
  /// `seed` seeds the std::mt19937_64 every random draw of the run comes from.
  explicit Simulator(std::uint64_t seed) : rng_(seed) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Current simulated time.
  [[nodiscard]] TimeNs now() const noexcept { return now_ns_; }

  /// Schedules `target->on_event(kind, payload)` at absolute time `at_ns` (>= now()).
  /// Among events of the same time, lower `priority` runs first, then insertion order.
  /// (Inlined into every caller, as EventQueue::push() is.)
  [[gnu::always_inline]] EventHandle schedule_at(TimeNs at_ns, EventTarget* target,
                                                 std::uint32_t kind, std::uint64_t payload = 0,
                                                 std::int32_t priority = 0) {
    NPUSIM_CHECK(at_ns >= now_ns_);
    NPUSIM_CHECK(target != nullptr);
    return queue_.push(at_ns, priority, target, kind, payload);
  }
  /// Schedules after `delay_ns` (>= 0) from now().
  [[gnu::always_inline]] EventHandle schedule_in(TimeNs delay_ns, EventTarget* target,
                                                 std::uint32_t kind, std::uint64_t payload = 0,
                                                 std::int32_t priority = 0) {
    return schedule_at(now_ns_ + delay_ns, target, kind, payload, priority);
  }
  /// Cancels a pending event; false when it already ran or was cancelled.
  bool cancel(EventHandle h) noexcept {
    const bool was_pending = queue_.cancel(h);
    if (was_pending) ++events_cancelled_;
    return was_pending;
  }
  /// True while `h` is scheduled and not yet run or cancelled.
  [[nodiscard]] bool pending(EventHandle h) const noexcept { return queue_.pending(h); }

  /// Runs events in (time, priority, sequence) order until the queue is empty, stop() is
  /// called, or the next event lies after `until_ns` (events at exactly `until_ns` run).
  /// Returns the number of events processed by this call. Throws InternalError if an event
  /// would move time backwards.
  std::uint64_t run(TimeNs until_ns = kTimeNever);
  /// run() for a model whose events mostly go to one target `owner`: those are handed to
  /// `owner.handle_event(kind, payload)` (what its on_event() does, defined inline so that the
  /// switch over kinds joins the loop), the others to their on_event(). The same events in the
  /// same order as run(). Instantiate it where T::handle_event() is defined.
  template <class T>
  std::uint64_t run_for(T& owner, TimeNs until_ns = kTimeNever);
  /// Makes run() return after the event being handled.
  void stop() noexcept { stop_ = true; }

  /// The run's random number generator.
  [[nodiscard]] std::mt19937_64& rng() noexcept { return rng_; }
  /// A uniform double in [0, 1) from 53 random bits (portable, unlike std distributions).
  [[nodiscard]] double uniform01() noexcept {
    return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  }
  /// An exponential variate of the given mean (inverse transform; portable across libraries).
  [[nodiscard]] double exponential(double mean) noexcept;

  /// The kernel's counters.
  [[nodiscard]] KernelStats stats() const noexcept {
    return KernelStats{queue_.pushed(), events_processed_, events_cancelled_};
  }
  /// Live events waiting in the queue.
  [[nodiscard]] std::size_t pending_events() const noexcept { return queue_.size(); }

 private:
  // The loop of run() and run_for(): `handle(slot)` runs the event in the slot.
  template <class Handle>
  std::uint64_t run_loop(TimeNs until_ns, Handle handle);

  TimeNs now_ns_ = 0;
  bool stop_ = false;
  EventQueue queue_;
  std::mt19937_64 rng_;
  std::uint64_t events_processed_ = 0;
  std::uint64_t events_cancelled_ = 0;
};

template <class Handle>
std::uint64_t Simulator::run_loop(TimeNs until_ns, Handle handle) {
  stop_ = false;
  const std::uint64_t before = events_processed_;
  while (!stop_) {
    const EventQueue::Taken next = queue_.take_until(until_ns);
    if (next.slot == nullptr) break;
    // The loop refuses time going backwards: with schedule_at() checking, this can only fire on
    // a kernel bug, and it must not pass silently.
    NPUSIM_CHECK(next.time_ns >= now_ns_);
    now_ns_ = next.time_ns;
    ++events_processed_;
    // (the handler gets the arguments read before it runs: its first push() may reuse the slot)
    handle(*next.slot);
  }
  return events_processed_ - before;
}

template <class T>
std::uint64_t Simulator::run_for(T& owner, TimeNs until_ns) {
  EventTarget* const direct = &owner;
  return run_loop(until_ns, [&owner, direct](const EventQueue::Slot& e) {
    if (e.target == direct) {
      owner.handle_event(e.kind, e.payload);
    } else {
      e.target->on_event(e.kind, e.payload);
    }
  });
}

}  // namespace npusim::sim
