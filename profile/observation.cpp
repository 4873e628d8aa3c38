#include "profile/observation.h"

#include <fmt/format.h>

#include <algorithm>

namespace npusim::profile {

std::string placement_text(TaskKind k) {
  switch (k) {
    // AI_CORE names the AI Core, not its cube: older CANN writes it for vector kernels too (a
    // 48-block NLLLoss on a 24-AIC 910B), so the op's family decides cube or vector.
    case TaskKind::kCube: return "";
    case TaskKind::kVector: return "vector";
    case TaskKind::kMix: return "mix";
    case TaskKind::kAicpu: return "aicpu";
    default: return "";
  }
}

std::string placement_of(const KernelRow& row) {
  if (row.task_type == "MIX_AIV") return "vector";
  return placement_text(row.kind);
}

Observation observe(const KernelRow& row, const std::string& file) {
  const SourcePos pos{file, row.line, 0};
  if (!is_compute(row.kind)) {
    throw InputError(pos, fmt::format("'{}' is a {} task, not a compute kernel", row.name,
                                      task_kind_name(row.kind)));
  }
  if (row.type.empty()) {
    throw InputError(pos, fmt::format("'{}' has no op type (profiler Level0 writes N/A)",
                                      row.name));
  }
  if (row.input_shapes.empty() && row.input_dtypes.empty()) {
    throw InputError(pos, fmt::format("'{}' has no input shapes (N/A)", row.name));
  }
  OpText text;
  text.name = row.name;
  text.type = row.type;
  text.input_shapes = row.input_shapes;
  text.input_dtypes = row.input_dtypes;
  text.input_formats = row.input_formats;
  text.output_shapes = row.output_shapes;
  text.output_dtypes = row.output_dtypes;
  text.output_formats = row.output_formats;
  text.placement = placement_of(row);
  if (row.block_dim > 0) text.attrs.emplace_back("block_dim", std::to_string(row.block_dim));

  Observation o;
  o.op = make_op(text, pos);
  o.pos = pos;
  o.kind = row.kind;
  o.step_id = row.step_id;
  o.stream_id = row.stream_id;
  o.start_ns = row.start_ns;
  o.block_dim = row.block_dim;
  o.mix_block_dim = row.mix_block_dim;
  o.duration_us = row.duration_us;
  o.wait_us = row.wait_us;
  o.aic_total_cycles = row.aic_total_cycles;
  o.aiv_total_cycles = row.aiv_total_cycles;
  o.mac_ratio = row.aic_mac_ratio;
  o.vec_ratio = row.aiv_vec_ratio;
  o.mte2_ratio = std::max({row.aic_mte2_ratio, row.aiv_mte2_ratio, row.mte2_ratio});
  o.pipes.cube_us = row.aic_mac_time_us;
  o.pipes.vector_us = row.aiv_vec_time_us;
  o.pipes.mte2_us = std::max({row.aic_mte2_time_us, row.aiv_mte2_time_us, row.mte2_time_us});
  o.pipes.mte3_us = row.aiv_mte3_time_us;
  o.has_pmu = row.aic_total_cycles > 0 || row.aiv_total_cycles > 0 || o.pipes.mte2_us > 0;
  return o;
}

ObservationSet read_observations(const std::vector<std::string>& files,
                                 const ReadOptions& options) {
  ObservationSet set;
  constexpr std::size_t kKeptSkips = 100;
  for (const auto& file : files) {
    set.files.push_back(read_kernel_table(file, [&](const KernelRow& row) {
      if (row.kind == TaskKind::kCommunication) {
        set.communication.push_back(row);
        return;
      }
      if (!is_compute(row.kind)) {
        set.other.push_back(row);
        return;
      }
      try {
        set.compute.push_back(observe(row, file));
      } catch (const InputError& e) {
        ++set.skipped_count;
        if (set.skipped.size() < kKeptSkips) set.skipped.push_back({e.pos(), e.detail()});
      }
    }, options));
  }
  return set;
}

}  // namespace npusim::profile
