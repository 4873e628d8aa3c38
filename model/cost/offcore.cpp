// Ops that do not run on AI Cores: AI CPU tasks (a large fixed dispatch, scalar speed) and ops on
// the host CPU. A data-dependent output shape (Where, Unique, NonZero) forces a device -> host ->
// device round trip before anything after it can launch (DESIGN.md "AICPU and dynamic shape").
#include <algorithm>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {

double total_elements(const std::vector<TensorDesc>& ts) {
  double e = 0;
  for (const auto& t : ts) e += static_cast<double>(t.elements());
  return e;
}

double total_bytes(const std::vector<TensorDesc>& ts) {
  double b = 0;
  for (const auto& t : ts) b += t.bytes();
  return b;
}

}  // namespace

OpCost cost_aicpu(const OpDesc& op, const HwSpec& hw) noexcept {
  OpCost c;
  const double elements = total_elements(op.inputs);
  const double passes = std::max<double>(1, op.kind->pass_count);
  CriticalPath& cp = c.critical_path;
  cp.head_us = hw.aicpu.dispatch_us;
  cp.compute_us = elements * passes * hw.aicpu.ns_per_element / 1000.0;
  if (op.kind->role == OpRole::kDynamicShape) cp.host_us = hw.host.dynamic_shape_sync_us;
  c.duration_us = cp.sum();
  c.block_dim = 1;
  c.core_time_us = c.duration_us;
  c.tiles = 1;
  c.waves = 1;
  c.bytes_in = total_bytes(op.inputs);
  c.bytes_out = op.outputs.empty() ? c.bytes_in : total_bytes(op.outputs);
  c.flops = elements * passes;
  c.pipes.scalar_us = cp.compute_us;
  c.bound = Bound::kScalar;
  if (cp.head_us >= cp.compute_us && cp.head_us >= cp.host_us) c.bound = Bound::kHead;
  if (cp.host_us > cp.compute_us && cp.host_us > cp.head_us) c.bound = Bound::kHost;
  return c;
}

OpCost cost_host(const OpDesc& op, const HwSpec& hw) noexcept {
  OpCost c;
  const double elements = total_elements(op.inputs);
  const double passes = std::max<double>(1, op.kind->pass_count);
  c.critical_path.host_us = elements * passes * hw.host.ns_per_element / 1000.0;
  c.duration_us = c.critical_path.sum();
  c.block_dim = 0;
  c.core_time_us = 0;
  c.tiles = 1;
  c.waves = 1;
  c.bytes_in = total_bytes(op.inputs);
  c.bytes_out = op.outputs.empty() ? c.bytes_in : total_bytes(op.outputs);
  c.flops = elements * passes;
  c.bound = Bound::kHost;
  return c;
}

}  // namespace npusim::cost
