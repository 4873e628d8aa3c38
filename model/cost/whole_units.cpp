// Whole images per core: TBE kernels over NC1HWC0 maps that split the batch axis deal whole
// images to the cores, so at batch 32 on the 30-core 910 two cores run two images and the launch
// takes two image-times, where an even split would give each core 32/30 of one.
//
// Why it matters: the MindSpore runs measure ReluGradV2 [32,4,112,112,16] at 196.6 us on 30
// blocks against 97.5 us for [16,4,112,112,16] on 16 (one image a core): twice the time for
// twice the images, whatever the block dim (docs/accuracy_mechanisms.md, "Bit-mask selects and
// whole images on the 910").
#include <algorithm>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

void unit_waves(const KernelPlan& plan, int b, std::int64_t tiles, std::int64_t& waves,
                double& waves_ideal) noexcept {
  if (plan.whole_units <= 0 || b <= 0 || tiles <= 0) return;
  const double units = static_cast<double>(plan.whole_units);
  const double per_core = fast_ceil(units / b) * static_cast<double>(tiles) / units;
  if (per_core <= waves_ideal) return;
  waves_ideal = per_core;
  waves = std::max(waves, saturating_count(fast_ceil(per_core - 1e-9)));
}

}  // namespace npusim::cost
