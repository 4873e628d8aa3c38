// The early P99 verdict: the rank arithmetic by hand, the counting by hand, and over seeds and
// rates the property the capacity search rests on: a run stopped once its verdict is settled
// gives the verdict of the full run, and a run taken in steps is the run simulate() makes.
#include "sim/p99_watch.h"

#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include <filesystem>
#include <limits>
#include <string>

#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

using npusim::sim::latency_limit_ns;
using npusim::sim::nearest_rank;
using npusim::sim::P99Watch;
using npusim::sim::Scenario;
using npusim::sim::SimRun;

namespace {

}  // namespace

TEST_CASE("The P99 of n values is the ceil(0.99 n)-th, so n - rank + 1 values over settle it",
          "[p99watch]") {
  CHECK(nearest_rank(20000, 0.99) == 19800);
  CHECK(P99Watch(20000, 5.0).over_needed() == 201);
  CHECK(nearest_rank(100, 0.99) == 99);
  CHECK(P99Watch(100, 5.0).over_needed() == 2);
  CHECK(nearest_rank(150, 0.99) == 149);  // 148.5 rounds up
  CHECK(P99Watch(150, 5.0).over_needed() == 2);
  CHECK(nearest_rank(1, 0.99) == 1);
  CHECK(P99Watch(1, 5.0).over_needed() == 1);
}

TEST_CASE("The latency limit is the largest nanosecond count the report still calls met",
          "[p99watch]") {
  CHECK(latency_limit_ns(5.0) == 5'000'000);
  CHECK(latency_limit_ns(0.1) == 100'000);
  for (const double t : {0.1, 0.3, 1.7, 5.0, 12.345678}) {
    const auto l = latency_limit_ns(t);
    CHECK(static_cast<double>(l) / 1e6 <= t);
    CHECK(static_cast<double>(l + 1) / 1e6 > t);
  }
}

TEST_CASE("Completions over the target and requests aged past it in flight are counted once",
          "[p99watch]") {
  P99Watch w(100, 1.0);  // 2 over settle it
  for (int i = 0; i < 4; ++i) w.arrived(i * 100'000);  // at 0, 0.1, 0.2, 0.3 ms
  w.completed(0, 900'000);                              // met
  w.age(1'000'000);                                     // nobody older than 1 ms yet
  CHECK(w.over() == 0);
  CHECK(w.resolved() == 1);
  w.age(1'100'001);  // request 1 arrived 1.000001 ms ago and is still in flight
  CHECK(w.over() == 1);
  CHECK_FALSE(w.settled_over());
  w.completed(1, 1'200'000);  // already counted when it aged
  CHECK(w.over() == 1);
  w.completed(2, 1'000'000);  // exactly the target: met
  CHECK(w.over() == 1);
  w.completed(3, 1'000'001);
  CHECK(w.over() == 2);
  CHECK(w.resolved() == 4);
  CHECK(w.settled_over());
}

TEST_CASE("A run stopped once its P99 verdict is settled gives the full run's verdict",
          "[p99watch]") {
  // M/D/1 with D = 108 us and a 1 ms target: capacity near 7000 QPS, so these rates fall on both
  // sides of it and near it, where the verdict turns on the last requests.
  const auto hw = npusim::test::chip("ascend910b3");
  int stopped = 0;
  int met = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    for (const double rate : {6000.0, 6800.0, 7000.0, 7200.0, 8000.0}) {
      const Scenario sc = npusim::sim::load_scenario(
          npusim::test::bundled_scenario("mdc_validation"),
          {"scenario.seed=" + std::to_string(seed), "workload.rate_qps=" + std::to_string(rate),
           "workload.requests=3000", "workload.warmup_requests=300"});
      const auto full = npusim::sim::simulate(sc, hw);
      SimRun run(sc, hw, true);
      run.advance(std::numeric_limits<std::int64_t>::max());
      INFO("seed " << seed << " rate " << rate << " full P99 " << full.latency.p99_ms);
      REQUIRE(run.done());
      CHECK(run.settled_over() == !*full.p99_met);
      const auto r = run.finish();
      CHECK(*r.p99_met == *full.p99_met);
      CHECK(r.stopped_early == !run.ended());
      if (r.stopped_early) ++stopped;
      if (*full.p99_met) {
        ++met;
        CHECK(r.latency.p99_ms == full.latency.p99_ms);  // a passing run always runs to the end
      }
    }
  }
  // The property is only worth something if both verdicts and early stops occurred.
  CHECK(met > 10);
  CHECK(stopped > 10);
}

TEST_CASE("A run taken in steps is event for event the run simulate() makes", "[p99watch]") {
  const auto hw = npusim::test::chip("ascend910b3");
  const Scenario sc = npusim::sim::load_scenario(
      npusim::test::bundled_scenario("default"), {"workload.requests=1500", "workload.warmup_requests=200",
                           "workload.rate_qps=4000"});
  const auto whole = npusim::sim::simulate(sc, hw);
  SimRun run(sc, hw, false);
  for (std::int64_t m = 100; !run.ended(); m += 137) {
    run.advance(m);
    CHECK((run.ended() || run.measured_done() >= m));  // a batch completes several at once
  }
  const auto stepped = run.finish();
  CHECK_FALSE(stepped.stopped_early);
  CHECK(npusim::sim::result_to_json(stepped) == npusim::sim::result_to_json(whole));
}
