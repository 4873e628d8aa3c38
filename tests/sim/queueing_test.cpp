// The simulator against queueing theory: with one fixed-duration op, batch size 1 and no
// batching window, every request costs the same service time D, so one stream is an M/D/1
// queue and c streams fed from one ready queue are M/D/c.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

using npusim::sim::Scenario;
using npusim::sim::SimResult;

namespace {

std::filesystem::path mdc_scenario() {
  return std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / "mdc_validation.toml";
}

// P(N >= n) for N ~ Poisson(m), summed upward from n in log space (n > m here, so the terms
// fall geometrically and the sum converges fast).
double poisson_tail(double m, long n) {
  double term =
      std::exp(-m + static_cast<double>(n) * std::log(m) - std::lgamma(static_cast<double>(n) + 1));
  double sum = 0;
  for (long j = n; term > 1e-300; ++j) {
    sum += term;
    term *= m / static_cast<double>(j + 1);
    if (term < sum * 1e-17) break;
  }
  return sum;
}

// Mean waiting time of M/D/c (Crommelin 1932; Tijms, "A First Course in Stochastic Models",
// 2003, §9.4): with deterministic service, FCFS customer n+c is served by the server customer n
// used, so waiting times follow Lindley's recursion with Erlang-c inter-arrival times, and
// Spitzer's identity gives
//   Wq = D * sum_{k>=1} [ P(Pois(k c rho) >= k c) - (1/rho) P(Pois(k c rho) >= k c + 1) ].
double mdc_wait(double lambda, double d, int c) {
  const double rho = lambda * d / c;
  double w = 0;
  for (long k = 1; k < 100000; ++k) {
    const double m = static_cast<double>(k) * c * rho;
    const double term = poisson_tail(m, k * c) - poisson_tail(m, k * c + 1) / rho;
    w += term;
    if (std::fabs(term) < 1e-14) break;
  }
  return d * w;
}

}  // namespace

TEST_CASE("Crommelin's M/D/c formula reduces to Pollaczek-Khinchine for one server", "[queueing]") {
  const double d = 1.0;
  for (const double rho : {0.3, 0.54, 0.8}) {
    CHECK(mdc_wait(rho, d, 1) == Approx(rho * d / (2 * (1 - rho))).epsilon(1e-9));
  }
}

TEST_CASE("one stream with a fixed service time matches the M/D/1 mean wait within 2 %",
          "[queueing]") {
  const Scenario s = npusim::sim::load_scenario(mdc_scenario());
  const npusim::HwSpec hw = npusim::test::chip(s.info.hw);
  const SimResult r = npusim::sim::simulate(s, hw);
  // Service: the host launches the op, then the device runs it.
  const double d_ms = (hw.host.launch_aclnn_us + 100.0) / 1e3;
  CHECK(r.service_ms_min == Approx(d_ms).epsilon(1e-9));
  CHECK(r.service_ms_max == Approx(d_ms).epsilon(1e-9));
  REQUIRE(r.requests == 200000);
  const double lambda_per_ms = s.workload.rate_qps / 1e3;
  const double rho = lambda_per_ms * d_ms;
  REQUIRE(rho < 1);
  const double pk = rho * d_ms / (2 * (1 - rho));
  INFO("rho " << rho << " simulated Wq " << r.queue_ms_mean << " ms, P-K " << pk << " ms");
  CHECK(std::fabs(r.queue_ms_mean - pk) / pk < 0.02);
  CHECK(r.latency.mean_ms == Approx(r.queue_ms_mean + r.service_ms_mean));
  // The server is busy rho of the time: the one vector core the op holds.
  CHECK(r.vector_utilization * hw.chip.vector_cores ==
        Approx(rho * 100.0 / (hw.host.launch_aclnn_us + 100.0)).epsilon(0.02));
}

TEST_CASE("four streams fed from one queue match the M/D/c mean wait within 2 %", "[queueing]") {
  const int c = 4;
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double d_ms = (hw.host.launch_aclnn_us + 100.0) / 1e3;
  const double rho = 0.7;
  const double rate_qps = rho * c / d_ms * 1e3;
  // A million requests: at rho = 0.7 the standard error of the mean wait over 200k is ~1.5 %.
  const Scenario s = npusim::sim::load_scenario(
      mdc_scenario(), {"deployment.streams=4", "workload.rate_qps=" + std::to_string(rate_qps),
                       "workload.requests=1000000"});
  const SimResult r = npusim::sim::simulate(s, hw);
  REQUIRE(r.requests == 1000000);
  const double expected = mdc_wait(rate_qps / 1e3, d_ms, c);
  INFO("simulated Wq " << r.queue_ms_mean << " ms, Crommelin " << expected << " ms");
  CHECK(std::fabs(r.queue_ms_mean - expected) / expected < 0.02);
}

TEST_CASE("Little's law holds: requests in the system = QPS x mean latency", "[queueing]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  for (const char* streams : {"deployment.streams=1", "deployment.streams=3"}) {
    const Scenario s = npusim::sim::load_scenario(
        mdc_scenario(), {streams, "workload.requests=50000", "deployment.gears=[1,2,4,8]",
                         "deployment.batch_window_us=200", "workload.batch_size={1=0.7,3=0.3}"});
    const SimResult r = npusim::sim::simulate(s, hw);
    INFO(streams);
    CHECK(r.in_system_mean == Approx(r.qps * r.latency.mean_ms / 1e3).epsilon(0.01));
  }
}

TEST_CASE("every request completes exactly once and the books balance", "[queueing]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const Scenario s = npusim::sim::load_scenario(
      mdc_scenario(),
      {"deployment.streams=3", "workload.requests=20000", "workload.warmup_requests=500",
       "deployment.gears=[1,2,4,8]", "deployment.batch_window_us=300",
       "deployment.split_oversize=true", "workload.batch_size={1=0.5,3=0.3,20=0.2}"});
  const SimResult r = npusim::sim::simulate(s, hw);
  CHECK(r.requests == 20000);
  CHECK(r.warmup_requests == 500);
  CHECK(r.split_requests > 0);
  CHECK(r.qps == Approx(static_cast<double>(r.window_completions) / r.window_s));
  // all measured requests and at most the warm-up ones complete inside the window
  CHECK(r.window_completions >= r.requests);
  CHECK(r.window_completions <= r.requests + r.warmup_requests);
  // padding only adds: a batch's gear is at least its real samples
  CHECK(r.mean_gear >= r.mean_batch_samples);
  CHECK(r.latency.p50_ms <= r.latency.p90_ms);
  CHECK(r.latency.p90_ms <= r.latency.p99_ms);
  CHECK(r.latency.p99_ms <= r.latency.p999_ms);
  CHECK(r.latency.p999_ms <= r.latency.max_ms);
}

TEST_CASE("utilisation never exceeds one, even far beyond saturation", "[queueing]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const Scenario s = npusim::sim::load_scenario(
      mdc_scenario(),
      {"deployment.streams=8", "workload.requests=20000", "workload.rate_qps=1000000"});
  const SimResult r = npusim::sim::simulate(s, hw);
  CHECK(r.vector_utilization > 0);
  CHECK(r.vector_utilization <= 1.0);
  CHECK(r.cube_utilization <= 1.0);
  CHECK(r.device_idle_share >= 0);
  CHECK(r.device_idle_share <= 1.0);
  // saturated: 8 servers of 108 us each
  CHECK(r.qps == Approx(8 / ((hw.host.launch_aclnn_us + 100.0) * 1e-6)).epsilon(0.01));
}

TEST_CASE("the same seed gives byte-identical JSON and another seed does not", "[queueing]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const std::vector<std::string> sets{"deployment.streams=2", "workload.requests=20000"};
  const Scenario a = npusim::sim::load_scenario(mdc_scenario(), sets);
  const std::string ja = npusim::sim::result_to_json(npusim::sim::simulate(a, hw));
  const std::string jb = npusim::sim::result_to_json(npusim::sim::simulate(a, hw));
  CHECK(ja == jb);
  std::vector<std::string> other = sets;
  other.push_back("scenario.seed=2");
  const Scenario c = npusim::sim::load_scenario(mdc_scenario(), other);
  CHECK(npusim::sim::result_to_json(npusim::sim::simulate(c, hw)) != ja);
}
