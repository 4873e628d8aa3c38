#include "sim/count_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/error.h"

namespace npusim::sim {

namespace {

// The exponent's scan (search tuning, not a model constant): from waits that do not move to
// waits growing 40 % per 1 % of rate.
constexpr double kScanLo = -10.0;
constexpr double kScanHi = 40.0;
constexpr double kScanStep = 0.05;

}  // namespace

CountModel::CountModel(const std::vector<SimRun::RequestTimes>& times, double rate_qps,
                       TimeNs limit_ns)
    : rate_qps_(rate_qps) {
  NPUSIM_CHECK(rate_qps > 0);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  threshold_.reserve(times.size());
  for (const auto& t : times) {
    NPUSIM_CHECK(t.latency_ns >= 0 && t.service_ns >= 0);
    const TimeNs wait = std::max<TimeNs>(0, t.latency_ns - t.service_ns);
    const TimeNs service = t.latency_ns - wait;
    double th = 0;
    if (service > limit_ns) {
      th = -kInf;
    } else if (wait == 0) {
      th = kInf;
    } else {
      th = static_cast<double>(limit_ns - service) / static_cast<double>(wait);
      // Exact at s = 1 whatever the rounding: over there iff the latency was.
      if (t.latency_ns > limit_ns) {
        th = std::min(th, std::nextafter(1.0, 0.0));
      } else {
        th = std::max(th, 1.0);
      }
    }
    threshold_.push_back(th);
  }
}

std::int64_t CountModel::count(std::int64_t m, double s) const {
  m = std::clamp<std::int64_t>(m, 0, requests());
  auto it = sorted_.find(m);
  if (it == sorted_.end()) {
    std::vector<double> v(threshold_.begin(), threshold_.begin() + m);
    std::sort(v.begin(), v.end());
    it = sorted_.emplace(m, std::move(v)).first;
  }
  const auto& v = it->second;
  return std::lower_bound(v.begin(), v.end(), s) - v.begin();  // thresholds below s
}

double CountModel::wait_scale(double rate, double exponent) const {
  const double power = std::pow(rate / rate_qps_, exponent);
  if (!(ceiling_qps_ > rate_qps_)) return power;
  if (rate >= ceiling_qps_) return std::numeric_limits<double>::infinity();
  return power * (ceiling_qps_ - rate_qps_) / (ceiling_qps_ - rate);
}

double fit_exponent(const CountModel& model, const std::vector<CountSeen>& seen,
                    double fallback) {
  if (seen.empty()) return fallback;
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> best_u;
  for (double u = kScanLo; u <= kScanHi + 1e-9; u += kScanStep) {
    double err = 0;
    for (const CountSeen& c : seen) {
      const double pred =
          static_cast<double>(model.count(c.m, model.wait_scale(c.rate_qps, u)));
      const double d = std::log1p(pred) - std::log1p(static_cast<double>(c.count));
      err += static_cast<double>(c.count + 1) * d * d;
    }
    if (err < best * (1 - 1e-12)) {
      best = err;
      best_u.clear();
    }
    if (err <= best * (1 + 1e-12)) best_u.push_back(u);
  }
  return best_u[best_u.size() / 2];
}

}  // namespace npusim::sim
