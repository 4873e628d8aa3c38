#include "model/cost/fused_dbn_dw.h"

#include "model/op_table.h"

namespace npusim::cost {

bool split_fused_dbn_dw(const OpDesc& op, DbnDwParts& parts) {
  // x, grads and dbn_x are feature maps; dbn_res has the map of grads; dw is a 4-D filter
  if (op.inputs.size() < 3 || op.outputs.size() < 2) return false;
  const TensorDesc& x = op.inputs[0];
  const TensorDesc& grads = op.inputs[1];
  const TensorDesc& dbn_res = op.outputs[0];
  const TensorDesc& dw = op.outputs[1];
  if (x.shape.size() < 4 || grads.shape != dbn_res.shape || op.inputs[2].shape != grads.shape ||
      dw.shape.size() != 4) {
    return false;
  }
  parts.bn = OpDesc{};
  parts.bn.name = op.name;
  parts.bn.type = "BNTrainingReduceGrad";
  parts.bn.kind = &lookup_op_kind(parts.bn.type);
  parts.bn.inputs.assign(op.inputs.begin() + 1, op.inputs.end());
  parts.bn.outputs = {dbn_res};
  parts.bn.placement = Placement::kVector;
  parts.dw = OpDesc{};
  parts.dw.name = op.name;
  parts.dw.type = "Conv2DBackpropFilter";
  parts.dw.kind = &lookup_op_kind(parts.dw.type);
  parts.dw.inputs = {x, dbn_res};
  parts.dw.outputs = {dw};
  parts.dw.attrs = op.attrs;
  parts.dw.placement = Placement::kCube;
  return true;
}

}  // namespace npusim::cost
