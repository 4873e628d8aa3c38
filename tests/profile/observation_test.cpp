#include "profile/observation.h"

#include <catch2/catch.hpp>

#include "model/op_table.h"

#include "test_files.h"

using namespace npusim::profile;

TEST_CASE("compute rows become observations, communication is kept apart", "[observation]") {
  const auto set = read_observations({npusim::test::crafted_msprof()});
  CHECK(set.compute.size() == 12);
  CHECK(set.communication.size() == 1);
  CHECK(set.communication.front().name == "hcom_allReduce__1_0_1");
  CHECK(set.skipped_count == 0);
  const Observation& mm = set.compute.front();
  CHECK(mm.op.type == "MatMulV2");
  REQUIRE(mm.op.inputs.size() == 2);
  CHECK(mm.op.inputs[0].shape == std::vector<std::int64_t>{1024, 64});
  CHECK(mm.op.inputs[1].dtype == npusim::DType::kFloat16);
  // AI_CORE names the AI Core, not its cube: the op's family places a MatMul on the cube
  CHECK_FALSE(mm.op.placement.has_value());
  CHECK(mm.op.kind->placement == npusim::Placement::kCube);
  CHECK(mm.block_dim == 20);
  CHECK(mm.duration_us == 20);
  CHECK(mm.aic_total_cycles == 200000);
  CHECK(mm.pipes.mte2_us == 6);
  CHECK(mm.mte2_ratio == Approx(0.3));
  CHECK(mm.pos.line == 2);
  const Observation& add = set.compute[1];
  CHECK(*add.op.placement == npusim::Placement::kVector);
  CHECK(add.mte2_ratio == Approx(0.9));
  CHECK(add.pipes.mte2_us == 2.0);
  const auto cpu = std::find_if(set.compute.begin(), set.compute.end(),
                                [](const Observation& o) { return o.kind == TaskKind::kAicpu; });
  REQUIRE(cpu != set.compute.end());
  CHECK(cpu->op.inputs[1].dtype == npusim::DType::kInt64);
}

TEST_CASE("rows without shapes are counted as skipped with their reason", "[observation]") {
  const auto set = read_observations(
      {npusim::test::data_dir() + "/profiles/cann6_unprefixed/op_summary_0_1_1.csv"});
  CHECK(set.compute.empty());
  CHECK(set.skipped_count == 2);
  REQUIRE(!set.skipped.empty());
  CHECK(set.skipped.front().pos.line == 2);
  CHECK_THAT(set.skipped.front().reason, Catch::Contains("no input shapes"));
}

TEST_CASE("non-compute tasks do not become observations", "[observation]") {
  KernelRow row;
  row.name = "hcom_x";
  row.kind = TaskKind::kCommunication;
  CHECK_THROWS_AS(observe(row, "f.csv"), npusim::InputError);
}
