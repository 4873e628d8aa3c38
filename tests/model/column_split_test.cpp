// Hand-computed cases for leading-axis reductions of ND tensors cut over the kept axis
// (model/cost/column_split.h): the core split, the strided bursts of whole-block rows and the
// one-row-at-a-time DMAs of rows whose stride is not whole 32-byte blocks.
#include <catch2/catch.hpp>

#include "model/cost/column_split.h"
#include "model/cost/kernel_plan.h"
#include "model/op_table.h"
#include "model/prepared_op.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

cost::ColumnSplit split(const std::string& shape, const std::string& out, int cores,
                        const std::string& format = "ND") {
  const OpDesc op = npusim::test::op_io("BiasAddGrad", shape, "FLOAT", format, out, "FLOAT", "ND");
  return cost::column_split(op.inputs[0], cost::reduce_layout(op), npusim::test::toy_vector_chip(),
                            cores);
}

}  // namespace

TEST_CASE("an ND sum over its leading axis cuts the kept axis over the cores",
          "[mechanism][reduce][column_split]") {
  // vit [6400,768] fp32: 3072-B rows are 96 blocks; the largest divisor of 96 up to 30 is 24
  // (the profile's block dim), each core reading 4 blocks (128 B) of every row
  const auto a = split("6400,768", "768", 30);
  REQUIRE(a.applies);
  CHECK(a.strided);
  CHECK(a.blocks == 24);
  CHECK(a.rows == 6400);
  CHECK(a.slice_bytes == 128);
  // [6400,3072]: 384 blocks, 24 cores of 16 blocks (512 B)
  const auto b = split("6400,3072", "3072", 30);
  CHECK(b.blocks == 24);
  CHECK(b.slice_bytes == 512);
  // [128,1001]: 4004-B rows are not whole blocks: ceil(1001 / 30) = 34 columns a core, 30 cores
  const auto c = split("128,1001", "1001", 30);
  REQUIRE(c.applies);
  CHECK_FALSE(c.strided);
  CHECK(c.blocks == 30);
  CHECK(c.slice_bytes == 136);
  // [32,100]: ceil(100 / 30) = 4 columns is less than two blocks (16 fp32): 16 a core, 7 cores
  const auto d = split("32,100", "100", 30);
  CHECK(d.blocks == 7);
  CHECK(d.slice_bytes == 64);
  // [64,2]: one core, 8 B a row
  const auto e = split("64,2", "2", 30);
  CHECK(e.blocks == 1);
  CHECK(e.slice_bytes == 8);
  // not this schedule: a fractal input, a middle axis, a whole-tensor sum
  CHECK_FALSE(split("48,256,16,16", "768", 30, "FRACTAL_NZ").applies);
  CHECK_FALSE(cost::column_split(npusim::test::op_io("ReduceSum", "8,3,80", "FLOAT", "ND", "8,1,80",
                                                     "FLOAT", "ND").inputs[0],
                                 cost::reduce_layout(npusim::test::op_io(
                                     "ReduceSum", "8,3,80", "FLOAT", "ND", "8,1,80", "FLOAT", "ND")),
                                 npusim::test::toy_vector_chip(), 30)
                    .applies);
  CHECK_FALSE(split("12000,1", "1", 30).applies);
  // few columns over many rows: 8 of 40 cores with 98304 rows of 512 B each, far past a UB tile
  CHECK_FALSE(split("98304,127", "127", 40).applies);
  // the same columns over 64 rows (32 KB a core) fit one tile: split
  CHECK(split("64,127", "127", 40).applies);
  // unaligned rows past a tile are not split even on few cores (8 of 13)
  CHECK_FALSE(split("98304,127", "127", 13).applies);
  // whole-block rows past a tile: split when it fills half the cores ([4096,2000] fp32: 250
  // blocks, 25 of 40 cores), not otherwise ([4096,16]: 2 blocks, 2 of 40, 256 KB a core)
  CHECK(split("4096,2000", "2000", 40).blocks == 25);
  CHECK_FALSE(split("4096,16", "16", 40).applies);
}

TEST_CASE("a column split pays per burst when strided and per row when not",
          "[mechanism][reduce][column_split]") {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.memory.block_bytes = 32;
  hw.memory.strided_burst_cycles = 3;
  hw.memory.unaligned_row_cycles = 125;
  hw.memory.row_dma_bytes_per_cycle = 12;
  auto plan = [&](const std::string& shape, const std::string& out) {
    const OpDesc op = npusim::test::op_io("BiasAddGrad", shape, "FLOAT", "ND", out, "FLOAT", "ND");
    return cost::plan_reduction(op, op_facts(op), hw, 30);
  };
  // [6400,768]: 24 tiles, each 6400 bursts of 128 B: 819200 B and 3 x 6400 = 19200 cycles
  const cost::KernelPlan s = plan("6400,768", "768");
  CHECK(s.tiles == 24);
  CHECK(s.in.bytes == 6400.0 * 128);
  CHECK(s.in.padded_bytes == s.in.bytes);
  CHECK(s.vector_dma_cycles == 19200);
  CHECK(s.scalar_cycles == 0);
  // [128,1001]: 30 tiles of 128 rows, each a DMA of 136 B padded to 160: 128 DMAs, and
  // 128 x (125 + 160 / 12) = 17706.67 cycles in series
  const cost::KernelPlan u = plan("128,1001", "1001");
  CHECK(u.tiles == 30);
  CHECK(u.in.bytes == 128.0 * 136);
  CHECK(u.in.padded_bytes == 128.0 * 160);
  CHECK(u.in.transfers == 128);
  CHECK(u.scalar_cycles == Approx(128.0 * (125 + 160.0 / 12)));
  CHECK(u.vector_dma_cycles == 0);
  // off (the 0 default): no per-row or per-burst cost
  hw.memory.strided_burst_cycles = 0;
  hw.memory.unaligned_row_cycles = 0;
  CHECK(plan("6400,768", "768").vector_dma_cycles == 0);
  CHECK(plan("128,1001", "1001").scalar_cycles == Approx(128.0 * 160 / 12));
}
