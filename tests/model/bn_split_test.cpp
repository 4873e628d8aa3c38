// Hand-computed cases for the TBE batch-norm kernels' block split (model/cost/bn_split.cpp) and
// their per-plane instruction issue (model/cost/vector_ops.cpp).
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

TensorDesc map(std::int64_t n, std::int64_t c1) {
  TensorDesc t;
  t.shape = {n, c1, 8, 8, 16};
  t.dtype = DType::kFloat16;
  t.format = Format::kNC1HWC0;
  return t;
}

// A BN kernel over x [n,c1,h,w,16] with per-channel [1,c1,1,1,16] operands, fp32 throughout.
OpDesc bn_op(const std::string& type, const std::string& x, const std::string& c, int stats) {
  std::string shapes = x + ";" + x, dtypes = "FLOAT;FLOAT", formats = "NC1HWC0;NC1HWC0";
  for (int i = 0; i < stats; ++i) {
    shapes += ";" + c;
    dtypes += ";FLOAT";
    formats += ";NC1HWC0";
  }
  return npusim::test::op_io(type, shapes, dtypes, formats, x, "FLOAT", "NC1HWC0");
}

}  // namespace

TEST_CASE("the BN apply deals C1 groups below the core count and images from it; its input "
          "gradient deals images",
          "[mechanism][bn_split]") {
  // bn_update_schedule.py: cut_batch at N >= CORE_NUM, else one C1 group a block (the 910's
  // FusionOp_BNTrainingUpdate_ReLUV2 [16,2,..] on 2 blocks, [32,2,..] on 30)
  const OpKindInfo& apply = lookup_op_kind("BNTrainingUpdate");
  CHECK(cost::bn_split_units(apply, map(16, 2), 30) == 2);
  CHECK(cost::bn_split_units(apply, map(16, 64), 30) == 64);
  CHECK(cost::bn_split_units(apply, map(32, 2), 30) == 32);
  CHECK(cost::bn_split_units(apply, map(30, 2), 30) == 30);
  // the fusion inherits its main op's split
  CHECK(cost::bn_split_units(lookup_op_kind("FusionOp_BNTrainingUpdate_ReLUV2"), map(16, 3), 30) ==
        3);
  // the input gradient deals whole images whatever the batch
  const OpKindInfo& grad = lookup_op_kind("BNTrainingReduceGrad");
  CHECK(cost::bn_split_units(grad, map(16, 2), 30) == 16);
  CHECK(cost::bn_split_units(grad, map(32, 64), 30) == 32);
  // the gradient sums split evenly; a map that is not NC1HWC0 deals nothing
  CHECK(cost::bn_split_units(lookup_op_kind("BNTrainingUpdateGrad"), map(16, 2), 30) == 0);
  TensorDesc nd = map(16, 2);
  nd.format = Format::kND;
  CHECK(cost::bn_split_units(apply, nd, 30) == 0);
}

TEST_CASE("a BN kernel launches one block per dealt unit, and 32 channel groups on 30 cores "
          "take two groups' time",
          "[mechanism][bn_split]") {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.vector_cores = 30;
  hw.chip.cube_cores = 30;
  const std::string c = "1,2,1,1,16";
  // no block dim given (a graph): [16,2,8,8,16] runs on its 2 channel groups (40 would fit its
  // bytes), the input gradient on its 16 images
  CHECK(predict(bn_op("BNTrainingUpdate", "16,2,8,8,16", c, 5), hw).block_dim == 2);
  CHECK(predict(bn_op("BNTrainingReduceGrad", "16,2,8,8,16", c, 5), hw).block_dim == 16);
  // C1 = 32 on 30 cores: two cores walk two groups of every image. An even split would give
  // each core 32/30 of a group; dealt whole it is 2 (1.875 x). C1 = 30: one group a core.
  const OpCost c32 = predict(bn_op("BNTrainingUpdate", "16,32,64,64,16", "1,32,1,1,16", 5), hw,
                             CoreBudget{0, 30});
  const OpCost c30 = predict(bn_op("BNTrainingUpdate", "16,30,64,64,16", "1,30,1,1,16", 5), hw,
                             CoreBudget{0, 30});
  CHECK(c32.block_dim == 30);
  CHECK(c32.pipes.vector_us / c30.pipes.vector_us > 1.8);
  CHECK(c32.pipes.vector_us / c30.pipes.vector_us < 2.1);
}

TEST_CASE("per-channel operands make a BN kernel issue its instructions once per (n, c1) plane",
          "[mechanism][bn_split]") {
  const HwSpec hw = npusim::test::toy_vector_chip();
  // BNTrainingReduceGrad over 256 fp32 elements (1 KB, one tile on one core): as 4 planes of
  // 2 x 2 pixels ([1,4,2,2,16]) or one of 4 x 4 ([1,1,4,4,16]). The same repeats; the 4-plane
  // map issues its 4 passes (binary: vmul, vadd, vadd, vmul) 3 more times: 3 x 4 x 22 = 264
  // cycles, 0.264 us at 1 GHz. (The [1,C1,1,1,16] operands share the output's last axis: rows
  // of a row broadcast, no broadcast pass.)
  const CoreBudget one{0, 1};
  const OpCost four =
      predict(bn_op("BNTrainingReduceGrad", "1,4,2,2,16", "1,4,1,1,16", 5), hw, one);
  const OpCost whole =
      predict(bn_op("BNTrainingReduceGrad", "1,1,4,4,16", "1,1,1,1,16", 5), hw, one);
  CHECK(four.pipes.vector_us - whole.pipes.vector_us == Approx(0.264));
  // BNTrainingUpdateGrad (a leading-axis reduction plan) the same way: its 5 passes, issued 3
  // more times over [1,4,2,2,16] than over [1,1,4,4,16]: 3 x 5 x 22 = 330 cycles
  const auto upd = [&](const std::string& x, const std::string& c) {
    return npusim::test::op_io("BNTrainingUpdateGrad", x + ";" + x + ";" + c + ";" + c,
                               "FLOAT;FLOAT;FLOAT;FLOAT", "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0",
                               c + ";" + c, "FLOAT;FLOAT", "NC1HWC0;NC1HWC0");
  };
  const double d = predict(upd("1,4,2,2,16", "1,4,1,1,16"), hw, one).pipes.vector_us -
                   predict(upd("1,1,4,4,16", "1,1,1,1,16"), hw, one).pipes.vector_us;
  // plus the vector-add trees of its two sums: 4 planes of 4 pixels take 4 x 2 one-repeat
  // levels, one plane of 16 pixels 2 + 1 + 1 + 1 repeats: 3 more binary repeats (2 cycles) per
  // sum, 12 cycles. 0.342 us.
  CHECK(d == Approx(0.342));
}

TEST_CASE("the BN apply's ReLUV2 mask: tiles of whole 32-byte blocks overlap, others run in series",
          "[mechanism][bn_split]") {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.ub_bytes = 262144;
  // bn_update_schedule.py's tile on 256 KiB: floor(131072 / 4 / 2 / 384) = 42 groups of 128,
  // 5376 fp32 elements, 336 pixels of 16 channels. Mask: 2 bytes a pixel.
  const auto y = [](std::int64_t h, std::int64_t w) {
    TensorDesc t = map(16, 4);
    t.shape = {16, 4, h, w, 16};
    return t;
  };
  CHECK(cost::bn_apply_mask_aligned(y(112, 112), hw));   // 3 rows, 336 px, 672 B = 21 blocks
  CHECK(cost::bn_apply_mask_aligned(y(56, 56), hw));     // 6 rows, 336 px
  CHECK(cost::bn_apply_mask_aligned(y(28, 28), hw));     // 12 rows, 336 px
  CHECK(cost::bn_apply_mask_aligned(y(8, 8), hw));       // the plane, 64 px, 128 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(147, 147), hw));  // 2 rows, 294 px, 588 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(73, 73), hw));    // 4 rows, 292 px, 584 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(35, 35), hw));    // 9 rows, 315 px, 630 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(17, 17), hw));    // the plane, 289 px
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(7, 7), hw));      // the plane, 49 px, 98 B
  TensorDesc nd = y(17, 17);
  nd.format = Format::kND;
  CHECK(cost::bn_apply_mask_aligned(nd, hw));
  // the fusion carries ReLUV2's mask, the plain apply does not
  CHECK(lookup_op_kind("FusionOp_BNTrainingUpdate_ReLUV2").relu_mask);
  CHECK_FALSE(lookup_op_kind("BNTrainingUpdate").relu_mask);
}

TEST_CASE("BNTrainingUpdateGrad's atomic schedule: one image a core, tiles of whole rows dividing H",
          "[mechanism][bn_split]") {
  const auto x = [](std::int64_t n, std::int64_t c1, std::int64_t h) {
    TensorDesc t = map(n, c1);
    t.shape = {n, c1, h, h, 16};
    return t;
  };
  // 10922 fp32 elements a tile: a 73-wide row is 1168, 9 fit, and 73 is prime: one row a tile,
  // 16 x 5 x 73 tiles
  CHECK(cost::bn_atomic_tiles(x(16, 5, 73), 30, 10922) == 16 * 5 * 73);
  // 112: 1792 a row, 6 fit, the largest divisor of 112 up to 6 is 4: 28 tiles a plane
  CHECK(cost::bn_atomic_tiles(x(16, 4, 112), 30, 10922) == 16 * 4 * 28);
  // 17 x 17: the plane (4624) fits whole
  CHECK(cost::bn_atomic_tiles(x(16, 12, 17), 30, 10922) == 16 * 12);
  // the other schedules: N or C1 of the core count or more, H a multiple of the cores or of half
  CHECK(cost::bn_atomic_tiles(x(32, 4, 56), 30, 10922) == 0);
  CHECK(cost::bn_atomic_tiles(x(16, 32, 14), 30, 10922) == 0);
  CHECK(cost::bn_atomic_tiles(x(16, 4, 60), 30, 10922) == 0);
  CHECK(cost::bn_atomic_tiles(x(16, 4, 45), 30, 10922) == 0);
  // a row larger than the tile: not this tiling
  CHECK(cost::bn_atomic_tiles(x(16, 1, 1000), 30, 10922) == 0);

  // in a prediction: per element the prime 73 map costs more than the 72 one (9 rows a tile)
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.vector_cores = 30;
  hw.chip.cube_cores = 30;
  const auto upd = [&](std::int64_t h) {
    const std::string s = "16,1," + std::to_string(h) + "," + std::to_string(h) + ",16";
    const std::string c = "1,1,1,1,16";
    return predict(npusim::test::op_io("BNTrainingUpdateGrad", s + ";" + s + ";" + c + ";" + c,
                                       "FLOAT16;FLOAT16;FLOAT;FLOAT",
                                       "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0", c + ";" + c,
                                       "FLOAT;FLOAT", "NC1HWC0;NC1HWC0"),
                   hw);
  };
  const OpCost p73 = upd(73), p72 = upd(72);
  CHECK(p73.block_dim == 16);
  CHECK(p72.block_dim == 16);
  CHECK(p73.duration_us / (73.0 * 73.0) > 1.3 * p72.duration_us / (72.0 * 72.0));
}
