#include "sim/simulator.h"

#include <cmath>

#include "model/error.h"

namespace npusim::sim {

std::uint64_t Simulator::run(TimeNs until_ns) {
  return run_loop(until_ns,
                  [](const EventQueue::Slot& e) { e.target->on_event(e.kind, e.payload); });
}

double Simulator::exponential(double mean) noexcept {
  // 1 - u lies in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01());
}

}  // namespace npusim::sim
