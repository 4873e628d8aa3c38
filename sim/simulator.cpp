#include "sim/simulator.h"

#include <cmath>

#include "model/error.h"

namespace npusim::sim {

std::uint64_t Simulator::run(TimeNs until_ns) {
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
    // (the arguments are read before the handler runs: its first push() may reuse the slot)
    next.slot->target->on_event(next.slot->kind, next.slot->payload);
  }
  return events_processed_ - before;
}

double Simulator::exponential(double mean) noexcept {
  // 1 - u lies in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01());
}

}  // namespace npusim::sim
