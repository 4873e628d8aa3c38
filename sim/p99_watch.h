#pragma once
// The exact early verdict on "P99 of the measured latencies <= target.p99_ms". The report's P99 is
// the nearest-rank value: with n measured requests it is the rank-th smallest latency, rank =
// ceil(0.99 n). It exceeds the target exactly when at least n - rank + 1 latencies do, so once
// that many measured requests are known to exceed it, no later completion can change the verdict.
// A request is known to exceed the target when it completed above it, or when it is still in
// flight and already older than the target (its latency can only grow). The capacity search
// stops a run there (sim/capacity.h); the verdict is the one the full run would give.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"

namespace npusim::sim {

/// The 1-based nearest rank of the quantile `p` among `n` sorted values: ceil(p n) clamped to
/// [1, n] (n > 0). The one definition the report's percentiles and the P99 watch share.
[[nodiscard]] std::size_t nearest_rank(std::size_t n, double p);

/// The largest latency in nanoseconds that still meets `target_ms` as the report compares it
/// (latency_ns / 1e6 <= target_ms in doubles); a latency above it misses the target.
[[nodiscard]] TimeNs latency_limit_ns(double target_ms);

/// Counts the measured requests known to exceed the P99 target while a run is in progress.
class P99Watch {
 public:
  /// `measured` requests will be measured (> 0); `target_ms` is target.p99_ms.
  P99Watch(std::int64_t measured, double target_ms);

  /// The next measured request (in arrival order) arrived at `at_ns`.
  void arrived(TimeNs at_ns);
  /// Measured request `i` (0-based among the measured, in arrival order) completed.
  void completed(std::int64_t i, TimeNs latency_ns);
  /// At `now_ns`: in-flight measured requests older than the limit are counted as over.
  void age(TimeNs now_ns);

  /// True once the full run's P99 must exceed the target, whatever happens next.
  [[nodiscard]] bool settled_over() const noexcept { return over_ >= over_needed_; }
  /// Measured requests known to exceed the target.
  [[nodiscard]] std::int64_t over() const noexcept { return over_; }
  /// Measured requests whose side of the target is known (completed, or in flight and over).
  [[nodiscard]] std::int64_t resolved() const noexcept { return resolved_; }
  /// How many must exceed the target for the P99 to: n - ceil(0.99 n) + 1.
  [[nodiscard]] std::int64_t over_needed() const noexcept { return over_needed_; }
  /// Appends the ages at `now_ns` of the in-flight requests counted as over (lower bounds of their
  /// latencies) to `out`.
  void append_over_in_flight(TimeNs now_ns, std::vector<TimeNs>& out) const;
  /// The limit latency_limit_ns(target_ms).
  [[nodiscard]] TimeNs limit_ns() const noexcept { return limit_ns_; }

 private:
  TimeNs limit_ns_;
  std::int64_t over_needed_;
  std::vector<TimeNs> arrival_ns_;  // per measured request, in arrival order
  std::vector<char> done_;
  std::size_t aged_ = 0;  // requests [0, aged_) arrived more than the limit ago
  std::int64_t over_ = 0;
  std::int64_t resolved_ = 0;
};

}  // namespace npusim::sim
