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

}  // namespace npusim::cost
