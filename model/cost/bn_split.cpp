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

}  // namespace npusim::cost
