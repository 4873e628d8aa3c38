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
