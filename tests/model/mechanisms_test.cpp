// Hand-computed cases, one per mechanism of DESIGN.md, on a toy chip with round numbers
// (1 GHz, so one cycle is one nanosecond) that this file sets itself: the arithmetic in each
// comment is the whole expectation.
#include <catch2/catch.hpp>

#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;
using npusim::test::op;
using npusim::test::op_io;

namespace {

HwSpec toy() {
  HwSpec hw = npusim::test::chip("ascend910b3");  // every field set, then the ones used here:
  hw.chip.freq_mhz = 1000;
  hw.chip.cube_cores = 4;
  hw.chip.vector_cores = 8;
  hw.chip.ub_bytes = 196608;
  hw.vector.ub_buffers = 6;  // UB tile = 32768 B
  hw.vector.min_bytes_per_core = 4096;
  hw.vector.repeat_bytes = 256;
  hw.vector.api_overhead_cycles = 0;
  hw.vector.scalar_cycles_per_element = 8;
  hw.vector.cycles_per_repeat.fill(1);
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kBinary)] = 2;
  hw.memory.gm_read_bytes_per_cycle = 32;
  hw.memory.l2_read_bytes_per_cycle = 128;
  hw.memory.gm_write_bytes_per_cycle = 64;
  hw.memory.mte2_setup_cycles = 27;
  hw.memory.mte3_setup_cycles = 12;
  hw.memory.read_latency_cycles = 1400;
  hw.memory.write_latency_cycles = 300;
  hw.memory.read_stream_share = 1;  // each further stream waits a whole latency (910B)
  hw.memory.write_stream_share = 1;
  hw.memory.block_bytes = 32;
  hw.memory.hbm_bandwidth_gbps = 100000;  // no chip cap unless a test lowers it
  hw.memory.hbm_efficiency = 1;
  hw.memory.hbm_write_factor = 1;
  hw.memory.hbm_turnaround = 0;  // the turnaround test sets its own
  hw.memory.l2_bandwidth_gbps = 100000;
  hw.memory.l2_hit_ratio_default = 0;
  hw.overhead.launch_cycles = 300;
  hw.overhead.per_block_cycles = 16;
  hw.overhead.conflict_coefficient = 0.5;
  hw.overhead.index_dup_ratio_default = 0;
  hw.cube.fractal_m = 16;
  hw.cube.fractal_n = 16;
  hw.cube.fractal_k_bytes = 32;
  hw.cube.tile_m = 128;
  hw.cube.tile_n = 256;
  hw.cube.macs_per_cycle_fp16 = 4096;
  hw.cube.efficiency = 1;
  hw.aicpu.dispatch_us = 20;
  hw.aicpu.ns_per_element = 2;
  hw.host.dynamic_shape_sync_us = 60;
  hw.host.ns_per_element = 1;
  return hw;
}

// Operand loads, MTE1 and FixPipe so fast that they never bind: what a test looks at decides.
void fast_cube_paths(HwSpec& hw) {
  hw.cube.gm_to_l1_bytes_per_cycle = 1e6;
  hw.cube.l1_to_l0a_bytes_per_cycle = 1e6;
  hw.cube.l1_to_l0b_bytes_per_cycle = 1e6;
  hw.cube.fixpipe_bytes_per_cycle = 1e6;
  hw.cube.nd2nz_load_factor = 1;
  hw.memory.gm_read_bytes_per_cycle = 1e6;  // a core's HBM misses too (the DDR floor)
}

}  // namespace

TEST_CASE("a streaming copy on one core is a pipeline of MTE2 and MTE3 tiles plus head and "
          "latency",
          "[mechanism][memory]") {
  const HwSpec hw = toy();
  // 1 MiB fp32 on 1 core: 32 UB tiles of 32768 B. MTE2 tile = 32768/32 + 27 = 1051 cycles,
  // MTE3 tile = 32768/64 + 12 = 524. Pipeline = (1051 + 524) + 31 x 1051 = 34156.
  // Head = 300 + 16 x 1 = 316; first read + last write latency = 1400 + 300 = 1700.
  const OpCost c = predict(op("TensorMove", "262144", "FLOAT"), hw, CoreBudget{0, 1});
  CHECK(c.block_dim == 1);
  CHECK(c.tiles == 32);
  CHECK(c.critical_path.head_us == Approx(0.316));
  CHECK(c.duration_us == Approx(36.172));
  CHECK(c.critical_path.tail_us == Approx(0).margin(1e-12));
  CHECK(c.pipes.mte2_us == Approx(32 * 1.051));
  CHECK(c.pipes.mte3_us == Approx(32 * 0.524));
  CHECK(c.bound == Bound::kMemory);
}

TEST_CASE("the chip's HBM bandwidth caps all cores together", "[mechanism][memory]") {
  HwSpec hw = toy();
  hw.memory.hbm_bandwidth_gbps = 100;  // 100 B/ns for 8 cores that could pull 256 B/ns
  hw.chip.l2_bytes = 0;                // no write-back L2 to absorb the output
  // 1 MiB in + 1 MiB out at 100 B/ns = 20971.52 ns; head 300 + 16 x 8 = 428; latency 1700.
  const OpCost c = predict(op("TensorMove", "262144", "FLOAT"), hw);
  CHECK(c.block_dim == 8);
  CHECK(c.duration_us == Approx(0.428 + 20.97152 + 1.7));
  // sharing the bandwidth with another stream halves it
  PredictContext half;
  half.hbm_share = 0.5;
  const OpCost h = predict(op("TensorMove", "262144", "FLOAT"), hw, {}, half);
  CHECK(h.duration_us == Approx(0.428 + 2 * 20.97152 + 1.7));
}

TEST_CASE("operand re-reads hit L2 only while their reuse distance fits in it",
          "[mechanism][memory][cube]") {
  HwSpec hw = toy();
  fast_cube_paths(hw);  // per-core paths negligible: the chip cap decides
  hw.memory.hbm_bandwidth_gbps = 100;
  // Latency: A and B are two read streams (2 x 1400) and the result one write (300): 3.1 us.
  SECTION("a wave spanning whole rows: B panels come back after one wave's footprint") {
    // 2688x256 . 256x256 fp16: 21 tiles (21 M blocks, 1 N block), each reading A 64 KiB +
    // B 128 KiB; unique A + B = 1376256 + 131072 = 1507328 B; B re-read 20 x 131072 = 2621440 B;
    // output 1376256 B. 4 cores: a wave holds 4 A panels + 1 B panel = 393216 B.
    hw.chip.l2_bytes = 1 << 30;  // everything fits: HBM reads only the unique bytes
    const OpCost fits = predict(op("MatMulV2", "2688,256;256,256", "FLOAT16"), hw);
    CHECK(fits.duration_us == Approx(0.364 + (1507328 + 1376256) / 100.0 / 1000 + 3.1));
    hw.chip.l2_bytes = 196608;  // half a wave: half the B re-reads miss
    const OpCost spills = predict(op("MatMulV2", "2688,256;256,256", "FLOAT16"), hw);
    CHECK(spills.duration_us ==
          Approx(0.364 + (1507328 + 0.5 * 2621440 + 1376256) / 100.0 / 1000 + 3.1));
  }
  SECTION("rows wider than a wave: a B panel comes back only after the whole row") {
    // 512x256 . 256x2560 fp16: 4 M blocks x 10 N blocks, 4 cores. A panel 65536 B, B panel
    // 131072 B. A re-reads 4 x 9 x 65536 = 2359296 B at distance one wave (65536 + 4 x 131072 =
    // 589824 B); B re-reads 3 x 10 x 131072 = 3932160 B at distance one row (10 x 131072 + 65536
    // = 1376256 B). An L2 of 688128 B holds the wave (A always hits) and half a row (half the
    // B re-reads miss). Unique 262144 + 1310720 B, output 2621440 B.
    hw.chip.l2_bytes = 688128;
    const OpCost c = predict(op("MatMulV2", "512,256;256,2560", "FLOAT16"), hw);
    CHECK(c.duration_us ==
          Approx(0.364 + (1572864 + 0.5 * 3932160 + 2621440) / 100.0 / 1000 + 3.1));
  }
}

TEST_CASE("reads that hit L2 move at the L2 rate", "[mechanism][memory]") {
  const HwSpec hw = toy();
  PredictContext hit;
  hit.l2_hit_ratio = 1;
  // MTE2 tile = 32768/128 + 27 = 283 < MTE3 524: now MTE3 bounds the pipeline:
  // (283 + 524) + 31 x 524 = 17051; + 316 head + 1700 latency = 19067 ns.
  const OpCost c = predict(op("TensorMove", "262144", "FLOAT"), hw, CoreBudget{0, 1}, hit);
  CHECK(c.duration_us == Approx(19.067));
}

TEST_CASE("the cube pads M, N, K to its fractals and a broadcast batch folded into M fills them",
          "[mechanism][cube]") {
  const HwSpec hw = toy();
  // (1,32)x(32,300) fp16: M 1 -> 16, N 300 -> 2 tiles of 160, K 32 -> 32.
  // useful/issued = 1*300*32 / (16*320*32) = 0.05859375
  const OpCost one = predict(op("MatMulV2", "1,32;32,300", "FLOAT16"), hw);
  CHECK(one.cube_efficiency == Approx(0.05859375));
  CHECK(one.flops == 2.0 * 300 * 32);
  // 128 batches of (1,32)x(32,300) waste the same; folded into M = 128: 128*300/(128*320) = 0.9375
  const OpCost batched = predict(op("BatchMatMulV2", "128,1,32;32,300", "FLOAT16"), hw);
  const OpCost folded = predict(op("MatMulV2", "128,32;32,300", "FLOAT16"), hw);
  CHECK(batched.cube_efficiency == Approx(0.05859375));
  CHECK(folded.cube_efficiency == Approx(0.9375));
  CHECK(folded.duration_us < batched.duration_us);
  CHECK(folded.core_time_us < batched.core_time_us / 4);
  // int8 K fractal is 32 wide: K = 16 pads to 32 (half wasted); fp16 K = 16 pads nothing.
  CHECK(predict(op("MatMulV2", "128,16;16,256", "INT8"), hw).cube_efficiency == Approx(0.5));
  CHECK(predict(op("MatMulV2", "128,16;16,256", "FLOAT16"), hw).cube_efficiency == Approx(1.0));
}

TEST_CASE("a cube-bound GEMM runs its base blocks in waves and the last partial wave is tail",
          "[mechanism][cube]") {
  HwSpec hw = toy();
  fast_cube_paths(hw);  // MTE2/MTE1/FixPipe negligible: cube-bound
  // M = 21 x 128 = 2688, N = 256, K = 256: 21 tiles on 4 cores = 6 waves (5.25 ideal).
  // One tile = 128*256*256 / 4096 = 2048 cycles; the tail is 0.75 of a tile.
  const OpCost c = predict(op("MatMulV2", "2688,256;256,256", "FLOAT16"), hw);
  CHECK(c.tiles == 21);
  CHECK(c.block_dim == 4);
  CHECK(c.waves == 6);
  // (FixPipe's 64 KiB per tile at 1e6 B/cycle adds 0.07 cycles: L0C holds one 128x256 fp32
  // tile, so it runs in series with the cube)
  CHECK(c.pipes.cube_us == Approx(6 * 2.048).epsilon(1e-4));
  CHECK(c.critical_path.tail_us == Approx(0.75 * 2.048).epsilon(1e-3));
  CHECK(c.bound == Bound::kCube);
  // 20 tiles on 4 cores: no tail
  const OpCost even = predict(op("MatMulV2", "2560,256;256,256", "FLOAT16"), hw);
  CHECK(even.critical_path.tail_us == Approx(0).margin(1e-9));
}

namespace {

// The toy chip with fast cube paths whose cores read GM at a DDR rate of 32 B/cycle, no setup.
HwSpec ddr_cube_toy() {
  HwSpec hw = toy();
  fast_cube_paths(hw);
  hw.memory.gm_read_bytes_per_cycle = 32;  // the core's DDR rate
  hw.memory.mte2_setup_cycles = 0;
  return hw;
}

}  // namespace

TEST_CASE("a GEMM's L2 misses stream at each core's DDR rate, whatever its GM -> L1 rate",
          "[mechanism][memory][cube]") {
  HwSpec hw = ddr_cube_toy();
  // (16,1024) x (1024,256) fp16 on one core: one tile, nothing re-read. A 32768 B + B 524288 B =
  // 557056 B, all L2 misses: 557056 / 32 = 17408 cycles, far above the tile's stages (cube
  // 16 x 256 x 1024 / 4096 = 1024 cycles). Head 300 + 16 = 316; latency 2 x 1400 + 300 = 3100.
  const OpCost cold = predict(op("MatMulV2", "16,1024;1024,256", "FLOAT16"), hw, CoreBudget{1, 0});
  CHECK(cold.block_dim == 1);
  CHECK(cold.duration_us == Approx(0.316 + 17.408 + 3.1));
  CHECK(cold.bound == Bound::kMemory);
  // ND -> NZ on the way at half the rate: the misses take twice as long.
  hw.cube.nd2nz_load_factor = 0.5;
  const OpCost nd = predict(op("MatMulV2", "16,1024;1024,256", "FLOAT16"), hw, CoreBudget{1, 0});
  CHECK(nd.duration_us == Approx(0.316 + 2 * 17.408 + 3.1));
  // Operands already in L2: no floor, the cube's 1024 cycles bound (plus MTE1 and FixPipe's few).
  PredictContext hit;
  hit.l2_hit_ratio = 1;
  const OpCost warm =
      predict(op("MatMulV2", "16,1024;1024,256", "FLOAT16"), hw, CoreBudget{1, 0}, hit);
  CHECK(warm.duration_us == Approx(0.316 + 1.024 + 3.1).epsilon(1e-3));
}

TEST_CASE("a cube kernel takes cube.context_l2_factor of the context's L2 hits, a vector one all",
          "[mechanism][memory][cube]") {
  HwSpec hw = ddr_cube_toy();
  PredictContext hit;
  hit.l2_hit_ratio = 1;  // the graph left every input in L2
  const auto gemm = [&] {
    return predict(op("MatMulV2", "16,1024;1024,256", "FLOAT16"), hw, CoreBudget{1, 0}, hit);
  };
  // Factor 1: the inputs hit, the cube's 1024 cycles bound (as in the case above).
  hw.cube.context_l2_factor = 1;
  CHECK(gemm().duration_us == Approx(0.316 + 1.024 + 3.1).epsilon(1e-3));
  // Factor 0 (the first-generation 910): cold, the 557056 B stream at 32 B/cycle, 17.408 us.
  hw.cube.context_l2_factor = 0;
  CHECK(gemm().duration_us == Approx(0.316 + 17.408 + 3.1));
  // Factor 0.5: half the bytes miss, 278528 / 32 = 8704 cycles.
  hw.cube.context_l2_factor = 0.5;
  CHECK(gemm().duration_us == Approx(0.316 + 8.704 + 3.1));
  // A vector kernel keeps its hits whatever the factor.
  const OpCost add_all = predict(op("Add", "1048576;1048576", "FLOAT32"), hw, CoreBudget{}, hit);
  hw.cube.context_l2_factor = 0;
  const OpCost add_none = predict(op("Add", "1048576;1048576", "FLOAT32"), hw, CoreBudget{}, hit);
  CHECK(add_none.duration_us == add_all.duration_us);
}

TEST_CASE("a single-M-block GEMM narrows its N blocks to the largest divisor the cores take",
          "[mechanism][cube]") {
  const HwSpec hw = toy();  // 4 cube cores, base block 128 x 256
  auto tiles = [&](const char* shapes) {
    return predict(op("MatMulV2", shapes, "FLOAT16"), hw).tiles;
  };
  // N = 48: 3 fractals, one base block; 3 divides 3 and fits 4 cores: 3 blocks of one fractal.
  CHECK(tiles("32,256;256,48") == 3);
  // N = 64: 4 fractals on 4 cores.
  CHECK(tiles("32,256;256,64") == 4);
  // N = 80: 5 fractals; no divisor from 2 to 4: one block, as before.
  CHECK(tiles("32,256;256,80") == 1);
  // N = 192 (12 fractals): 4 blocks of 3.
  CHECK(tiles("32,256;256,192") == 4);
  // Two M blocks (M = 256): the base blocks stand (2 x 1).
  CHECK(tiles("256,256;256,192") == 2);
  // A batch of two: the base blocks stand.
  CHECK(predict(op("BatchMatMulV2", "2,32,256;2,256,192", "FLOAT16"), hw).tiles == 2);
}

TEST_CASE("rows whose last axis is not 32-byte aligned move padded, one DMA per row",
          "[mechanism][alignment]") {
  const HwSpec hw = toy();
  // (64,401) fp16 rows are 802 B: each padded to 832 B. Output 64 x 832 = 53248 B moved.
  const OpCost odd = predict(op("Mul", "64,401;64,1", "FLOAT16"), hw);
  CHECK(odd.bytes_out == Approx(64 * 832));
  CHECK(odd.critical_path.alignment_us > 0);
  // (64,400) rows are 800 B = 25 blocks: no alignment loss.
  const OpCost even = predict(op("Mul", "64,400;64,1", "FLOAT16"), hw);
  CHECK(even.bytes_out == Approx(64 * 800));
  CHECK(even.critical_path.alignment_us == Approx(0).margin(1e-12));
}

TEST_CASE("int64 arithmetic falls back to the scalar unit", "[mechanism][dtype]") {
  const HwSpec hw = toy();
  // 8192 int64 compares on 8 cores: 1024 per core x 8 scalar cycles = 8192 ns of scalar work.
  const OpCost c = predict(op("Equal", "8192;8192", "INT64"), hw);
  CHECK((c.warnings & kWarnInt64ScalarFallback) != 0);
  CHECK(c.block_dim == 8);
  CHECK(c.pipes.scalar_us == Approx(8.192));
  CHECK(c.bound == Bound::kScalar);
  const OpCost i32 = predict(op("Equal", "8192;8192", "INT32"), hw);
  CHECK(i32.pipes.scalar_us == 0);
  CHECK(i32.duration_us * 2 < c.duration_us);
  // Cast has a vector path for int64 (vconv s64 -> s32)
  CHECK((predict(op("Cast", "8192", "INT64", {{"dst_type", "INT32"}}), hw).warnings &
         kWarnInt64ScalarFallback) == 0);
}

TEST_CASE("repeated indices cost conflicts that grow with the duplicate ratio and block dim",
          "[mechanism][conflict]") {
  const HwSpec hw = toy();
  const auto gather = [&](const char* dup) {
    return op("GatherV2", "1000000,64;8192;1", "FLOAT16;INT32;INT32", {{"index_dup_ratio", dup}});
  };
  const OpCost none = predict(gather("0"), hw);
  const OpCost half = predict(gather("0.5"), hw);
  const OpCost all = predict(gather("1"), hw);
  CHECK(none.critical_path.conflict_us == 0);
  CHECK(half.critical_path.conflict_us > 0);
  CHECK(all.critical_path.conflict_us == Approx(2 * half.critical_path.conflict_us));
  // at full width (8 of 8 cores) the loss is coefficient x dup = 0.5 of the exposed MTE2 time
  CHECK(all.block_dim == 8);
  const OpCost two = predict(gather("1"), hw, CoreBudget{0, 2});
  // 2 cores: (2-1)/(8-1) of the full-width loss per tile
  CHECK(two.critical_path.conflict_us / two.pipes.mte2_us <
        all.critical_path.conflict_us / all.pipes.mte2_us);
}

TEST_CASE("a gathered row's DMA waits for its index: rows at the one-row rate, in series",
          "[mechanism][index]") {
  HwSpec hw = toy();
  hw.vector.scalar_cycles_per_index = 20;
  hw.memory.row_dma_bytes_per_cycle = 8;
  // 8192 rows of 64 fp16 (128 B, aligned) from a 128 MB table on one core: 1 MB out in 32 UB
  // tiles of 256 rows. Per tile MTE2 reads 1024 B of int32 indices and 256 rows (32768 B) at
  // 8 B/cycle plus 257 DMA setups of 27 cycles: 33792 / 8 + 257 x 27 = 4224 + 6939 = 11163
  // cycles; the scalar unit spends 256 x 20 = 5120; MTE3 stores 32768 / 64 + 12 = 524.
  const OpDesc g = op("GatherV2", "1000000,64;8192;1", "FLOAT16;INT32;INT32");
  const OpCost c = predict(g, hw, CoreBudget{0, 1});
  REQUIRE(c.tiles == 32);
  CHECK(c.pipes.mte2_us == Approx(32 * 11163 / 1000.0));  // 357.216 us
  CHECK(c.pipes.scalar_us == Approx(32 * 5120 / 1000.0));  // 163.84 us
  CHECK(c.pipes.mte3_us == Approx(32 * 524 / 1000.0));     // 16.768 us
  // in series: every tile's index work, row reads and store, not the largest of them
  CHECK(c.duration_us >= c.pipes.mte2_us + c.pipes.scalar_us + c.pipes.mte3_us);
  // at the streaming rate (32 B/cycle) the reads take (33792 / 32 + 6939) x 32 cycles
  hw.memory.row_dma_bytes_per_cycle = 32;
  CHECK(predict(g, hw, CoreBudget{0, 1}).pipes.mte2_us == Approx(32 * 7995 / 1000.0));
}

TEST_CASE("scattered rows: no zeroing for UnsortedSegmentSum, duplicates from fewer segments",
          "[mechanism][index]") {
  HwSpec hw = toy();  // index_dup_ratio_default = 0
  hw.memory.row_dma_bytes_per_cycle = 8;
  const auto uss = [&](const char* type, const char* out) {
    return predict(op_io(type, "8192,64;8192", "FLOAT16;INT32", "", out, "FLOAT16", ""), hw);
  };
  // 8192 rows of 128 B into 16384 segments: no segment need repeat, no conflict; the output is
  // zeroed by an AtomicAddrClean kernel of its own, so only the 1 MB of rows is written
  const OpCost wide = uss("UnsortedSegmentSum", "16384,64");
  CHECK(wide.bytes_out == 8192 * 128);
  CHECK(wide.critical_path.conflict_us == 0);
  // into 1024 segments at least 8192 - 1024 adds repeat one: dup ratio >= 1 - 1024/8192 = 0.875,
  // the loss at full width 0.5 x 0.875 of the exposed MTE3 time
  const OpCost narrow = uss("UnsortedSegmentSum", "1024,64");
  CHECK(narrow.bytes_out == 8192 * 128);
  CHECK(narrow.critical_path.conflict_us > 0);
  // ScatterNd creates its output and zeroes all 16384 x 128 B of it first
  const OpCost nd = predict(op_io("ScatterNd", "8192,1;8192,64;2", "INT32;FLOAT16;INT32", "",
                                  "16384,64", "FLOAT16", ""),
                            hw);
  CHECK(nd.bytes_out == 8192 * 128 + 16384 * 128);
  // EmbeddingDenseGradV2 gets the positions of its sorted indices and reads each gradient row
  // at its position: on one core 8192 rows of 64 fp32 (256 B) at 8 B/cycle, the two int32
  // index tensors (65536 B) streamed at 32, one DMA setup per row and per tile's index load
  const OpCost e = predict(op_io("EmbeddingDenseGradV2", "8192,64;8192;8192", "FLOAT;INT32;INT32",
                                 "", "16384,64", "FLOAT", ""),
                           hw, CoreBudget{0, 1});
  const double tiles = static_cast<double>(e.tiles);
  CHECK(e.pipes.mte2_us ==
        Approx((8192.0 * 256 / 8 + 65536.0 / 32 + (8192 + tiles) * 27) / 1000.0));
}

TEST_CASE("a segment sum into fewer segments than cores adds at most one core's write rate a "
          "segment",
          "[mechanism][index]") {
  HwSpec hw = toy();  // 8 vector cores, 64 B/cycle written a core, 12 cycles a store's setup
  hw.memory.row_dma_bytes_per_cycle = 64;  // no one-row limit: the serialisation alone
  const auto uss = [&](const char* out) {
    return predict(op_io("UnsortedSegmentSum", "8192,64;8192", "FLOAT16;INT32", "", out, "FLOAT16",
                         ""),
                   hw);
  };
  // 8192 rows of 128 B into 2 segments on 8 cores: the adds into each segment run one core at a
  // time, so the 8 cores share 2 x 64 B/cycle: 16 B/cycle a core. A tile of r rows stores r x 128
  // B at 16 B/cycle plus r setups of 12 cycles; a core runs `waves` tiles.
  const OpCost two = uss("2,64");
  REQUIRE(two.block_dim == 8);
  const double r = 8192.0 / static_cast<double>(two.tiles);
  CHECK(two.pipes.mte3_us == Approx(two.waves * (r * 128 / 16 + r * 12) / 1000.0));
  CHECK(two.critical_path.conflict_us == 0);  // the serialisation replaces the conflict estimate
  // 16 segments, more than the cores: each core at its own 64 B/cycle, and the conflict estimate
  // back: duplicate ratio 1 - 16/8192 at full width, the coefficient's share of the MTE3 time
  const OpCost sixteen = uss("16,64");
  const double conflict = hw.overhead.conflict_coefficient * (1 - 16.0 / 8192);
  CHECK(sixteen.pipes.mte3_us ==
        Approx(sixteen.waves * (r * 128 / 64 + r * 12) * (1 + conflict) / 1000.0));
  CHECK(sixteen.critical_path.conflict_us > 0);
}

TEST_CASE("atomic adds into one region run one at a time: the hot rows' chain bounds a segment sum",
          "[mechanism][index]") {
  HwSpec hw = toy();  // 8 vector cores, L2 at 128 B/cycle, 64 B/cycle written a core
  hw.memory.row_dma_bytes_per_cycle = 4;
  hw.memory.atomic_add_cycles = 30;
  hw.memory.atomic_region_bytes = 512;
  const auto uss = [&](const char* x, const char* out, const char* share) {
    OpDesc o = op_io("UnsortedSegmentSum", x, "FLOAT;INT32", "", out, "FLOAT", "");
    if (share) {
      o.attrs.emplace_back("index_hot_share", share);
      o.attrs.emplace_back("index_hot_rows", "4");
    }
    return predict(o, hw);
  };
  // 8192 rows of 8 fp32 (32 B), half of them into 4 hot rows: the 4 rows (128 B) lie in one
  // 512-B region, so 4096 adds run one after another, each 30 cycles + 32 B at 128 B/cycle:
  // 4096 x 30.25 = 123904 cycles. A core's stores, index and vector work (in series) wait for
  // them: their sum over the core's tiles is the chain, and no conflict estimate on top.
  const OpCost base = uss("8192,8;8192", "4096,8", nullptr);
  const OpCost hot = uss("8192,8;8192", "4096,8", "0.5");
  REQUIRE(hot.block_dim == 8);
  REQUIRE(hot.tiles % 8 == 0);
  CHECK(hot.pipes.mte3_us + hot.pipes.scalar_us + hot.pipes.vector_us ==
        Approx(4096 * 30.25 / 1000.0));
  CHECK(hot.critical_path.conflict_us == 0);
  CHECK(base.duration_us < hot.duration_us - 50);
  // The same ids with rows of 80 fp32 (320 B): a region holds 2 of the 4 hot rows, so its chain
  // is 2048 adds x (30 + 320 / 128) = 66560 cycles, shorter than a core's own 1024 rows at the
  // one-row rate (1024 x (320 / 4 + 12) = 94208 cycles of stores alone): no change.
  const OpCost wide = uss("8192,80;8192", "4096,80", nullptr);
  const OpCost wide_hot = uss("8192,80;8192", "4096,80", "0.5");
  CHECK(wide_hot.duration_us == Approx(wide.duration_us));
  // Without the chip's constants there is no chain to wait for.
  hw.memory.atomic_add_cycles = 0;
  CHECK(uss("8192,8;8192", "4096,8", "0.5").duration_us == Approx(base.duration_us));
}

TEST_CASE(
    "AI CPU ops pay dispatch and run at scalar speed, and dynamic shapes add a host round trip",
    "[mechanism][aicpu]") {
  const HwSpec hw = toy();
  // Unique of 1000 elements: 20 us dispatch + 1000 x 2 ns + 60 us device->host->device sync.
  const OpCost u = predict(op("Unique", "1000", "INT32"), hw);
  CHECK(u.critical_path.head_us == 20);
  CHECK(u.critical_path.compute_us == Approx(2));
  CHECK(u.critical_path.host_us == 60);
  CHECK(u.duration_us == Approx(82));
  CHECK(u.bound == Bound::kHost);
  // Bucketize runs on the AI CPU but its output shape is static: no sync
  const OpCost b = predict(op("Bucketize", "1000", "INT64"), hw);
  CHECK(b.critical_path.host_us == 0);
  // any op forced to the AI CPU is costed there
  OpText t;
  t.type = "Add";
  t.input_shapes = "1000;1000";
  t.input_dtypes = "INT64";
  t.placement = "AI_CPU";
  CHECK(predict(op(t), hw).critical_path.head_us == 20);
  t.placement = "host";
  const OpCost h = predict(op(t), hw);
  // 2 x 1000 elements x 1 pass x 1 ns
  CHECK(h.critical_path.host_us == Approx(2.0));
  CHECK(h.bound == Bound::kHost);
}

TEST_CASE("launch overhead grows with block dim and bounds tiny ops", "[mechanism][head]") {
  const HwSpec hw = toy();
  const OpCost tiny = predict(op("Add", "16;16", "FLOAT16"), hw);
  CHECK(tiny.block_dim == 1);
  CHECK(tiny.critical_path.head_us == Approx(0.316));
  const OpCost wide = predict(op("Add", "1048576;1048576", "FLOAT16"), hw);
  CHECK(wide.critical_path.head_us == Approx(0.300 + 0.016 * wide.block_dim));
}

TEST_CASE("TopK sorts fewer elements when given a valid length", "[mechanism][sort]") {
  const HwSpec hw = toy();
  const OpCost full = predict(op("TopKV2", "64,4096", "FLOAT16", {{"k", "100"}}), hw);
  const OpCost valid =
      predict(op("TopKV2", "64,4096", "FLOAT16", {{"k", "100"}, {"valid_length", "512"}}), hw);
  CHECK(valid.duration_us < full.duration_us / 2);
  // int64 keys have no vector sort
  CHECK(predict(op("TopKV2", "64,4096", "INT64", {{"k", "100"}}), hw).bound == Bound::kScalar);
}

TEST_CASE("an unknown op type gets the generic model and a named warning", "[mechanism][generic]") {
  const OpCost c = predict(op("MyCustomFusedOp", "64,4000", "FLOAT16"), toy());
  CHECK((c.warnings & kWarnUnknownOpType) != 0);
  CHECK(c.duration_us > 0);
  CHECK(warning_texts(c.warnings, "MyCustomFusedOp")[0].find("'MyCustomFusedOp'") !=
        std::string::npos);
}

TEST_CASE("a kernel with no tensor input still pays the first-read latency of its tiling data",
          "[mechanism][memory]") {
  const HwSpec hw = toy();
  // ZerosLike of one element only writes, but the kernel reads its arguments from GM first:
  // read + write latency = 1400 + 300 cycles = 1.7 us at 1 GHz, on top of the 0.316 us head.
  const OpCost c = predict(op("ZerosLike", "1", "FLOAT"), hw, CoreBudget{0, 1});
  CHECK(c.bytes_in == 0);
  CHECK(c.critical_path.memory_us >= Approx(1.7));
  CHECK(c.duration_us >= Approx(0.316 + 1.7));
  CHECK(c.duration_us < 0.316 + 1.7 + 0.1);  // the write of 32 bytes itself is negligible
}

TEST_CASE(
    "streams in both directions lose HBM time to read-write turnaround, and one direction none",
    "[mechanism][memory]") {
  HwSpec hw = toy();
  hw.memory.hbm_bandwidth_gbps = 100;  // 100 B/ns: the chip cap decides
  hw.chip.l2_bytes = 0;
  hw.memory.hbm_turnaround = 0.5;
  // TensorMove 1 MiB in + 1 MiB out: 1048576 + 1048576 + 0.5 x 1048576 = 2621440 B of bus time
  // = 26214.4 ns; head 300 + 16 x 8 = 428 ns; latency 1700 ns.
  const OpCost both = predict(op("TensorMove", "262144", "FLOAT"), hw);
  CHECK(both.duration_us == Approx(0.428 + 26.2144 + 1.7));
  // ZerosLike only writes 1 MiB: no turnaround, 10485.76 ns.
  const OpCost one = predict(op("ZerosLike", "262144", "FLOAT"), hw);
  CHECK(one.duration_us == Approx(0.428 + 10.48576 + 1.7));
  // writes twice as fast as reads: the write half and the turnaround it bounds both halve
  hw.memory.hbm_write_factor = 2;
  CHECK(predict(op("TensorMove", "262144", "FLOAT"), hw).duration_us ==
        Approx(0.428 + (1048576 + 524288 + 0.5 * 524288) / 100.0 / 1000 + 1.7));
}

TEST_CASE("bf16 arithmetic runs in fp32 with a conversion per bf16 tensor when the core lacks it",
          "[mechanism][dtype]") {
  HwSpec hw = toy();
  // Add of two 8192-element tensors on one core (one UB tile). fp16: 16384 B = 64 repeats x 2
  // cycles (binary) = 128 ns. bf16 without bf16 arithmetic: the add runs on 32768 B of fp32 =
  // 128 repeats x 2 = 256 cycles, plus 3 conversions (two inputs, the output) of 128 repeats x
  // 1 cycle = 384: 640 ns.
  const CoreBudget one_core{0, 1};
  CHECK(predict(op("Add", "8192;8192", "FLOAT16"), hw, one_core).pipes.vector_us ==
        Approx(0.128));
  CHECK(predict(op("Add", "8192;8192", "BF16"), hw, one_core).pipes.vector_us == Approx(0.640));
  // a Cast is the conversion itself: no extra passes
  const OpCost cast = predict(op("Cast", "8192", "BF16", {{"dst_type", "FLOAT"}}), hw, one_core);
  CHECK(cast.pipes.vector_us == Approx(0.128));  // 32768 B (the wider dtype) / 256 x 1 cycle
  hw.vector.bf16_arithmetic = true;
  CHECK(predict(op("Add", "8192;8192", "BF16"), hw, one_core).pipes.vector_us == Approx(0.128));
}

TEST_CASE("a long-K GEMM converts its long ND operand first, runs split-K and casts the fp32 sum",
          "[mechanism][cube]") {
  HwSpec hw = toy();
  hw.cube.nd2nz_inline_max_elements = 512;  // toy thresholds (the 910B's are 65535 and 27392)
  hw.cube.split_k_min_k = 1024;
  hw.cube.split_k_chunk_bytes = 512;  // 256 fp16 elements of K per step
  fast_cube_paths(hw);
  hw.cube.fixpipe_bytes_per_cycle = 128;
  hw.memory.gm_read_bytes_per_cycle = 1e6;
  hw.memory.gm_write_bytes_per_cycle = 1e6;
  // 256x1024 . 1024x256 fp16: A's contiguous axis (K = 1024) exceeds 512, so the vector cores
  // convert A to NZ first; K >= 1024 runs split-K: 2 M blocks x 1 N block x 4 K steps = 8 tiles
  // on 4 cores (2 waves). Each tile: cube 128 x 256 x 256 / 4096 = 2048 cycles, then FixPipe
  // adds its 128 x 256 fp32 partial atomically: 131072 B read back and written, 2 x 131072 / 128
  // = 2048 cycles; the partial fills L0C, so the two run in series.
  const OpCost c = predict(op("MatMulV3", "256,1024;1024,256", "FLOAT16"), hw);
  CHECK(c.tiles == 8);
  CHECK(c.waves == 2);
  CHECK(c.pipes.cube_us == Approx(2 * 2.048));
  CHECK(c.pipes.fixpipe_us == Approx(2 * 2.048));
  // The head phase writes A (524288 B) as NZ in 32-byte pieces: 16 UB tiles of 32768 B over 8
  // cores, 1024 pieces each at 12 cycles = 12288 ns per tile, 2 per core. The tail writes the
  // bf16 result, 8 tiles of 16384 B, one DMA of 12 cycles each.
  CHECK(c.pipes.mte3_us == Approx(2 * 12.288 + 0.012));
  CHECK(c.bytes_out == Approx(524288 + 131072));  // the NZ copy and the result; partials stay in L2
  // A step's operands (A 128 x 256 + B 256 x 256 fp16 = 196608 B) fit twice in a 512 KiB L1, so
  // MTE2 overlaps the cube; in a 256 KiB L1 they do not, and each step's load runs in series:
  // at 128 B/cycle plus two DMA setups that is 1536 + 2 x 27 = 1590 cycles per step, once more
  // on the critical path per wave after the first (2 waves): +1590 ns.
  hw.cube.gm_to_l1_bytes_per_cycle = 128;
  hw.memory.l2_read_bytes_per_cycle = 128;
  const OpCost overlapped = predict(op("MatMulV3", "256,1024;1024,256", "FLOAT16"), hw);
  hw.chip.l1_bytes = 262144;
  const OpCost serial = predict(op("MatMulV3", "256,1024;1024,256", "FLOAT16"), hw);
  CHECK(serial.duration_us - overlapped.duration_us == Approx(1.590));
  CHECK(serial.pipes.mte2_us == Approx(overlapped.pipes.mte2_us));
  // Below both thresholds the same GEMM is one plain kernel: 2 tiles of the whole K, no phases.
  const OpCost plain = predict(op("MatMulV3", "256,512;512,256", "FLOAT16"), hw);
  CHECK(plain.tiles == 2);
  CHECK(plain.pipes.mte3_us == 0);
}

TEST_CASE("each tensor a kernel reads or writes waits out its own first-transfer latency",
          "[mechanism][memory]") {
  const HwSpec hw = toy();
  const CoreBudget one_core{0, 1};
  // Cast of 16 fp16 elements reads one tensor and writes one: latency 1400 + 300 cycles, plus the
  // two DMAs (32/32 + 27 in, 64/64 + 12 out): 1741 ns.
  const OpCost one = predict(op("Cast", "16", "FLOAT16", {{"dst_type", "FLOAT"}}), hw, one_core);
  CHECK(one.critical_path.memory_us == Approx(1.741));
  // Add of two 16-element tensors: two reads queue on MTE2, 2 x 1400 + 300, plus two DMAs in
  // (64/32 + 2 x 27) and one out (32/64 + 12): 3168.5 ns.
  const OpCost two = predict(op("Add", "16;16", "FLOAT16"), hw, one_core);
  CHECK(two.critical_path.memory_us == Approx(3.1685));
  // A one-element operand is read by the scalar unit, not a DMA stream: one latency, as the Cast.
  const OpCost scalar = predict(op("Add", "16;1", "FLOAT16"), hw, one_core);
  CHECK(scalar.critical_path.memory_us < one.critical_path.memory_us + 0.1);
}

TEST_CASE("a chip whose kernels issue their streams back to back pays a small cost per further "
          "stream",
          "[mechanism][memory]") {
  HwSpec hw = toy();
  hw.memory.read_stream_share = 0.07;  // the 910's TBE kernels (hw_specs/ascend910.toml)
  hw.memory.write_stream_share = 0.5;
  const CoreBudget one_core{0, 1};
  // Add of two 16-element fp16 tensors: the first read's 1400 and 0.07 x 1400 = 98 for the
  // second, the write's 300, plus two DMAs in (64/32 + 2 x 27) and one out (32/64 + 12): 1866.5 ns.
  const OpCost two = predict(op("Add", "16;16", "FLOAT16"), hw, one_core);
  CHECK(two.critical_path.memory_us == Approx(1.8665));
  // One tensor read: no further stream, the same as with whole latencies (1741 ns).
  const OpCost one = predict(op("Cast", "16", "FLOAT16", {{"dst_type", "FLOAT"}}), hw, one_core);
  CHECK(one.critical_path.memory_us == Approx(1.741));
}

TEST_CASE("all traffic passes through the chip's L2, whose bandwidth the cores share",
          "[mechanism][memory]") {
  HwSpec hw = toy();
  PredictContext hit;
  hit.l2_hit_ratio = 1;  // every read hits L2: HBM sees only the write
  hw.memory.l2_bandwidth_gbps = 200;
  hw.memory.l2_efficiency = 0.5;  // 100 B/ns for 8 cores that could move far more
  // TensorMove 1 MiB in + 1 MiB out through L2 at 100 B/ns = 20971.52 ns; head 428, latency 1700.
  const OpCost c = predict(op("TensorMove", "262144", "FLOAT"), hw, {}, hit);
  CHECK(c.duration_us == Approx(0.428 + 20.97152 + 1.7));
  hw.memory.l2_efficiency = 1;  // twice the bandwidth: the cap halves
  CHECK(predict(op("TensorMove", "262144", "FLOAT"), hw, {}, hit).duration_us ==
        Approx(0.428 + 10.48576 + 1.7));
}

TEST_CASE("LAMB's optimizer step runs one vector pass per operation of its formula",
          "[mechanism][vector]") {
  HwSpec hw = toy();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTranscendental)] = 4;
  // grad, v, m and var of 64 fp32 elements (one 256-byte repeat each pass) and the scalars:
  // 7 unary passes x 1 cycle + 4 binary x 2 + 4 transcendental x 4 = 31 cycles on one core.
  const OpCost c =
      predict(op("LambApplyOptimizerAssign", "64;64;64;64;1;1;1;1;1;1", "FLOAT"), hw, {0, 1});
  CHECK(c.block_dim == 1);
  CHECK(c.pipes.vector_us == Approx(0.031));
}
