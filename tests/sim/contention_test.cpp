// What a card's streams share besides cores and HBM ([contention], docs/scenarios.md), each
// mechanism switched on alone against a hand-computed case.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "model/predict.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

using npusim::HwSpec;
using npusim::sim::Scenario;
using npusim::sim::SimResult;
using npusim::test::data;

namespace {
SimResult contention_run(const std::string& file, const HwSpec& hw, const std::vector<std::string>& sets) {
  return npusim::sim::simulate(npusim::sim::load_scenario(data("scenarios/" + file), sets), hw);
}

// host_bound.toml (20 ops of 1 us behind launches of [host].launch_aclnn_us each), saturated by a
// closed loop of many clients on `streams` streams, with only the named contention on.
std::vector<std::string> saturated(int streams, const char* on) {
  std::vector<std::string> sets = {
      "deployment.streams=" + std::to_string(streams), "workload.concurrency=" +
      std::to_string(4 * streams), "workload.requests=2000", "workload.warmup_requests=200",
      "contention.host=false", "contention.scheduler=false", "contention.l2_bandwidth=false",
      "contention.core_limit_bypass=false"};
  if (on != nullptr) sets.push_back(std::string("contention.") + on + "=true");
  return sets;
}
}  // namespace

TEST_CASE("instances of a host-bound graph saturate at the rate of the host cores they share",
          "[contention][host]") {
  HwSpec hw = npusim::test::chip("ascend910b3");
  const double launch_us = hw.host.launch_aclnn_us;
  REQUIRE(launch_us > 1.0);  // each batch is host bound: 20 launches, 20 us of device work
  hw.host.cores = 2;
  SECTION("4 streams on 2 host cores: 2 / (20 launches x launch_us) batches per second") {
    const SimResult r = contention_run("host_bound.toml", hw, saturated(4, "host"));
    // Four streams keep both cores busy: every launch of every stream queues on them.
    CHECK(r.qps == Approx(2 / (20 * launch_us * 1e-6)).epsilon(0.01));
    CHECK(r.host_utilization == Approx(1.0).epsilon(0.01));
    // Without the shared host each stream launches on its own thread: 4 x one stream's rate.
    const SimResult own = contention_run("host_bound.toml", hw, saturated(4, nullptr));
    CHECK(own.qps == Approx(4 / ((20 * launch_us + 1.0) * 1e-6)).epsilon(0.01));
  }
  SECTION("as many host cores as streams: nothing queues, the same run as without the limit") {
    hw.host.cores = 4;
    const SimResult r = contention_run("host_bound.toml", hw, saturated(4, "host"));
    const SimResult own = contention_run("host_bound.toml", hw, saturated(4, nullptr));
    CHECK(r.qps == own.qps);
    CHECK(r.latency.p99_ms == own.latency.p99_ms);
  }
}

TEST_CASE("launch-bound throughput caps at the rate of the card's one task scheduler",
          "[contention][scheduler]") {
  HwSpec hw = npusim::test::chip("ascend910b3");
  const double launch_us = hw.host.launch_aclnn_us;
  SECTION("5 us per kernel: 20 kernels a batch pass it at 1 / (20 x 5 us) batches per second") {
    hw.overhead.scheduler_task_us = 5.0;
    // 4 streams launch 4 / launch_us kernels per us, more than the scheduler's 1 / 5 us.
    REQUIRE(4 / launch_us > 1 / 5.0);
    const SimResult r = contention_run("host_bound.toml", hw, saturated(4, "scheduler"));
    CHECK(r.qps == Approx(1 / (20 * 5.0e-6)).epsilon(0.01));
    CHECK(r.scheduler_utilization == Approx(1.0).epsilon(0.01));
  }
  SECTION("a scheduler faster than the ops changes nothing for one stream") {
    hw.overhead.scheduler_task_us = 0.5;  // below the 1 us ops: each is taken while it runs
    const SimResult r = contention_run("host_bound.toml", hw, saturated(1, "scheduler"));
    const SimResult off = contention_run("host_bound.toml", hw, saturated(1, nullptr));
    CHECK(r.qps == off.qps);
    CHECK(r.latency.max_ms == off.latency.max_ms);
  }
}

TEST_CASE("a dynamic-shape op ignores the core limit and takes the cores of the other streams",
          "[contention][cores]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  const double launch_us = hw.host.launch_aclnn_us;  // 8: the times below are for that value
  REQUIRE(launch_us == 8.0);
  const double sync_us = hw.host.dynamic_shape_sync_us;
  SECTION("on: stream 0's dyn holds all 40 cores from 58 to 108 us; stream 1's plain waits") {
    const SimResult r = contention_run("core_bypass.toml", hw, {});
    REQUIRE(r.requests == 2);
    // request 1: plain 8-58, dyn (1 wave on 40 cores) 58-108, then the shape sync
    CHECK(r.latency.p50_ms * 1e3 == Approx(108 + sync_us));
    // request 2 (at 60): plain launched at 68 waits until 108, runs to 158, dyn 158-208, sync
    CHECK(r.latency.max_ms * 1e3 == Approx(208 + sync_us - 60));
    CHECK(r.ops[1].mean_us == Approx(50.0));
  }
  SECTION("off: dyn keeps to its stream's 20 cores and runs 2 waves; plain never waits") {
    const SimResult r = contention_run("core_bypass.toml", hw, {"contention.core_limit_bypass=false"});
    // request 1: plain 8-58, dyn 58-158; request 2: plain 68-118, dyn 118-218
    CHECK(r.latency.p50_ms * 1e3 == Approx(158 + sync_us));
    CHECK(r.latency.max_ms * 1e3 == Approx(218 + sync_us - 60));
    CHECK(r.ops[1].mean_us == Approx(100.0));
  }
  SECTION("the graph decides: ignores_core_limit marks a plain op or unmarks a dynamic one") {
    std::string text = npusim::test::read_text(data("scenarios/core_bypass.toml"));
    npusim::test::write_temp("two_apart.csv", "0,1\n60,1\n");
    const std::string dyn = "dynamic_shape = true";
    const auto with = [&](const std::string& attrs) {
      std::string t = text;
      t.replace(t.find(dyn), dyn.size(), attrs);
      return npusim::sim::simulate(npusim::test::scenario_from_text(t), hw);
    };
    // marked, not dynamic: as "on" without the shape syncs
    const SimResult marked = with("ignores_core_limit = true");
    CHECK(marked.latency.p50_ms * 1e3 == Approx(108));
    CHECK(marked.latency.max_ms * 1e3 == Approx(208 - 60));
    // dynamic but unmarked: as "off"
    const SimResult unmarked = with("dynamic_shape = true, ignores_core_limit = false");
    CHECK(unmarked.latency.max_ms * 1e3 == Approx(218 + sync_us - 60));
  }
}

TEST_CASE("two streams share the chip's L2 bandwidth, each at half of it", "[contention][l2]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  const Scenario s = npusim::sim::load_scenario(data("scenarios/l2_bound.toml"));
  const npusim::OpDesc op = s.graph.instantiate(0, 1);
  npusim::PredictContext ctx;
  ctx.l2_hit_ratio = 1.0;  // 2 x 32 MiB of reads fit the 192 MiB L2: every read hits
  const npusim::OpCost c = npusim::predict(op, hw, npusim::CoreBudget{10, 20}, ctx);
  REQUIRE(2 * c.bytes_in <= hw.chip.l2_bytes);
  const double device_us = c.duration_us - c.critical_path.host_us;
  const auto memory_ns = npusim::sim::us_to_ns(std::min(c.critical_path.memory_us, device_us));
  const auto compute_ns = npusim::sim::us_to_ns(device_us) - memory_ns;
  const double capacity = hw.l2_bytes_per_us() / 1e3;  // bytes per ns
  const double l2_bytes =
      std::min(c.bytes_in + c.bytes_out, capacity * static_cast<double>(memory_ns));
  REQUIRE(memory_ns > 0);
  REQUIRE(2 * l2_bytes / static_cast<double>(memory_ns) > capacity);  // together: more than L2

  const SimResult one = contention_run("l2_bound.toml", hw, {"deployment.streams=1"});
  const SimResult two = contention_run("l2_bound.toml", hw, {});
  const SimResult off = contention_run("l2_bound.toml", hw, {"contention.l2_bandwidth=false"});
  // Alone (the second request waits for the first) the op keeps its predicted time.
  CHECK(one.ops[0].mean_us * 1e3 == Approx(static_cast<double>(memory_ns + compute_ns)).margin(1));
  // Together each moves its bytes through L2 at capacity / 2 (HBM carries only the writes).
  const double shared_ns = std::ceil(l2_bytes / (capacity / 2));
  CHECK(two.ops[0].mean_us * 1e3 ==
        Approx(std::max(shared_ns, static_cast<double>(memory_ns)) +
               static_cast<double>(compute_ns))
            .margin(2));
  CHECK(two.ops[0].mean_us > one.ops[0].mean_us);
  // Without the shared L2 both contention_run as if alone.
  CHECK(off.ops[0].mean_us == Approx(one.ops[0].mean_us).margin(0.002));
}
