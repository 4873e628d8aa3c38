// Hand-computed cases for convolutions as an implicit GEMM (model/cost/conv.cpp): the three
// directions in the 5-D layouts CANN profiles write (NC1HWC0 feature maps, FRACTAL_Z filters),
// with the backprop ops' int32 shape operand, on a toy chip of round numbers (1 GHz).
#include <catch2/catch.hpp>

#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec toy_cube() {
  HwSpec hw = npusim::test::chip("ascend910b3");
  hw.chip.freq_mhz = 1000;
  hw.chip.cube_cores = 4;
  hw.cube.fractal_m = 16;
  hw.cube.fractal_n = 16;
  hw.cube.fractal_k_bytes = 32;  // C0 = 8 for fp32, 16 for fp16
  hw.cube.tile_m = 128;
  hw.cube.tile_n = 256;
  hw.cube.macs_per_cycle_fp16 = 4096;
  hw.cube.fp32_rate_factor = 0.5;  // 2048 fp32 MACs per cycle
  hw.cube.efficiency = 1;
  hw.cube.nz_efficiency = 1;
  return hw;
}

OpDesc conv_op(const std::string& type, const std::string& shapes, const std::string& dtypes,
               const std::string& formats, const std::string& out_shape,
               const std::string& out_format) {
  OpText t;
  t.type = type;
  t.input_shapes = shapes;
  t.input_dtypes = dtypes;
  t.input_formats = formats;
  t.output_shapes = out_shape;
  t.output_dtypes = "FLOAT";
  t.output_formats = out_format;
  return npusim::test::op(t);
}

}  // namespace

TEST_CASE("a Conv2D in NC1HWC0 and FRACTAL_Z is an implicit GEMM over C1*C0*kh*kw",
          "[mechanism][cube][conv]") {
  const HwSpec hw = toy_cube();
  // x 2 x (1 x 8) x 8 x 8 fp32 (C0 = 8), filter FRACTAL_Z (C1*kh*kw = 9, Cout1 = 1, 16, C0 = 8):
  // kh*kw = 9 / C1 = 9, Cout = 16; y 2 x (2 x 8) x 8 x 8, so stride 1.
  // M = 2*8*8 = 128, K = 8*9 = 72, N = 16: one 128 x 16 tile over K = 72;
  // cube = 128*16*72 / (4096 * 0.5) = 72 cycles.
  const OpCost c = predict(conv_op("Conv2D", "2,1,8,8,8;9,1,16,8", "FLOAT", "NC1HWC0;FRACTAL_Z",
                                   "2,2,8,8,8", "NC1HWC0"),
                           hw);
  CHECK(c.flops == Approx(2.0 * 128 * 16 * 72));
  CHECK(c.tiles == 1);
  CHECK(c.pipes.cube_us == Approx(0.072));
  // load3d unfolds x in L1: GM supplies x once (2*8*8*8*4 = 4096 B) and the filter once
  // (72*16*4 = 4608 B), not the 128 x 72 unfolded operand.
  CHECK(c.bytes_in == Approx(4096 + 4608));
  CHECK((c.warnings & kWarnShapeMismatch) == 0);
}

TEST_CASE("a Conv2DBackpropInput reads its input_size operand as a shape, not a tensor",
          "[mechanism][cube][conv]") {
  const HwSpec hw = toy_cube();
  // (input_size "4" int32, filter FRACTAL_Z (C1*kh*kw = 18, 1, 16, 8), dy 2 x 16 x 8 x 8) ->
  // dx 2 x (2 x 8) x 8 x 8: C1 = 2, so kh*kw = 18 / 2 = 9, Cout = 16.
  // M = 2*8*8 = 128 dx pixels, K = Cout 16 * 9 = 144, N = Cin 16:
  // cube = 128*16*144 / 2048 = 144 cycles.
  const OpCost c = predict(conv_op("Conv2DBackpropInput", "4;18,1,16,8;2,2,8,8,8",
                                   "INT32;FLOAT;FLOAT", "NCHW;FRACTAL_Z;NC1HWC0", "2,2,8,8,8",
                                   "NC1HWC0"),
                           hw);
  CHECK(c.flops == Approx(2.0 * 128 * 16 * 144));
  CHECK(c.pipes.cube_us == Approx(0.144));
  // GM supplies dy once (2*16*8*8*4 = 8192 B) and the filter once (18*16*8*4 = 9216 B); the
  // shape operand is no matrix.
  CHECK(c.bytes_in == Approx(8192 + 9216));
  CHECK((c.warnings & kWarnShapeMismatch) == 0);
}

TEST_CASE("a Conv2DBackpropFilter reduces over the batch, split across cores with atomic adds",
          "[mechanism][cube][conv]") {
  const HwSpec hw = toy_cube();
  // (x, filter_size "4", dy) -> dw FRACTAL_Z 9,1,16,8: M = Cout 16, K = 2*8*8 = 128 pixels,
  // N = 8*9 = 72 (80 on the fractal). One output block on 4 cores: the 2 images go to 2 cores,
  // K = 64 each: cube = 16*80*64 / 2048 = 40 cycles per core, both in one wave.
  const OpCost c =
      predict(conv_op("Conv2DBackpropFilter", "2,1,8,8,8;4;2,2,8,8,8", "FLOAT;INT32;FLOAT",
                      "NC1HWC0;NCHW;NC1HWC0", "9,1,16,8", "FRACTAL_Z"),
              hw);
  CHECK(c.flops == Approx(2.0 * 128 * 16 * 72));
  CHECK(c.tiles == 2);
  CHECK(c.waves == 1);
  CHECK(c.pipes.cube_us == Approx(0.040));
  // MindSpore writes the same op as (dout, x): the tensor with Cout channels is dy either way.
  const OpCost ms = predict(conv_op("Conv2DBackpropFilter", "2,2,8,8,8;2,1,8,8,8", "FLOAT",
                                    "NC1HWC0;NC1HWC0", "9,1,16,8", "FRACTAL_Z"),
                            hw);
  CHECK(ms.flops == Approx(c.flops));
  CHECK(ms.pipes.cube_us == Approx(c.pipes.cube_us));
}

TEST_CASE("C0 sets the element size the cube multiplies: 16 is fp16 whatever the label",
          "[mechanism][cube][conv]") {
  const HwSpec hw = toy_cube();
  // The forward conv above with C0 = 16 (MindSpore labels such maps FLOAT): x 2 x (1 x 16) x 8 x 8,
  // filter (9, 1, 16, 16): K = 16*9 = 144, N = 16, M = 128 at 4096 MACs per cycle = 72 cycles.
  const OpCost c = predict(conv_op("Conv2D", "2,1,8,8,16;9,1,16,16", "FLOAT",
                                   "NC1HWC0;FRACTAL_Z", "2,1,8,8,16", "NC1HWC0"),
                           hw);
  CHECK(c.pipes.cube_us == Approx(0.072));
  CHECK(c.bytes_in == Approx(2 * 16 * 8 * 8 * 2 + 144 * 16 * 2));
}

TEST_CASE("a convolution deals whole images to the cores, its filter gradient does not",
          "[mechanism][cube][conv][whole_units]") {
  HwSpec hw = toy_cube();
  hw.chip.cube_cores = 2;
  hw.cube.tile_m = 32;  // an 8 x 8 image (64 pixels) is two M tiles
  // Conv2D as above, 1x1 kernel would do; the 3x3 one: K = 72, N = 16, M = images * 64.
  // A tile is 32 x 16 over K = 72: 32*16*72 / 2048 = 18 cycles.
  auto conv = [&](int n) {
    const std::string x = std::to_string(n) + ",1,8,8,8;9,1,16,8";
    const std::string y = std::to_string(n) + ",2,8,8,8";
    return predict(conv_op("Conv2D", x, "FLOAT", "NC1HWC0;FRACTAL_Z", y, "NC1HWC0"), hw);
  };
  // 4 images on 2 cores: 2 images, 4 tiles a core = 72 cycles.
  const OpCost four = conv(4);
  CHECK(four.tiles == 8);
  CHECK(four.pipes.cube_us == Approx(0.072));
  // 3 images: one core runs 2 whole images (4 tiles), as long as 4 images take; an even split
  // of the 6 tiles would be 3 a core (0.054 us).
  const OpCost three = conv(3);
  CHECK(three.tiles == 6);
  CHECK(three.pipes.cube_us == Approx(0.072));
  // The input gradient deals dx's images the same way: dy 3 x 16 x 8 x 8 -> dx 3 x 16 x 8 x 8,
  // K = 16 * 9 = 144, N = 16, so a tile is 32*16*144 / 2048 = 36 cycles, 4 tiles a core.
  const OpCost dx = predict(conv_op("Conv2DBackpropInput", "4;18,1,16,8;3,2,8,8,8",
                                    "INT32;FLOAT;FLOAT", "NCHW;FRACTAL_Z;NC1HWC0", "3,2,8,8,8",
                                    "NC1HWC0"),
                            hw);
  CHECK(dx.pipes.cube_us == Approx(0.144));
}

TEST_CASE("cube.conv_efficiency scales a convolution's cube rate and no GEMM's",
          "[mechanism][cube][conv]") {
  HwSpec hw = toy_cube();
  const OpDesc conv = conv_op("Conv2D", "2,1,8,8,8;9,1,16,8", "FLOAT", "NC1HWC0;FRACTAL_Z",
                              "2,2,8,8,8", "NC1HWC0");
  OpText mm;
  mm.type = "MatMul";
  mm.input_shapes = "128,64;64,128";
  mm.input_dtypes = "FLOAT16;FLOAT16";
  mm.output_shapes = "128,128";
  mm.output_dtypes = "FLOAT16";
  const OpDesc gemm = npusim::test::op(mm);
  const double conv_before = predict(conv, hw).pipes.cube_us;
  const double gemm_before = predict(gemm, hw).pipes.cube_us;
  CHECK(conv_before == Approx(0.072));  // the first case above
  hw.cube.conv_efficiency = 0.5;
  // half the sustained rate: 128*16*72 / (2048 * 0.5) = 144 cycles
  CHECK(predict(conv, hw).pipes.cube_us == Approx(0.144));
  CHECK(predict(gemm, hw).pipes.cube_us == Approx(gemm_before));
}
