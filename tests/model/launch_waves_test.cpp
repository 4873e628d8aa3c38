// Launch waves (model/cost/launch_waves.cpp): a cube launch of more blocks than the chip has
// cores runs ceil(blocks / cores) rounds of 1/blocks of the work on each core. Hand-computed on a
// 30-core chip at 1 GHz with a plan whose only cost is 1000 cube cycles (1 us) a tile.
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec chip30() {
  HwSpec hw = npusim::test::chip("ascend910");
  hw.chip.freq_mhz = 1000;
  hw.chip.cube_cores = 30;
  hw.chip.vector_cores = 30;
  hw.memory.read_latency_cycles = 0;
  hw.memory.write_latency_cycles = 0;
  hw.overhead.launch_cycles = 0;
  hw.overhead.per_block_cycles = 0;
  return hw;
}

cost::KernelPlan cube_plan(std::int64_t tiles) {
  cost::KernelPlan p;
  p.unit = Placement::kCube;
  p.tiles = tiles;
  p.cube_cycles = 1000;
  return p;
}

}  // namespace

TEST_CASE("a 32-block cube launch on 30 cores runs two rounds of 1/32 of the work",
          "[mechanism][launch_waves]") {
  const HwSpec hw = chip30();
  // 192 tiles: spread by the plan, ceil(192 / 30) = 7 waves (6.4 ideal); split into 32 blocks of
  // 6 tiles, a core runs ceil(32 / 30) = 2 blocks = 12 tiles.
  std::int64_t w = 7;
  double w_ideal = 6.4;
  CoreBudget b{30, 0, 32};
  cost::block_waves(cube_plan(192), hw, b, 192, w, w_ideal);
  CHECK(w == 12);
  CHECK(w_ideal == Approx(12));
  // evaluate: 12 tiles of 1 us in series on the busiest core, against 7 at 30 blocks.
  const OpCost at30 = cost::evaluate(cube_plan(192), hw, CoreBudget{30, 0, 30}, {});
  const OpCost at32 = cost::evaluate(cube_plan(192), hw, b, {});
  CHECK(at30.duration_us == Approx(7.0));
  CHECK(at32.duration_us == Approx(12.0));
  CHECK(at32.waves == 12);
  // 64 blocks: 3 rounds of 3 tiles = 9 tiles a core, against 7.
  CHECK(cost::evaluate(cube_plan(192), hw, CoreBudget{30, 0, 64}, {}).duration_us ==
        Approx(9.0));
}

TEST_CASE("launch waves change nothing at or below the core count, for coarse plans, or for "
          "vector launches",
          "[mechanism][launch_waves]") {
  const HwSpec hw = chip30();
  std::int64_t w = 7;
  double w_ideal = 6.4;
  cost::block_waves(cube_plan(192), hw, CoreBudget{30, 0, 30}, 192, w, w_ideal);
  CHECK(w == 7);  // 30 blocks on 30 cores: the plan's own spread
  // 12 tiles in 32 blocks: 2 rounds of 12/32 of a tile = 0.75 of a tile, under the plan's 1 wave.
  w = 1;
  w_ideal = 1;
  cost::block_waves(cube_plan(12), hw, CoreBudget{30, 0, 32}, 12, w, w_ideal);
  CHECK(w == 1);
  CHECK(w_ideal == 1);
  // A vector launch keeps its plan (only cube launches take rounds).
  cost::KernelPlan v = cube_plan(192);
  v.unit = Placement::kVector;
  w = 7;
  w_ideal = 6.4;
  cost::block_waves(v, hw, CoreBudget{0, 30, 32}, 192, w, w_ideal);
  CHECK(w == 7);
  // no launch block dim known (0): unchanged
  cost::block_waves(cube_plan(192), hw, CoreBudget{}, 192, w, w_ideal);
  CHECK(w == 7);
}

TEST_CASE("whole units per core: a core runs ceil(units / block dim) units' worth of the tiles",
          "[mechanism][whole_units]") {
  const HwSpec hw = chip30();
  // 30 tiles of 1 us of vector work, 32 images dealt whole to 30 cores: ceil(32 / 30) = 2
  // images of 30 / 32 tiles each, 1.875 tiles a core (2 waves) against 1 spread evenly.
  cost::KernelPlan p;
  p.unit = Placement::kVector;
  p.tiles = 30;
  p.vector_cycles = 1000;
  std::int64_t w = 1;
  double w_ideal = 1;
  p.whole_units = 32;
  cost::dealt_waves(static_cast<double>(p.whole_units), 30, 30, w, w_ideal);
  CHECK(w == 2);
  CHECK(w_ideal == Approx(1.875));
  // evaluate: a first tile, 0.875 more of the bound stage and the last wave's idle 0.125: 2 us
  CHECK(cost::evaluate(p, hw, CoreBudget{0, 30}, {}).duration_us == Approx(2.0));
  // 30 images on 30 cores, or no unit rule: one tile a core
  p.whole_units = 30;
  CHECK(cost::evaluate(p, hw, CoreBudget{0, 30}, {}).duration_us == Approx(1.0));
  p.whole_units = 0;
  CHECK(cost::evaluate(p, hw, CoreBudget{0, 30}, {}).duration_us == Approx(1.0));
  // 16 images on 16 cores: one each, the even split already
  p.whole_units = 16;
  p.tiles = 16;
  w = 1;
  w_ideal = 1;
  cost::dealt_waves(static_cast<double>(p.whole_units), 16, 16, w, w_ideal);
  CHECK(w == 1);
  CHECK(w_ideal == Approx(1.0));
}

TEST_CASE("each launch round's block refills the pipeline: its first tile runs every stage in "
          "series",
          "[mechanism][launch_waves]") {
  const HwSpec hw = chip30();
  // Two stages a tile: 1000 cube cycles (1 us, the bound stage) and 500 MTE1 cycles (0.5 us).
  // One pipeline of n tiles takes 1.5 + (n - 1) x 1 us; a block started afresh pays its 0.5 again.
  cost::KernelPlan p = cube_plan(192);
  p.mte1_cycles = 500;
  // 30 blocks: 7 waves, one pipeline: 1.5 + 6 = 7.5 us.
  CHECK(cost::round_fills(p, hw, CoreBudget{30, 0, 30}, 6.4) == 1.0);
  CHECK(cost::evaluate(p, hw, CoreBudget{30, 0, 30}, {}).duration_us == Approx(7.5));
  // 32 blocks of 6 tiles: a core runs 2 blocks, 12 tiles in 2 pipelines: 2 x 1.5 + 10 = 13 us
  // (12.5 if the second block's first tile overlapped the first block's last).
  CHECK(cost::round_fills(p, hw, CoreBudget{30, 0, 32}, 12) == 2.0);
  CHECK(cost::evaluate(p, hw, CoreBudget{30, 0, 32}, {}).duration_us == Approx(13.0));
  // 64 blocks of 3 tiles: 3 blocks a core, 9 tiles in 3 pipelines: 3 x 1.5 + 6 = 10.5 us.
  CHECK(cost::evaluate(p, hw, CoreBudget{30, 0, 64}, {}).duration_us == Approx(10.5));
  // Never more fills than whole tiles a core runs: 12 tiles in 32 blocks is under a tile a core.
  CHECK(cost::round_fills(cube_plan(12), hw, CoreBudget{30, 0, 32}, 1) == 1.0);
  // A vector launch above the core count, or no block dim known: one pipeline.
  cost::KernelPlan v = p;
  v.unit = Placement::kVector;
  CHECK(cost::round_fills(v, hw, CoreBudget{0, 30, 32}, 12) == 1.0);
  CHECK(cost::round_fills(p, hw, CoreBudget{}, 12) == 1.0);
}
