#pragma once
// The capacity search's prediction of a run's over-target count at another rate from the
// per-request times of a run that ended (sim/capacity.h). Every rate sees the same arrival
// sequence scaled, so the requests that cross the target as the rate rises are mostly those that
// were closest to it: a request's latency is its service plus its wait (batching window, ready
// queue), and the waits grow with the load. The model scales every wait by one factor
// s(r) = (r / r0)^p, r0 the run's rate, and counts the requests whose service + s x wait exceeds
// the target. The exponent is fitted to the other runs' counts (sim/capacity.cpp).

#include <cstdint>
#include <map>
#include <vector>

#include "sim/card_sim.h"

namespace npusim::sim {

/// One run's measured requests as the count prediction needs them.
class CountModel {
 public:
  /// `times`: SimRun::measured_times() of a run that ended at `rate_qps`; `limit_ns`: the
  /// target's latency limit (latency_limit_ns).
  CountModel(const std::vector<SimRun::RequestTimes>& times, double rate_qps, TimeNs limit_ns);

  /// Requests among the first `m` (arrival order) whose service + s x wait exceeds the limit.
  /// At s = 1 and m = all, the run's own over-count exactly.
  [[nodiscard]] std::int64_t count(std::int64_t m, double s) const;
  [[nodiscard]] std::int64_t requests() const {
    return static_cast<std::int64_t>(threshold_.size());
  }
  [[nodiscard]] double rate_qps() const { return rate_qps_; }

  /// The factor on the waits at `rate`: (rate / rate_qps())^exponent times a queue's
  /// (ceiling - rate_qps()) / (ceiling - rate), infinite at or above the ceiling.
  [[nodiscard]] double wait_scale(double rate, double exponent) const;
  /// The throughput ceiling of the queue law (the probes'); none: infinite.
  void set_ceiling(double ceiling_qps) { ceiling_qps_ = ceiling_qps; }

 private:
  double rate_qps_;
  double ceiling_qps_ = 0;
  // Per request (arrival order): the least wait factor at which it exceeds the limit (-inf: its
  // service alone does; +inf: never, it did not wait).
  std::vector<double> threshold_;
  // The thresholds of the first m requests, sorted, by m (a search asks for a few prefixes).
  mutable std::map<std::int64_t, std::vector<double>> sorted_;
};

/// A run's over-count seen at `rate_qps` among its first `m` measured requests.
struct CountSeen {
  double rate_qps = 0;
  std::int64_t m = 0;
  std::int64_t count = 0;
};

/// The exponent with which `model` best reproduces the counts `seen` (least squares in log count,
/// each weighted by its count: the Poisson noise of a log count is 1 / count); `fallback` when
/// nothing is seen. Scanned in steps, the middle of the best ones.
[[nodiscard]] double fit_exponent(const CountModel& model, const std::vector<CountSeen>& seen,
                                  double fallback);

}  // namespace npusim::sim
