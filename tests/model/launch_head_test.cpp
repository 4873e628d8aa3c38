// The launch a profile row records (model/cost/launch_head.cpp): its block dim counts in the head
// whatever the plan's tiles, up to the chip's cores, and it is the tiler's split of the data, down
// to one 32-byte block a core. Hand-computed on a 30-core chip at 1 GHz with a head of 300 cycles
// plus 100 a block.
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec head_chip30() {
  HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz
  hw.chip.cube_cores = 30;
  hw.chip.vector_cores = 30;
  hw.overhead.launch_cycles = 300;
  hw.overhead.per_block_cycles = 100;
  hw.vector.min_bytes_per_core = 4096;
  hw.memory.block_bytes = 32;
  return hw;
}

CoreBudget launched(int blocks) {
  CoreBudget b;
  b.vector_cores = blocks;
  b.launch_blocks = blocks;
  return b;
}

cost::KernelPlan vector_plan(std::int64_t tiles) {
  cost::KernelPlan p;
  p.unit = Placement::kVector;
  p.tiles = tiles;
  p.vector_cycles = 1000;
  return p;
}

}  // namespace

TEST_CASE("the head counts the blocks launched, at most the chip's cores", "[mechanism][head]") {
  const HwSpec hw = head_chip30();
  // one tile on one core: with no launch block dim the head is 300 + 100 x 1 cycles
  CoreBudget none;
  none.vector_cores = 30;
  CHECK(cost::evaluate(vector_plan(1), hw, none, {}).critical_path.head_us == Approx(0.4));
  // the same tile launched on 30 blocks: 300 + 100 x 30 = 3300 cycles
  const OpCost c30 = cost::evaluate(vector_plan(1), hw, launched(30), {});
  CHECK(c30.critical_path.head_us == Approx(3.3));
  CHECK(c30.block_dim == 1);  // the work is still one tile's, on one core
  // 12 blocks: 300 + 1200
  CHECK(cost::evaluate(vector_plan(1), hw, launched(12), {}).critical_path.head_us == Approx(1.5));
  // 64 blocks on 30 cores: the 34 that wait for a core start behind the first round's work,
  // so the head counts 30
  CoreBudget b64;
  b64.launch_blocks = 64;
  CHECK(cost::evaluate(vector_plan(1), hw, b64, {}).critical_path.head_us == Approx(3.3));
  // more tiles than the launch's blocks: the 6 blocks the plan runs on count, as before
  CHECK(cost::evaluate(vector_plan(90), hw, launched(6), {}).critical_path.head_us == Approx(0.9));
}

TEST_CASE("a launch's block dim splits a small tensor down to one 32-byte block a core",
          "[mechanism][head]") {
  const HwSpec hw = head_chip30();
  // SquareSumV1-sized: 3072 fp16 elements, 6144 B. The model's own tiler gives a core at least
  // 4096 B: 2 cores. Launched on 12 blocks (the BERT runs' LAMB kernels), 512 B a core: 12.
  const OpDesc relu = test::op_io("Relu", "3072", "FLOAT16", "ND", "3072", "FLOAT16", "ND");
  CoreBudget none;
  none.vector_cores = 12;
  CHECK(predict(relu, hw, none).block_dim == 2);
  const OpCost c12 = predict(relu, hw, launched(12));
  CHECK(c12.block_dim == 12);
  CHECK(c12.critical_path.head_us == Approx(1.5));  // 300 + 100 x 12 cycles
  // 8 fp16 elements (16 B, NPUClearFloatStatus-sized) on 30 blocks: one 32-byte block holds
  // them all, one core works, and the head is the 30 blocks'
  const OpDesc tiny = test::op_io("Relu", "8", "FLOAT16", "ND", "8", "FLOAT16", "ND");
  const OpCost t30 = predict(tiny, hw, launched(30));
  CHECK(t30.block_dim == 1);
  CHECK(t30.critical_path.head_us == Approx(3.3));
  // 48 KB on 30 blocks: 1.6 KB a core, every launched block works (12 cores without the launch)
  const OpDesc mid = test::op_io("Relu", "24576", "FLOAT16", "ND", "24576", "FLOAT16", "ND");
  CoreBudget all;
  all.vector_cores = 30;
  CHECK(predict(mid, hw, all).block_dim == 12);
  CHECK(predict(mid, hw, launched(30)).block_dim == 30);
}
