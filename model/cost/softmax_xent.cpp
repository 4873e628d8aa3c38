// SoftmaxCrossEntropyWithLogits on [N, C] as the TBE static schedule runs it (logits_2d_schedule
// in te_schedule/softmax_cross_entropy_with_logits_schedule.py, public TBE sources):
// - blocks: npart = cores when N * ds >= 32 * cores, else N * ds / 32; for N <= C it is lowered to
//   a divisor of N and dropped to one block when a block's rows hold under 8 KB (for N > C, a
//   block keeps at least one 32-byte block of loss and 512 bytes of rows);
// - UB tiles: one row a tile when C > 128 and a row is not a whole number of 32-byte blocks,
//   else as many rows as fit the UB's share (a divisor of the block's rows);
// - the three row reductions (max, the sum of exps, the loss sum) are vector reductions when
//   C % 16 == 0 or a tile holds one row; otherwise reduce_last_axis_max_and_sum copies every
//   element of each row into an aligned buffer with a scalar reg_mov (a UB load and a store)
//   before the vcmax / vcadd;
// - several blocks of under 8 rows (fp32; 16 fp16) a UB tile, or rows wider than the UB's share,
//   go to logits_2d_schedule_large_axis_workspace instead (one row at a time, intermediates
//   through a GM workspace; below);
// - nothing is double-buffered: each tile's loads, passes and stores run in series.
// The compute (softmax_cross_entropy_with_logits.py): reduce_max, broadcast, sub, exp, sum,
// broadcast, div, log, sub, mul, muls, sum, sub: 13 passes over the tile, fp16 cast to fp32.
#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {

// The block split of logits_2d_schedule; 0 when the schedule declines (the op then falls to
// another schedule, not modelled here).
std::int64_t logits_blocks(std::int64_t n, std::int64_t c, double ds, int cores,
                           std::int64_t& inner) noexcept {
  const auto bytes = static_cast<std::int64_t>(ds);
  std::int64_t npart = n * bytes >= 32LL * cores ? cores : n * bytes / 32;
  if (npart <= 0) return 0;
  const std::int64_t min_rows = 32 / std::max<std::int64_t>(1, bytes);
  if (n > c) {
    inner = n / npart;
    while (inner > 0 && inner < min_rows && npart > 1) {
      --npart;
      while (npart > 1 && n % npart != 0) --npart;
      inner = n / npart;
    }
    if (npart <= 1) return 0;
    if (inner < min_rows) {
      npart = 1;
      inner = n;
    } else {
      while (inner >= min_rows && inner * c * bytes < 512 && npart > 1) {
        --npart;
        while (npart > 1 && n % npart > 1) --npart;
        inner = n / npart;
      }
    }
    return npart;
  }
  while (npart > 1 && n % npart != 0) --npart;
  if (npart <= 1) return 0;
  inner = n / npart;
  if (inner * c * bytes < 8192) {
    npart = 1;
    inner = n;
  }
  return npart;
}

}  // namespace

bool plan_logits_2d(const OpDesc& op, const HwSpec& hw, KernelPlan& p) noexcept {
  // The static schedule of the coupled-core (200x) parts' TBE toolchain, which the MindSpore
  // runs on the 910 use; the split-core 220x parts run CANN's dynamic-shape kernel (another
  // tiling, SoftmaxCrossEntropyWithLogitsSchedule), on which no row is measured.
  if (hw.chip.split_cores) return false;
  if (op.inputs.empty() || op.inputs[0].shape.size() != 2) return false;
  const TensorDesc& x = op.inputs[0];
  const std::int64_t n = x.shape[0], c = x.shape[1];
  const double ds = dtype_bytes(x.dtype);
  if (n < 1 || c < 1 || (ds != 2 && ds != 4)) return false;
  std::int64_t inner = 0;
  const int core_num = std::max(1, hw.chip.vector_cores);
  const std::int64_t blocks = logits_blocks(n, c, ds, core_num, inner);
  if (blocks < 1 || inner < 1) return false;
  // get_max_ub_count: half the UB in elements over 6 (fp32) or 12 (fp16) 128-element widths
  const double width = ds == 4 ? 6.0 : 12.0;
  const auto max_ub = static_cast<std::int64_t>(
      std::floor(hw.chip.ub_bytes / 2.0 / ds / (width * 128.0)) * 128.0);
  // the most rows (a divisor of the block's) whose elements fit max_ub; in closed form, as a
  // loop down from `inner` would run for as many rows as an absurd shape has
  std::int64_t split = 1;
  if (!(c > 128 && (c * 4) % 32 != 0) && c <= max_ub) {
    split = std::min(inner, max_ub / c);
    while (inner % split != 0) --split;  // at most max_ub steps
  }
  const bool workspace = (blocks > 1 && split < 32 / static_cast<std::int64_t>(ds)) || c > max_ub;
  p.unit = Placement::kVector;
  p.ub_single_buffer = true;  // nothing double-buffered: loads, passes and stores in series
  p.read_streams = 2;
  p.write_streams = 2;
  // the three row reductions: each row's max and sums go to the scalar unit and back
  const double sync = 3 * hw.vector.row_reduce_sync_cycles;
  const double row_bytes = static_cast<double>(c) * ds;
  if (workspace) {
    // logits_2d_schedule_large_axis_workspace: blocks of the fewest rows (at least one 32-byte
    // block of loss) that keep the blocks within the cores; a row at a time, in chunks of the
    // largest divisor of C that fits the UB. Its intermediates (x - max, exp, the broadcast sum)
    // live in a GM workspace: per row 10 row reads (features twice, labels twice, x - max twice,
    // exp twice, the broadcast sum twice) and 4 row writes (the three and the backprop).
    const std::int64_t min_rows = 32 / static_cast<std::int64_t>(ds);
    // the fewest rows a block (at least min_rows) with ceil(n / rows) <= core_num, i.e.
    // ceil(n / core_num): the schedule's loop down from n, in closed form
    std::int64_t factor = n;
    if (n >= min_rows) {
      factor = std::max(min_rows, (n + core_num - 1) / core_num);
      if (factor == n) factor = n > core_num * min_rows ? (n + core_num - 1) / core_num : min_rows;
    }
    std::int64_t chunk = std::min(c, max_ub);
    while (chunk > 1 && c % chunk != 0) --chunk;
    const double rows = static_cast<double>(factor);
    const double chunks = static_cast<double>(c / std::max<std::int64_t>(1, chunk));
    const double chunk_bytes = static_cast<double>(chunk) * 4.0;
    const auto pass = [&](VectorClass k) { return class_pass_cycles(k, chunk_bytes, hw); };
    const double per_chunk = 3 * pass(VectorClass::kReduce) + 2 * pass(VectorClass::kUnary) +
                             5 * pass(VectorClass::kBinary) + 3 * pass(VectorClass::kTranscendental);
    p.tiles = (n + factor - 1) / factor;
    p.vector_cycles = rows * chunks * per_chunk;
    p.scalar_cycles = rows * sync;
    p.in = flat_transfer(rows * 10 * row_bytes, 1);
    p.in.transfers = p.in.ideal_transfers = rows * chunks * 10;
    p.out = flat_transfer(rows * (4 * row_bytes + ds), 1);
    p.out.transfers = p.out.ideal_transfers = rows * chunks * 4 + 1;
  } else {
    const double rows = static_cast<double>(inner);  // a block's rows
    const double tiles = rows / static_cast<double>(split);
    const double tile_bytes = static_cast<double>(split * c) * 4.0;  // computed in fp32
    const auto pass = [&](VectorClass k) { return class_pass_cycles(k, tile_bytes, hw); };
    double per_tile = 3 * pass(VectorClass::kReduce) + 3 * pass(VectorClass::kUnary) +
                      4 * pass(VectorClass::kBinary) + 3 * pass(VectorClass::kTranscendental);
    if (ds == 2) per_tile += 4 * class_pass_cycles(VectorClass::kConvert, tile_bytes, hw);
    p.tiles = blocks;
    p.vector_cycles = tiles * per_tile;
    p.scalar_cycles = rows * sync;
    if (!(c % 16 == 0 || split == 1)) {
      // reduce_last_axis_max_and_sum: a reg_mov (a UB load and a store) per element, three times
      p.scalar_cycles += rows * 3 * static_cast<double>(c) * 2 * hw.vector.scalar_cycles_per_element;
    }
    // two rows in (features, labels), the backprop rows and the loss out, tile after tile
    p.in = row_transfer(rows * 2, row_bytes, 1, hw);
    p.in.transfers = p.in.ideal_transfers = 2 * tiles;
    p.out = row_transfer(rows, row_bytes, 1, hw);
    p.out.bytes += rows * ds;
    p.out.padded_bytes += rows * ds;
    p.out.transfers = p.out.ideal_transfers = 2 * tiles;
  }
  p.flops = static_cast<double>(n * c) * 13;
  return true;
}

}  // namespace npusim::cost
