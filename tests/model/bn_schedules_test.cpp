// Hand-computed cases for two TBE batch-norm schedules (model/cost/bn_schedules.cpp): the BN
// apply's ReLUV2 mask alignment and BNTrainingUpdateGrad's atomic reduce tiles.
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

TensorDesc map(std::int64_t n, std::int64_t c1, std::int64_t h, std::int64_t w) {
  TensorDesc t;
  t.shape = {n, c1, h, w, 16};
  t.dtype = DType::kFloat16;
  t.format = Format::kNC1HWC0;
  return t;
}

}  // namespace

TEST_CASE("the BN apply's ReLUV2 mask: tiles of whole 32-byte blocks overlap, others run in series",
          "[mechanism][bn_schedules]") {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.ub_bytes = 262144;
  // bn_update_schedule.py's tile on 256 KiB: floor(131072 / 4 / 2 / 384) = 42 groups of 128,
  // 5376 fp32 elements, 336 pixels of 16 channels. Mask: 2 bytes a pixel.
  const auto y = [](std::int64_t h, std::int64_t w) { return map(16, 4, h, w); };
  CHECK(cost::bn_apply_mask_aligned(y(112, 112), hw));        // 3 rows, 336 px, 672 B = 21 blocks
  CHECK(cost::bn_apply_mask_aligned(y(56, 56), hw));          // 6 rows, 336 px
  CHECK(cost::bn_apply_mask_aligned(y(28, 28), hw));          // 12 rows, 336 px
  CHECK(cost::bn_apply_mask_aligned(y(8, 8), hw));            // the plane, 64 px, 128 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(147, 147), hw));  // 2 rows, 294 px, 588 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(73, 73), hw));    // 4 rows, 292 px, 584 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(35, 35), hw));    // 9 rows, 315 px, 630 B
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(17, 17), hw));    // the plane, 289 px
  CHECK_FALSE(cost::bn_apply_mask_aligned(y(7, 7), hw));      // the plane, 49 px, 98 B
  TensorDesc nd = y(17, 17);
  nd.format = Format::kND;
  CHECK(cost::bn_apply_mask_aligned(nd, hw));
  // the fusion carries ReLUV2's mask and the apply's schedule, the plain apply no mask
  const OpKindInfo& fused = lookup_op_kind("FusionOp_BNTrainingUpdate_ReLUV2");
  CHECK(fused.relu_mask);
  CHECK(fused.bn_apply);
  CHECK_FALSE(lookup_op_kind("BNTrainingUpdate").relu_mask);
}

TEST_CASE("BNTrainingUpdateGrad's atomic schedule: one image a core, tiles of whole rows dividing H",
          "[mechanism][bn_schedules]") {
  const auto x = [](std::int64_t n, std::int64_t c1, std::int64_t h) { return map(n, c1, h, h); };
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
  // a row larger than the tile: not this tiling; absurd shapes: a closed answer, no hang
  CHECK(cost::bn_atomic_tiles(x(16, 1, 1000), 30, 10922) == 0);
  CHECK(cost::bn_atomic_tiles(map(1, 1, 2147483647, 1), 30, 10922) == 2147483647);

  // in a prediction on 16 blocks: per element the prime 73 map (a row a tile) costs more than
  // the 72 one (9 rows a tile)
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
                   hw, CoreBudget{0, 16});
  };
  const OpCost p73 = upd(73), p72 = upd(72);
  CHECK(p73.duration_us / (73.0 * 73.0) > 1.3 * p72.duration_us / (72.0 * 72.0));
}

TEST_CASE("the BN apply at N >= cores deals whole images when a plane is more than a tile",
          "[mechanism][bn_schedules]") {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.chip.ub_bytes = 262144;  // the tile: 5376 fp32 elements
  hw.chip.vector_cores = 30;
  hw.chip.cube_cores = 30;
  // cut_batch: 35 x 35 x 16 = 19600 elements a plane, past the tile: N whole images
  CHECK(cost::bn_apply_whole_images(map(32, 4, 35, 35), hw) == 32);
  CHECK(cost::bn_apply_whole_images(map(32, 8, 28, 28), hw) == 32);   // 12544
  CHECK(cost::bn_apply_whole_images(map(30, 2, 149, 149), hw) == 30);
  // a plane that fits a tile (17 x 17 x 16 = 4624): the even split stays
  CHECK(cost::bn_apply_whole_images(map(32, 12, 17, 17), hw) == 0);
  CHECK(cost::bn_apply_whole_images(map(32, 32, 7, 7), hw) == 0);
  // N below the cores: the C1 split
  CHECK(cost::bn_apply_whole_images(map(16, 4, 35, 35), hw) == 0);
  TensorDesc nd = map(32, 4, 35, 35);
  nd.format = Format::kND;
  CHECK(cost::bn_apply_whole_images(nd, hw) == 0);

  // in a prediction on 30 blocks: [32,4,35,35,16] deals 2 images (8 planes) to a core, the
  // work a core of [60,4,35,35,16] does, where an even split of 128 planes would give
  // ceil(128/30) = 5 planes, about 30 images' 4 (the launch's fixed part aside)
  const auto apply = [&](std::int64_t n) {
    const std::string s = std::to_string(n) + ",4,35,35,16";
    const std::string c = "1,4,1,1,16";
    return predict(npusim::test::op_io("BNTrainingUpdate",
                                       s + ";" + c + ";" + c + ";" + c + ";" + c,
                                       "FLOAT16;FLOAT;FLOAT;FLOAT;FLOAT",
                                       "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0", s, "FLOAT16",
                                       "NC1HWC0"),
                   hw, CoreBudget{0, 30});
  };
  const OpCost p32 = apply(32), p30 = apply(30), p60 = apply(60);
  CHECK(p32.duration_us == Approx(p60.duration_us).epsilon(0.01));
  CHECK(p32.duration_us > 1.3 * p30.duration_us);
}
