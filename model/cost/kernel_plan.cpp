#include "model/cost/kernel_plan.h"

#include <algorithm>
#include <cmath>

#include "model/op_table.h"

namespace npusim::cost {

std::int64_t max_elements(const std::vector<TensorDesc>& ts) noexcept {
  std::int64_t m = 0;
  for (const auto& t : ts) m = std::max(m, t.elements());
  return m;
}

void broadcast_extent(const std::vector<TensorDesc>& ts, double& elements, double& last) noexcept {
  std::size_t rank = 0;
  for (const auto& t : ts) rank = std::max(rank, t.shape.size());
  elements = 1;
  last = 1;
  for (std::size_t pos = 0; pos < rank; ++pos) {  // pos counts from the last axis
    std::int64_t d = 1;
    for (const auto& t : ts) {
      if (pos < t.shape.size()) d = std::max(d, t.shape[t.shape.size() - 1 - pos]);
    }
    elements *= static_cast<double>(d);
    if (pos == 0) last = static_cast<double>(d);
  }
}

std::int64_t vector_tiles(double total_bytes, const HwSpec& hw, int cores,
                          std::int64_t max_parallel, double core_bytes) noexcept {
  const double chunk = core_chunk_bytes(hw, core_bytes);
  const std::int64_t wanted = ceil_count(div_pow2(std::max(total_bytes, 1.0), std::max(chunk, 1.0)));
  const std::int64_t b =
      std::max<std::int64_t>(1, std::min<std::int64_t>({static_cast<std::int64_t>(cores),
                                                         std::max<std::int64_t>(1, max_parallel),
                                                         wanted}));
  const double per_core = total_bytes / static_cast<double>(b);
  const std::int64_t need = ceil_count(div_pow2(per_core, ub_tile_bytes(hw)));
  // min(need, 2^53 / b); b < 2^31 puts 2^53 / b above 2^22, so a smaller need skips the divide
  const std::int64_t loops = need <= (std::int64_t{1} << 22)
                                 ? need
                                 : std::min(need, static_cast<std::int64_t>(kMaxCount) / b);
  return b * loops;
}

double class_pass_cycles(VectorClass c, double bytes, const HwSpec& hw) noexcept {
  return fast_ceil(div_pow2(bytes, hw.vector.repeat_bytes)) *
             hw.vector.cycles_per_repeat[static_cast<std::size_t>(c)] +
         hw.vector.api_overhead_cycles;
}

double pass_cycles(const OpKindInfo& kind, double bytes, const HwSpec& hw) noexcept {
  double per_repeat = 0;
  for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
    per_repeat += hw.vector.cycles_per_repeat[static_cast<std::size_t>(kind.passes[i])];
  }
  const double repeats = fast_ceil(div_pow2(bytes, hw.vector.repeat_bytes));
  return repeats * per_repeat + hw.vector.api_overhead_cycles * kind.pass_count;
}

}  // namespace npusim::cost
