#include "sim/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "model/error.h"
#include "sim/p99_watch.h"

namespace npusim::sim {

namespace {


// A rate doubled this often and still meeting the P99 is not a Poisson bottleneck any more.
constexpr int kMaxRateDoublings = 30;
// The share of its measured requests a rate's run is first taken to before the search decides
// whether that rate needs the rest (search tuning, not a model constant: smaller looks cost less
// and mislead more; 1/8 needs the fewest events on the default scenario's sweeps, docs/sweeps.md).
constexpr double kFirstLookShare = 0.125;
constexpr std::int64_t kFirstLookMin = 200;
// After this many first looks every further rate is run in full: the search then bisects on
// exact verdicts, so it ends however the tails mislead it.
constexpr int kMaxFirstLooks = 4;
// The most grid steps one extrapolation from two measured rates may move.
constexpr std::int64_t kMaxJump = 24;
// The probes: a few hundred requests give a floor and a ceiling to a few per cent, all a first
// guess needs. With many clients, enough to keep every stream on full batches with one waiting.
constexpr std::int64_t kProbeRequests = 400;
constexpr std::int64_t kProbeWarmup = 50;
constexpr int kSaturatingBatchesPerStream = 4;

void check_search(const Scenario& sc, double tolerance) {
  if (sc.workload.arrival != ArrivalKind::kPoisson) {
    throw InputError(kCommandLine,
                     "--find-max-qps searches the Poisson rate: the scenario's "
                     "workload.arrival must be \"poisson\"");
  }
  if (!sc.target.p99_ms) {
    throw InputError(kCommandLine, "--find-max-qps needs target.p99_ms (in the scenario or --set)");
  }
  if (!(tolerance > 0 && tolerance < 1)) {
    throw InputError(kCommandLine, "the max-QPS tolerance must be in (0, 1)");
  }
}

// The search over the grid rate(k) = anchor g^k, g = 1 / (1 - tolerance).
class Search {
 public:
  Search(Scenario sc, const HwSpec& hw, double tolerance, const CapacityProbe& probe,
         const SimOptions& options)
      : sc_(std::move(sc)), hw_(hw), options_(options), probe_(probe) {
    n_ = sc_.workload.requests;
    // A floor at or above the target (nothing meets it) would make y meaningless: keep it below.
    floor_ms_ = std::min(probe.queue.floor_ms, 0.5 * *sc_.target.p99_ms);
    boundary_ = y_of(*sc_.target.p99_ms);
    first_look_ = std::min(
        n_, std::max(kFirstLookMin,
                     static_cast<std::int64_t>(kFirstLookShare * static_cast<double>(n_))));
    // Shrunk by a part in 1e9 so that neighbours are within the tolerance after rounding.
    ln_g_ = -std::log1p(-tolerance) * (1 - 1e-9);
    const double start = sc_.workload.rate_qps;
    const double floor_qps = tolerance * start;
    const double ceiling_qps = std::ldexp(start, kMaxRateDoublings);
    anchor_ = std::isfinite(probe.estimate_qps) ? probe.estimate_qps : start;
    anchor_ = std::clamp(anchor_, floor_qps, ceiling_qps);
    k_min_ = static_cast<std::int64_t>(std::floor(std::log(floor_qps / anchor_) / ln_g_));
    while (rate(k_min_) > floor_qps) --k_min_;
    k_max_ = static_cast<std::int64_t>(std::ceil(std::log(ceiling_qps / anchor_) / ln_g_));
    while (rate(k_max_) < ceiling_qps) ++k_max_;
    lo_ = k_min_ - 1;  // nothing below the floor rate counts: "none meets the target"
    hi_ = k_max_ + 1;  // nothing above the ceiling is searched
  }

  MaxQps run() {
    for (;;) {
      const std::int64_t c = std::clamp(estimate(), lo_, hi_ - 1);
      std::int64_t next = 0;
      std::int64_t least = std::numeric_limits<std::int64_t>::max();
      // The failing side first on a tie: a run that fails often settles early.
      for (const std::int64_t k : {c + 1, c}) {
        if (k <= lo_ || k >= hi_) continue;
        const auto it = runs_.find(k);
        const std::int64_t progress = it == runs_.end() ? -1 : it->second.measured_done();
        if (progress < least) {
          least = progress;
          next = k;
        }
      }
      if (least == std::numeric_limits<std::int64_t>::max()) break;  // c, c + 1 both exact
      work_on(next);
    }
    return result();
  }

 private:
  [[nodiscard]] double rate(std::int64_t k) const {
    return anchor_ * std::exp(static_cast<double>(k) * ln_g_);
  }
  [[nodiscard]] double index(double rate_qps) const { return std::log(rate_qps / anchor_) / ln_g_; }

  // Takes k's run one step further: a first look when it has none, else to its verdict.
  void work_on(std::int64_t k) {
    auto it = runs_.find(k);
    if (it == runs_.end()) {
      Scenario sc = sc_;
      sc.workload.rate_qps = rate(k);
      it = runs_.emplace(k, SimRun(std::move(sc), hw_, true, options_)).first;
      ++simulations_;
      if (looks_ < kMaxFirstLooks) {
        ++looks_;
        it->second.advance(first_look_);
        look_share_[k] = y_of(it->second.p99_so_far_ms());
        update(k, it->second);
        return;
      }
    }
    it->second.advance(std::numeric_limits<std::int64_t>::max());
    // The prefix of a run is the same sequence of arrivals at every rate (one seed), so how far
    // its tail share was from the full run's carries over to the neighbours' first looks.
    if (const auto ls = look_share_.find(k); ls != look_share_.end()) {
      bias_ = predicted(it->second) / ls->second;
    }
    update(k, it->second);
  }

  void update(std::int64_t k, const SimRun& r) {
    if (r.settled_over()) {
      hi_ = k;
    } else if (r.ended()) {
      lo_ = k;
    } else {
      return;
    }
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (it->first < lo_ || it->first > hi_) {
        events_ += it->second.events();
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // How far a run's P99 so far lies below the target, as y = 1 / (P99 - floor): for a G/G/c queue
  // the tail above the floor grows as 1 / (ceiling - rate), so y falls about linearly with the
  // rate and crosses y at the target, boundary_, at the capacity.
  [[nodiscard]] double y_of(double p99_ms) const {
    return 1 / std::max(p99_ms - floor_ms_, 1e-6 * *sc_.target.p99_ms);
  }
  // ... for the full run as predicted: exact once it ended; a first look corrected by the bias.
  [[nodiscard]] double predicted(const SimRun& r) const {
    const double y = y_of(r.p99_so_far_ms());
    return r.done() ? y : y * bias_;
  }
  [[nodiscard]] bool fails(const SimRun& r) const {
    if (r.settled_over()) return true;
    if (r.ended()) return false;
    return predicted(r) < boundary_;
  }

  // The grid index estimated to be the highest whose full run meets the target.
  [[nodiscard]] std::int64_t estimate() const {
    std::vector<std::pair<std::int64_t, const SimRun*>> seen;
    for (const auto& [k, r] : runs_) {
      if (r.resolved() > 0) seen.emplace_back(k, &r);
    }
    if (seen.empty()) return 0;  // the approximation's capacity
    std::size_t j = 0;
    while (j < seen.size() && !fails(*seen[j].second)) ++j;
    if (j > 0 && j < seen.size()) {  // between a passing and a failing rate: secant in y
      const auto [a, ra] = seen[j - 1];
      const auto [z, rz] = seen[j];
      const double ya = predicted(*ra);
      const double yz = predicted(*rz);
      const double t = ya > yz ? (ya - boundary_) / (ya - yz) : 0.5;
      const auto step = static_cast<std::int64_t>(std::floor(std::clamp(t, 0.0, 1.0) *
                                                             static_cast<double>(z - a)));
      return std::min(a + step, z - 1);
    }
    const bool below = j == 0;  // every rate seen fails: look below the lowest
    const auto [k, r] = below ? seen.front() : seen.back();
    const double y1 = predicted(*r);
    double target_rate = 0;
    if (seen.size() >= 2) {  // the line through the two rates nearest the boundary
      const auto [k2, r2] = below ? seen[1] : seen[seen.size() - 2];
      const double slope = (predicted(*r2) - y1) / (rate(k2) - rate(k));
      if (slope < 0) target_rate = rate(k) + (boundary_ - y1) / slope;
    } else if (probe_.queue.ceiling_qps > rate(k)) {  // the line through it and the ceiling
      target_rate = rate(k) + (probe_.queue.ceiling_qps - rate(k)) * (1 - boundary_ / y1);
    }
    const double factor = target_rate > 0 ? target_rate / rate(k) : (below ? 0.5 : 2.0);
    const double steps = std::clamp(std::log(factor) / ln_g_, -static_cast<double>(kMaxJump),
                                    static_cast<double>(kMaxJump));
    const auto c = static_cast<std::int64_t>(std::floor(static_cast<double>(k) + steps));
    return below ? std::min(c, k - 1) : std::max(c, k);
  }

  MaxQps result() {
    MaxQps m;
    if (lo_ < k_min_) {  // nothing met the target: report the lowest rate tried, in full
      SimRun& r = runs_.at(k_min_);
      r.advance_to_end();
      m.fail_qps = rate(k_min_);
      m.result = r.finish();
    } else {
      SimRun& r = runs_.at(lo_);
      m.rate_qps = rate(lo_);
      if (hi_ <= k_max_) m.fail_qps = rate(hi_);
      m.result = r.finish();
    }
    for (const auto& [k, r] : runs_) events_ += r.events();
    m.simulations = simulations_ + probe_.simulations;
    m.events = events_ + probe_.events;
    return m;
  }

  Scenario sc_;
  const HwSpec& hw_;
  SimOptions options_;
  const CapacityProbe& probe_;
  std::int64_t n_ = 0;
  double floor_ms_ = 0;  // the probe's latency floor
  double boundary_ = 0;  // y at the target
  std::int64_t first_look_ = 0;
  double ln_g_ = 0;
  double anchor_ = 0;  // rate(0)
  std::int64_t k_min_ = 0;
  std::int64_t k_max_ = 0;
  std::int64_t lo_ = 0;  // highest index whose full run met the target (k_min_ - 1: none yet)
  std::int64_t hi_ = 0;  // lowest index above lo_ whose full run misses it (k_max_ + 1: none yet)
  std::map<std::int64_t, SimRun> runs_;
  int looks_ = 0;
  std::map<std::int64_t, double> look_share_;  // each rate's y at its first look
  double bias_ = 1;  // full-run y / first-look y, from the last rate run past its look
  std::int64_t simulations_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace

CapacityProbe probe_capacity(const Scenario& scenario, const HwSpec& hw,
                             const SimOptions& options) {
  NPUSIM_CHECK(scenario.target.p99_ms.has_value());
  CapacityProbe p;
  const Workload& w = scenario.workload;
  // One client: every request alone, so its latency is the floor and its service time varies
  // only with its own size.
  Scenario light = scenario;
  light.workload.arrival = ArrivalKind::kClosed;
  light.workload.concurrency = 1;
  light.workload.requests = std::min(w.requests, kProbeRequests);
  light.workload.warmup_requests = std::min(w.warmup_requests, kProbeWarmup);
  const SimResult l = simulate(light, hw, options);
  // Many clients: every stream busy on full batches, the rate is the ceiling.
  Scenario sat = light;
  const auto clients = static_cast<int>(std::min<std::int64_t>(
      std::int64_t{kSaturatingBatchesPerStream} * scenario.deployment.streams *
          scenario.deployment.gears.back(),
      std::numeric_limits<int>::max() / 2));
  sat.workload.concurrency = clients;
  sat.workload.warmup_requests = clients;
  sat.workload.requests = std::max<std::int64_t>(kProbeRequests, 2 * std::int64_t{clients});
  const SimResult s = simulate(sat, hw, options);
  p.simulations = 2;
  p.events = l.events + s.events;
  p.queue.servers = scenario.deployment.streams;
  p.queue.ceiling_qps = s.qps;
  const double cv = l.service_ms_mean > 0 ? l.service_ms_sd / l.service_ms_mean : 1;
  p.queue.service_scv = cv * cv;
  p.queue.arrival_scv = 1;  // Poisson
  p.queue.floor_ms = l.latency.p99_ms;
  p.estimate_qps = approx_capacity_qps(p.queue, *scenario.target.p99_ms);
  return p;
}

MaxQps find_max_qps(Scenario sc, const HwSpec& hw, double tolerance, const SimOptions& options) {
  check_search(sc, tolerance);
  const CapacityProbe probe = probe_capacity(sc, hw, options);
  Search search(std::move(sc), hw, tolerance, probe, options);
  return search.run();
}

MaxQps find_max_qps_bisection(Scenario sc, const HwSpec& hw, double tolerance,
                              const SimOptions& options) {
  check_search(sc, tolerance);
  // Double the rate until the target fails, then bisect.
  const double target = *sc.target.p99_ms;
  const double start = sc.workload.rate_qps;
  MaxQps m;
  const auto run_at = [&](double rate) {
    sc.workload.rate_qps = rate;
    ++m.simulations;
    SimResult r = simulate(sc, hw, options);
    m.events += r.events;
    return r;
  };
  double lo = 0;
  double hi = start;
  std::optional<SimResult> at_lo;
  SimResult last = run_at(hi);
  if (last.latency.p99_ms <= target) {
    for (int i = 0; i < kMaxRateDoublings && last.latency.p99_ms <= target; ++i) {
      lo = hi;
      at_lo = std::move(last);
      hi *= 2;
      last = run_at(hi);
    }
    if (last.latency.p99_ms <= target) {  // never failed: report the highest rate tried
      lo = hi;
      at_lo = std::move(last);
    }
  }
  // While nothing has met the target, stop once the rate is a `tolerance` share of the start:
  // the target is then below what this configuration reaches even almost idle.
  while (lo > 0 ? hi - lo > tolerance * hi : hi > tolerance * start) {
    const double mid = (lo + hi) / 2;
    SimResult r = run_at(mid);
    if (r.latency.p99_ms <= target) {
      lo = mid;
      at_lo = std::move(r);
    } else {
      hi = mid;
      last = std::move(r);
    }
  }
  m.rate_qps = lo;
  if (lo < hi) m.fail_qps = hi;
  m.result = at_lo ? std::move(*at_lo) : std::move(last);
  return m;
}

}  // namespace npusim::sim
