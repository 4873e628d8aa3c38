#include "sim/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "model/error.h"
#include "sim/p99_watch.h"

namespace npusim::sim {

namespace {


// A rate doubled this often and still meeting the P99 is not a Poisson bottleneck any more.
constexpr int kMaxRateDoublings = 30;
// Runs advance in steps of 1/kSteps of their measured requests (at least kStepMin), one step at a
// time while a rate is a candidate, so a rate the search leaves costs the steps it took. The
// first kMaxFirstLooks rates get kFirstLookSteps steps each before any run is taken to its end
// (search tuning, not model constants: bench_capacity_grid compares choices in kernel events).
// Three eighths, not one: the P99 of a first eighth is the arrival sequence's first stretch, which
// on seed 1 of the 100-point grid is heavier than the run (the over-count 1.1-1.3x its share on
// one and two streams), and the first full run it placed landed low; at three eighths the grid
// costs 5.03 (seed 2: 5.24) plain sweeps against 5.24 (5.42) at one, 4.96 (5.55) at four.
constexpr std::int64_t kSteps = 8;
constexpr std::int64_t kStepMin = 200;
constexpr int kMaxFirstLooks = 2;
constexpr int kFirstLookSteps = 3;
// The first run taken to its end is finished even when it settles over, to serve as the reference,
// if by then it ran at least this share of its measured requests: its exact over-count profile is
// worth more than the rest of the run costs. (Finishing later runs that settle late as references
// too cost more than it saved on bench_capacity_grid.) From 80 %, not 50 %: a run that settles
// between is several grid steps above the crossing (one and two streams) and its profile a poorer
// guide than the next full run's; the grid cost 4.65 / 4.43 / 4.51 plain sweeps on seeds 1-3
// against 4.65 / 4.84 / 4.60 from 50 %.
constexpr double kFinishSettledFrom = 0.8;
// How much the over-count grows per grid step when no two runs say it (estimate: near the
// capacity of the default scenario's sweep it grows 2-10 % per 2 % of rate, docs/scenarios.md).
constexpr double kDefaultLogSlope = 0.05;
// A measured growth below this is noise, not a slope to extrapolate with.
constexpr double kMinLogSlope = 0.01;
// A reference's over-count at a depth below this gives no growth factor worth predicting with
// (Poisson noise of +-30 % and more): a prefix of that depth places nothing (search tuning).
constexpr std::int64_t kMinPrefixCount = 10;
// Nor does a prefix of a single step once a reference exists: near the capacity its over-count
// (about 30 of the 201 on the grid's one- and two-stream points) moves by one or two per grid step,
// against a full count that moves 3-5 %, so the reference's growth factor (6x) turns a count's
// noise of +-1 into +-2 grid steps; a candidate is placed by the runs that went deeper instead
// (search tuning: 4.88 (seed 2: 4.90) plain sweeps against 5.03 (5.24) with one-step prefixes).
constexpr std::size_t kMinInformativeSteps = 2;
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
  check_max_qps_tolerance(tolerance);
}

// A search that met the target at its highest rate found no capacity, only its own limit: with
// so few requests, or so loose a target, that even arrivals all at once meet it. Reporting that
// limit (rate_qps x 2^30) as the capacity would be a number with no meaning.
void check_bounded(const MaxQps& m, const Scenario& sc) {
  if (m.rate_qps > 0 && !m.fail_qps) {
    throw InputError(
        kCommandLine,
        fmt::format("--find-max-qps: the P99 ({:.4g} ms) meets target.p99_ms = {:g} ms even at "
                    "{:.3g} QPS (workload.rate_qps x 2^{}), where the {} measured requests arrive "
                    "almost at once: nothing in this scenario bounds the capacity; give "
                    "workload.requests a queue's worth of requests (thousands) or a tighter target",
                    m.result.latency.p99_ms, *sc.target.p99_ms, m.rate_qps, kMaxRateDoublings,
                    sc.workload.requests));
  }
}

// A rate's run, with its over-count (measured requests known to exceed the target, P99Watch) and
// y (see Search::y_of) after each step taken, and the over-count at its end once it ran there.
struct Rate {
  SimRun run;
  std::vector<std::int64_t> over_at;
  std::vector<double> y_at;
  std::optional<std::int64_t> final_over;  // the full run's over-count, when it ran to its end
  [[nodiscard]] std::size_t depth() const noexcept { return over_at.size(); }
  /// Steps whose over-count was taken at the step's end (a settled run's last one was not).
  [[nodiscard]] std::size_t full_steps() const { return depth() - (run.settled_over() ? 1 : 0); }
};

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
    step_ = std::min(n_, std::max(kStepMin, n_ / kSteps));
    needed_ = P99Watch(n_, *sc_.target.p99_ms).over_needed();
    log_boundary_ = std::log(static_cast<double>(needed_) + 0.5);
    // Shrunk by a part in 1e9 so that neighbours are within the tolerance after rounding.
    ln_g_ = -std::log1p(-tolerance) * (1 - 1e-9);
    const double start = sc_.workload.rate_qps;
    const double floor_qps = std::max(
        tolerance * start, min_rate_qps(sc_.workload.warmup_requests + sc_.workload.requests));
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
      if (!has_reference()) {
        // First looks at up to kMaxFirstLooks rates, placed by their P99 so far; then the rate
        // their over-counts, scaled to the whole run, point to runs in full. (The counts of three
        // eighths place the crossing 4 steps either side on one and two streams, where the P99
        // of a prefix placed the first full run mostly below it: seeds 1-3 of the grid 4.65 /
        // 4.84 / 4.60 plain sweeps against 4.88 / 4.90 / 4.42. Before any look the counts say
        // nothing, so the looks themselves stay placed by the P99: jumps from the estimate.)
        const std::int64_t c = std::clamp(
            looks_ < kMaxFirstLooks ? estimate_by_y() : estimate_by_count(), lo_, hi_ - 1);
        std::optional<std::int64_t> fresh;  // the failing side first: it often settles early
        for (const std::int64_t k : {c + 1, c}) {
          if (!fresh && k > lo_ && k < hi_ && runs_.count(k) == 0) fresh = k;
        }
        if (fresh && looks_ < kMaxFirstLooks) {
          look(*fresh);
        } else if (c > lo_) {
          run_out(c);
        } else if (c + 1 < hi_) {
          run_out(c + 1);
        } else {
          break;
        }
        continue;
      }
      const std::int64_t c = std::clamp(estimate_by_count(), lo_, hi_ - 1);
      if (c > lo_ && runs_.count(c) == 0) {
        step_on(c);  // a first look, which the references turn into a prediction
      } else if (c > lo_) {
        // The rate estimated to be the capacity runs to its end: either the reported run, or
        // (when it fails) the bracket's upper end, and a reference next to the crossing.
        run_out(c);
      } else if (c + 1 < hi_) {
        // The capacity's run is exact; its neighbour above goes step by step, to its settling or
        // until the counts say it passes after all (then it runs out as the new capacity).
        step_on(c + 1);
      } else {
        break;  // c, c + 1 both exact
      }
    }
    return result();
  }

 private:
  [[nodiscard]] double rate(std::int64_t k) const {
    return anchor_ * std::exp(static_cast<double>(k) * ln_g_);
  }

  [[nodiscard]] bool has_reference() const {
    return std::any_of(runs_.begin(), runs_.end(),
                       [](const auto& kr) { return kr.second.final_over.has_value(); });
  }

  Rate& at(std::int64_t k) {
    auto it = runs_.find(k);
    if (it == runs_.end()) {
      Scenario sc = sc_;
      sc.workload.rate_qps = rate(k);
      it = runs_.emplace(k, Rate{SimRun(std::move(sc), hw_, true, options_), {}, {}, {}}).first;
      ++simulations_;
    }
    return it->second;
  }

  void look(std::int64_t k) {
    ++looks_;
    Rate& r = at(k);
    for (int i = 0; i < kFirstLookSteps && !r.run.done(); ++i) step(r);
    settle(k);
  }

  void step_on(std::int64_t k) {
    Rate& r = at(k);
    step(r);
    finish_if_worth_it(r);
    settle(k);
  }

  // k's run to its end, step by step (so its over-count profile is known), or to its settling.
  void run_out(std::int64_t k) {
    Rate& r = at(k);
    while (!r.run.done()) step(r);
    finish_if_worth_it(r);
    settle(k);
  }

  // The first reference may be a run that settled over late: it is then run to its end.
  void finish_if_worth_it(Rate& r) {
    if (!r.run.settled_over() || r.run.ended() || has_reference()) return;
    if (static_cast<double>(r.run.measured_done()) >= kFinishSettledFrom * static_cast<double>(n_)) {
      r.run.advance_to_end();
    }
  }

  // Records k's verdict when exact and drops the runs outside the bracket.
  void settle(std::int64_t k) {
    Rate& r = runs_.at(k);
    if (r.run.ended()) r.final_over = r.run.over();
    if (r.run.settled_over()) {
      hi_ = k;
    } else if (r.run.ended()) {
      lo_ = k;
    } else {
      return;
    }
    for (auto i = runs_.begin(); i != runs_.end();) {
      if (i->first < lo_ || i->first > hi_) {
        events_ += i->second.run.events();
        i = runs_.erase(i);
      } else {
        ++i;
      }
    }
  }

  void step(Rate& r) const {
    const auto upto = static_cast<std::int64_t>(r.depth() + 1) * step_;
    r.run.advance(upto >= n_ ? std::numeric_limits<std::int64_t>::max() : upto);
    r.over_at.push_back(r.run.over());
    r.y_at.push_back(y_of(r.run.p99_so_far_ms()));
  }

  // How far a run's P99 so far lies below the target, as y = 1 / (P99 - floor): for a G/G/c queue
  // the tail above the floor grows as 1 / (ceiling - rate), so y falls about linearly with the
  // rate and crosses y at the target, boundary_, at the capacity. Used before any run ended.
  [[nodiscard]] double y_of(double p99_ms) const {
    return 1 / std::max(p99_ms - floor_ms_, 1e-6 * *sc_.target.p99_ms);
  }

  // log(1 + the over-count k's full run has), predicted. Every run sees the same arrival sequence
  // (one seed, times scaled by the rate), so its busy stretches fall at the same places at every
  // rate, and a run's over-count grows from a given depth to its end by about the factor the
  // nearest reference's did (one that ran to its end) from that depth. Exact for a run that ended.
  [[nodiscard]] double log_count(std::int64_t k) const {
    const Rate& r = runs_.at(k);
    if (r.final_over) return std::log1p(static_cast<double>(*r.final_over));
    const std::size_t d = r.depth();
    const Rate* ref = reference_for(k);
    const double here = std::log1p(static_cast<double>(r.over_at.back()));
    if (ref != nullptr) {
      return here + std::log1p(static_cast<double>(*ref->final_over)) -
             std::log1p(static_cast<double>(ref->over_at[d - 1]));
    }
    // A run that settled (its count a lower bound) or one deeper than every reference: the count
    // so far scaled to the whole run.
    const double done = static_cast<double>(std::max<std::int64_t>(r.run.measured_done(), 1));
    return here + std::log(std::max(1.0, static_cast<double>(n_) / done));
  }

  // The nearest reference (a run that ended) whose profile covers k's depth; none for a run that
  // settled within a step or one deeper than every reference.
  [[nodiscard]] const Rate* reference_for(std::int64_t k) const {
    const Rate& r = runs_.at(k);
    if (r.run.settled_over()) return nullptr;
    const Rate* ref = nullptr;
    std::int64_t ref_k = 0;
    for (const auto& [k2, q] : runs_) {
      if (!q.final_over || q.full_steps() < r.depth()) continue;
      if (ref == nullptr || std::llabs(k2 - k) < std::llabs(ref_k - k)) {
        ref = &q;
        ref_k = k2;
      }
    }
    return ref;
  }

  // Whether k's predicted count means something: a growth factor from a reference's prefix count
  // of a handful is noise (at 4,000 requests the first eighth often has none over at rates near
  // the capacity, and a count of 0 at the run would then be predicted as the reference's whole
  // count at any rate below it). Such a run places nothing: a first look that turns out so
  // is run out as the candidate it was (stepping it on instead, eighth by eighth, cost more on
  // the 4,000-request configurations of tests/sim/capacity_test.cpp: its counts at two or three
  // eighths are as noisy).
  [[nodiscard]] bool count_informative(std::int64_t k) const {
    const Rate& r = runs_.at(k);
    if (r.final_over || r.run.settled_over()) return true;
    if (has_reference() && r.depth() < kMinInformativeSteps) return false;
    const Rate* ref = reference_for(k);
    return ref == nullptr || ref->over_at[r.depth() - 1] >= kMinPrefixCount;
  }

  [[nodiscard]] bool fails_by_count(std::int64_t k) const {
    const SimRun& r = runs_.at(k).run;
    if (r.settled_over()) return true;
    if (r.ended()) return false;
    return log_count(k) > log_boundary_;
  }

  // The grid index estimated to be the highest whose full run meets the target, once a reference
  // ran to its end: log-count is interpolated linearly in k between the nearest runs either side
  // of the boundary, and extrapolated beyond them with the slope of the two nearest. Runs whose
  // count is not informative (count_informative) are left out.
  [[nodiscard]] std::int64_t estimate_by_count() const {
    std::vector<std::int64_t> seen;
    for (const auto& [k, r] : runs_) {
      if (count_informative(k)) seen.push_back(k);
    }
    std::size_t j = 0;
    while (j < seen.size() && !fails_by_count(seen[j])) ++j;
    if (j > 0 && j < seen.size()) {
      const std::int64_t a = seen[j - 1];
      const std::int64_t z = seen[j];
      const double la = log_count(a);
      const double lz = log_count(z);
      const double t = lz > la ? (log_boundary_ - la) / (lz - la) : 0.5;
      const auto step = static_cast<std::int64_t>(std::floor(std::clamp(t, 0.0, 1.0) *
                                                             static_cast<double>(z - a)));
      return std::min(a + step, z - 1);
    }
    const bool below = j == 0;  // every rate seen fails: look below the lowest
    const std::int64_t k = below ? seen.front() : seen.back();
    const double l1 = log_count(k);
    double slope = kDefaultLogSlope;
    if (seen.size() >= 2) {
      const std::int64_t k2 = below ? seen[1] : seen[seen.size() - 2];
      const double measured = (log_count(k2) - l1) / static_cast<double>(k2 - k);
      if (measured > kMinLogSlope) slope = measured;
    }
    const double steps = std::clamp((log_boundary_ - l1) / slope, -static_cast<double>(kMaxJump),
                                    static_cast<double>(kMaxJump));
    const auto c = static_cast<std::int64_t>(std::floor(static_cast<double>(k) + steps));
    return below ? std::min(c, k - 1) : std::max(c, k);
  }

  [[nodiscard]] bool fails_by_y(const Rate& r) const {
    if (r.run.settled_over()) return true;
    if (r.run.ended()) return false;
    return r.y_at.back() < boundary_;
  }

  // The same estimate from the first looks alone, in y (nothing ran to its end yet).
  [[nodiscard]] std::int64_t estimate_by_y() const {
    std::vector<std::pair<std::int64_t, const Rate*>> seen;
    for (const auto& [k, r] : runs_) seen.emplace_back(k, &r);
    if (seen.empty()) return 0;  // the approximation's capacity
    std::size_t j = 0;
    while (j < seen.size() && !fails_by_y(*seen[j].second)) ++j;
    if (j > 0 && j < seen.size()) {  // between a passing and a failing rate: secant in y
      const auto [a, ra] = seen[j - 1];
      const auto [z, rz] = seen[j];
      const double ya = ra->y_at.back();
      const double yz = rz->y_at.back();
      const double t = ya > yz ? (ya - boundary_) / (ya - yz) : 0.5;
      const auto step = static_cast<std::int64_t>(std::floor(std::clamp(t, 0.0, 1.0) *
                                                             static_cast<double>(z - a)));
      return std::min(a + step, z - 1);
    }
    const bool below = j == 0;  // every rate seen fails: look below the lowest
    const auto [k, r] = below ? seen.front() : seen.back();
    const double y1 = r->y_at.back();
    double target_rate = 0;
    if (seen.size() >= 2) {  // the line through the two rates nearest the boundary
      const auto [k2, r2] = below ? seen[1] : seen[seen.size() - 2];
      const double slope = (r2->y_at.back() - y1) / (rate(k2) - rate(k));
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
      SimRun& r = runs_.at(k_min_).run;
      r.advance_to_end();
      m.fail_qps = rate(k_min_);
      m.result = r.finish();
    } else {
      SimRun& r = runs_.at(lo_).run;
      m.rate_qps = rate(lo_);
      if (hi_ <= k_max_) m.fail_qps = rate(hi_);
      m.result = r.finish();
    }
    for (const auto& [k, r] : runs_) events_ += r.run.events();
    m.simulations = simulations_ + probe_.simulations;
    m.events = events_ + probe_.events;
    check_bounded(m, sc_);
    return m;
  }

  Scenario sc_;
  const HwSpec& hw_;
  SimOptions options_;
  const CapacityProbe& probe_;
  std::int64_t n_ = 0;
  double floor_ms_ = 0;  // the probe's latency floor
  double boundary_ = 0;  // y at the target
  std::int64_t step_ = 0;  // measured requests per step
  std::int64_t needed_ = 0;  // over-count at which the P99 misses the target
  double log_boundary_ = 0;  // log-count between passing (needed_ - 1) and failing (needed_)
  double ln_g_ = 0;
  double anchor_ = 0;  // rate(0)
  std::int64_t k_min_ = 0;
  std::int64_t k_max_ = 0;
  std::int64_t lo_ = 0;  // highest index whose full run met the target (k_min_ - 1: none yet)
  std::int64_t hi_ = 0;  // lowest index above lo_ whose full run misses it (k_max_ + 1: none yet)
  std::map<std::int64_t, Rate> runs_;
  int looks_ = 0;
  std::int64_t simulations_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace

void check_max_qps_tolerance(double tolerance) {
  if (!(tolerance >= kMinMaxQpsTolerance && tolerance <= kMaxMaxQpsTolerance)) {
    throw InputError(kCommandLine,
                     fmt::format("the max-QPS tolerance must be in [{}, {}], got {}",
                                 kMinMaxQpsTolerance, kMaxMaxQpsTolerance, tolerance));
  }
}

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
  const double floor_qps =
      std::max(tolerance * start, min_rate_qps(sc.workload.warmup_requests + sc.workload.requests));
  while (lo > 0 ? hi - lo > tolerance * hi : hi > floor_qps) {
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
  check_bounded(m, sc);
  return m;
}

}  // namespace npusim::sim
