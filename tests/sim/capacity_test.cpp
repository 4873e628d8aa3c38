// The capacity search: the queueing approximation on a case with a known answer (M/D/1, whose
// waiting-time distribution Erlang wrote down), the probes measuring what that case says they
// must, and the search against the exhaustive bisection it replaced on several configurations.
#include "sim/capacity.h"

#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/error.h"
#include "sim/queueing_approx.h"
#include "sim_test_util.h"

using npusim::sim::approx_capacity_qps;
using npusim::sim::erlang_c;
using npusim::sim::find_max_qps;
using npusim::sim::find_max_qps_bisection;
using npusim::sim::MaxQps;
using npusim::sim::QueueParams;
using npusim::sim::Scenario;

namespace {

// M/D/1 waiting time (Erlang 1909; Gross & Harris, "Fundamentals of Queueing Theory", §5.1):
//   P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} (lambda (k D - t))^k / k! e^{-lambda (k D - t)}.
double md1_wait_cdf(double lambda, double d, double t) {
  const double rho = lambda * d;
  double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t / d)); ++k) {
    const double x = lambda * (k * d - t);
    sum += std::pow(x, k) / std::tgamma(k + 1.0) * std::exp(-x);
  }
  return (1 - rho) * sum;
}

// The M/D/1 rate whose sojourn P99 (D + the waiting time's P99) is exactly `target`.
double md1_capacity(double d, double target) {
  double lo = 0;
  double hi = 1 / d;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (md1_wait_cdf(mid, d, target - d) >= 0.99 ? lo : hi) = mid;
  }
  return lo;
}

constexpr double kD = 108e-6;  // mdc_validation on ascend910b3: 8 us launch + 100 us op
constexpr double kTarget = 1e-3;

void check_bracket(const MaxQps& m, const Scenario& sc, const npusim::HwSpec& hw, double tol) {
  REQUIRE(m.fail_qps);
  CHECK(*m.fail_qps > m.rate_qps);
  CHECK(*m.fail_qps - m.rate_qps <= tol * *m.fail_qps * (1 + 1e-9));
  CHECK(*m.result.p99_met);
  CHECK_FALSE(m.result.stopped_early);
  CHECK(m.result.requests == sc.workload.requests);
  // Both ends are what full simulations say.
  Scenario at = sc;
  at.workload.rate_qps = m.rate_qps;
  CHECK(npusim::sim::simulate(at, hw).latency.p99_ms == m.result.latency.p99_ms);
  at.workload.rate_qps = *m.fail_qps;
  CHECK_FALSE(*npusim::sim::simulate(at, hw).p99_met);
}

}  // namespace

TEST_CASE("Erlang C is rho for one server and 1/3 for two servers at one Erlang", "[capacity]") {
  CHECK(erlang_c(1, 0.3) == Approx(0.3));
  CHECK(erlang_c(1, 0.9) == Approx(0.9));
  CHECK(erlang_c(2, 1.0) == Approx(1.0 / 3));
  CHECK(erlang_c(3, 3.0) == 1);
}

TEST_CASE("For M/D/1 the approximation brackets Erlang's exact capacity within 3 %",
          "[capacity]") {
  const double exact = md1_capacity(kD, kTarget);
  CHECK(exact == Approx(6998.4).epsilon(1e-3));  // rho = 0.756
  QueueParams q;
  q.servers = 1;
  q.ceiling_qps = 1 / kD;
  q.service_scv = 0;  // deterministic
  q.floor_ms = kD * 1e3;
  const double approx = approx_capacity_qps(q, kTarget * 1e3);
  // rho exp(-2 (mu - lambda)(target - D)) = 0.01 by hand: lambda = 6847 QPS, 2.2 % low (the
  // exponential tail with Kingman's decay is conservative for deterministic service).
  CHECK(approx == Approx(6847.1).epsilon(1e-3));
  CHECK(approx < exact);
  CHECK(approx > 0.97 * exact);
  CHECK(approx_capacity_qps(q, 0.5 * kD * 1e3) == 0);  // a target below the floor: none
}

TEST_CASE("The probes of an M/D/1 card measure the ceiling 1/D, no variability and the floor D",
          "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const Scenario sc = npusim::sim::load_scenario(npusim::test::bundled_scenario("mdc_validation"));
  const auto p = npusim::sim::probe_capacity(sc, hw);
  CHECK(p.queue.servers == 1);
  CHECK(p.queue.ceiling_qps == Approx(1 / kD).epsilon(0.01));
  CHECK(p.queue.service_scv == Approx(0).margin(1e-9));
  CHECK(p.queue.floor_ms == Approx(kD * 1e3).epsilon(1e-6));
  CHECK(p.estimate_qps == Approx(6847.1).epsilon(0.01));
}

TEST_CASE("The search finds the M/D/1 capacity Erlang's formula gives", "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const Scenario sc = npusim::sim::load_scenario(npusim::test::bundled_scenario("mdc_validation"),
                                                 {"workload.requests=40000"});
  const MaxQps m = find_max_qps(sc, hw, 0.02);
  check_bracket(m, sc, hw, 0.02);
  // 40000 requests pin the P99 to a few per cent of the rate.
  CHECK(m.rate_qps == Approx(md1_capacity(kD, kTarget)).epsilon(0.04));
}

// And for no more kernel events: what users rely on in the fast search is that it is never the
// slow one. At 4,000 requests a first eighth of a run near the capacity often has no request over
// the target (41 make the P99 miss it), and a growth factor taken from such a prefix once sent the
// search down to its floor rate a first look at a time (the default card: 3.9 M kernel events
// against the bisection's 1.5 M; the two-stream card without core limits: 7.4 M against 1.7 M).
TEST_CASE("The search finds the bisection's capacity, for fewer kernel events, on the default, "
          "multi-stream and core-limited cards",
          "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const double tol = 0.02;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"default", {}},
      {"default", {"deployment.streams=2", "deployment.cube_cores_per_stream=none",
                   "deployment.vector_cores_per_stream=none"}},
      {"default", {"deployment.cube_cores_per_stream=3", "deployment.vector_cores_per_stream=6"}},
      {"mdc_validation", {"deployment.streams=3", "workload.rate_qps=20000"}},
  };
  for (const auto& [name, sets] : cases) {
    std::vector<std::string> all = sets;
    all.emplace_back("workload.requests=4000");
    all.emplace_back("workload.warmup_requests=400");
    const Scenario sc = npusim::sim::load_scenario(npusim::test::bundled_scenario(name), all);
    const MaxQps fast = find_max_qps(sc, hw, tol);
    const MaxQps plain = find_max_qps_bisection(sc, hw, tol);
    INFO(name << " " << (sets.empty() ? "" : sets.front()) << ": search " << fast.rate_qps
              << ".." << fast.fail_qps.value_or(0) << " (" << fast.events << " events), bisection "
              << plain.rate_qps << ".." << plain.fail_qps.value_or(0) << " (" << plain.events
              << ")");
    check_bracket(fast, sc, hw, tol);
    REQUIRE(plain.rate_qps > 0);
    // Each bracket holds a crossing of the target; where the P99 rises with the rate they hold
    // the same one, so they overlap and the capacities agree within the tolerance.
    CHECK(fast.rate_qps <= *plain.fail_qps);
    CHECK(plain.rate_qps <= *fast.fail_qps);
    CHECK(std::fabs(fast.rate_qps - plain.rate_qps) <= tol * std::max(fast.rate_qps, plain.rate_qps));
    CHECK(fast.events <= plain.events);
  }
}

// The search predicts one rate's verdict from another's run through the shared arrival sequence
// (sim/capacity.cpp): whatever the sequence, its bracket must still be two exact verdicts, and the
// crossing it holds the bisection's. 2,000 requests, not the 4,000 of the case above: the search
// needs as many simulations or more on the noisier P99 (its predictions are no easier), while the
// bisection, most of this test's cost at 4,000, costs half (seeds 2-7 all held when this was
// chosen: kernel events of both searches over seeds 2 and 3, 24.7 M at 4,000, 16.5 M at 2,000).
TEST_CASE("Over seeds and stream counts the search's bracket is exact and holds the bisection's "
          "capacity",
          "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const double tol = 0.02;
  for (const char* seed : {"scenario.seed=2", "scenario.seed=3"}) {
    for (const char* streams : {"deployment.streams=1", "deployment.streams=2",
                                "deployment.streams=4"}) {
      const Scenario sc = npusim::sim::load_scenario(
          npusim::test::bundled_scenario("default"),
          {seed, streams, "deployment.gears=[1, 2, 4, 8, 16]", "workload.requests=2000",
           "workload.warmup_requests=200"});
      const MaxQps fast = find_max_qps(sc, hw, tol);
      const MaxQps plain = find_max_qps_bisection(sc, hw, tol);
      INFO(seed << " " << streams << ": search " << fast.rate_qps << ".."
                << fast.fail_qps.value_or(0) << ", bisection " << plain.rate_qps << ".."
                << plain.fail_qps.value_or(0));
      check_bracket(fast, sc, hw, tol);
      REQUIRE(plain.rate_qps > 0);
      CHECK(fast.rate_qps <= *plain.fail_qps);
      CHECK(plain.rate_qps <= *fast.fail_qps);
      CHECK(std::fabs(fast.rate_qps - plain.rate_qps) <=
            tol * std::max(fast.rate_qps, plain.rate_qps));
    }
  }
}

TEST_CASE("A target below the light-load latency has no capacity, reported from a full run",
          "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const Scenario sc = npusim::sim::load_scenario(
      npusim::test::bundled_scenario("mdc_validation"), {"target.p99_ms=0.05", "workload.requests=2000"});
  const MaxQps m = find_max_qps(sc, hw, 0.02);
  CHECK(m.rate_qps == 0);
  REQUIRE(m.fail_qps);
  CHECK(*m.fail_qps <= 0.02 * sc.workload.rate_qps);
  CHECK_FALSE(m.result.stopped_early);
  CHECK(m.result.requests == 2000);
  CHECK(find_max_qps_bisection(sc, hw, 0.02).rate_qps == 0);
}

TEST_CASE("The search refuses what the bisection refuses", "[capacity]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const Scenario no_target =
      npusim::sim::load_scenario(npusim::test::bundled_scenario("mdc_validation"), {"target.p99_ms=none"});
  CHECK_THROWS_WITH(find_max_qps(no_target, hw, 0.02), Catch::Contains("needs target.p99_ms"));
  const Scenario sc = npusim::sim::load_scenario(npusim::test::bundled_scenario("mdc_validation"));
  CHECK_THROWS_WITH(find_max_qps(sc, hw, 1.5), Catch::Contains("tolerance must be in [0.001, 0.5]"));
  // Finer than a run resolves, and the search's cost grows as 1 / tolerance: refused.
  CHECK_THROWS_WITH(find_max_qps(sc, hw, 1e-12), Catch::Contains("got 1e-12"));
  CHECK_THROWS_WITH(find_max_qps_bisection(sc, hw, 0.0), Catch::Contains("tolerance must be"));
  // Two requests meet the 1 ms target even arriving together (the second waits one 108 us
  // service): no rate bounds the capacity, and the search's limit is not reported as one.
  const Scenario two = npusim::sim::load_scenario(
      npusim::test::bundled_scenario("mdc_validation"),
      {"workload.requests=2", "workload.warmup_requests=0"});
  CHECK_THROWS_WITH(find_max_qps(two, hw, 0.02), Catch::Contains("nothing in this scenario bounds"));
  CHECK_THROWS_WITH(find_max_qps_bisection(two, hw, 0.02),
                    Catch::Contains("nothing in this scenario bounds"));
}
