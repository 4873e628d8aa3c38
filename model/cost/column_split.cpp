// Leading-axis reductions of ND tensors: the kept axis cut over the cores (column_split.h).
#include "model/cost/column_split.h"

#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

ColumnSplit column_split(const TensorDesc& x, const ReduceLayout& l, const HwSpec& hw,
                         int cores) noexcept {
  ColumnSplit s;
  if (is_tiled(x.format)) return s;
  if (l.count != 2 || !l.runs[0].reduced || l.runs[1].reduced) return s;
  const double ds = dtype_bytes(x.dtype);
  const double c = l.runs[1].size;
  const double r = l.runs[0].size;
  const double block = std::max(1, hw.memory.block_bytes);
  const double row_bytes = c * ds;
  if (!(ds > 0) || !(c >= 1) || !(r > 1) || !std::isfinite(row_bytes)) return s;
  const std::int64_t n = std::max(1, cores);
  s.applies = true;
  s.rows = r;
  const double blocks_in_row = row_bytes / block;
  if (blocks_in_row == std::floor(blocks_in_row)) {
    s.strided = true;
    // the largest divisor of the row's blocks that is at most the cores (a loop over at most
    // `cores` candidates, never over the shape)
    std::int64_t d = static_cast<std::int64_t>(std::min<double>(static_cast<double>(n), blocks_in_row));
    while (d > 1 && std::fmod(blocks_in_row, static_cast<double>(d)) != 0) --d;
    s.blocks = std::max<std::int64_t>(1, d);
    s.slice_bytes = row_bytes / static_cast<double>(s.blocks);
  } else {
    const double per = std::max(std::ceil(c / static_cast<double>(n)), std::ceil(2 * block / ds));
    const double b = std::ceil(c / per);
    s.blocks = static_cast<std::int64_t>(std::clamp(b, 1.0, static_cast<double>(n)));
    s.slice_bytes = std::min(per, c) * ds;
  }
  // Few columns over many rows ([98304,127]: 8 of 40 cores, 50 MB a core) is the atomic
  // schedule's case (the reduced axis cut, partial sums added), which the profiles do not show.
  // The split is kept where they show it: a core's rows in one UB tile (every unaligned case,
  // up to [128,1001]'s 20 KB), or strided bursts over at least half the cores (vit's 24 of 30,
  // 0.8-3.3 MB a core).
  const bool fits = r * std::ceil(s.slice_bytes / block) * block <= ub_tile_bytes(hw);
  if (!fits && (!s.strided || 2 * s.blocks < n)) return ColumnSplit{};
  return s;
}

}  // namespace npusim::cost
