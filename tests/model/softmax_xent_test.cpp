// Hand-computed cases for SoftmaxCrossEntropyWithLogits as TBE's logits_2d_schedule runs it
// (model/cost/softmax_xent.cpp), on a toy coupled-core chip: 1 GHz, 30 vector cores, a 192 KiB UB (half of it
// over 6 x 128 fp32 elements: 4096 elements a UB tile), every vector class 1 cycle a repeat but
// binary 2, 22 cycles an API call, 230 cycles a row reduction's scalar round trip, 8 cycles a
// scalar UB access.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec xent_toy() {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.split_cores = false;  // the coupled-core parts' TBE static schedule
  hw.chip.vector_cores = 30;
  hw.chip.ub_bytes = 196608;
  hw.vector.row_reduce_sync_cycles = 230;
  hw.vector.scalar_cycles_per_element = 8;
  return hw;
}

OpDesc xent(const std::string& n, const std::string& c) {
  const std::string nc = n + "," + c;
  return npusim::test::op_io("SoftmaxCrossEntropyWithLogits", nc + ";" + nc, "FLOAT", "ND;ND",
                             n + ";" + nc, "FLOAT;FLOAT", "ND;ND");
}

}  // namespace

TEST_CASE("the logits schedule copies unaligned rows element by element before each reduction",
          "[mechanism][softmax]") {
  const HwSpec hw = xent_toy();
  // [16, 100] fp32: 64 B of loss is under 32 B a core on 30 cores, so 64 / 32 = 2 parts of 8
  // rows; 8 rows of 100 fp32 (3200 B) are under 8 KB, so one block. 16 x 100 = 1600 elements fit
  // a UB tile: one tile of 16 rows. 100 % 16 != 0 with 16 rows a tile: each of the three row
  // reductions first copies the row's 100 elements with a reg_mov (a load and a store, 2 x 8
  // cycles): 16 x 3 x 100 x 16 = 76800 cycles, plus 16 x 3 x 230 = 11040 for the reductions'
  // round trips: 87.84 us of scalar work. The 13 passes over the tile (6400 B, 25 repeats):
  // 3 reduce + 3 unary + 3 transcendental at 25 + 22 = 47 and 4 binary at 50 + 22 = 72: 711.
  const OpCost c = predict(xent("16", "100"), hw, CoreBudget{});
  CHECK(c.block_dim == 1);
  CHECK(c.pipes.scalar_us == Approx(87.84));
  CHECK(c.pipes.vector_us == Approx(0.711));
  // [16, 128]: 128 % 16 == 0, the reductions are vector reductions: only the round trips remain
  const OpCost aligned = predict(xent("16", "128"), hw, CoreBudget{});
  CHECK(aligned.block_dim == 1);
  CHECK(aligned.pipes.scalar_us == Approx(11.04));
}

TEST_CASE("the logits schedule's workspace variant runs a row at a time through GM",
          "[mechanism][softmax]") {
  const HwSpec hw = xent_toy();
  // [64, 1001] fp32: 256 B of loss, 8 parts of 8 rows (32 KB each, above 8 KB); a row of 4004 B
  // is not whole 32-byte blocks and C > 128, so one row a UB tile, under 8 rows with several
  // blocks: the workspace variant. Its blocks: the fewest rows (at least 8) with at most 30
  // blocks: 8 rows, 8 blocks. A row (one chunk: 1001 <= 4096) runs 3 reduce, 2 unary and 3
  // transcendental passes over 16 repeats (38 cycles each) and 5 binary (32 + 22 = 54): 574
  // cycles, 8 rows 4592; the round trips 8 x 3 x 230 = 5520.
  const OpCost c = predict(xent("64", "1001"), hw, CoreBudget{});
  CHECK(c.block_dim == 8);
  CHECK(c.pipes.vector_us == Approx(4.592));
  CHECK(c.pipes.scalar_us == Approx(5.52));
  // per row 10 row reads (features, labels, x - max, exp and the broadcast sum, twice each) and
  // 4 row writes (the three intermediates and the backprop) plus its loss
  CHECK(c.bytes_in == Approx(64.0 * 10 * 4004));
  CHECK(c.bytes_out == Approx(64.0 * (4 * 4004 + 4)));
}

TEST_CASE("the split-core parts keep the generic row-wise plan for SoftmaxCrossEntropyWithLogits",
          "[mechanism][softmax]") {
  HwSpec hw = xent_toy();
  const OpCost coupled = predict(xent("16", "100"), hw, CoreBudget{});
  hw.chip.split_cores = true;
  const OpCost split = predict(xent("16", "100"), hw, CoreBudget{});
  // no per-element copies there: far less scalar work than the 87.84 us above
  CHECK(split.pipes.scalar_us < coupled.pipes.scalar_us / 5);
}

TEST_CASE("the logits schedule's block and tile choices are closed forms, not loops over rows",
          "[mechanism][softmax]") {
  const HwSpec hw = xent_toy();
  // 2^33 rows: the schedule's own loops (down from the rows to a tile's, down from N to a
  // block's) would run for minutes here; the closed forms make the same choice at once.
  // [2^33, 1001] runs the workspace variant with the fewest rows a block that keep the blocks
  // within 30 cores: ceil(2^33 / 30) = 286331154 rows, 30 blocks, 10 row reads of 4004 B a row.
  const OpCost wide = predict(xent("8589934592", "1001"), hw, CoreBudget{});
  CHECK(wide.block_dim == 30);
  CHECK(std::isfinite(wide.duration_us));
  CHECK(wide.bytes_in == Approx(8589934592.0 * 10 * 4004));
  // [2^33, 128]: aligned rows, 30 blocks of 286331153 rows, a tile of at most 4096 / 128 = 32
  // rows (a divisor of the block's)
  const OpCost aligned = predict(xent("8589934592", "128"), hw, CoreBudget{});
  CHECK(aligned.block_dim == 30);
  CHECK(std::isfinite(aligned.duration_us));
}
