#pragma once
// The capacity search's prediction of a run's over-target count at another rate from the
// per-request times of a run that ended (sim/capacity.h). Every rate sees the same arrival
// sequence scaled, so the requests that cross the target as the rate rises are mostly those that
// were closest to it, in the busy stretches that lengthen. The run's batches (requests that
// started and completed together) are replayed as jobs of a first-come-first-served queue with
// one server per stream: each keeps its measured service time and the hold between its last
// member's arrival and its start that no busy stream explains (the batching window, the PCIe
// copy), and its release moves with the arrivals, which at rate r lie at r0 / r of their times.
// A request's latency at r is its measured latency plus the change the replay gives its start,
// less the change of its own arrival; the count at r is that of the latencies over the target.
// At the run's own rate the replay changes nothing: its count exactly.

#include <cstdint>
#include <vector>

#include "sim/card_sim.h"

namespace npusim::sim {

/// One ended run's measured requests and batches, as the count prediction replays them.
class CountModel {
 public:
  /// `times`: SimRun::measured_times() of a run that ended at `rate_qps` on `servers` streams;
  /// `limit_ns`: the target's latency limit (latency_limit_ns).
  CountModel(const std::vector<SimRun::RequestTimes>& times, double rate_qps, TimeNs limit_ns,
             int servers);

  /// The predicted over-target count of the full run at `rate_qps`.
  [[nodiscard]] std::int64_t count(double rate_qps) const;
  [[nodiscard]] double rate_qps() const { return rate_qps_; }

 private:
  struct Job {
    double release = 0;  // last member's arrival, ns
    double hold = 0;     // start - max(release, a stream free) at the run's rate, >= 0
    double service = 0;  // start to completion, ns
    double start = 0;    // the replay's start at the run's own rate
    std::uint32_t first = 0;  // into members_
    std::uint32_t count = 0;
  };
  // The replay's start of every job with arrivals at x times their measured times.
  void replay(double x, std::vector<double>& start) const;

  double rate_qps_;
  double limit_ns_;
  int servers_;
  std::vector<Job> jobs_;  // by measured start
  std::vector<std::uint32_t> members_;
  std::vector<double> arrival_;  // per request, ns
  std::vector<double> latency_;  // per request, ns
};

}  // namespace npusim::sim
