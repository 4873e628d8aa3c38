#include "sim/simulator.h"

#include <cmath>

#include "model/error.h"

namespace npusim::sim {

std::uint64_t Simulator::run(TimeNs until_ns) {
  stop_ = false;
  std::uint64_t processed = 0;
  Event e;
  while (!stop_) {
    if (!queue_.pop_until(until_ns, e)) break;
    // The loop refuses time going backwards: with schedule_at() checking, this can only fire on
    // a kernel bug, and it must not pass silently.
    NPUSIM_CHECK(e.time_ns >= now_ns_);
    now_ns_ = e.time_ns;
    ++processed;
    ++stats_.events_processed;
    e.target->on_event(e.kind, e.payload);
  }
  return processed;
}

double Simulator::exponential(double mean) noexcept {
  // 1 - u lies in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01());
}

}  // namespace npusim::sim
