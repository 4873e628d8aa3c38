// Hand-computed cases for the vector-core mechanisms of CNN training steps: pooling with an
// argmax mask (model/cost/pool.cpp), TransData between NCHW and NC1HWC0 (model/cost/vector_ops.cpp)
// and GE fusions costed as the ops they fuse (model/op_table.cpp), on a toy chip (1 GHz).
#include <catch2/catch.hpp>

#include <string>

#include "model/op_table.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec layout_toy_vector() {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.vector.min_bytes_per_core = 4096;
  hw.memory.gm_read_bytes_per_cycle = 32;
  hw.memory.l2_read_bytes_per_cycle = 32;
  hw.memory.l2_hit_ratio_default = 0;
  hw.memory.mte2_setup_cycles = 27;
  hw.memory.block_bytes = 32;
  return hw;
}

const CoreBudget kLayoutOneVectorCore{0, 1};

}  // namespace

TEST_CASE("max pooling with argmax issues max, compare and select per window position and row",
          "[mechanism][pool]") {
  const HwSpec hw = layout_toy_vector();
  // x 1 x 1 x 4 x 4 x 16 fp16 -> y 1 x 1 x 2 x 2 x 16 and a mask whose third dim is kh*kw = 9.
  // y has 2 rows of 2 x 16 elements (64 B, one repeat): per row 9 positions x 3 instructions x
  // (2 cycles + 22 issue) = 648 cycles; 2 rows = 1296 cycles on one core.
  const OpCost c = predict(npusim::test::op_io("MaxPoolWithArgmaxV1", "1,1,4,4,16", "FLOAT16", "NC1HWC0",
                                "1,1,2,2,16;1,1,9,2,16", "FLOAT16;UINT16", "NC1HWC0;NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.pipes.vector_us == Approx(1.296));
  // out: y (128 B) and the mask, one bit per window position of each of the 64 elements (72 B)
  CHECK(c.bytes_out == Approx(128 + 72));
  CHECK((c.warnings & kWarnUnknownOpType) == 0);
}

TEST_CASE("an fp32 pixel takes a repeat of its own in the forward pooling's instructions",
          "[mechanism][pool]") {
  const HwSpec hw = layout_toy_vector();
  // y 1 x 1 x 4 x 4 x 16: 4 rows of Wo = 4 pixels. fp16: a pixel is one 32-byte block, a row 128 B,
  // one repeat an instruction: 9 positions x 3 x (2 + 22) = 648 cycles a row, 2592 in all.
  const OpCost half = predict(
      npusim::test::op_io("MaxPoolWithArgmaxV1", "1,1,8,8,16", "FLOAT16", "NC1HWC0",
                          "1,1,4,4,16;1,1,9,4,16", "FLOAT16;UINT16", "NC1HWC0;NC1HWC0"),
      hw, kLayoutOneVectorCore);
  CHECK(half.pipes.vector_us == Approx(2.592));
  // fp32: a pixel is two blocks, the row 256 B (still one repeat by bytes), but the strided
  // window reads one pixel a repeat: 4 repeats an instruction, 9 x 3 x (4 x 2 + 22) = 810 cycles a
  // row, 3240 in all.
  const OpCost full = predict(
      npusim::test::op_io("MaxPoolWithArgmaxV1", "1,1,8,8,16", "FLOAT", "NC1HWC0",
                          "1,1,4,4,16;1,1,9,4,16", "FLOAT;UINT16", "NC1HWC0;NC1HWC0"),
      hw, kLayoutOneVectorCore);
  CHECK(full.pipes.vector_us == Approx(3.240));
}

TEST_CASE("the TBE max pooling with argmax works on 16-pixel img2col groups of whole planes",
          "[mechanism][pool]") {
  const HwSpec hw = layout_toy_vector();  // 192 KiB UB; TIK instructions issue in 8 cycles
  // x 2 x 1 x 9 x 9 x 16 fp16 -> y 2 x 1 x 4 x 4 x 16: a plane's 16 pixels (4 x 4 x 16 x 9 x 2 B
  // of img2col = 4608 B, within half the UB) are one tile of one group. Per group and window
  // position a vmax and a vcmpv_eq over 16 x 16 fp16 (512 B, 2 repeats: 2 x 2 + 8 = 12 cycles):
  // 9 x 2 x 12 = 216; per tile and window position vor, vand, vnot over one repeat a group
  // (2 + 8 = 10): 27 x 10 = 270; the max's vector_dup (2 unary repeats + 8): 10. 496 cycles a
  // plane, two planes on one core: 0.992 us.
  const auto pool = [&](const std::string& x, const std::string& y, const std::string& m) {
    return npusim::test::op_io("MaxPoolWithArgmax", x, "FLOAT16", "NC1HWC0", y + ";" + m,
                               "FLOAT16;UINT16", "NC1HWC0;NC1HWC0");
  };
  const OpCost two = predict(pool("2,1,9,9,16", "2,1,4,4,16", "2,1,9,2,16"), hw,
                             kLayoutOneVectorCore);
  CHECK(two.pipes.vector_us == Approx(0.992));
  CHECK((two.warnings & kWarnUnknownOpType) == 0);
  // Whole planes per core: three planes on two cores take two planes' time, not 1.5.
  const OpCost three = predict(pool("3,1,9,9,16", "3,1,4,4,16", "3,1,9,2,16"), hw,
                               CoreBudget{0, 2});
  CHECK(three.pipes.vector_us == Approx(0.992));
  // A 20 x 20 output plane (400 x 288 B of img2col, above half the UB) goes in tiles of whole
  // rows: floor(98304 / (288 + 160)) = 219 pixels fit, floor(219 / 21) - 1 = 9 rows a tile, so
  // tiles of 9, 9 and 2 rows (12, 12 and 3 groups). A 9-row tile: 12 x 216 + 27 x (12 x 2 + 8)
  // + (24 + 8) = 3488; the 2-row tail: 3 x 216 + 27 x (3 x 2 + 8) + (6 + 8) = 1040; 8016 cycles.
  const OpCost wide = predict(pool("1,1,41,41,16", "1,1,20,20,16", "1,1,9,26,16"), hw,
                              kLayoutOneVectorCore);
  CHECK(wide.pipes.vector_us == Approx(8.016));
}

TEST_CASE("the max-pool gradient selects dy by the mask bit and accumulates per window position",
          "[mechanism][pool]") {
  HwSpec hw = layout_toy_vector();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kMaskSelect)] = 15;
  // (x, dy 1 x 1 x 2 x 2 x 16, mask as CANN 8 prints it: 6-D uint16 with kh*kw = 9 third):
  // a dy row of 2 pixels is laid out at 16 (wo_max): 16 x 16 fp16 = 512 B, 2 repeats. Per row
  // and window position a bit-mask select (2 x 15 + 22 = 52), then the fp16 selection converted
  // to fp32 (1024 B, 4 repeats: 4 x 1 + 22 = 26) and added into the fp32 dx tile (4 x 2 + 22 =
  // 30): 108; 2 rows x 9 positions x 108 = 1944 cycles.
  const OpCost c = predict(npusim::test::op_io("MaxPoolGradWithArgmaxV1", "1,1,4,4,16;1,1,2,2,16;1,16,9,9,1,16",
                                "FLOAT16;FLOAT16;UINT16", "NC1HWC0;NC1HWC0;NC1HWC0", "1,1,4,4,16",
                                "FLOAT16", "NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.pipes.vector_us == Approx(1.944));
  // in: x 512 B, dy 128 B and the mask's 72 B of bits (not the 6-D shape's 41472 B)
  CHECK(c.bytes_in == Approx(512 + 128 + 72));
}

TEST_CASE("ReluGradV2 selects dy by its packed bit mask, one mask-select repeat per 128 fp16 "
          "elements, and the mask is read, not broadcast",
          "[mechanism][mask_select]") {
  HwSpec hw = layout_toy_vector();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kMaskSelect)] = 15;
  // dy 1 x 1 x 8 x 8 x 16 fp16 (1024 elements, 2048 B: 8 repeats) and its mask 1 x 1 x 8 x 8 x 2
  // uint8 (one bit per element, 128 B): 8 repeats x 15 cycles + 22 issue = 142 cycles. Read as
  // a broadcast operand the mask would add a unary pass (8 x 1 + 22): 172.
  const OpCost c = predict(npusim::test::op_io("ReluGradV2", "1,1,8,8,16;1,1,8,8,2", "FLOAT16;UINT8",
                                "NC1HWC0;NC1HWC0", "1,1,8,8,16", "FLOAT16", "NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.pipes.vector_us == Approx(0.142));
  CHECK(c.bytes_in == Approx(2048 + 128));
  CHECK(c.bytes_out == Approx(2048));
  // The fused form's epilogue costs the same class: FusionOp_Conv2DBackpropInput_ReluGradV2
  const OpKindInfo& fused = lookup_op_kind("FusionOp_Conv2DBackpropInput_ReluGradV2");
  REQUIRE(fused.epilogue_count == 1);
  CHECK(fused.epilogue[0] == VectorClass::kMaskSelect);
}

TEST_CASE("ReluGradV2 deals whole images to the cores: 32 images on 30 cores take two image-times",
          "[mechanism][whole_units]") {
  HwSpec hw = layout_toy_vector();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kMaskSelect)] = 15;
  auto relu_grad = [&](int n, int cores) {
    const std::string x = std::to_string(n) + ",1,64,64,16";
    return predict(npusim::test::op_io("ReluGradV2", x + ";" + std::to_string(n) + ",1,64,64,2",
                                       "FLOAT16;UINT8", "NC1HWC0;NC1HWC0", x, "FLOAT16",
                                       "NC1HWC0"),
                   hw, CoreBudget{0, cores});
  };
  // One image (64 x 64 x 16 fp16 = 128 KB) a core at 16 on 16: 4 UB tiles of 32 KB (128
  // repeats, 128 x 15 + 22 = 1942 cycles): 7.768 us of vector work a core; 30 on 30 the same.
  const OpCost one = relu_grad(16, 16);
  CHECK(one.block_dim == 16);
  CHECK(one.pipes.vector_us == Approx(7.768));
  CHECK(relu_grad(30, 30).pipes.vector_us == Approx(7.768));
  // 32 images on 30 cores: 4 MB in 150 tiles of 27962 B (110 repeats, 1672 cycles). Spread
  // evenly a core would run 5 of them (8.36 us); dealt as whole images two cores run two images,
  // 2 x 150 / 32 = 9.375 tiles, 10 waves: 16.72 us, about twice one image's time.
  const OpCost two = relu_grad(32, 30);
  CHECK(two.block_dim == 30);
  CHECK(two.pipes.vector_us == Approx(16.72));
}

TEST_CASE("BNTrainingReduceGrad deals whole images: 32 images on 30 cores take the time of 32 on "
          "16, two images a core",
          "[mechanism][whole_units]") {
  const HwSpec hw = layout_toy_vector();
  auto reduce_grad = [&](int n, int cores) {
    const std::string x = std::to_string(n) + ",1,64,64,16";
    const std::string c = "1,1,1,1,16";
    return predict(npusim::test::op_io("BNTrainingReduceGrad",
                                       x + ";" + x + ";" + c + ";" + c + ";" + c + ";" + c + ";" + c,
                                       "FLOAT16;FLOAT16;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT",
                                       "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0",
                                       x, "FLOAT16", "NC1HWC0"),
                   hw, CoreBudget{0, cores});
  };
  const OpCost one = reduce_grad(16, 16);  // one image a core
  const OpCost thirty = reduce_grad(32, 30);
  const OpCost sixteen = reduce_grad(32, 16);
  CHECK(thirty.block_dim == 30);
  // dealt whole, the two cores with two images set the time: the same as two images on every
  // one of 16 cores, and about twice one image (an even split would give 32/30 = 1.07 of it)
  CHECK(thirty.pipes.vector_us == Approx(sixteen.pipes.vector_us).epsilon(0.02));
  CHECK(thirty.pipes.vector_us / one.pipes.vector_us > 1.8);
}

TEST_CASE("TransData NCHW to NC1HWC0 reads whole C0 groups of channel planes, not 26-byte rows",
          "[mechanism][transdata]") {
  const HwSpec hw = layout_toy_vector();
  // 2 x 16 x 13 x 13 fp16: each image's 16 channel planes (16 x 169 x 2 = 5408 B) are one
  // contiguous, 32-byte aligned run; read in one DMA: 10816 / 32 + 27 = 365 cycles.
  // (Row by row the 416 rows of 26 B would each be padded to 32 B and need a DMA of its own.)
  const OpCost c = predict(npusim::test::op_io("TransData", "2,16,13,13", "FLOAT16", "NCHW", "2,1,13,13,16",
                                "FLOAT16", "NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.bytes_in == Approx(10816));
  CHECK(c.pipes.mte2_us == Approx(0.365));
  // vnchwconv: one 1-cycle repeat per 256 B (43 repeats) plus the call; fp32 takes two passes
  CHECK(c.pipes.vector_us == Approx(0.065));
  const OpCost f32 = predict(npusim::test::op_io("TransData", "2,8,13,13", "FLOAT", "NCHW", "2,1,13,13,8",
                                  "FLOAT", "NC1HWC0"),
                             hw, kLayoutOneVectorCore);
  CHECK(f32.pipes.vector_us == Approx(2 * 0.065));
}

namespace {

// The one-vector-core toy with a 64 B/cycle store path and no first-access latency, so a
// TransData tile's load, reorder and store add up by hand.
HwSpec transdata_toy() {
  HwSpec hw = layout_toy_vector();
  hw.memory.gm_write_bytes_per_cycle = 64;
  hw.memory.mte3_setup_cycles = 12;
  hw.memory.read_latency_cycles = 0;
  hw.memory.write_latency_cycles = 0;
  return hw;
}

}  // namespace

TEST_CASE("TransData to NC1HWC0 loads, reorders and stores each tile in series",
          "[mechanism][transdata]") {
  HwSpec hw = transdata_toy();
  // 8 x 16 x 32 x 32 fp16 = 262144 B (each image's 32768 B fits half the 192 KiB UB, so moves
  // whole): 8 UB tiles of 32768 B on one core. Per tile: MTE2 32768 / 32 + 27 = 1051 cycles,
  // vnchwconv 128 repeats + 22 = 150, MTE3 32768 / 64 + 12 = 524.
  // In series: 8 x 1725 = 13800 cycles (double-buffered it would be 1725 + 7 x 1051 = 9082).
  const OpCost c = predict(npusim::test::op_io("TransData", "8,16,32,32", "FLOAT16", "NCHW", "8,1,32,32,16",
                                "FLOAT16", "NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.tiles == 8);
  CHECK(c.critical_path.compute_us + c.critical_path.memory_us + c.critical_path.tail_us ==
        Approx(13.8));
  CHECK(c.pipes.mte2_us == Approx(8 * 1.051));
}

TEST_CASE("TransData of an image larger than half the UB moves one burst per channel plane",
          "[mechanism][transdata]") {
  HwSpec hw = transdata_toy();
  hw.vector.scalar_cycles_per_index = 20;
  // 2 x 16 x 64 x 64 fp16: one image is 16 x 8192 = 131072 B, over half the 192 KiB UB, so the
  // kernel keeps all 16 channels and moves each channel plane (8192 B) as a burst of its own,
  // its address computed on the scalar unit. 8 UB tiles of 4 planes on one core. Per tile:
  // MTE2 32768 / 32 + 4 x 27 = 1132 cycles, scalar 4 x 20 = 80, vnchwconv 128 repeats + 22 =
  // 150, MTE3 32768 / 64 + 12 = 524; in series 8 x 1886 = 15088 cycles.
  const OpCost c = predict(npusim::test::op_io("TransData", "2,16,64,64", "FLOAT16", "NCHW", "2,1,64,64,16",
                                "FLOAT16", "NC1HWC0"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.tiles == 8);
  CHECK(c.pipes.mte2_us == Approx(8 * 1.132));
  CHECK(c.pipes.scalar_us == Approx(8 * 0.080));
  CHECK(c.critical_path.compute_us + c.critical_path.memory_us + c.critical_path.tail_us ==
        Approx(15.088));
  // The way back writes the planes one burst each: MTE3 32768 / 64 + 4 x 12 = 560 per tile.
  const OpCost back = predict(npusim::test::op_io("TransData", "2,1,64,64,16", "FLOAT16", "NC1HWC0",
                                   "2,16,64,64", "FLOAT16", "NCHW"),
                              hw, kLayoutOneVectorCore);
  CHECK(back.pipes.mte3_us == Approx(8 * 0.560));
  CHECK(back.pipes.scalar_us == Approx(8 * 0.080));
}

TEST_CASE("TransData to FRACTAL_Z computes an address per C0 group on the scalar unit",
          "[mechanism][transdata]") {
  HwSpec hw = layout_toy_vector();
  hw.vector.scalar_cycles_per_index = 20;
  // A 32 x 16 x 3 x 3 fp16 filter -> FRACTAL_Z (C1 kh kw = 9, N1 = 2, N0 = 16, C0 = 16): each
  // (c1, kh, kw, cout) group gathers C0 channels 9 elements apart, 9 x 2 x 16 = 288 groups,
  // 288 x 20 = 5760 scalar cycles on one core (9216 B: one tile).
  const OpCost c = predict(npusim::test::op_io("TransData", "32,16,3,3", "FLOAT16", "NCHW", "9,2,16,16",
                                "FLOAT16", "FRACTAL_Z"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.tiles == 1);
  CHECK(c.pipes.scalar_us == Approx(5.76));
  const OpCost back = predict(npusim::test::op_io("TransData", "9,2,16,16", "FLOAT16", "FRACTAL_Z",
                                   "32,16,3,3", "FLOAT16", "NCHW"),
                              hw, kLayoutOneVectorCore);
  CHECK(back.pipes.scalar_us == Approx(5.76));
}

TEST_CASE("TransData ND <-> FRACTAL_NZ pays a TIK issue, not a DMA setup, per unaligned row",
          "[mechanism][transdata]") {
  HwSpec hw = transdata_toy();  // 32 B/cycle in, 64 out, setups 27 / 12, TIK issue 8, 1 GHz
  // ND [64, 50] fp16 -> NZ [4, 4, 16, 16] on one core, one tile: 64 rows of 100 B, each padded
  // to 128 B and moved by a data_move of its own. MTE2: 6400 / 32 + 27 for the transfer, the
  // padding 1792 / 32 and 63 more rows at 8 cycles = 227 + 56 + 504 = 787 cycles (63 rows at
  // the 27-cycle setup would give 1984).
  const OpCost c = predict(npusim::test::op_io("TransData", "64,50", "FLOAT16", "ND", "4,4,16,16",
                                               "FLOAT16", "FRACTAL_NZ"),
                           hw, kLayoutOneVectorCore);
  CHECK(c.tiles == 1);
  CHECK(c.pipes.mte2_us == Approx(0.787));
  // The way back writes the 64 rows: 6400 / 64 + 12, 1792 / 64 + 63 x 8 = 112 + 532 = 644.
  const OpCost back = predict(npusim::test::op_io("TransData", "4,4,16,16", "FLOAT16",
                                                  "FRACTAL_NZ", "64,50", "FLOAT16", "ND"),
                              hw, kLayoutOneVectorCore);
  CHECK(back.pipes.mte3_us == Approx(0.644));
  // the row cost is the chip's TIK issue: at 0 only the padding is left
  hw.vector.tik_issue_cycles = 0;
  const OpCost free_issue = predict(npusim::test::op_io("TransData", "64,50", "FLOAT16", "ND",
                                                        "4,4,16,16", "FLOAT16", "FRACTAL_NZ"),
                                    hw, kLayoutOneVectorCore);
  CHECK(free_issue.pipes.mte2_us == Approx(0.283));
}

TEST_CASE("a GE fusion is costed as the ops it fuses: its main op plus the others' passes",
          "[mechanism][fusion]") {
  const OpKindInfo& conv = lookup_op_kind("FusionOp_Conv2D_BNTrainingReduce");
  CHECK(conv.family == OpFamily::kCube);
  CHECK(conv.role == OpRole::kConv2D);
  CHECK(conv.type == "FusionOp_Conv2D_BNTrainingReduce");
  // BNTrainingReduce: x * x and the two sums, vector adds over NC1HWC0, computed in fp32
  REQUIRE(conv.epilogue_count == 3);
  CHECK(conv.epilogue[0] == VectorClass::kBinary);
  CHECK(conv.fp32_compute);
  // a vector main op takes the other ops' passes as its own
  const OpKindInfo& ms = lookup_op_kind("FusionOp_Mul_Square");
  CHECK(ms.family == OpFamily::kElementwise);
  CHECK(ms.pass_count ==
        lookup_op_kind("Mul").pass_count + lookup_op_kind("Square").pass_count);
  // a part that names no op: not a fusion the model can cost
  CHECK(lookup_op_kind("FusionOp_MatMul_NoSuchOp").family == OpFamily::kGeneric);
  CHECK(&lookup_op_kind("FusionOp_MatMul_Mul") == &lookup_op_kind("fusionop_matmul_mul"));

  // FusionOp_MatMul_Mul = the MatMul plus one binary pass over each output tile: 256 x 256 fp16
  // is one 128 x 256 tile per core on 2 cores; the Mul's pass over a tile's 65536 B is
  // 256 repeats x 2 cycles + 22 = 534 cycles.
  HwSpec hw = layout_toy_vector();
  hw.chip.cube_cores = 4;
  const OpCost mm = predict(npusim::test::op_io("MatMul", "256,256;256,256", "FLOAT16", "ND;ND", "256,256",
                                 "FLOAT16", "ND"),
                            hw);
  const OpCost fused = predict(npusim::test::op_io("FusionOp_MatMul_Mul", "256,256;256,256;256,256", "FLOAT16",
                                    "ND;ND;ND", "256,256", "FLOAT16", "ND"),
                               hw);
  CHECK(fused.tiles == mm.tiles);
  CHECK(fused.pipes.vector_us - mm.pipes.vector_us == Approx(0.534));
  CHECK(fused.flops == Approx(mm.flops));
}
