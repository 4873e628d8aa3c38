// Two TBE batch-norm schedules the 910 CNN runs' rows read off (docs/accuracy_mechanisms.md,
// "Session 16"; first measured in session 15 on top of the BN split rule, here without it):
//
// - The BN apply fused with ReLUV2 (te_schedule bn_update_schedule.py): get_max_ub_count gives
//   the tile, half the UB over the fp32 bytes, halved again for double buffering, in 128-element
//   groups of 3 buffers (5376 fp32 elements on 256 KiB); get_ub_tiling cuts H into whole rows,
//   the plane whole when it fits. The fused ReLUV2 writes a bit an element, 2 bytes a 16-channel
//   pixel. On the 910 rows the tiles whose mask is a whole number of 32-byte blocks (336 pixels
//   on the 112, 56 and 28 maps, 64 on the 8) run at 1.7-1.9 ns a pixel, the others (294, 298,
//   292, 284, 289, 196, 49 pixels) at 2.7-6.4: their load, passes and store run in series.
// - BNTrainingUpdateGrad (bn_update_grad_shedule.py): C1 >= CORE_NUM cuts C1, H or W a multiple
//   of the cores (or H of half of them) cuts H, N >= CORE_NUM cuts the batch, and everything else
//   goes to ReduceAtomicSchedule: one image a block (the rows' block dim 16 at batch 16), each
//   core reducing its image's planes tile by tile into an atomic add. Its UB tiling takes whole
//   rows of a plane, a divisor of H: a prime H (Inception's 71 and 73) runs one row a tile. The
//   rows: per element 0.34-0.39 ns on ResNet's 112/56/28 maps, 0.41-0.46 on 147/35/17, 0.61-0.68
//   on 71 and 73, 0.73 on the 8 x 8 plane: a fixed cost a tile beside one rate an element.
// - The apply's core split at N >= CORE_NUM (bn_update_schedule.py's cut_batch): a core takes whole
//   images. [32,4,35,35,16] on 30 blocks takes 50.6 us, 8 planes at batch 16's 5.93 us a plane
//   (an even split, 5 planes, would be 29.7); the same on every map whose plane is more than a
//   tile (149, 147, 71, 73, 56, 28, 112). A plane that fits a tile (17, 14, 8, 7) runs between
//   the two, left to the even split (docs/accuracy_mechanisms.md, "Session 16: the BN apply's
//   core split").
#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

namespace {

// bn_update_schedule.py's get_max_ub_count: the tile in fp32 elements (5376 on 256 KiB)
double bn_apply_tile_elements(const HwSpec& hw) noexcept {
  constexpr double kFp32 = 4, kGroup = 128, kWidth = 3;
  return std::floor(hw.chip.ub_bytes / 2.0 / kFp32 / 2.0 / (kWidth * kGroup)) * kGroup;
}

}  // namespace

bool bn_apply_mask_aligned(const TensorDesc& y, const HwSpec& hw) noexcept {
  if (y.format != Format::kNC1HWC0 || y.shape.size() != 5) return true;
  const std::int64_t h = y.shape[2], w = y.shape[3], c0 = y.shape[4];
  if (h <= 0 || w <= 0 || c0 <= 0) return true;
  const double tile_elements = bn_apply_tile_elements(hw);
  const double row = static_cast<double>(w) * static_cast<double>(c0);
  const double rows = std::min(static_cast<double>(h), std::floor(tile_elements / row));
  if (rows < 1) return true;  // W split: not these maps
  const double mask_bytes = rows * row / 8.0;
  return std::fmod(mask_bytes, 32.0) == 0.0;
}

std::int64_t bn_apply_whole_images(const TensorDesc& y, const HwSpec& hw) noexcept {
  const int chip_cores = hw.chip.vector_cores;
  if (y.format != Format::kNC1HWC0 || y.shape.size() != 5 || chip_cores <= 1) return 0;
  const std::int64_t n = y.shape[0], h = y.shape[2], w = y.shape[3], c0 = y.shape[4];
  if (n <= 0 || h <= 0 || w <= 0 || c0 <= 0 || n < chip_cores) return 0;
  // a plane that fits one tile: the rows sit between whole images and an even split (left to
  // the plan's own even tiling)
  const double plane = static_cast<double>(h) * static_cast<double>(w) * static_cast<double>(c0);
  return plane > bn_apply_tile_elements(hw) ? n : 0;
}

std::int64_t bn_atomic_tiles(const TensorDesc& x, int chip_cores, double tile_elements) noexcept {
  if (x.format != Format::kNC1HWC0 || x.shape.size() != 5 || chip_cores <= 1) return 0;
  const std::int64_t n = x.shape[0], c1 = x.shape[1], h = x.shape[2], w = x.shape[3],
                     c0 = x.shape[4];
  if (n <= 0 || c1 <= 0 || h <= 0 || w <= 0 || c0 <= 0) return 0;
  if (n >= chip_cores || c1 >= chip_cores) return 0;
  const int half = chip_cores / 2;
  if (h % chip_cores == 0 || w % chip_cores == 0 || (h >= half && h % half == 0)) return 0;
  const double row = static_cast<double>(w) * static_cast<double>(c0);
  if (row > tile_elements) return 0;
  const auto fit = static_cast<std::int64_t>(
      std::min(static_cast<double>(h), std::floor(tile_elements / row)));
  // the largest divisor of H up to `fit`, counted down from `fit`: at most tile_elements / row
  // steps whatever H is (an absurd H of 1e18 rows must not walk its divisor pairs). A UB above
  // 16 MiB (no chip's: the 910's is 256 KiB) could make that count large too; the search then
  // starts at 2^20 rows a tile, a closed bound.
  constexpr std::int64_t kMaxRows = std::int64_t{1} << 20;
  std::int64_t d = fit >= h ? h : std::min(fit, kMaxRows);
  while (d > 1 && h % d != 0) --d;
  return n * c1 * (h / d);
}

}  // namespace npusim::cost
