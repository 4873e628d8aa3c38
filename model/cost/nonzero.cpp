// NonZero as an AI Core kernel (aclnnNonzeroV2's NonzeroAiCore, MIX_AIV in the profiles): a
// compaction whose output offsets depend on every other core's count, so its cost is a chain of
// GM round trips around a cross-core barrier, not its few bytes of data.
// Each core counts the non-zeros of its slice and writes the count to a GM workspace; SyncAll
// (every core adds to one GM word and spins until it reaches the block dim) waits for all of
// them; each core then reads every count for its prefix sum, writes its indices, and one core
// writes the output shape for the host. evaluate() already pays one read and one write latency;
// the chain adds the spin's read, the counts' read, the count's and the shape's writes, and
// the barrier's same-address adds, which the memory serialises: one write latency per core.
// The block dim is one core per element up to the core count: the profiles show 4 cores for 4
// elements (CANN 8.3 llama) and 16 for 16 (the 2023 GPT-3 run).
#include <algorithm>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

bool is_nonzero_kernel(const OpDesc& op) noexcept {
  return op.type == "NonZero" || op.type == "NonZeroWithValue";
}

KernelPlan plan_nonzero(const OpDesc& op, const HwSpec& hw, int cores) noexcept {
  KernelPlan p;
  p.unit = Placement::kVector;
  double elements = 0, in_bytes = 0;
  for (const auto& t : op.inputs) {
    elements = std::max(elements, static_cast<double>(t.elements()));
    in_bytes += t.bytes();
  }
  // indices: one int32 (or int64) per element and input dim at most
  double out_bytes = 0;
  for (const auto& t : op.outputs) out_bytes += t.bytes();
  if (op.outputs.empty() && !op.inputs.empty())
    out_bytes =
        elements * 4.0 * static_cast<double>(std::max<std::size_t>(1, op.inputs[0].shape.size()));
  const double b = std::clamp(elements, 1.0, static_cast<double>(std::max(1, cores)));
  p.tiles = static_cast<std::int64_t>(b);
  p.in = flat_transfer(in_bytes, b);
  p.out = flat_transfer(out_bytes, b);
  // the count: one compare-and-add pass over the core's slice
  p.vector_cycles = class_pass_cycles(VectorClass::kBinary, in_bytes / b, hw);
  const double r = hw.memory.read_latency_cycles;
  const double w = hw.memory.write_latency_cycles;
  p.scalar_cycles = 2 * r + 2 * w + b * w;
  p.flops = elements;
  return p;
}

}  // namespace npusim::cost
