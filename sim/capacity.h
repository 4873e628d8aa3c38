#pragma once
// Capacity under a latency target: the highest Poisson rate whose P99 meets target.p99_ms.
// The answer is a bracket [rate_qps, fail_qps] of full simulations, rate_qps meeting the target
// and fail_qps missing it, fail_qps - rate_qps <= tolerance x fail_qps (the same definition as the
// plain bisection's). The search (find_max_qps) gets there for a few full runs' worth of events:
//   1. two short closed-loop probes (one client: the latency floor and service variability; many
//      clients: the throughput ceiling) feed a queueing approximation (sim/queueing_approx.h)
//      whose capacity is the first rate tried;
//   2. rates lie on a grid of ratio 1 / (1 - tolerance), so neighbours always make a bracket of the
//      tolerance; each rate's run is a SimRun taken forward in eighths of its measured requests,
//      only as far as the search needs it: nothing run at a rate is thrown away when it is needed
//      further;
//   3. a run stops as soon as its P99 verdict is settled over (sim/p99_watch.h): exactly the
//      verdict of the full run;
//   4. two first looks (three eighths each, the second placed by the first's P99 so far); the rate
//      their over-counts, scaled to the whole run, point to runs to its end and becomes the
//      reference: every run sees the same arrival
//      sequence scaled, so another rate's over-target count after d eighths, times the factor by
//      which the nearest reference's grew from d eighths to its end, predicts its full count. The
//      next rate is where the predicted counts cross the P99's limit; it runs to its end, and
//      its neighbour above goes an eighth at a time until it settles (or is predicted to pass).
// The reported rate and result come from a full run at that rate; the failing neighbour's verdict
// is exact. find_max_qps_bisection is the exhaustive search it replaces, kept as the reference.

#include <cstdint>
#include <optional>

#include "model/hw_spec.h"
#include "sim/card_sim.h"
#include "sim/queueing_approx.h"
#include "sim/scenario.h"

namespace npusim::sim {

/// The outcome of a search for a configuration's capacity under its latency target.
struct MaxQps {
  double rate_qps = 0;  ///< highest Poisson rate found whose P99 meets target.p99_ms (0: none)
  SimResult result;     ///< the full run at that rate (at the lowest rate tried when none met it)
  /// The rate just above rate_qps that misses the target (its verdict exact); absent when the
  /// highest rate searched met it.
  std::optional<double> fail_qps;
  std::int64_t simulations = 0;  ///< runs started, probes included
  std::uint64_t events = 0;      ///< kernel events of all of them: the search's cost
};

/// What the probes measured and the approximation made of it.
struct CapacityProbe {
  QueueParams queue;
  double estimate_qps = 0;  ///< approx_capacity_qps at target.p99_ms (0: the floor misses it)
  std::int64_t simulations = 0;
  std::uint64_t events = 0;
};

/// Runs the two short closed-loop probes of `scenario` (its rate is ignored) and fits the
/// approximation. Throws InputError as simulate() does; needs target.p99_ms.
[[nodiscard]] CapacityProbe probe_capacity(const Scenario& scenario, const HwSpec& hw,
                                           const SimOptions& options = {});

/// The relative tolerances a capacity search accepts. Below 0.1 % the grid's steps are finer
/// than a finite run's P99 resolves (at 20,000 requests the over-target count near the capacity
/// grows 1-3 % per 1 % of rate, against a Poisson noise of +-7 % in a count of 200), and the
/// search's cost grows as 1 / tolerance (measured on the default scenario at 2,000 requests, two
/// points: 0.3 CPU-s at 2 %, 2.2 s at 0.1 %, 42 s at 0.01 %; 1e-12 had not finished after
/// 120 s). Above 50 % a neighbouring rate is more than twice the other, and "a rate below
/// tolerance x rate_qps counts as none" would hide most capacities.
inline constexpr double kMinMaxQpsTolerance = 1e-3;
inline constexpr double kMaxMaxQpsTolerance = 0.5;

/// Throws InputError (on the command line) unless `tolerance` is in
/// [kMinMaxQpsTolerance, kMaxMaxQpsTolerance]; sweep, compare, whatif and the searches call it.
void check_max_qps_tolerance(double tolerance);

/// Searches the highest Poisson rate whose P99 meets the scenario's target.p99_ms to within
/// `tolerance` (relative, see check_max_qps_tolerance): see the top of this file. Like the bisection, a rate above
/// workload.rate_qps x 2^30 is not searched and a rate below tolerance x workload.rate_qps counts
/// as none. Throws InputError for a scenario that is not Poisson or has no P99 target.
/// `options` are passed to every run (e.g. the measured chip of an anchored graph; no trace).
[[nodiscard]] MaxQps find_max_qps(Scenario scenario, const HwSpec& hw, double tolerance,
                                  const SimOptions& options = {});

/// The plain search: from workload.rate_qps, doubles while the target is met, then bisects with
/// full simulations until the bracket is within `tolerance` of the rate. Same errors.
[[nodiscard]] MaxQps find_max_qps_bisection(Scenario scenario, const HwSpec& hw,
                                            double tolerance, const SimOptions& options = {});

}  // namespace npusim::sim
