// The launch a profile row records: its block dim is how many blocks the kernel started and how
// finely its tiler split the data, whatever the model's own tiler would have chosen.
//
// Head. Every block the kernel launches is started by the task scheduler, one after another, so
// the head grows with the blocks launched, not with the tiles the model's plan happens to fill:
// TBE launches a tiny tensor on many blocks with a few bytes each. On the ten MindSpore 910 runs
// NPUClearFloatStatus on 8 fp16 elements takes 7.3-7.8 us on 30 blocks; TransData ND <-> FRACTAL_NZ
// of [32,100] fp32 4.6-7.8 us and [2,768] 4.9 us on 30 blocks; SquareSumV1 of [3072] fp16 2.5-2.8
// us on 12 blocks, against 1.3-1.4 us for a one-block kernel of the same size. The model priced
// those on its own one or two tiles (1.5-2.3 us). Blocks beyond the chip's cores wait for a core
// and start as the first round's blocks finish: their start hides behind that work, so the head
// counts at most the chip's cores of the unit (launching every block: the 910's 32-, 48- and
// 64-block GEMMs and transposes went 0.25 -> 0.34 LORO MAPE; docs/accuracy_mechanisms.md,
// session 18).
//
// Split. TBE's elementwise and reduction tilers give a core as little as one 32-byte block
// before they leave a core idle (the block dim of the rows above: 8 elements on 30 blocks, 3072 on
// 12), where the model's own tiler, without a block dim, keeps min_bytes_per_core a core. With
// the row's block dim known, the split is the launch's: down to one memory block a core
// (launch_core_bytes, inline in kernel_plan.h).
#include <algorithm>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

int head_blocks(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                int blocks) noexcept {
  if (budget.launch_blocks <= blocks) return blocks;
  const bool cube = plan.unit == Placement::kCube || plan.unit == Placement::kMix;
  const int cores = std::max(1, cube ? hw.chip.cube_cores : hw.chip.vector_cores);
  return std::max(blocks, std::min(budget.launch_blocks, cores));
}

}  // namespace npusim::cost
