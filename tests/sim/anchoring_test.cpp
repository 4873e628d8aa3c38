// Measured, anchored and predicted op times (model/measured.h, sim/anchoring.h): a measured op
// runs its measured time under the conditions it was measured in, and measured x the model's
// ratio (new / measured conditions) when a scenario changes the chip, the core budget or its
// shapes; the counts say which ops ran which way.
#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.h"
#include "model/predict.h"
#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

using npusim::CoreBudget;
using npusim::HwSpec;
using npusim::OpDesc;
using npusim::PredictContext;
using npusim::sim::Scenario;
using npusim::sim::SimOptions;
using npusim::sim::SimResult;

namespace {

// One measured Add (100 us at B = 1 on the 910B3, the whole chip) and one predicted Relu.
std::string scenario_text(const std::string& measured_table, const std::string& hw = "ascend910b3",
                          const std::string& extra_op_keys = "") {
  return "[scenario]\nhw = \"" + hw + "\"\n[graph]\nname = \"anchor\"\n" + measured_table + R"(
[[graph.op]]
name = "wide"
type = "Add"
shapes = "B,8388608;B,8388608"
dtypes = "FLOAT16;FLOAT16"
duration_us = 100.0
)" + extra_op_keys + R"(
[[graph.op]]
name = "act"
type = "Relu"
shapes = "B,4096"
dtypes = "FLOAT16"
[deployment]
streams = 1
gears = [1]
[workload]
arrival = "closed"
concurrency = 1
requests = 20
batch_size = 1
[contention]
scheduler = false
)";
}

const std::string kMeasured = "[graph.measured]\nhw = \"ascend910b3\"\nbatch = 1\n";

// The model's device time of `op` on `hw` within `budget`, with every read an L2 hit (a lone
// stream's small working set, as the simulator sees it).
double device_us(const OpDesc& op, const HwSpec& hw, CoreBudget budget) {
  PredictContext ctx;
  ctx.l2_hit_ratio = 1.0;
  const auto c = npusim::predict(op, hw, budget, ctx);
  return c.duration_us - c.critical_path.host_us;
}

SimResult anchored_run(const Scenario& s, const SimOptions& opt = {}) {
  return npusim::sim::simulate(s, npusim::test::chip(s.info.hw), opt);
}

}  // namespace

TEST_CASE("under the conditions it was measured in, an op runs exactly its measured time",
          "[anchor]") {
  const SimResult r = anchored_run(npusim::test::scenario_from_text(scenario_text(kMeasured)));
  REQUIRE(r.ops.size() == 2);
  CHECK(r.ops[0].name == "wide");
  CHECK(r.ops[0].mean_us == Approx(100.0).epsilon(1e-12));
  CHECK(r.ops[0].source == "measured");
  CHECK(r.ops[1].source == "predicted");
  CHECK(r.op_sources.measured == 1);
  CHECK(r.op_sources.anchored == 0);
  CHECK(r.op_sources.predicted == 1);
  CHECK(r.execution_sources.measured == r.ops[0].executions);
  CHECK(r.execution_sources.predicted == r.ops[1].executions);
  CHECK(r.execution_sources.anchored == 0);
}

TEST_CASE("a batch other than the measured one anchors the op on the model's ratio",
          "[anchor]") {
  const Scenario s =
      npusim::test::scenario_from_text(scenario_text(kMeasured), {"deployment.gears=[2]"});
  const HwSpec hw = npusim::test::chip("ascend910b3");
  const CoreBudget chip{hw.chip.cube_cores, hw.chip.vector_cores};
  const double at_1 = device_us(s.graph.instantiate(0, 1), hw, chip);
  const double at_2 = device_us(s.graph.instantiate(0, 2), hw, chip);
  // Twice the elements of a memory-bound Add: the model's time about doubles.
  REQUIRE(at_2 / at_1 > 1.6);
  REQUIRE(at_2 / at_1 < 2.2);
  const SimResult r = anchored_run(s);
  CHECK(r.ops[0].source == "anchored");
  CHECK(r.ops[0].mean_us == Approx(100.0 * at_2 / at_1).epsilon(1e-4));
  CHECK(r.op_sources.anchored == 1);
  CHECK(r.op_sources.measured == 0);
  CHECK(r.op_sources.predicted == 1);
  CHECK(r.execution_sources.anchored == r.ops[0].executions);
}

TEST_CASE("a core limit below the measured budget anchors the op", "[anchor]") {
  const Scenario s = npusim::test::scenario_from_text(
      scenario_text(kMeasured), {"deployment.vector_cores_per_stream=8"});
  const HwSpec hw = npusim::test::chip("ascend910b3");
  const double measured_at = device_us(s.graph.instantiate(0, 1), hw,
                                       CoreBudget{hw.chip.cube_cores, hw.chip.vector_cores});
  const double limited = device_us(s.graph.instantiate(0, 1), hw, CoreBudget{hw.chip.cube_cores, 8});
  REQUIRE(limited > measured_at);  // fewer cores, more waves
  const SimResult r = anchored_run(s);
  CHECK(r.ops[0].source == "anchored");
  CHECK(r.ops[0].mean_us == Approx(100.0 * limited / measured_at).epsilon(1e-4));
}

TEST_CASE("another chip anchors the op on the ratio of the two chips' predictions",
          "[anchor]") {
  const Scenario s = npusim::test::scenario_from_text(scenario_text(kMeasured, "ascend910b4"));
  SECTION("without the measured chip's spec it is an error at [graph.measured]") {
    try {
      (void)anchored_run(s);
      FAIL("expected an InputError");
    } catch (const npusim::InputError& e) {
      CHECK(e.pos().line == 5);  // the [graph.measured] table
      CHECK_THAT(e.detail(), Catch::Contains("measured on 'ascend910b3'") &&
                                 Catch::Contains("ascend910b4"));
    }
  }
  SECTION("with it, measured x new chip / measured chip") {
    const HwSpec b3 = npusim::test::chip("ascend910b3");
    const HwSpec b4 = npusim::test::chip("ascend910b4");
    SimOptions opt;
    opt.measured_hw = std::make_shared<const HwSpec>(b3);
    const double on_b3 = device_us(s.graph.instantiate(0, 1), b3,
                                   CoreBudget{b3.chip.cube_cores, b3.chip.vector_cores});
    const double on_b4 = device_us(s.graph.instantiate(0, 1), b4,
                                   CoreBudget{b4.chip.cube_cores, b4.chip.vector_cores});
    REQUIRE(on_b3 != on_b4);
    const SimResult r = anchored_run(s, opt);
    CHECK(r.ops[0].source == "anchored");
    CHECK(r.ops[0].mean_us == Approx(100.0 * on_b4 / on_b3).epsilon(1e-4));
  }
  SECTION("load_measured_hw finds the chip by name, and none when it is the scenario's") {
    const auto dirs = std::vector<std::filesystem::path>{
        std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"};
    const auto m = npusim::sim::load_measured_hw(s, npusim::test::chip("ascend910b4"), dirs);
    REQUIRE(m != nullptr);
    CHECK(m->chip.name == "ascend910b3");
    const Scenario same = npusim::test::scenario_from_text(scenario_text(kMeasured));
    CHECK(npusim::sim::load_measured_hw(same, npusim::test::chip("ascend910b3"), dirs) == nullptr);
  }
}

TEST_CASE("measured_shapes say which gear ran measured and which anchored", "[anchor]") {
  // Measured at 4 x 8388608; the graph runs gears 1 and 4.
  const Scenario s = npusim::test::scenario_from_text(
      scenario_text("[graph.measured]\nhw = \"Ascend910B3\"\n", "ascend910b3",
                    "measured_shapes = \"4,8388608;4,8388608\"\n"),
      {"deployment.gears=[1, 4]", "workload.batch_size={1 = 0.5, 4 = 0.5}",
       "workload.requests=200"});
  const SimResult r = anchored_run(s);
  CHECK(r.ops[0].source == "anchored");  // anchored at gear 1
  CHECK(r.execution_sources.anchored > 0);
  CHECK(r.execution_sources.measured > 0);
  CHECK(r.execution_sources.anchored + r.execution_sources.measured == r.ops[0].executions);
}

TEST_CASE("a graph without [graph.measured] keeps its durations as they are at any batch",
          "[anchor]") {
  const SimResult r = anchored_run(
      npusim::test::scenario_from_text(scenario_text(""), {"deployment.gears=[2]"}));
  CHECK(r.ops[0].mean_us == Approx(100.0).epsilon(1e-12));
  CHECK(r.ops[0].source == "measured");
  CHECK(r.op_sources.measured == 1);
}

TEST_CASE("the report says how many ops ran measured, anchored and predicted", "[anchor]") {
  const SimResult r = anchored_run(
      npusim::test::scenario_from_text(scenario_text(kMeasured), {"deployment.gears=[2]"}));
  const std::string text = npusim::sim::result_to_text(r);
  CHECK_THAT(text, Catch::Contains("op times: 0 measured, 1 anchored, 1 predicted"));
  const auto j = nlohmann::json::parse(npusim::sim::result_to_json(r));
  CHECK(j["time_sources"]["ops"]["anchored"] == 1);
  CHECK(j["time_sources"]["ops"]["predicted"] == 1);
  CHECK(j["time_sources"]["executions"]["anchored"] == r.ops[0].executions);
  CHECK(j["ops"][0]["source"] == "anchored");
}

TEST_CASE("shapes in B with a duration need the measured batch", "[anchor][bad]") {
  try {
    (void)npusim::test::scenario_from_text(
        scenario_text("[graph.measured]\nhw = \"ascend910b3\"\n"));
    FAIL("expected an InputError");
  } catch (const npusim::InputError& e) {
    CHECK(e.pos().line == 8);  // the op's table
    CHECK_THAT(e.detail(), Catch::Contains("'wide'") && Catch::Contains("batch"));
  }
}
