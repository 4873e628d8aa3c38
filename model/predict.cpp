#include "model/predict.h"

#include <algorithm>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim {

OpCost predict(const OpDesc& op, const HwSpec& hw, CoreBudget budget, const PredictContext& ctx) {
  NPUSIM_CHECK(op.kind != nullptr);
  const OpKindInfo& kind = *op.kind;
  const Placement placement = op.placement.value_or(kind.placement);
  if (placement == Placement::kAicpu) return cost::cost_aicpu(op, hw);
  if (placement == Placement::kHost) return cost::cost_host(op, hw);
  // Where/Unique/NonZero default to the AI CPU; a profile may show them as AI Core kernels
  // (newer CANN ships AI Core versions), and then they are costed as such below.
  if (kind.family == OpFamily::kAicpu && !op.placement) return cost::cost_aicpu(op, hw);

  PredictContext c = ctx;
  if (c.l2_hit_ratio < 0 && op.attr("l2_hit_ratio")) c.l2_hit_ratio = op.attr_number("l2_hit_ratio", 0);
  const Placement unit = kind.family == OpFamily::kCube ? Placement::kCube : Placement::kVector;
  const int cores = std::max(1, cost::available_cores(unit, hw, budget));
  cost::KernelPlan plan = [&] {
    switch (kind.family) {
      case OpFamily::kCube: return cost::plan_cube(op, hw, cores);
      case OpFamily::kElementwise: return cost::plan_elementwise(op, hw, cores);
      case OpFamily::kReduction: return cost::plan_reduction(op, hw, cores);
      case OpFamily::kDataMovement: return cost::plan_data_movement(op, hw, cores);
      case OpFamily::kIndex: return cost::plan_index(op, hw, cores);
      case OpFamily::kSort: return cost::plan_sort(op, hw, cores);
      case OpFamily::kAicpu:
      case OpFamily::kGeneric: break;
    }
    return cost::plan_generic(op, hw, cores);
  }();
  if (kind.family == OpFamily::kGeneric) {
    plan.warnings |= kWarnUnknownOpType;
  } else {
    plan.warnings &= ~static_cast<std::uint32_t>(kWarnUnknownOpType);
  }
  OpCost cost = cost::evaluate(plan, hw, budget, c);
  if (kind.role == OpRole::kDynamicShape) {
    // the output size still has to reach the host before anything after it can launch
    cost.critical_path.host_us += hw.host.dynamic_shape_sync_us;
    cost.duration_us += hw.host.dynamic_shape_sync_us;
    cost.core_time_us = cost.block_dim * cost.duration_us;
  }
  return cost;
}

}  // namespace npusim
