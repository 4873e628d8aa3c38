// evaluate(): turns a KernelPlan into an OpCost with the same mechanisms for every family
// (DESIGN.md "model"): block dim = min(budget, tiles), waves, a double-buffered pipeline per
// core, per-core DMA rates capped by the chip's HBM/L2 bandwidth, 32-byte alignment,
// inter-core conflicts, first-transfer latencies, head overhead.
//
// Speed (issue #16, docs/predict_speed.md): every prediction runs this, so the six pipeline
// stages are held in named locals rather than an array of structs (the array, indexed by the
// bound stage at run time, kept every stage in memory), and a stage whose alignment and
// conflict parts are zero by construction (MTE1, vector, FixPipe) skips adding them. Skipping
// an exact zero is bit-identical: every sum here starts at +0.0, and a sum that starts at +0.0
// is never -0.0 (x + (-x) and (+0) + (-0) are +0 when rounding to nearest), so adding +-0 leaves
// it unchanged; the count a zero part is multiplied by (1, or the ideal wave count minus one,
// or the ideal wave count) is finite and >= 0, so that product is a zero too. The order of the
// additions that remain is the old one (the last bit depends on it).
#include <algorithm>
#include <limits>
#include <type_traits>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

namespace {

// The pipeline stages, in the order their times are summed.
enum PipeStage { kStageIn, kStageMte1, kStageCube, kStageVec, kStageFix, kStageOut };
// The bound categories the stage times are booked to.
enum BoundCategory { kCatCube, kCatVector, kCatScalar, kCatMemory };

// The critical-path parts and bound categories, summed stage by stage.
struct StageSums {
  double compute = 0, memory = 0, alignment = 0, conflict = 0;
  double category[4] = {0, 0, 0, 0};
};

// The vector stage's split: vector, scalar and the vector core's serial transfers share it,
// divided by their own busy times.
struct VecStageSplit {
  double vec_us, scal_us, vdma_us, vec_tot;
  bool vector_only;  ///< scal_us and vdma_us are zero, vec_tot > 0
};

// Adds stage S, whose parts are base / align / conflict, run `times` times. `Zero` says the
// stage's alignment and conflict parts are zero by construction (skipped, see the top). `Once`
// says `times` is 1 (one pipeline fill, the usual launch): x * 1 is x, so the multiplies are
// left out, bit for bit the same (session 19).
template <int S, bool Zero, bool Once = false>
inline void add_stage_time(StageSums& s, const VecStageSplit& v, double base_once, double align,
                           double conflict, double times) noexcept {
  const double base = Once ? base_once : base_once * times;
  if constexpr (S == kStageIn || S == kStageFix || S == kStageOut) {  // memory, whatever folding did
    s.memory += base;
    s.category[kCatMemory] += base;
  } else if constexpr (S == kStageVec) {
    if (v.vector_only && base < std::numeric_limits<double>::infinity()) {
      // no scalar work and no serial transfers (the usual vector kernel): their shares are
      // base x (+-0) / vec_tot, zeros since base is finite, which change no sum (see the top),
      // and base - 0 is base; only the vector share is left to divide
      s.compute += base;
      s.category[kCatVector] += base * v.vec_us / v.vec_tot;
    } else if (v.vec_tot == 0) {
      // no vector stage (a cube kernel without epilogue): base is 0 x a finite count, every
      // share a zero, nothing to add
    } else if (v.vdma_us == 0 && base < std::numeric_limits<double>::infinity() &&
               v.vec_tot > 0) {
      // scalar work but no serial transfers (int64 data, a rowwise op's syncs): their share
      // base x (+-0) / vec_tot is a zero, base - 0 is base for the sum, and the memory sums
      // take a zero (see the top); the division by vec_tot is left out of the path to the
      // duration (session 19)
      s.compute += base;
      s.category[kCatVector] += base * v.vec_us / v.vec_tot;
      s.category[kCatScalar] += base * v.scal_us / v.vec_tot;
    } else {
      const double dma = v.vec_tot > 0 ? base * v.vdma_us / v.vec_tot : 0;
      s.compute += base - dma;
      s.memory += dma;
      s.category[kCatVector] += v.vec_tot > 0 ? base * v.vec_us / v.vec_tot : 0;
      s.category[kCatScalar] += v.vec_tot > 0 ? base * v.scal_us / v.vec_tot : 0;
      s.category[kCatMemory] += dma;
    }
  } else {  // MTE1 and the cube
    s.compute += base;
    s.category[kCatCube] += base;
  }
  if constexpr (!Zero) {
    if constexpr (Once) {
      s.alignment += align;
      s.conflict += conflict;
      s.category[kCatMemory] += align + conflict;
    } else {
      s.alignment += align * times;
      s.conflict += conflict * times;
      s.category[kCatMemory] += (align + conflict) * times;
    }
  }
}

}  // namespace

OpCost evaluate(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                const PredictContext& ctx) noexcept {
  const double f = hw.cycles_per_us();
  // One cycle in µs, 1 / f: every cycle count below is multiplied by it instead of divided by f
  // (session 18's formula change, docs/predict_speed.md).
  const double us_per_cycle = 1.0 / f;
  const int unit_cores = std::max(1, available_cores(plan.unit, hw, budget));
  const std::int64_t tiles = std::max<std::int64_t>(1, plan.tiles);
  const auto b = static_cast<int>(std::min<std::int64_t>(unit_cores, tiles));
  std::int64_t w = ceil_div(tiles, b);
  double w_ideal = static_cast<double>(tiles) / b;
  block_waves(plan, hw, budget, tiles, w, w_ideal);
  dealt_waves(static_cast<double>(plan.whole_units), b, tiles, w, w_ideal);
  // A core that runs several launch blocks in rounds starts each block's pipeline afresh
  // (round_fills, model/cost/launch_waves.cpp).
  const double fills = round_fills(plan, hw, budget, w_ideal);

  // L2: data other tiles already read is an L2 hit; the rest hits with the context's ratio.
  // A cube kernel's operand loads take cube.context_l2_factor of it: none on the first-generation
  // 910, whose GEMMs and convolutions run as if their inputs were cold (docs/accuracy_mechanisms.md,
  // "Session 18"); x 1 elsewhere, the same bits.
  const double h_ctx = (ctx.l2_hit_ratio >= 0 ? std::min(1.0, ctx.l2_hit_ratio)
                                              : hw.memory.l2_hit_ratio_default) *
                       (plan.cube_operand_path ? hw.cube.context_l2_factor : 1.0);
  const double in_total = plan.in.padded_bytes * static_cast<double>(tiles);
  // Speed (issue #16): the divisions from here to the hit ratio form one dependent chain
  // (re-read share, its L2 hits), ~13 cycles each. Where a term is an exact zero its division is
  // skipped, bit for bit the same, so the chain is shorter for the usual kernel (no re-reads):
  // - no re-read bytes: 0 / in_total (in_total > 0) is that zero itself;
  const double reread_share =
      in_total > 0 ? (plan.reread_bytes == 0 ? plan.reread_bytes : plan.reread_bytes / in_total)
                   : 0.0;
  const double reread = std::clamp(std::max(plan.reread_fraction, reread_share), 0.0, 1.0);
  // A re-read hits L2 only while the data being re-read still fits in it: with unique operand
  // bytes U and an L2 of size C, a fraction min(1, C/U) of re-reads hit (a GEMM whose K panels
  // exceed L2 streams them from HBM again for every output tile).
  const double unique_in = in_total * (1 - reread);
  // - no re-reads: their hit ratio (finite, >= 0 either way) only multiplies the zero share,
  //   so 1 stands in for it (a zero of either sign times a finite ratio adds nothing to the
  //   sum below, and h_in's zero sign reaches no result: it is divided and added to a
  //   positive term, or subtracted from 1);
  const double l2 = hw.chip.l2_bytes;
  const double reread_hits = reread == 0                  ? 1.0
                             : plan.reread_hit_ratio >= 0 ? std::min(1.0, plan.reread_hit_ratio)
                                                          : reuse_hit_ratio(unique_in, l2);
  const double h_in = reread * reread_hits + (1 - reread) * h_ctx;
  const double gm_rate = plan.cube_operand_path ? hw.cube.gm_to_l1_bytes_per_cycle
                                                : hw.memory.gm_read_bytes_per_cycle;
  const double l2_rate = std::max(gm_rate, hw.memory.l2_read_bytes_per_cycle);
  // Times per byte rather than rates (the formula change of session 18, docs/predict_speed.md):
  // the reciprocals depend on the spec alone, so they are ready before the hit ratio is, and
  // the chain from h_in to the stage times is multiplies and adds instead of three dependent
  // divisions. Rounds differently from bytes / rate / f in the last bits only (<= 1e-12
  // relative over the prediction golden).
  const double gm_cycles_per_byte = 1.0 / gm_rate;  // 1 / gm_rate
  const double l2_cycles_per_byte = 1.0 / l2_rate;  // 1 / l2_rate
  // - no L2 hits (a lone op's cold L2): the hit term is not formed, 1 / gm_rate is left.
  const double in_cycles_per_byte =
      h_in == 0 && l2_rate > 0 ? gm_cycles_per_byte
                               : h_in * l2_cycles_per_byte + (1 - h_in) * gm_cycles_per_byte;
  // µs per byte read and written, the rate factors folded in (independent of h_in)
  const double in_us_per_cycle_byte = us_per_cycle / plan.in.rate_factor;  // 1 / (factor f)
  const double in_us_per_byte = in_cycles_per_byte * in_us_per_cycle_byte;
  const double out_us_per_byte =  // 1 / (factor x gm_write_bytes_per_cycle x f)
      us_per_cycle / (plan.out.rate_factor * hw.memory.gm_write_bytes_per_cycle);
  const bool us_finite = us_per_cycle > 0 && us_per_cycle < std::numeric_limits<double>::infinity();

  // Same-address conflicts grow with the cores launched and the duplicate ratio; the coefficient
  // is the loss at full chip width with every index repeated (DESIGN.md "Inter-core conflicts").
  const int chip_cores = (plan.unit == Placement::kVector) ? hw.chip.vector_cores : hw.chip.cube_cores;
  // A zero numerator (no duplicate indices: every family but the index ones) divided by the
  // positive core count is that zero itself, sign and all: the division is skipped (session 20).
  const double conflict_num = hw.overhead.conflict_coefficient * plan.dup_ratio * (b - 1);
  const double conflict =
      chip_cores > 1 ? (conflict_num == 0 ? conflict_num : conflict_num / (chip_cores - 1)) : 0.0;

  // The stages of one tile: base (compute or memory proper), align (32-byte alignment loss) and
  // conflict (same-address serialisation); MTE1, the vector stage and FixPipe have base only.
  const double s2 = hw.memory.mte2_setup_cycles;
  double in_b = plan.in.bytes * in_us_per_byte + plan.in.ideal_transfers * s2 * us_per_cycle;
  double in_a = (plan.in.padded_bytes - plan.in.bytes) * in_us_per_byte +
                (plan.in.transfers - plan.in.ideal_transfers) *
                    (plan.in_tik_row_issue ? hw.vector.tik_issue_cycles : s2) * us_per_cycle;
  double in_c = (in_b + in_a) * conflict * plan.in.conflict_weight;
  const double s3 = hw.memory.mte3_setup_cycles;
  const double out_b =
      plan.out.bytes * out_us_per_byte + plan.out.ideal_transfers * s3 * us_per_cycle;
  const double out_a = (plan.out.padded_bytes - plan.out.bytes) * out_us_per_byte +
                       (plan.out.transfers - plan.out.ideal_transfers) *
                           (plan.out_tik_row_issue ? hw.vector.tik_issue_cycles : s3) *
                           us_per_cycle;
  const double out_c = (out_b + out_a) * conflict * plan.out.conflict_weight;
  const double mte1_b = plan.mte1_cycles * us_per_cycle;
  double cube_b = plan.cube_cycles * us_per_cycle, cube_a = 0, cube_c = 0;
  VecStageSplit v;
  v.vec_us = plan.vector_cycles * us_per_cycle;
  v.scal_us = plan.scalar_cycles * us_per_cycle;
  v.vdma_us = plan.vector_dma_cycles * us_per_cycle;  // in series with the vector work
  v.vec_tot = v.vec_us + v.scal_us + v.vdma_us;
  v.vector_only = v.scal_us == 0 && v.vdma_us == 0 && v.vec_tot > 0;
  const double vec_b = v.vec_tot;
  const BoundCategory vec_kind = v.scal_us > v.vec_us ? kCatScalar : kCatVector;
  // An atomic add reads each destination byte back before writing it: twice the traffic.
  const double fix_traffic = plan.fixpipe_bytes * (plan.fixpipe_atomic ? 2.0 : 1.0);
  // Without FixPipe bytes (every vector kernel) fix_traffic is a zero, and a zero times the
  // positive, finite time per byte (FixPipe's rate at least 1 byte a cycle, us_per_cycle positive
  // and finite) is that zero, sign and all: the division is skipped (session 20).
  double fix_b = fix_traffic == 0 && hw.cube.fixpipe_bytes_per_cycle >= 1 && us_finite
                     ? fix_traffic
                     : fix_traffic * (us_per_cycle / hw.cube.fixpipe_bytes_per_cycle);
  // each pipe's own busy time, before the single-buffer folds below (x + 0.0: a stage's total)
  const double fixpipe_busy_us = fix_b + 0.0;
  const double cube_busy_us = cube_b + 0.0;
  if (plan.l0c_single_buffer) {  // cube and FixPipe in series
    cube_b += fix_b;
    fix_b = 0;
  }
  const double mte2_busy_us = in_b + in_a + in_c;
  if (plan.l1_single_buffer) {
    // MTE2 and the cube in series: one stage, attributed to whichever of the two is longer
    if (mte2_busy_us >= cube_b + cube_a + cube_c) {
      in_b += cube_b;
      in_a += cube_a;
      in_c += cube_c;
      cube_b = cube_a = cube_c = 0;
    } else {
      cube_b += in_b;
      cube_a += in_a;
      cube_c += in_c;
      in_b = in_a = in_c = 0;
    }
  }

  // Each stage's total, their sum and the slowest (the first of equals).
  const double tot[6] = {in_b + in_a + in_c, mte1_b + 0.0,         cube_b + cube_a + cube_c,
                         vec_b + 0.0,        fix_b + 0.0,          out_b + out_a + out_c};
  double sum_stages = 0;
  sum_stages += tot[kStageIn];
  sum_stages += tot[kStageMte1];
  sum_stages += tot[kStageCube];
  sum_stages += tot[kStageVec];
  sum_stages += tot[kStageFix];
  sum_stages += tot[kStageOut];
  int bound_stage = kStageIn;
  double max_stage = tot[kStageIn];
  for (int i = kStageMte1; i <= kStageOut; ++i) {
    if (tot[i] > max_stage) {
      max_stage = tot[i];
      bound_stage = i;
    }
  }
  // Double-buffered pipeline on each core: every stage once (fill), then the slowest stage for each
  // further tile. The ideal (fractional) wave count splits off the last partial wave as tail.
  // Without double buffering (ub_single_buffer) every tile runs all its stages in series.
  const bool serial = plan.ub_single_buffer;
  const double t_core = serial ? static_cast<double>(w) * sum_stages
                               : fills * sum_stages + (static_cast<double>(w) - fills) * max_stage;

  // The critical-path parts and the bound categories, stage by stage in stage order.
  StageSums s;
  // `once`: std::true_type when times is 1 (add_stage_time's Once: the stages without x 1)
  auto add_all = [&](double times, auto once) {
    constexpr bool kOnce = decltype(once)::value;
    add_stage_time<kStageIn, false, kOnce>(s, v, in_b, in_a, in_c, times);
    add_stage_time<kStageMte1, true, kOnce>(s, v, mte1_b, 0, 0, times);
    add_stage_time<kStageCube, false, kOnce>(s, v, cube_b, cube_a, cube_c, times);
    add_stage_time<kStageVec, true, kOnce>(s, v, vec_b, 0, 0, times);
    add_stage_time<kStageFix, true, kOnce>(s, v, fix_b, 0, 0, times);
    add_stage_time<kStageOut, false, kOnce>(s, v, out_b, out_a, out_c, times);
  };
  if (serial) {
    add_all(w_ideal, std::false_type{});
  } else {
    if (fills == 1.0) {  // one fill (the usual launch): the stages once, without x 1
      add_all(1.0, std::true_type{});
    } else {
      add_all(fills, std::false_type{});
    }
    const double more = w_ideal - fills;
    switch (bound_stage) {
      case kStageIn: add_stage_time<kStageIn, false>(s, v, in_b, in_a, in_c, more); break;
      case kStageMte1: add_stage_time<kStageMte1, true>(s, v, mte1_b, 0, 0, more); break;
      case kStageCube: add_stage_time<kStageCube, false>(s, v, cube_b, cube_a, cube_c, more); break;
      case kStageVec: add_stage_time<kStageVec, true>(s, v, vec_b, 0, 0, more); break;
      case kStageFix: add_stage_time<kStageFix, true>(s, v, fix_b, 0, 0, more); break;
      default: add_stage_time<kStageOut, false>(s, v, out_b, out_a, out_c, more); break;
    }
  }
  // The last partial wave's idle time goes to the bound stage's category.
  const BoundCategory tail_category = bound_stage == kStageMte1 || bound_stage == kStageCube ? kCatCube
                                 : bound_stage == kStageVec                        ? vec_kind
                                                                              : kCatMemory;
  const double tail_us = (static_cast<double>(w) - w_ideal) * (serial ? sum_stages : max_stage);
  // (a switch, not an index: with constant indices the categories stay in registers)
  switch (tail_category) {
    case kCatCube: s.category[kCatCube] += tail_us; break;
    case kCatVector: s.category[kCatVector] += tail_us; break;
    case kCatScalar: s.category[kCatScalar] += tail_us; break;
    default: s.category[kCatMemory] += tail_us; break;
  }

  // The chip's HBM bandwidth caps all cores together (shared with other streams by hbm_share).
  // L2 read misses and all writes count against it; L2 hits are limited by the per-core rates
  // above (the chip L2, several times HBM, is not modelled as a shared cap). Letting the
  // write-back L2 absorb writes up to its capacity was tried against the CANN 8.3 profiles: it
  // dragged the fitted HBM efficiency to an implausible 0.28 and tripled the held-out step-total
  // error (docs/accuracy.md), so writes go to HBM.
  const double share = std::clamp(ctx.hbm_share, 1e-6, 1.0);
  const double hbm = hw.hbm_bytes_per_us() * share;
  const double out_total =
      (plan.out.padded_bytes + (plan.fixpipe_in_l2 ? 0.0 : plan.fixpipe_bytes)) *
      static_cast<double>(tiles);
  // Reads and writes share the bus; switching direction costs time, so a kernel that streams both
  // ways moves less than one that only reads or only writes. The CANN 8.3 profile's rank 0
  // shows it: 0.88 GB read alone (LpNormV2) at 0.68 TB/s, 1.5 GB written alone (ZerosLike) at
  // 0.79 TB/s, 0.88 GB each way (Mul) at 0.66 TB/s, where the two alone would give 0.73.
  const double t_chip = hw.hbm_bus_bytes(in_total * (1 - h_in), out_total) / hbm;
  // Every byte read or written passes through the chip's L2, whose bandwidth all cores share: a
  // kernel whose operands all hit L2 is still capped there (split-K GEMMs re-reading their
  // operand chunks, copies of tensors just produced).
  const double l2_total =
      in_total + (plan.out.padded_bytes + fix_traffic) * static_cast<double>(tiles);
  const double t_l2 = l2_total / (hw.l2_bytes_per_us() * share);
  // A core reads what misses L2 from HBM at its own DDR rate (INI81 ddr_rate, the spec's
  // gm_read_bytes_per_cycle), whatever the destination: the cube's GM -> L1 rate
  // (gm_to_l1_bytes_per_cycle) is what L2 supplies. A GEMM that streams an operand once (a fully
  // connected layer at batch 32: the weights, no re-reads) is bound by its cores' DDR rates, far
  // below the chip's HBM: the CNN torch_npu profile's fp32 MatMulV2 rows read 9216 x 4096 weights
  // at 13-16 B/cycle a core on 16-24 cores (0.44-0.53 TB/s), with ND -> NZ on the way.
  double t_ddr = 0;
  if (plan.cube_operand_path) {
    const double misses_per_core = plan.in.padded_bytes * static_cast<double>(w) * (1 - h_in);
    const double gm_read_cycles_per_byte = 1.0 / hw.memory.gm_read_bytes_per_cycle;
    t_ddr = misses_per_core * gm_read_cycles_per_byte * in_us_per_cycle_byte;
  }
  const double saturation = std::max(0.0, std::max(std::max(t_chip, t_l2), t_ddr) - t_core);
  // Only a saturated kernel adds: saturation is +0 otherwise (std::max(0.0, x) is +0 for x <= 0
  // and NaN), and +0 added to these sums, never -0, leaves them as they are. Bit for bit the
  // same, and the usual kernel's memory part and bound no longer wait for t_core, the end of
  // the stage chain (session 19).
  if (saturation > 0) {
    s.memory += saturation;
    s.category[kCatMemory] += saturation;
  }

  // Every kernel starts by reading its tiling data and arguments from GM, so even one with no
  // tensor input (Fill, ZerosLike) pays a first-read latency: the CANN 8.3 profile's Fill and
  // ZerosLike of a few elements take 1.4-1.5 us, like the smallest kernels that do read.
  // MTE2 and MTE3 are in-order queues, so each tensor stream's first transfer waits out its own
  // latency: in the CANN 8.3 profile a one-block Add of two 128- or 1024-element tensors spends
  // 0.54-0.60 us more on the core (aiv_time) than a Cast of one, whose pipes are as idle.
  const double rs = std::max(1, plan.read_streams);
  const double ws = std::max(1, plan.write_streams);
  const bool writes = out_total > 0 || plan.fixpipe_bytes > 0;
  // How much each further stream adds is the chip's and toolchain's: a whole latency where the
  // streams wait in series (read_stream_share 1, CANN 8.3 on the 910B), a small share of it where
  // a kernel issues every stream's first load back to back (TBE on the 910).
  const double reads = 1 + hw.memory.read_stream_share * (rs - 1);
  const double writes_n = 1 + hw.memory.write_stream_share * (ws - 1);
  const double latency = (hw.memory.read_latency_cycles * reads +
                          (writes ? hw.memory.write_latency_cycles * writes_n : 0.0)) *
                         us_per_cycle;
  s.memory += latency;
  s.category[kCatMemory] += latency;

  // The answer, built in locals and written once: OpCost's defaults stored first and then
  // overwritten cost as much as the fields themselves.
  // The head counts the blocks launched (head_blocks, model/cost/launch_head.cpp); without a
  // launch block dim above the plan's, no call.
  const int hb = budget.launch_blocks > b ? head_blocks(plan, hw, budget, b) : b;
  const double head_us = (hw.overhead.launch_cycles + hw.overhead.per_block_cycles * hb) * us_per_cycle;
  const CriticalPath cp{head_us, s.compute, s.memory, s.alignment, s.conflict, tail_us, 0.0};
  const double duration_us = cp.sum();

  const double wd = static_cast<double>(w);
  // each pipe's own busy time, also when stages run in series
  double mte2_us = wd * mte2_busy_us;
  double mte3_us = wd * tot[kStageOut];
  if (plan.vector_dma_cycles > 0) {
    // the vector core's serial transfers: reads and writes together (the plan does not split
    // them), shown on MTE2 where the workspace loads dominate
    mte2_us += wd * v.vdma_us;
  }
  if (saturation > 0 && mte2_us + mte3_us > 0) {
    // starved DMA engines stay busy for the whole bandwidth-limited stretch
    const double scale = (mte2_us + mte3_us + saturation) / (mte2_us + mte3_us);
    mte2_us *= scale;
    mte3_us *= scale;
  }

  // The bound: the largest category, the head against them; the first of equals.
  Bound bound = Bound::kCube;
  double best = s.category[kCatCube];
  if (s.category[kCatVector] > best) {
    best = s.category[kCatVector];
    bound = Bound::kVector;
  }
  if (s.category[kCatScalar] > best) {
    best = s.category[kCatScalar];
    bound = Bound::kScalar;
  }
  if (s.category[kCatMemory] > best) {
    best = s.category[kCatMemory];
    bound = Bound::kMemory;
  }
  if (head_us > best) bound = Bound::kHead;

  return OpCost{
      .duration_us = duration_us,
      .block_dim = b,
      .bound = bound,
      .core_time_us = b * duration_us,
      .bytes_in = in_total,
      .bytes_out = out_total,
      .flops = plan.flops,
      .cube_efficiency = plan.cube_efficiency,
      .critical_path = cp,
      .pipes = PipeTimes{.cube_us = wd * cube_busy_us,
                         .vector_us = wd * v.vec_us,
                         .scalar_us = wd * v.scal_us,
                         .mte1_us = wd * tot[kStageMte1],
                         .mte2_us = mte2_us,
                         .mte3_us = mte3_us,
                         .fixpipe_us = wd * fixpipe_busy_us},
      .waves = static_cast<int>(std::min<std::int64_t>(w, 2'000'000'000)),
      .tiles = tiles,
      .warnings = plan.warnings,
  };
}

}  // namespace npusim::cost
