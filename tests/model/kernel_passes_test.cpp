// Hand-computed cases for vector kernels costed as the passes of their TBE compute
// (model/op_table.cpp): GeLU's exp-based composition, not one tanh; a division in fp32.
#include <catch2/catch.hpp>

#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

TEST_CASE("GeLU costs the thirteen fp32 passes of its TBE compute", "[mechanism][elementwise]") {
  HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz, binary 2 cycles, every other class 1
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] = 25;
  const CoreBudget one_vector_core{0, 1};
  // Gelu on [1,1024] fp16: computed in fp32, 4096 B = 16 repeats per pass. Four binary passes
  // 4 x (16 x 2 + 22) = 216 cycles, six scalar-operand and three transcendental ones (1 cycle on
  // this chip) 9 x (16 + 22) = 342, converting x and y 2 x (16 + 22) = 76: 634 cycles.
  const OpDesc gelu = npusim::test::op_io("Gelu", "1,1024", "FLOAT16", "ND", "1,1024", "FLOAT16", "ND");
  CHECK(predict(gelu, hw, one_vector_core).pipes.vector_us == Approx(0.634));
  // the tanh class is not what it costs: a costlier tanh leaves GeLU unchanged, and Tanh itself
  // is one pass of it over the fp16 data, 2048 B = 8 repeats: 8 x 25 + 22 = 222 cycles
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] = 250;
  CHECK(predict(gelu, hw, one_vector_core).pipes.vector_us == Approx(0.634));
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] = 25;
  const OpDesc tanh = npusim::test::op_io("Tanh", "1,1024", "FLOAT16", "ND", "1,1024", "FLOAT16", "ND");
  CHECK(predict(tanh, hw, one_vector_core).pipes.vector_us == Approx(0.222));
}

TEST_CASE("GeLU's gradient costs the 28 fp32 passes of its TBE compute", "[mechanism][elementwise]") {
  const HwSpec hw = npusim::test::toy_vector_chip();  // binary 2 cycles, every other class 1
  const CoreBudget one_vector_core{0, 1};
  // GeluGrad on dy, x, y [1,1024] fp16: in fp32, 16 repeats per pass. 13 binary passes
  // 13 x (16 x 2 + 22) = 702 cycles, 13 scalar-operand and 2 transcendental 15 x (16 + 22) = 570,
  // converting dy, x, y and the result 4 x (16 + 22) = 152: 1424 cycles.
  const OpDesc grad = npusim::test::op_io("GeluGrad", "1,1024;1,1024;1,1024",
                                          "FLOAT16;FLOAT16;FLOAT16", "ND;ND;ND", "1,1024",
                                          "FLOAT16", "ND");
  CHECK(predict(grad, hw, one_vector_core).pipes.vector_us == Approx(1.424));
}

TEST_CASE("SquareSumV2 writes its square beside the sum", "[mechanism][reduction]") {
  const HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz; MTE3 64 B/cycle, 12 setup
  const CoreBudget one_vector_core{0, 1};
  // square_sum_v2.py returns [sum(x * x), x * x]: on [1,1024] fp32 the sum is 4 bytes and the
  // square 4096, stored as one more transfer: (4096 / 64 + 12) cycles = 0.076 us more on MTE3
  // than SquareSumV1, which returns the sum alone; the passes (vmul, the sum) are the same.
  const OpDesc v1 = npusim::test::op_io("SquareSumV1", "1,1024", "FLOAT", "ND", "1,1", "FLOAT", "ND");
  const OpDesc v2 = npusim::test::op_io("SquareSumV2", "1,1024", "FLOAT", "ND", "1,1;1,1024",
                                        "FLOAT;FLOAT", "ND;ND");
  const OpCost c1 = predict(v1, hw, one_vector_core);
  const OpCost c2 = predict(v2, hw, one_vector_core);
  CHECK(c1.bytes_out == 4);
  CHECK(c2.bytes_out == 4100);
  CHECK(c2.pipes.mte3_us - c1.pipes.mte3_us == Approx(0.076));
  CHECK(c2.pipes.vector_us == Approx(c1.pipes.vector_us));
}

TEST_CASE("LAMB's weight step runs each UB tile's load, passes and store in series", "[mechanism][elementwise]") {
  HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz, binary 2 cycles, other classes 1
  hw.chip.ub_bytes = 65536;
  hw.vector.ub_buffers = 4;  // 16 KiB tiles
  const CoreBudget one_vector_core{0, 1};
  // LambApplyWeightAssign: the norms and the learning rate (one fp32 each) and update, param
  // [8192] fp32 (32 KiB each): two 16 KiB tiles on one core. A tile loads 32774 B in five
  // transfers at 32 B/cycle with 27 setup each, 1159.1875 cycles; runs two scalar-operand and
  // three binary passes over 64 repeats, 64 x 8 + 5 x 22 = 622 cycles; stores 16384 B at 64
  // B/cycle with 12 setup, 268 cycles: 2049.1875 cycles, twice in series 4.098375 us. With the
  // head (300 + 16 cycles) and the first-transfer latencies of two read streams and one write
  // stream (2 x 1400 + 300 cycles): 0.316 + 4.098375 + 3.1 = 7.514375 us. Double-buffered, the
  // second tile would cost only its longest stage (the load): 6.624375 us.
  const OpDesc wa = npusim::test::op_io("LambApplyWeightAssign", "1;1;1;8192;8192",
                                        "FLOAT;FLOAT;FLOAT;FLOAT;FLOAT", "ND;ND;ND;ND;ND", "8192",
                                        "FLOAT", "ND");
  const OpCost c = predict(wa, hw, one_vector_core);
  CHECK(c.tiles == 2);
  CHECK(c.pipes.vector_us == Approx(1.244));
  CHECK(c.pipes.mte2_us == Approx(2.318375));
  CHECK(c.duration_us == Approx(7.514375));
  // an elementwise kernel with room to double-buffer overlaps its tiles: Mul of the same two
  // tensors costs the fill and then its longest stage per further tile
  const OpDesc mul = npusim::test::op_io("Mul", "8192;8192", "FLOAT;FLOAT", "ND;ND", "8192",
                                         "FLOAT", "ND");
  const OpCost m = predict(mul, hw, one_vector_core);
  CHECK(m.tiles == 2);
  CHECK(m.duration_us < m.critical_path.head_us + 3.1 + m.pipes.vector_us + m.pipes.mte2_us +
                            m.pipes.mte3_us - 0.1);
}

TEST_CASE("a division computes in fp32: fp16 operands are widened and the quotient narrowed",
          "[mechanism][elementwise]") {
  HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz, api 22 cycles, convert 1 cycle
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTranscendental)] = 12;
  const CoreBudget one_vector_core{0, 1};
  // RealDiv [1,1024] / [1,1024] fp32: 4096 B = 16 repeats, 16 x 12 + 22 = 214 cycles.
  const OpDesc fp32 = npusim::test::op_io("RealDiv", "1,1024;1,1024", "FLOAT;FLOAT", "ND;ND",
                                          "1,1024", "FLOAT", "ND");
  CHECK(predict(fp32, hw, one_vector_core).pipes.vector_us == Approx(0.214));
  // the same in fp16: the division still runs over 16 fp32 repeats (214 cycles), after widening
  // both operands and before narrowing the quotient, 3 x (16 x 1 + 22) = 114: 328 cycles, not
  // the 8 x 12 + 22 = 118 of an fp16 pass
  const OpDesc fp16 = npusim::test::op_io("RealDiv", "1,1024;1,1024", "FLOAT16;FLOAT16", "ND;ND",
                                          "1,1024", "FLOAT16", "ND");
  CHECK(predict(fp16, hw, one_vector_core).pipes.vector_us == Approx(0.328));
  // a one-element divisor is read by the scalar unit, not widened: 214 + 2 x 38 = 290 cycles
  const OpDesc by_scalar = npusim::test::op_io("RealDiv", "1,1024;1", "FLOAT16;FLOAT16", "ND;ND",
                                               "1,1024", "FLOAT16", "ND");
  CHECK(predict(by_scalar, hw, one_vector_core).pipes.vector_us == Approx(0.290));
}
