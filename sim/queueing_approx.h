#pragma once
// A queueing approximation of one card's latency tail, the capacity search's first guess
// (sim/capacity.h). The card is taken as a G/G/c queue: c = streams, the service rate from the
// throughput ceiling of a saturated run, the service variability and the latency floor from a run
// without queueing. The waiting time follows Allen-Cunneen: an arrival waits with the Erlang C
// probability of M/M/c, and a wait is exponential with mean (ca^2 + cs^2) / (2 (c mu - lambda))
// (Allen, "Probability, Statistics and Queueing Theory", 1990, §6; Kingman's heavy-traffic form
// for c = 1). The latency tail adds the floor:
//   P(T > t) ~= C(c, lambda / mu) * exp(-(t - floor) * 2 (c mu - lambda) / (ca^2 + cs^2)).
// Batching, core sharing and host limits make a card only roughly such a queue; the search uses
// this for where to look first and for the shape of the tail between measured rates, never for
// the answer.

namespace npusim::sim {

/// The parameters of the approximation.
struct QueueParams {
  int servers = 1;          ///< c (streams)
  double ceiling_qps = 0;   ///< c mu: requests per second at saturation (> 0)
  double service_scv = 1;   ///< cs^2: squared coefficient of variation of the service time
  double arrival_scv = 1;   ///< ca^2 (Poisson: 1)
  double floor_ms = 0;      ///< the latency quantile with no queueing (light load)
};

/// Erlang C: the probability that an arrival waits in M/M/c with `servers` servers and offered
/// load `offered` = lambda / mu (Erlang); 1 at or above `servers`.
[[nodiscard]] double erlang_c(int servers, double offered);

/// The approximate share of requests whose latency exceeds `t_ms` at `rate_qps`: 1 at or above
/// the ceiling or when `t_ms` is not above the floor.
[[nodiscard]] double tail_share(const QueueParams& q, double rate_qps, double t_ms);

/// The rate whose tail_share at `target_ms` is 1 - `quantile` (0.99 for a P99 target): the
/// approximate capacity. 0 when even light load misses the target (floor >= target).
[[nodiscard]] double approx_capacity_qps(const QueueParams& q, double target_ms,
                                         double quantile = 0.99);

}  // namespace npusim::sim
