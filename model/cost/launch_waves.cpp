// Launch waves: a kernel launched on more blocks than the chip has cores (a profile row's block
// dim above the core count) runs its blocks in rounds of `cores`. The kernel's tiler fixed the
// split when it chose the block dim, so each block holds 1/blocks of the work and a core runs
// ceil(blocks / cores) of them; the plan's own tiling would spread the same work evenly.
//
// Why it matters: the MindSpore BERT runs on the 30-core first-generation 910 launch their big
// GEMMs on 32 blocks (tilings tuned on 32-core parts), and those reach 15-28 % of the cube's peak
// where 30-block GEMMs of the same shapes in the ViT runs reach up to 66 %: the last two blocks
// run alone in a second round, so the launch takes two block-times, 1/16 of the work per core
// instead of 1/30 (docs/accuracy.md, "GEMMs on the 30-core 910").
//
// Each round's block is a block of its own: a core that runs two of them starts the second one's
// pipeline afresh (its first tile's load, cube work and write-out in series, round_fills), as a
// core running one block's tiles does only once. On the 910 the BERT GEMMs on 32 blocks
// (MatMul, FusionOp_MatMul_Mul, _AddN) and the Inception filter gradients on 32 and 48 blocks
// are the rows this adds to (docs/accuracy_mechanisms.md, "Launch rounds refill the pipeline").
//
// Only cube launches: the vector kernels of these runs launched above the core count (SquareSum
// at 31, LayerNorm gradients at 48, Transpose at 64) made the cross-run figures worse when
// they took rounds too (docs/accuracy.md), so their cost stays the plan's own.
//
// The same arithmetic deals whole images: TBE kernels over NC1HWC0 maps that split the batch axis
// (KernelPlan::whole_units) give each core whole images, so at batch 32 on the 30-core 910 two
// cores run two images and the launch takes two image-times, where an even split would give each
// core 32/30 of one. The MindSpore runs measure ReluGradV2 [32,4,112,112,16] at 196.6 us on 30
// blocks against 97.5 us for [16,4,112,112,16] on 16 (one image a core): twice the time for
// twice the images, whatever the block dim (docs/accuracy_mechanisms.md, "Bit-mask selects and
// whole images on the 910").
#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

void dealt_waves(double parts, int cores, std::int64_t tiles, std::int64_t& waves,
                 double& waves_ideal) noexcept {
  if (parts <= 0 || cores <= 0 || tiles <= 0) return;
  const double rounds = fast_ceil(parts / cores);
  const double per_core = rounds * static_cast<double>(tiles) / parts;
  if (per_core <= waves_ideal) return;
  waves_ideal = per_core;
  waves = std::max(waves, saturating_count(fast_ceil(per_core - 1e-9)));
}

double round_fills(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                   double waves_ideal) noexcept {
  const bool cube = plan.unit == Placement::kCube || plan.unit == Placement::kMix;
  const int cores = std::max(1, hw.chip.cube_cores);
  if (!cube || budget.launch_blocks <= cores) return 1.0;
  const double rounds = fast_ceil(static_cast<double>(budget.launch_blocks) / cores);
  return std::clamp(rounds, 1.0, std::max(1.0, fast_floor(waves_ideal)));
}

void block_waves(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                 std::int64_t tiles, std::int64_t& waves, double& waves_ideal) noexcept {
  const bool cube = plan.unit == Placement::kCube || plan.unit == Placement::kMix;
  if (!cube) return;
  const int cores = std::max(1, hw.chip.cube_cores);
  const int blocks = budget.launch_blocks;
  if (blocks <= cores) return;
  dealt_waves(blocks, cores, tiles, waves, waves_ideal);
}

}  // namespace npusim::cost
