#pragma once
// FusedDbnDw: the 910's TIK kernel (CANN fused_dbn_dw.py, Dbn2Conv2dBackpropFilter) that runs a
// batch norm's input gradient and the filter gradient of the convolution before it in one launch.
// Costed as the two ops it fuses (model/predict.cpp adds their times, the launch paid once).

#include "model/op_desc.h"

namespace npusim::cost {

/// The ops inside a FusedDbnDw, built from its operands. MindSpore's op_info lists
///   inputs  (x, grads, dbn_x, diff_scale, diff_offset, scale, batch_mean, batch_variance),
///   outputs (dbn_res, dw):
/// the BN gradient reads grads and dbn_x with the per-channel statistics and writes dbn_res
/// (BNTrainingReduceGrad); the filter gradient is dw = dbn_res' x (Conv2DBackpropFilter over
/// the forward input x). False, with nothing built, when the operands are not these.
struct DbnDwParts {
  OpDesc bn;
  OpDesc dw;
};
[[nodiscard]] bool split_fused_dbn_dw(const OpDesc& op, DbnDwParts& parts);

}  // namespace npusim::cost
