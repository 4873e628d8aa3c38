// The axis a TBE batch-norm kernel deals whole to the cores, read off its schedule and checked
// against every BN row of the MindSpore CNN runs on the 30-core 910 (Inception v3 and ResNet-50
// at batch 16 and 32: docs/accuracy_mechanisms.md, "The BN kernels' split axis").
//
// - The BN apply (BNTrainingUpdate and its ReLUV2 fusions; CANN te_schedule
//   bn_update_schedule.py): a batch of CORE_NUM or more takes the cut_batch branch (N split over
//   the cores); below it the kernel splits C1, one channel group a block, each block walking the
//   plane of its group in every image (into CORE_NUM parts when C1 is larger). Block dim
//   min(N, cores) or min(C1, cores): 294 of 294 rows (C1 = 2 ... 28 at batch 16, 30 for C1 >=
//   32 and at batch 32).
// - The input gradient (BNTrainingReduceGrad; te_schedule bn_grad_reduce_schedule.py over the
//   elewise tiling) deals whole images: min(N, cores) blocks on 273 of 274 rows; the 274th,
//   [32,16,14,14,16], is one of the schedule's two listed shapes that fuse N / 4 with C1 / 4
//   into 32 blocks, the same two images' work a core as dealing images. (Its "model parallel"
//   branch, C1 a multiple of CORE_NUM, splits C1; no row here has such a C1.)
//
// A core runs ceil(units / block dim) units (dealt_waves, model/cost/launch_waves.cpp), so at
// batch 32 on 30 cores two of them run two images: the batch-32 / batch-16 time of the input
// gradient is 1.8-2.0 on every map where an even split gives 32/30 = 1.07.
// BNTrainingUpdateGrad is not here: its rows take an even split's time (batch 32 on 30 blocks
// within 0.84-1.06 of batch 16 on 16 for C1 < 30).
#include <cmath>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

std::int64_t bn_split_units(const OpKindInfo& kind, const TensorDesc& x,
                            int chip_cores) noexcept {
  if (!kind.whole_images && !kind.bn_apply_split) return 0;
  if (x.format != Format::kNC1HWC0 || x.shape.size() != 5) return 0;
  const std::int64_t n = x.shape[0];
  const std::int64_t c1 = x.shape[1];
  if (n <= 0 || c1 <= 0) return 0;
  if (kind.bn_apply_split && n < chip_cores) return c1;
  return n;
}

// The BN apply fused with ReLUV2 (bn_update_schedule.py): get_max_ub_count gives the tile, half
// the UB over the fp32 bytes, halved again for double buffering, in 128-element groups of 3
// buffers (10880 fp16 or 5376 fp32 elements on 256 KiB); get_ub_tiling cuts H into rows, the
// plane whole when it fits. The mask output is one bit an element: 2 bytes a 16-channel pixel.
// On the 910 rows the tiles whose mask is a whole number of 32-byte blocks (336 pixels on the
// 112, 56 and 28 maps, 64 on the 8) run at 1.7-1.9 ns a pixel, the others (294, 298, 245, 292,
// 284, 289, 196, 49 pixels) at 2.7-6.4 (docs/accuracy_mechanisms.md, "The BN apply fused with
// ReLUV2 on the 910").
bool bn_apply_mask_aligned(const TensorDesc& y, const HwSpec& hw) noexcept {
  if (y.format != Format::kNC1HWC0 || y.shape.size() != 5) return true;
  const std::int64_t h = y.shape[2], w = y.shape[3], c0 = y.shape[4];
  if (h <= 0 || w <= 0 || c0 <= 0) return true;
  constexpr double kFp32 = 4, kGroup = 128, kWidth = 3;  // bn_update_schedule.py
  const double groups = std::floor(hw.chip.ub_bytes / 2.0 / kFp32 / 2.0 / (kWidth * kGroup));
  const double tile_elements = groups * kGroup;
  const double row = static_cast<double>(w * c0);
  const double rows = std::min<double>(static_cast<double>(h), std::floor(tile_elements / row));
  if (rows < 1) return true;  // W split: not these maps
  const double mask_bytes = rows * row / 8.0;
  return std::fmod(mask_bytes, 32.0) == 0.0;
}

// BNTrainingUpdateGrad (bn_update_grad_shedule.py, bn_update_grad_schedule): C1 >= CORE_NUM
// cuts C1, H or W a multiple of the cores (or H of half of them, N below) cuts H, N >=
// CORE_NUM cuts the batch, and everything else goes to ReduceAtomicSchedule: one image a block
// (the rows' block dim 16 at batch 16), each core reducing its image's planes tile by tile
// into an atomic add. Its UB tiling takes whole rows of a plane, a divisor of H: a prime H
// (Inception's 71 and 73) runs one row a tile. The rows: per element 0.34-0.39 ns on ResNet's
// 112/56/28 maps (tiles of 4, 8, 14 rows), 0.41-0.46 on 147/35/17, 0.61-0.68 on 71 and 73, 0.73
// on 8 x 8 (the plane, 1024 elements): a fixed cost a tile beside the same rate an element.
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
  // the largest divisor of H up to `fit`: walk divisor pairs up to sqrt(H) (a closed bound: at
  // most 46341 steps for any int32 H)
  std::int64_t d = 1;
  for (std::int64_t i = 1; i * i <= h; ++i) {
    if (h % i != 0) continue;
    if (i <= fit) d = std::max(d, i);
    if (h / i <= fit) d = std::max(d, h / i);
  }
  return n * c1 * (h / d);
}

}  // namespace npusim::cost
