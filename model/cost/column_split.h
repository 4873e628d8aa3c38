#pragma once
// A reduction over the leading axis of a plain (ND) tensor, [R, C] summed into [C], cuts the
// kept axis C over the cores: each core reads its slice of every row. The TBE reduce schedule
// (BiasAddGrad -> reduce_sum over axis 0) does so on the 910 (the block dims of the MindSpore
// runs: [6400,768] and [6400,3072] fp32 on 24 blocks, [128,1001] on 30, [32,100] on 7, [64,2]
// on 1). When the row stride is a multiple of 32 B the slices move as one strided DMA (a burst
// per row); otherwise each row's slice is its own DMA, loaded and added before the next.
#include <cstdint>

#include "model/cost/reduce_layout.h"
#include "model/hw_spec.h"
#include "model/op_desc.h"

namespace npusim::cost {

struct ColumnSplit {
  bool applies = false;
  std::int64_t blocks = 1;  ///< cores the kept axis is cut over
  double rows = 0;          ///< rows each core reads (the reduced run)
  double slice_bytes = 0;   ///< bytes of one row a core reads (its columns)
  bool strided = false;     ///< row stride a multiple of 32 B: one strided DMA per UB load
};

/// The column split of a leading-axis reduction of `x` with layout `l` ([R reduced, C kept]
/// after merging, x not fractal / 5-D), over at most `cores` cores. Aligned rows: the largest
/// divisor of the row's 32-byte blocks that is at most `cores` (768 fp32: 96 blocks, 24 of 30
/// cores). Unaligned rows: ceil(C / cores) columns a core, at least two blocks' worth. Applied
/// where the profiles show it: a core's rows fit one UB tile, or (whole-block rows) the split
/// fills at least half the cores; few columns over many rows is the atomic schedule's case.
[[nodiscard]] ColumnSplit column_split(const TensorDesc& x, const ReduceLayout& l, const HwSpec& hw,
                                       int cores) noexcept;

}  // namespace npusim::cost
