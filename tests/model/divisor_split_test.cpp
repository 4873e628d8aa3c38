// Hand-computed cases for the 910's divisor block split (hw.cube.divisor_block_split,
// model/cost/cube.cpp): an output axis whose fractal count has no divisor from 2 to the core count
// is not split over blocks; the blocks split the other axis by its largest divisor up to the
// cores, and every block streams the whole operand on the unsplit side at its DDR rate.
// A 4-core toy at 1 GHz (one cycle is one nanosecond); the comments are the whole expectation.
#include <catch2/catch.hpp>

#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;
using npusim::test::op;

namespace {

// Cube stages so fast they never bind: what a block reads at its 32 B/cycle DDR rate decides.
HwSpec divsplit_chip(bool on) {
  HwSpec hw = npusim::test::chip("ascend910b3");
  hw.chip.freq_mhz = 1000;
  hw.chip.cube_cores = 4;
  hw.cube.fractal_m = 16;
  hw.cube.fractal_n = 16;
  hw.cube.fractal_k_bytes = 32;
  hw.cube.tile_m = 128;
  hw.cube.tile_n = 256;
  hw.cube.macs_per_cycle_fp16 = 4096;
  hw.cube.efficiency = 1;
  hw.cube.nz_efficiency = 1;
  hw.cube.nd2nz_load_factor = 1;
  hw.cube.gm_to_l1_bytes_per_cycle = 1e6;
  hw.cube.l1_to_l0a_bytes_per_cycle = 1e6;
  hw.cube.l1_to_l0b_bytes_per_cycle = 1e6;
  hw.cube.fixpipe_bytes_per_cycle = 1e6;
  hw.cube.context_l2_factor = 1;
  hw.cube.nd2nz_inline_max_elements = 0;  // no MatMulV3 phases
  hw.cube.split_k_min_k = 0;
  hw.cube.divisor_block_split = on;
  hw.memory.gm_read_bytes_per_cycle = 32;  // the core's DDR rate
  hw.memory.l2_read_bytes_per_cycle = 1e6;
  hw.memory.gm_write_bytes_per_cycle = 1e6;
  hw.memory.mte2_setup_cycles = 0;
  hw.memory.mte3_setup_cycles = 0;
  hw.memory.read_latency_cycles = 1400;
  hw.memory.write_latency_cycles = 300;
  hw.memory.read_stream_share = 1;
  hw.memory.write_stream_share = 1;
  hw.memory.hbm_bandwidth_gbps = 100000;
  hw.memory.hbm_efficiency = 1;
  hw.memory.l2_bandwidth_gbps = 100000;
  hw.memory.l2_hit_ratio_default = 0;
  hw.overhead.launch_cycles = 300;
  hw.overhead.per_block_cycles = 16;
  return hw;
}

OpCost divsplit_gemm(const HwSpec& hw, const char* shapes) {
  return predict(op("MatMulV2", shapes, "FLOAT16"), hw, CoreBudget{4, 0});
}

}  // namespace

TEST_CASE("divisor split: a prime N is left whole and every block streams all of B",
          "[mechanism][cube]") {
  // (128,256) x (256,592) fp16: N = 37 fractals, a prime above the 4 cores; M = 8 fractals, whose
  // largest divisor up to 4 is 4: 4 blocks of 32 rows x all 592 columns. A block reads A
  // 32 x 256 x 2 = 16384 B and all of B 256 x 592 x 2 = 303104 B: 319488 B at 32 B/cycle =
  // 9984 cycles; its cube work, 32 x 592 x 256 / 4096 = 1184 cycles, hides under it. Three of
  // B's four reads are re-reads, and none hits L2. Head 300 + 16 x 4 = 364; latency 2 x 1400 +
  // 300 = 3100.
  const OpCost on = divsplit_gemm(divsplit_chip(true), "128,256;256,592");
  CHECK(on.block_dim == 4);
  CHECK(on.tiles == 4);
  CHECK(on.duration_us == Approx(0.364 + 9.984 + 3.1));
  // Off: base blocks, one M block, N narrowed to 3 parts of 208 columns (37 has no divisor
  // 2-4, the base block count 3 stands): a block reads A 128 x 256 x 2 = 65536 B and B
  // 256 x 208 x 2 = 106496 B, 172032 B; of the 516096 B the three read, all but the 368640
  // unique ones (A once, B's 592 columns) are re-reads that hit L2 here: 147456 B, so a block
  // misses 172032 x (1 - 147456 / 516096) = 122880 B, 3840 cycles at 32. Head 300 + 16 x 3.
  const OpCost off = divsplit_gemm(divsplit_chip(false), "128,256;256,592");
  CHECK(off.block_dim == 3);
  CHECK(off.duration_us == Approx(0.348 + 3.84 + 3.1));
}

TEST_CASE("divisor split: a prime M is left whole, N split, every block streams all of A",
          "[mechanism][cube]") {
  const HwSpec hw = divsplit_chip(true);
  // (592,256) x (256,128): M = 37 fractals (prime), N = 8 -> 4 blocks of 32 columns. A block
  // reads all of A, 592 x 256 x 2 = 303104 B, and B 256 x 32 x 2 = 16384 B: 9984 cycles again.
  const OpCost c = divsplit_gemm(hw, "592,256;256,128");
  CHECK(c.block_dim == 4);
  CHECK(c.duration_us == Approx(0.364 + 9.984 + 3.1));
  // N = 36 fractals (576; 2, 3 and 4 divide it): the base tiler, as with the flag off.
  const HwSpec off = divsplit_chip(false);
  CHECK(divsplit_gemm(hw, "128,256;256,576").duration_us ==
        divsplit_gemm(off, "128,256;256,576").duration_us);
  // N = 3 fractals (a prime, but within the cores): the base tiler.
  CHECK(divsplit_gemm(hw, "128,256;256,48").duration_us ==
        divsplit_gemm(off, "128,256;256,48").duration_us);
  // A prime K (37 fractals) is not an output axis: the base tiler.
  CHECK(divsplit_gemm(hw, "128,592;592,128").duration_us ==
        divsplit_gemm(off, "128,592;592,128").duration_us);
  // Both output axes prime (37 x 41 fractals): nothing splits, one block reads everything.
  CHECK(divsplit_gemm(hw, "592,64;64,656").block_dim == 1);
}
