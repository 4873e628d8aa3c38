#pragma once
// A KernelPlan is what a family's cost model says about one AI Core kernel: how the work splits
// into tiles and what one tile costs on each pipe. evaluate() turns it into an OpCost with the same
// mechanisms for every family (DESIGN.md "model"): block dim = min(budget, tiles), waves, a
// double-buffered pipeline per core, per-core DMA rates capped by the chip's HBM/L2 bandwidth,
// 32-byte alignment, inter-core conflicts, head overhead.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include "model/hw_spec.h"
#include "model/op_cost.h"
#include "model/op_desc.h"
#include "model/predict.h"

namespace npusim::cost {

/// Bytes and transfers of one direction (MTE2 in or MTE3 out) for one tile.
struct Transfer {
  double bytes = 0;             ///< useful bytes
  double padded_bytes = 0;      ///< bytes actually moved (rows rounded up to 32 B)
  double transfers = 0;         ///< DMA instructions issued
  double ideal_transfers = 0;   ///< DMA instructions if every row were aligned
  double rate_factor = 1;       ///< multiplies the per-core rate (ND->NZ conversion, strided A)
  double conflict_weight = 0;   ///< 0..1: share of this traffic exposed to same-address conflicts
  // No further field: six doubles, 48 bytes, which the builders copy and add as SSE pairs. A
  // bool here (session 17's TransData flag) made it 56 bytes and cost Concat and Gather 7-8 ns a
  // prediction (docs/predict_speed.md, session 18); per-transfer flags live in KernelPlan.
};

/// One kernel's work.
struct KernelPlan {
  Placement unit = Placement::kVector;  ///< kCube, kVector or kMix
  std::int64_t tiles = 1;               ///< equal work units
  /// Per-tile costs.
  double cube_cycles = 0;
  double vector_cycles = 0;
  double scalar_cycles = 0;
  /// The vector core's own GM transfers that run in series with its vector work rather than
  /// double-buffered beside it (the paired vector cores of a MIX attention kernel wait for each
  /// workspace load before computing and store before the next): part of the vector stage,
  /// reported as MTE2/MTE3 pipe time.
  double vector_dma_cycles = 0;
  double mte1_cycles = 0;
  double fixpipe_bytes = 0;
  Transfer in;   ///< MTE2: GM -> UB / L1
  Transfer out;  ///< MTE3: UB -> GM (FixPipe output goes in fixpipe_bytes)
  bool cube_operand_path = false;  ///< MTE2 goes GM -> L1 (cube) rather than GM -> UB
  /// Of all bytes read, the share that re-reads data another tile already pulled in (L2 hits).
  double reread_fraction = 0;
  /// Bytes (over all tiles) that re-read data another core already pulled in, e.g. a small
  /// operand every core loads; they hit L2 like reread_fraction.
  double reread_bytes = 0;
  /// Share of the re-reads that hit L2, when the family knows its reuse pattern (a GEMM: each
  /// operand panel's reuse distance against the L2 capacity); negative = the generic rule
  /// min(1, L2 / unique bytes read).
  double reread_hit_ratio = -1;
  double dup_ratio = 0;  ///< how often indices repeat (conflicts), 0..1
  /// Tensors the kernel reads and writes (at least one each way when it moves data): MTE2 and
  /// MTE3 are in-order queues, so the first transfer of each stream waits out its own latency.
  int read_streams = 1;
  int write_streams = 1;
  /// FixPipe writes into a workspace that stays in L2 (split-K partials added atomically), so
  /// its bytes do not count against HBM.
  bool fixpipe_in_l2 = false;
  /// FixPipe adds into its destination (atomic add): each byte is read back and written, twice
  /// the traffic of a plain write-out.
  bool fixpipe_atomic = false;
  /// The tile's fp32 accumulator fills more than half of L0C, so L0C cannot be double-buffered:
  /// the next tile's MMAD waits until FixPipe has drained this one (cube and FixPipe in series).
  bool l0c_single_buffer = false;
  /// One step's operands fill more than half of L1, so the next step's cannot load meanwhile:
  /// MTE2 runs in series with the cube (set where the plan knows its K step: split-K).
  bool l1_single_buffer = false;
  /// The vector kernel does not double-buffer UB: each tile's MTE2 load, vector/scalar work and
  /// MTE3 store run one after another (TBE TransData and pooling kernels: their aiv_time is the
  /// sum of their pipes' busy times, not the largest).
  bool ub_single_buffer = false;
  /// Each DMA of `in` / `out` beyond its `ideal_transfers` costs the issue of one TIK
  /// instruction (vector.tik_issue_cycles) instead of the chip's MTE setup
  /// (memory.mte2_setup_cycles / mte3_setup_cycles). Flags, not cycle counts with a sentinel, so
  /// that a default KernelPlan's fields stay zero: a non-zero default made every plan a copy of
  /// a constant instead of a cleared block, +10-20 ns a prediction in bench_predict (session 17).
  bool in_tik_row_issue = false;
  bool out_tik_row_issue = false;
  /// The kernel's tiler deals whole units (the images of an NC1HWC0 map) to the cores, so a core
  /// runs ceil(units / block dim) units' worth of the tiles (dealt_waves, model/cost/launch_waves.cpp); 0: the
  /// tiles spread evenly.
  std::int64_t whole_units = 0;
  /// Totals for the OpCost.
  double flops = 0;
  double cube_efficiency = 1;
  std::uint32_t warnings = kWarnNone;
};

/// The core count of `unit` the op may use under `budget` (0 in the budget = whole chip).
/// Inline: every prediction asks twice (the builder's core count and evaluate's block dim).
[[nodiscard]] inline int available_cores(Placement unit, const HwSpec& hw,
                                         const CoreBudget& budget) noexcept {
  const bool cube = unit == Placement::kCube || unit == Placement::kMix;
  const int chip = cube ? hw.chip.cube_cores : hw.chip.vector_cores;
  const int limit = cube ? budget.cube_cores : budget.vector_cores;
  return limit > 0 ? std::min(limit, chip) : chip;
}

/// Launch blocks above the core count (a profile row's block dim beyond the chip's cube cores,
/// cube and MIX plans only): the kernel's work comes in budget.launch_blocks equal blocks that
/// run `cores` at a time, so a core runs ceil(blocks / cores) x tiles / blocks tiles. Raises
/// `waves` / `waves_ideal` (the plan's own ceil(tiles / b) and tiles / b) to that when it is
/// more; else leaves them (model/cost/launch_waves.cpp).
void block_waves(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                 std::int64_t tiles, std::int64_t& waves, double& waves_ideal) noexcept;

/// Work dealt in `parts` equal, indivisible parts to `cores` cores (launch blocks above the core
/// count, an NC1HWC0 map's whole images): a core runs ceil(parts / cores) x tiles / parts tiles.
/// Raises `waves` / `waves_ideal` to that when it is more; else leaves them.
void dealt_waves(double parts, int cores, std::int64_t tiles, std::int64_t& waves,
                 double& waves_ideal) noexcept;

/// Blocks the launch head counts (model/cost/launch_head.cpp): the plan's `blocks`, or the row's
/// launch block dim when it is more, at most the chip's cores of the plan's unit.
[[nodiscard]] int head_blocks(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                              int blocks) noexcept;
/// The smallest chunk a vector tiler gives a core when the launch's block dim is known: one
/// memory block (memory.block_bytes); 0 when it is not (the spec's min_bytes_per_core holds).
/// Why: model/cost/launch_head.cpp. Inline: every on-core prediction asks once.
[[nodiscard]] inline double launch_core_bytes(const HwSpec& hw, const CoreBudget& budget) noexcept {
  return budget.launch_blocks > 1 ? hw.memory.block_bytes : 0.0;
}
/// The chunk a vector tiler gives a core: `core_bytes` when a launch set it, else the spec's
/// vector.min_bytes_per_core.
[[nodiscard]] inline double core_chunk_bytes(const HwSpec& hw, double core_bytes) noexcept {
  return core_bytes > 0 ? core_bytes : hw.vector.min_bytes_per_core;
}

/// Pipeline fills per core of a cube launch above the core count (the cases block_waves covers):
/// a core runs ceil(blocks / cores) blocks one after another, and each block starts its pipeline
/// afresh (its first tile's load, MTE1, cube work, FixPipe and write-out in series) instead of
/// overlapping the previous block's last tile. 1 otherwise; never more than the whole waves
/// (`waves_ideal`, floored) a core runs.
[[nodiscard]] double round_fills(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                                 double waves_ideal) noexcept;

/// Whether the BN apply's UB tile over the NC1HWC0 map `y` holds a whole number of 32-byte
/// blocks of the fused ReLUV2's bit mask (model/cost/bn_schedules.cpp): the tile is
/// bn_update_schedule.py's get_max_ub_count in fp32 elements, whole rows of one (n, c1) plane,
/// or the plane when it fits. True when `y` is not a 5-D NC1HWC0 map.
[[nodiscard]] bool bn_apply_mask_aligned(const TensorDesc& y, const HwSpec& hw) noexcept;

/// The BN apply's core split at N >= `chip_cores` (bn_update_schedule.py's cut_batch): each
/// core takes whole images; returns N then, 0 otherwise (model/cost/bn_schedules.cpp).
[[nodiscard]] std::int64_t bn_apply_whole_images(const TensorDesc& y, const HwSpec& hw) noexcept;

/// BNTrainingUpdateGrad's atomic reduce schedule (model/cost/bn_schedules.cpp): when N and C1
/// are below `chip_cores` and H, W split no other way, the tiles of whole rows dividing H that
/// fit `tile_elements` fp32 elements: N x C1 x H / d. 0 when another schedule runs.
[[nodiscard]] std::int64_t bn_atomic_tiles(const TensorDesc& x, int chip_cores,
                                           double tile_elements) noexcept;

/// Evaluates a plan: block dim, waves, pipeline, bandwidth cap, critical path, pipes, bound.
[[nodiscard]] OpCost evaluate(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                              const PredictContext& ctx) noexcept;

/// Vector-core phases a cube op runs in the same MIX launch, serialised with its GEMM: MatMulV3
/// converts an ND operand whose contiguous axis is too long for the on-the-fly ND->NZ load into
/// an NZ workspace first (head), and after single-core split-K casts the fp32 sum to the output
/// dtype (tail). Either may be absent.
struct CubePhases {
  KernelPlan head;
  KernelPlan tail;
  bool has_head = false;
  bool has_tail = false;
};
/// Family plan builders. `cores` is what the op may use (tilers split work by it). plan_cube
/// also says (when `has_phases` is given) whether MatMulV3 runs vector-core phases around the
/// GEMM; cube_phases() builds them then (two KernelPlans are not built for nothing).
/// The builders that take an OpFacts read the op-only quantities from it (model/prepared_op.h).
[[nodiscard]] KernelPlan plan_cube(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                                   bool* has_phases = nullptr);
[[nodiscard]] CubePhases cube_phases(const OpDesc& op, const OpFacts& f, const HwSpec& hw) noexcept;
/// What a fused attention op computes, read from its inputs and attributes.
struct AttentionShape {
  bool valid = false;
  double b = 1, sq = 1, sk = 1, heads = 1, d = 128;
  double density = 1;     ///< share of the score matrix computed (0.5 under a causal mask)
  double mask_bytes = 0;  ///< bytes per score element of a full Sq x Sk mask read per tile
  bool dropout = false;   ///< a dropout bit mask is applied (keep_prob < 1)
};
[[nodiscard]] AttentionShape attention_shape(const OpDesc& op) noexcept;
/// FlashAttentionScore and its gradient (model/cost/attention.cpp).
[[nodiscard]] KernelPlan plan_attention(const OpDesc& op, const HwSpec& hw) noexcept;
/// NonZero run on AI Cores (model/cost/nonzero.cpp): a count, a cross-core barrier and a
/// compaction; is_nonzero_kernel() says which op types it costs.
[[nodiscard]] bool is_nonzero_kernel(const OpDesc& op) noexcept;
[[nodiscard]] KernelPlan plan_nonzero(const OpDesc& op, const HwSpec& hw, int cores) noexcept;
/// `core_bytes` in the vector builders: the smallest chunk their tiler gives a core (0: the
/// spec's vector.min_bytes_per_core; a launch's block dim sets it, launch_core_bytes).
[[nodiscard]] KernelPlan plan_elementwise(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                          int cores, double core_bytes = 0) noexcept;
[[nodiscard]] KernelPlan plan_reduction(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                        int cores, double core_bytes = 0) noexcept;
[[nodiscard]] KernelPlan plan_data_movement(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                            int cores, double core_bytes = 0) noexcept;
/// As above with the facts computed on the spot.
[[nodiscard]] KernelPlan plan_data_movement(const OpDesc& op, const HwSpec& hw, int cores);
/// Pooling and its gradient over NC1HWC0 (or NCHW) maps, a window position at a time.
[[nodiscard]] KernelPlan plan_pool(const OpDesc& op, const HwSpec& hw, int cores,
                                   double core_bytes = 0) noexcept;
/// SoftmaxCrossEntropyWithLogits on [N, C] as TBE's logits_2d_schedule runs it (model/cost/
/// softmax_xent.cpp); false when that schedule would decline the shape.
/// The schedule splits by the chip's core count (CORE_NUM), not by what a launch may use.
[[nodiscard]] bool plan_logits_2d(const OpDesc& op, const HwSpec& hw, KernelPlan& p) noexcept;
/// TransData with NC1HWC0 or FRACTAL_Z on one side (model/cost/transdata.cpp): fills the plan's
/// transfers, scalar work and serial UB use for `nt` tiles; the caller adds the reorder passes.
[[nodiscard]] bool is_5d_transdata(Format x, Format y) noexcept;
void plan_5d_transdata(KernelPlan& p, const TensorDesc& x, const TensorDesc& y, double nt,
                       const HwSpec& hw) noexcept;
[[nodiscard]] KernelPlan plan_generic(const OpDesc& op, const HwSpec& hw, int cores,
                                      double core_bytes = 0) noexcept;
/// As above with the op-only part from the facts when they hold it (a generic-family op).
[[nodiscard]] KernelPlan plan_generic(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                      int cores, double core_bytes) noexcept;
/// Not noexcept: a malformed axis or index_dup_ratio attribute raises InputError (it terminated
/// the program while this was noexcept).
[[nodiscard]] KernelPlan plan_index(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                    int cores);
[[nodiscard]] KernelPlan plan_sort(const OpDesc& op, const OpFacts& f, const HwSpec& hw,
                                   int cores);

/// AI CPU and host ops do not run on AI Cores; they are costed directly.
[[nodiscard]] OpCost cost_aicpu(const OpDesc& op, const HwSpec& hw) noexcept;
[[nodiscard]] OpCost cost_host(const OpDesc& op, const HwSpec& hw) noexcept;

// Helpers shared by the builders.

/// Tile, block and row counts beyond 2^53 (doubles stop counting exactly there) come only from
/// absurd shapes (fuzz_op_text found 6.6e19 and 1.2e22, past int64); they saturate there.
inline constexpr double kMaxCount = 9007199254740992.0;  // 2^53

/// x truncated to a count in [1, 2^53], as a static_cast would for an ordinary count: a NaN,
/// zero or negative count is 1. Inline: the cube and vector tilers call it on every prediction.
[[nodiscard]] inline std::int64_t saturating_count(double x) noexcept {
  if (!(x >= 1.0)) return 1;  // NaN too
  return static_cast<std::int64_t>(std::min(x, kMaxCount));
}

/// std::ceil / std::floor, bit for bit, with a cheaper path for the usual positive value below
/// 2^52 (truncation to an integer is exact there): x86-64's baseline has no rounding
/// instruction, so the library form is a longer bit-mask sequence. Zero, negative, huge and NaN
/// values take the library form (-0.0 and the sign of a zero result stay exact).
/// With SSE4.1 (docs/building.md) both are the library form, one roundsd each.
[[nodiscard]] inline double fast_ceil(double x) noexcept {
#ifdef __SSE4_1__
  return std::ceil(x);
#else
  if (x > 0 && x < 4503599627370496.0) {  // (0, 2^52)
    const double t = static_cast<double>(static_cast<std::int64_t>(x));
    return t < x ? t + 1 : t;
  }
  return std::ceil(x);
#endif
}
[[nodiscard]] inline double fast_floor(double x) noexcept {
#ifdef __SSE4_1__
  return std::floor(x);
#else
  if (x > 0 && x < 4503599627370496.0) return static_cast<double>(static_cast<std::int64_t>(x));
  return std::floor(x);
#endif
}
/// saturating_count(std::ceil(x)) (a count in [1, 2^53]), without the rounding to a double and
/// back where x is in (0, 2^52).
[[nodiscard]] inline std::int64_t ceil_count(double x) noexcept {
  if (x > 0 && x < 4503599627370496.0) {  // ceil(x) >= 1 there, and below 2^53
    const auto i = static_cast<std::int64_t>(x);
    return static_cast<double>(i) < x ? i + 1 : i;
  }
  return saturating_count(std::ceil(x));
}

/// x / m, bit for bit, without a divide when m is a power of two (the spec's fractal sizes,
/// block and repeat bytes, dtype sizes, usually the UB tile): x * 2^-k rounds the same real number
/// x / 2^k once, as the division does (for every x: zeros, infinities, NaN and subnormal results
/// too), and a multiply does not hold the dependency chain ~13 cycles (issue #16). Any other m
/// divides. m's reciprocal 2^-k is built from its bits: m = 2^k has the exponent field E and a
/// zero mantissa, 2^-k the field 2046 - E, normal for E in [1, 2045]. One test covers both
/// conditions: rotating bits(m) - bits(1.0 x 2^-1022) right by 52 puts the mantissa in the high
/// bits and E - 1 in the low 12 (a sign bit or E = 0 wraps above), so it is below 2045 exactly
/// when the mantissa is zero and E is in [1, 2045] (session 19: ~4 instructions a use fewer than
/// the two tests it replaced).
[[nodiscard]] inline double div_pow2(double x, double m) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(m);
  if (std::rotr(bits - (std::uint64_t{1} << 52), 52) < 2045) {
    return x * std::bit_cast<double>((std::uint64_t{2046} << 52) - bits);
  }
  return x / m;
}

/// Rounds `x` up to a multiple of `m` (m > 0): the truncation's ceiling, (q > trunc(q) ? trunc(q)
/// + 1 : trunc(q)) x m with q = x / m. For q in (0, 2^63) that is std::ceil(q) x m (one roundsd
/// with SSE4.1, shorter on the chain than the two conversions, session 19); zero, negative, huge
/// and NaN quotients keep the truncation's own answer (a quotient in (-1, 0) gives +0, not
/// ceil's -0).
[[nodiscard]] inline double round_up(double x, double m) noexcept {
  const double q = div_pow2(x, m);
#ifdef __SSE4_1__
  if (q > 0 && q < 9223372036854775808.0) return std::ceil(q) * m;
#endif
  const auto qi = static_cast<double>(static_cast<std::int64_t>(q));
  return (q > qi ? qi + 1 : qi) * m;
}
/// True when `x` is an exact multiple of `m` (as std::fmod(x, m) == 0). Integral byte counts,
/// the usual case, take an integer remainder instead of the much slower library fmod.
[[nodiscard]] inline bool is_multiple(double x, double m) noexcept {
  if (x >= 0 && x < 9.0e15 && m > 0 && m < 9.0e15) {
    const auto xi = static_cast<std::int64_t>(x);
    const auto mi = static_cast<std::int64_t>(m);
    if (static_cast<double>(xi) == x && static_cast<double>(mi) == m) {
      // a power of two (the 32-byte block): the low bits, no divide (session 19: the 32-bit
      // remainder sat on the cube's tile chain, ~15 cycles); mi > 0 here
      if ((mi & (mi - 1)) == 0) return (xi & (mi - 1)) == 0;
      // a 32-bit remainder where both fit (the usual byte counts): several times cheaper
      if (xi <= UINT32_MAX && mi <= UINT32_MAX) {
        return static_cast<std::uint32_t>(xi) % static_cast<std::uint32_t>(mi) == 0;
      }
      return xi % mi == 0;
    }
  }
  return std::fmod(x, m) == 0.0;
}
[[nodiscard]] inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  if (b <= 0) return a;
  if (a >= 0 && a < INT32_MAX && b < INT32_MAX) {  // a + b - 1 fits 32 bits: a cheaper divide
    return static_cast<std::uint32_t>(a + b - 1) / static_cast<std::uint32_t>(b);
  }
  return (a + b - 1) / b;
}
/// Product of a shape's dims as a double (1 for a scalar).
[[nodiscard]] inline double product(const std::vector<std::int64_t>& s) noexcept {
  double p = 1;
  for (auto d : s) p *= static_cast<double>(d);
  return p;
}
/// A shape's last dim (1 for a scalar).
[[nodiscard]] inline double last_dim(const std::vector<std::int64_t>& s) noexcept {
  return s.empty() ? 1.0 : static_cast<double>(s.back());
}
/// Elements of the largest tensor in `ts` (0 when empty).
[[nodiscard]] std::int64_t max_elements(const std::vector<TensorDesc>& ts) noexcept;
/// Numpy broadcast of the input shapes (the output of an elementwise op): its element count and
/// last dimension, without allocating.
void broadcast_extent(const std::vector<TensorDesc>& ts, double& elements, double& last) noexcept;
/// Bytes a UB tile can hold for one buffer: ub_bytes / ub_buffers, rounded down to 32 B.
/// Inline: vector_tiles asks on every prediction of a vector kernel, and out of line the call cost
/// as much as the body.
[[nodiscard]] inline double ub_tile_bytes(const HwSpec& hw) noexcept {
  const double block = hw.memory.block_bytes;
  const double per = hw.chip.ub_bytes / std::max(1, hw.vector.ub_buffers);
  return std::max(block, fast_floor(div_pow2(per, block)) * block);
}
/// Splits `total_bytes` of streaming work over at most `cores` cores the way CANN's vector tilers
/// do: at least min_bytes_per_core per core (`core_bytes` when a launch's block dim set it), then
/// UB-sized loops per core. Returns tiles.
[[nodiscard]] std::int64_t vector_tiles(double total_bytes, const HwSpec& hw, int cores,
                                        std::int64_t max_parallel, double core_bytes = 0) noexcept;
/// Fills a transfer of `rows` rows of `row_bytes` each, split over `tiles` tiles. Contiguous
/// aligned rows move as one DMA per tile; rows that are strided in GM (`contiguous` false, e.g.
/// a slice of the last axis) need one DMA per row even when aligned.
/// Inline: most builders call it once or more per prediction, often with one tile.
[[nodiscard]] inline Transfer row_transfer(double rows, double row_bytes, double tiles,
                                           const HwSpec& hw, bool contiguous = true) noexcept {
  Transfer t;
  const double block = hw.memory.block_bytes;
  t.bytes = rows * row_bytes / tiles;
  const bool aligned = is_multiple(row_bytes, block);
  // An aligned row set moves as one strided DMA per tile; an unaligned last axis needs a padded
  // DMA per row (DataCopyPad) and moves whole 32-byte blocks (DESIGN.md "32-byte alignment").
  t.padded_bytes = aligned ? t.bytes : rows * round_up(row_bytes, block) / tiles;
  if (aligned && contiguous) {
    t.ideal_transfers = t.transfers = 1;
  } else {
    const double per_row = std::max(1.0, rows / tiles);
    t.ideal_transfers = contiguous ? 1 : per_row;
    t.transfers = per_row;
  }
  return t;
}
/// Fills a contiguous transfer of `bytes` split over `tiles` tiles (one DMA per tile). Inline:
/// every builder calls it, and its callers often overwrite the transfer counts.
[[nodiscard]] inline Transfer flat_transfer(double bytes, double tiles) noexcept {
  Transfer t;
  t.bytes = bytes / tiles;
  t.padded_bytes = t.bytes;
  t.transfers = t.ideal_transfers = bytes > 0 ? 1 : 0;
  return t;
}
/// Vector cycles for `bytes` of data through the op's passes (one repeat = repeat_bytes).
[[nodiscard]] double pass_cycles(const OpKindInfo& kind, double bytes, const HwSpec& hw) noexcept;
/// One vector pass of class `c` over `bytes`: whole repeats plus one API call.
[[nodiscard]] double class_pass_cycles(VectorClass c, double bytes, const HwSpec& hw) noexcept;
/// Share of the reads of data last touched `distance` bytes ago that still hit an L2 of `l2`
/// bytes: an LRU cache under a cyclic reuse pattern keeps a fraction l2 / distance of it.
[[nodiscard]] inline double reuse_hit_ratio(double distance, double l2) noexcept {
  return distance > l2 ? l2 / distance : 1.0;
}

}  // namespace npusim::cost
