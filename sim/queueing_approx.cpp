#include "sim/queueing_approx.h"

#include <algorithm>
#include <cmath>

namespace npusim::sim {

double erlang_c(int servers, double offered) {
  const double c = servers;
  if (offered >= c) return 1;
  if (offered <= 0) return 0;
  // Erlang B by its stable recursion, then C = B / (1 - rho (1 - B)).
  double b = 1;
  for (int k = 1; k <= servers; ++k) b = offered * b / (k + offered * b);
  const double rho = offered / c;
  return b / (1 - rho * (1 - b));
}

double tail_share(const QueueParams& q, double rate_qps, double t_ms) {
  if (rate_qps >= q.ceiling_qps || t_ms <= q.floor_ms) return 1;
  if (rate_qps <= 0) return 0;
  const double mu = q.ceiling_qps / q.servers;
  const double waits = erlang_c(q.servers, rate_qps / mu);
  const double scv = std::max(q.arrival_scv + q.service_scv, 1e-9);
  const double decay_per_s = 2 * (q.ceiling_qps - rate_qps) / scv;
  return std::min(1.0, waits * std::exp(-(t_ms - q.floor_ms) / 1e3 * decay_per_s));
}

double approx_capacity_qps(const QueueParams& q, double target_ms, double quantile) {
  if (!(q.ceiling_qps > 0) || target_ms <= q.floor_ms) return 0;
  const double share = 1 - quantile;
  // tail_share grows with the rate (both factors do): bisect to a part in 1e9 of the ceiling.
  double lo = 0;
  double hi = q.ceiling_qps;
  while (hi - lo > 1e-9 * q.ceiling_qps) {
    const double mid = (lo + hi) / 2;
    (tail_share(q, mid, target_ms) <= share ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace npusim::sim
