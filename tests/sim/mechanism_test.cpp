// Each resource mechanism of the card model against a hand-computed case.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "model/predict.h"
#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

using npusim::sim::Scenario;
using npusim::sim::SimResult;
using npusim::test::data;

namespace {
SimResult run(const std::string& file, const std::vector<std::string>& sets = {},
              const npusim::sim::SimOptions& opt = {}) {
  const Scenario s = npusim::sim::load_scenario(data("scenarios/" + file), sets);
  return npusim::sim::simulate(s, npusim::test::chip(s.info.hw), opt);
}
}  // namespace

TEST_CASE("an op that finds fewer free cores than its block dim runs more waves",
          "[mechanism][cores]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double launch_ms = hw.host.launch_aclnn_us / 1e3;
  SECTION("shared card: the second op gets the 10 cores left and runs 3 waves") {
    const SimResult r = run("cores_contended.toml");
    REQUIRE(r.requests == 2);
    CHECK(r.latency.p50_ms == Approx(launch_ms + 0.010));  // first: 30 cores, 1 wave
    CHECK(r.latency.max_ms == Approx(launch_ms + 0.030));  // second: 10 cores, 3 waves
    CHECK(r.ops[0].mean_us == Approx((10.0 + 30.0) / 2));
  }
  SECTION("a core limit of 20 per stream: both run ceil(30/20) = 2 waves") {
    const SimResult r = run("cores_contended.toml", {"deployment.vector_cores_per_stream=20"});
    CHECK(r.latency.p50_ms == Approx(launch_ms + 0.020));
    CHECK(r.latency.max_ms == Approx(launch_ms + 0.020));
  }
  SECTION("a core limit of 8: ceil(30/8) = 4 waves even with the card to itself") {
    const SimResult r = run("cores_contended.toml", {"deployment.vector_cores_per_stream=8"});
    CHECK(r.latency.max_ms == Approx(launch_ms + 0.040));
  }
}

namespace {
// The op's timing as the card model derives it from predict() (docs/scenarios.md): device time
// minus host part; the memory phase moves the L2 misses and the writes through HBM (in bus
// bytes: the write factor and read-write turnaround of HwSpec::hbm_bus_bytes).
struct Derived {
  npusim::sim::TimeNs memory_ns;
  npusim::sim::TimeNs compute_ns;
  double hbm_bytes;
};
Derived derive(const npusim::OpDesc& op, const npusim::HwSpec& hw, double hit) {
  npusim::PredictContext ctx;
  ctx.l2_hit_ratio = hit;
  const npusim::OpCost c = npusim::predict(op, hw, npusim::CoreBudget{10, 20}, ctx);
  const double device_us = c.duration_us - c.critical_path.host_us;
  const auto memory_ns = npusim::sim::us_to_ns(std::min(c.critical_path.memory_us, device_us));
  const double capacity = hw.hbm_bytes_per_us() / 1e3;
  return {
      memory_ns, npusim::sim::us_to_ns(device_us) - memory_ns,
      std::min(hw.hbm_bus_bytes(c.bytes_in * (1 - hit), c.bytes_out),
               capacity * static_cast<double>(memory_ns))};
}
}  // namespace

TEST_CASE("two streams flush each other's L2 and share HBM, each at half the bandwidth",
          "[mechanism][hbm][l2]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const Scenario s = npusim::sim::load_scenario(data("scenarios/mem_bound.toml"));
  const npusim::OpDesc op = s.graph.instantiate(0, 1);
  const double capacity = hw.hbm_bytes_per_us() / 1e3;  // bytes per ns
  const double bytes_in = npusim::predict(op, hw, npusim::CoreBudget{10, 20}).bytes_in;
  // Alone the stream's working set (its reads) fits L2; two of them are twice L2.
  REQUIRE(bytes_in <= hw.chip.l2_bytes);
  REQUIRE(2 * bytes_in > hw.chip.l2_bytes);
  const double shared_hit = std::floor(hw.chip.l2_bytes / (2 * bytes_in) * 32) / 32;
  CHECK(shared_hit == 0.5);

  const Derived alone = derive(op, hw, 1.0);
  const Derived shared = derive(op, hw, shared_hit);
  REQUIRE(shared.memory_ns > 0);
  const double rate = shared.hbm_bytes / static_cast<double>(shared.memory_ns);
  REQUIRE(2 * rate > capacity);  // together they want more than HBM has

  const SimResult one = npusim::sim::simulate(
      npusim::sim::load_scenario(data("scenarios/mem_bound.toml"), {"deployment.streams=1"}), hw);
  const SimResult two = npusim::sim::simulate(s, hw);
  // Alone (the second request waits for the first) the op keeps its predicted time with L2 hits.
  CHECK(one.ops[0].mean_us * 1e3 ==
        Approx(static_cast<double>(alone.memory_ns + alone.compute_ns)).margin(1));
  // Together both start at once; each moves its HBM bytes at capacity / 2.
  const double shared_ns = std::ceil(shared.hbm_bytes / (capacity / 2));
  CHECK(two.ops[0].mean_us * 1e3 ==
        Approx(shared_ns + static_cast<double>(shared.compute_ns)).margin(1));
  CHECK(two.ops[0].mean_us > one.ops[0].mean_us);
}

TEST_CASE("a graph of tiny ops is host bound and leaves the device idle", "[mechanism][host]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double launch_us = hw.host.launch_aclnn_us;
  REQUIRE(launch_us > 1.0);
  SECTION("20 ops of 1 us behind launches of launch_us each") {
    const SimResult r = run("host_bound.toml");
    // The device runs op k right after its launch: the batch ends one op after the last launch.
    const double service_us = 20 * launch_us + 1.0;
    CHECK(r.service_ms_mean == Approx(service_us / 1e3));
    CHECK(r.device_idle_share == Approx(1.0 - 20.0 / service_us));
  }
  SECTION("20 ops of 50 us: launches run ahead and the device waits only for the first") {
    const SimResult r = run("device_bound.toml");
    const double service_us = launch_us + 20 * 50.0;
    CHECK(r.service_ms_mean == Approx(service_us / 1e3));
    CHECK(r.device_idle_share == Approx(launch_us / service_us));
  }
}

TEST_CASE("an oversize request is split and its latency is that of the slowest chunk",
          "[mechanism][split]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double d_us = hw.host.launch_aclnn_us + 100.0;
  const double bytes_per_us = hw.pcie.bandwidth_gbps * hw.pcie.efficiency * 1e3;
  const double copy8 = hw.pcie.latency_us + 8 * 25600 / bytes_per_us;
  const double copy4 = hw.pcie.latency_us + 4 * 25600 / bytes_per_us;
  SECTION("four streams: chunks of 8, 8, 4 copy in turn and run in parallel") {
    const SimResult r = run("split.toml");
    CHECK(r.requests == 1);
    CHECK(r.split_requests == 1);
    CHECK(r.batches == 3);
    CHECK(r.mean_gear == Approx((8 + 8 + 4) / 3.0));
    // the last chunk is ready after all three copies, then runs d_us
    CHECK(r.latency.max_ms == Approx((copy8 + copy8 + copy4 + d_us) / 1e3));
  }
  SECTION("one stream: the chunks queue behind each other") {
    const SimResult r = run("split.toml", {"deployment.streams=1"});
    CHECK(r.latency.max_ms == Approx((copy8 + 3 * d_us) / 1e3));
  }
}

TEST_CASE("the trace has one track per stream and resource and ops named as in the graph",
          "[mechanism][trace]") {
  npusim::sim::SimOptions opt;
  opt.trace = true;
  const SimResult r = run("split.toml", {}, opt);
  const auto j = nlohmann::json::parse(npusim::sim::trace_to_json(r));
  REQUIRE(j.contains("traceEvents"));
  int ops = 0;
  int copies = 0;
  int launches = 0;
  std::set<std::string> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tracks.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] != "X") continue;
    CHECK(e["dur"].get<double>() >= 0);
    if (e["name"] == "fixed") ++ops;
    if (e["name"] == "input copy") ++copies;
    if (e["name"] == "launch fixed") ++launches;
  }
  CHECK(ops == 3);
  CHECK(copies == 3);
  CHECK(launches == 3);
  CHECK(tracks.count("stream 0 device") == 1);
  CHECK(tracks.count("stream 3 host") == 1);
  CHECK(tracks.count("PCIe input copy") == 1);
  // busy-core counters: the three chunks hold one vector core each at their peak
  int max_vector = -1;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "vector cores busy") {
      max_vector = std::max(max_vector, e["args"]["busy"].get<int>());
    }
  }
  CHECK(max_vector >= 1);
  CHECK(max_vector <= 3);
}

TEST_CASE("cards needed is the target traffic over one card's QPS, rounded up",
          "[mechanism][target]") {
  const Scenario s = npusim::sim::load_scenario(
      std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / "mdc_validation.toml",
      {"workload.requests=20000", "target.traffic_qps=12345"});
  const SimResult r = npusim::sim::simulate(s, npusim::test::chip(s.info.hw));
  REQUIRE(r.cards_needed.has_value());
  CHECK(*r.cards_needed == static_cast<std::int64_t>(std::ceil(12345 / r.qps)));
  REQUIRE(r.p99_met.has_value());
  CHECK(*r.p99_met == (r.latency.p99_ms <= 1.0));
}

TEST_CASE("a dynamic-shape op holds back the launches after it until the host has synced",
          "[mechanism][dynamic]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double l = hw.host.launch_aclnn_us;
  const double sync = hw.host.dynamic_shape_sync_us;
  REQUIRE(l < 10.0);  // launches of the first two ops hide behind the first op
  SECTION("the op after the Where launches after Where + sync") {
    const SimResult r = run("dynamic_shape.toml");
    // launch before | before runs | where runs (launched meanwhile) | sync | launch after | after
    CHECK(r.service_ms_mean == Approx((l + 10 + 30 + sync + l + 10) / 1e3));
    CHECK(r.aicpu_utilization > 0);
  }
  SECTION("declared static, the op after it is launched ahead and runs right after it") {
    std::string text = npusim::test::read_text(data("scenarios/dynamic_shape.toml"));
    text.replace(text.find("duration_us = 30.0"), 18,
                 "duration_us = 30.0\nattrs = { dynamic_shape = false }");
    const SimResult r = npusim::sim::simulate(npusim::test::scenario_from_text(text), hw);
    CHECK(r.service_ms_mean == Approx((l + 10 + 30 + 10) / 1e3));
  }
}

TEST_CASE("AI CPU ops queue for the chip's few AI CPU cores", "[mechanism][aicpu]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const int cores = hw.chip.aicpu_cores;
  REQUIRE(cores >= 1);
  REQUIRE(cores < 8);
  const SimResult r = run("aicpu_pool.toml");
  REQUIRE(r.requests == 8);
  // Requests served in rounds of `cores`: round k ends at launch + (k + 1) * 100 us.
  const int rounds = (8 + cores - 1) / cores;
  CHECK(r.latency.max_ms == Approx((hw.host.launch_aclnn_us + rounds * 100.0) / 1e3));
  CHECK(r.latency.p50_ms >= (hw.host.launch_aclnn_us + 100.0) / 1e3 - 1e-9);
  CHECK(r.aicpu_utilization <= 1.0);
}

TEST_CASE("the result copy back to the host is part of the service time", "[mechanism][pcie]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double bytes_per_us = hw.pcie.bandwidth_gbps * hw.pcie.efficiency * 1e3;
  const Scenario s = npusim::sim::load_scenario(
      std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / "mdc_validation.toml",
      {"workload.requests=1000", "workload.output_bytes_per_sample=51200"});
  const SimResult r = npusim::sim::simulate(s, hw);
  const double copy_us = hw.pcie.latency_us + 51200 / bytes_per_us;
  CHECK(r.service_ms_min == Approx((hw.host.launch_aclnn_us + 100.0 + copy_us) / 1e3));
  CHECK(r.service_ms_max == Approx(r.service_ms_min));
  CHECK(r.pcie_out_utilization > 0);
  CHECK(r.pcie_utilization == 0);
}

TEST_CASE("the batcher gathers requests while the streams are busy and pads to the next gear",
          "[mechanism][batcher]") {
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  const double d_us = hw.host.launch_aclnn_us + 100.0;
  SECTION("window 0: the first request runs alone, the three behind it run together in gear 4") {
    const SimResult r = run("batcher.toml");
    CHECK(r.batches == 2);
    CHECK(r.mean_batch_samples == Approx((1 + 3) / 2.0));
    CHECK(r.mean_gear == Approx((1 + 4) / 2.0));
    // the request at 1 us waits for the first batch, then runs in the second
    CHECK(r.latency.max_ms == Approx((2 * d_us - 1) / 1e3));
  }
  SECTION("a window holds a free stream back until the oldest request has waited it") {
    const SimResult r = run(
        "batcher.toml", {"deployment.batch_window_us=50", "workload.trace_file=two_in_window.csv"});
    CHECK(r.batches == 1);
    CHECK(r.mean_gear == 2);
    CHECK(r.latency.max_ms == Approx((50 + d_us) / 1e3));
    CHECK(r.latency.p50_ms == Approx((50 - 30 + d_us) / 1e3));
  }
}
