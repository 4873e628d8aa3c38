#include "model/cost/kernel_plan.h"

#include <algorithm>
#include <cmath>

#include "model/op_table.h"

namespace npusim::cost {

int available_cores(Placement unit, const HwSpec& hw, const CoreBudget& budget) noexcept {
  const bool cube = unit == Placement::kCube || unit == Placement::kMix;
  const int chip = cube ? hw.chip.cube_cores : hw.chip.vector_cores;
  const int limit = cube ? budget.cube_cores : budget.vector_cores;
  return limit > 0 ? std::min(limit, chip) : chip;
}

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

double ub_tile_bytes(const HwSpec& hw) noexcept {
  const double block = hw.memory.block_bytes;
  const double per = hw.chip.ub_bytes / std::max(1, hw.vector.ub_buffers);
  return std::max(block, std::floor(per / block) * block);
}

std::int64_t saturating_count(double x) noexcept {
  if (!(x >= 1.0)) return 1;  // NaN too
  return static_cast<std::int64_t>(std::min(x, kMaxCount));
}

std::int64_t vector_tiles(double total_bytes, const HwSpec& hw, int cores,
                          std::int64_t max_parallel) noexcept {
  const std::int64_t wanted =
      saturating_count(std::ceil(std::max(total_bytes, 1.0) / std::max(hw.vector.min_bytes_per_core, 1.0)));
  const std::int64_t b =
      std::max<std::int64_t>(1, std::min<std::int64_t>({static_cast<std::int64_t>(cores),
                                                         std::max<std::int64_t>(1, max_parallel),
                                                         wanted}));
  const double per_core = total_bytes / static_cast<double>(b);
  const std::int64_t need = saturating_count(std::ceil(per_core / ub_tile_bytes(hw)));
  // min(need, 2^53 / b); b < 2^31 puts 2^53 / b above 2^22, so a smaller need skips the divide
  const std::int64_t loops = need <= (std::int64_t{1} << 22)
                                 ? need
                                 : std::min(need, static_cast<std::int64_t>(kMaxCount) / b);
  return b * loops;
}

Transfer row_transfer(double rows, double row_bytes, double tiles, const HwSpec& hw,
                      bool contiguous) noexcept {
  Transfer t;
  const double block = hw.memory.block_bytes;
  t.bytes = rows * row_bytes / tiles;
  const bool aligned = is_multiple(row_bytes, block);
  // An aligned row set moves as one strided DMA per tile; an unaligned last axis needs a padded
  // DMA per row (DataCopyPad) and moves whole 32-byte blocks (DESIGN.md "32-byte alignment").
  t.padded_bytes = aligned ? t.bytes : rows * round_up(row_bytes, block) / tiles;
  const double per_row = std::max(1.0, rows / tiles);
  t.ideal_transfers = contiguous ? 1 : per_row;
  t.transfers = (aligned && contiguous) ? 1 : per_row;
  return t;
}

Transfer flat_transfer(double bytes, double tiles) noexcept {
  Transfer t;
  t.bytes = bytes / tiles;
  t.padded_bytes = t.bytes;
  t.transfers = t.ideal_transfers = bytes > 0 ? 1 : 0;
  return t;
}

double class_pass_cycles(VectorClass c, double bytes, const HwSpec& hw) noexcept {
  return std::ceil(bytes / hw.vector.repeat_bytes) *
             hw.vector.cycles_per_repeat[static_cast<std::size_t>(c)] +
         hw.vector.api_overhead_cycles;
}

double pass_cycles(const OpKindInfo& kind, double bytes, const HwSpec& hw) noexcept {
  double per_repeat = 0;
  for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
    per_repeat += hw.vector.cycles_per_repeat[static_cast<std::size_t>(kind.passes[i])];
  }
  const double repeats = std::ceil(bytes / hw.vector.repeat_bytes);
  return repeats * per_repeat + hw.vector.api_overhead_cycles * kind.pass_count;
}

namespace {

// One pipeline stage of a tile: its time split by cause.
struct Stage {
  double base = 0;      // compute or memory proper
  double align = 0;     // 32-byte alignment loss
  double conflict = 0;  // same-address serialisation
  enum Kind { kCube, kVector, kScalar, kMemory } kind = kMemory;
  [[nodiscard]] double total() const noexcept { return base + align + conflict; }
};

}  // namespace

OpCost evaluate(const KernelPlan& plan, const HwSpec& hw, const CoreBudget& budget,
                const PredictContext& ctx) noexcept {
  OpCost c;
  const double f = hw.cycles_per_us();
  const int unit_cores = std::max(1, available_cores(plan.unit, hw, budget));
  const std::int64_t tiles = std::max<std::int64_t>(1, plan.tiles);
  const auto b = static_cast<int>(std::min<std::int64_t>(unit_cores, tiles));
  std::int64_t w = ceil_div(tiles, b);
  double w_ideal = static_cast<double>(tiles) / b;
  block_waves(plan, hw, budget, tiles, w, w_ideal);

  // L2: data other tiles already read is an L2 hit; the rest hits with the context's ratio.
  const double h_ctx = ctx.l2_hit_ratio >= 0 ? std::min(1.0, ctx.l2_hit_ratio)
                                             : hw.memory.l2_hit_ratio_default;
  const double in_total = plan.in.padded_bytes * static_cast<double>(tiles);
  const double reread = std::clamp(
      std::max(plan.reread_fraction, in_total > 0 ? plan.reread_bytes / in_total : 0.0), 0.0, 1.0);
  // A re-read hits L2 only while the data being re-read still fits in it: with unique operand
  // bytes U and an L2 of size C, a fraction min(1, C/U) of re-reads hit (a GEMM whose K panels
  // exceed L2 streams them from HBM again for every output tile).
  const double unique_in = in_total * (1 - reread);
  const double reread_hits =
      plan.reread_hit_ratio >= 0
          ? std::min(1.0, plan.reread_hit_ratio)
          : reuse_hit_ratio(unique_in, hw.chip.l2_bytes);
  const double h_in = reread * reread_hits + (1 - reread) * h_ctx;
  const double gm_rate = plan.cube_operand_path ? hw.cube.gm_to_l1_bytes_per_cycle
                                                : hw.memory.gm_read_bytes_per_cycle;
  const double l2_rate = std::max(gm_rate, hw.memory.l2_read_bytes_per_cycle);
  const double in_rate = plan.in.rate_factor / (h_in / l2_rate + (1 - h_in) / gm_rate);
  const double out_rate = plan.out.rate_factor * hw.memory.gm_write_bytes_per_cycle;

  // Same-address conflicts grow with the cores launched and the duplicate ratio; the coefficient
  // is the loss at full chip width with every index repeated (DESIGN.md "Inter-core conflicts").
  const int chip_cores = (plan.unit == Placement::kVector) ? hw.chip.vector_cores : hw.chip.cube_cores;
  const double conflict =
      chip_cores > 1 ? hw.overhead.conflict_coefficient * plan.dup_ratio * (b - 1) / (chip_cores - 1)
                     : 0.0;

  auto dma_stage = [&](const Transfer& t, double rate, double setup) {
    Stage s;
    s.kind = Stage::kMemory;
    s.base = (t.bytes / rate + t.ideal_transfers * setup) / f;
    s.align = ((t.padded_bytes - t.bytes) / rate + (t.transfers - t.ideal_transfers) * setup) / f;
    s.conflict = (s.base + s.align) * conflict * t.conflict_weight;
    return s;
  };
  enum { kIn, kMte1, kCube, kVec, kFix, kOut, kStages };
  Stage st[kStages];
  st[kIn] = dma_stage(plan.in, in_rate, hw.memory.mte2_setup_cycles);
  st[kOut] = dma_stage(plan.out, out_rate, hw.memory.mte3_setup_cycles);
  st[kMte1] = {plan.mte1_cycles / f, 0, 0, Stage::kCube};
  st[kCube] = {plan.cube_cycles / f, 0, 0, Stage::kCube};
  const double vec_us = plan.vector_cycles / f;
  const double scal_us = plan.scalar_cycles / f;
  const double vdma_us = plan.vector_dma_cycles / f;  // in series with the vector work
  st[kVec] = {vec_us + scal_us + vdma_us, 0, 0, scal_us > vec_us ? Stage::kScalar : Stage::kVector};
  // An atomic add reads each destination byte back before writing it: twice the traffic.
  const double fix_traffic = plan.fixpipe_bytes * (plan.fixpipe_atomic ? 2.0 : 1.0);
  st[kFix] = {fix_traffic / hw.cube.fixpipe_bytes_per_cycle / f, 0, 0, Stage::kMemory};
  const double fixpipe_busy_us = st[kFix].total();
  const double cube_busy_us = st[kCube].total();
  if (plan.l0c_single_buffer) {
    st[kCube].base += st[kFix].base;
    st[kFix] = {0, 0, 0, Stage::kMemory};
  }
  const double mte2_busy_us = st[kIn].total();
  if (plan.l1_single_buffer) {
    // one serial stage, attributed to whichever of the two is longer
    Stage& keep = st[kIn].total() >= st[kCube].total() ? st[kIn] : st[kCube];
    Stage& fold = &keep == &st[kIn] ? st[kCube] : st[kIn];
    keep.base += fold.base;
    keep.align += fold.align;
    keep.conflict += fold.conflict;
    fold = {0, 0, 0, fold.kind};
  }

  // Each stage's total once (the stage structs no longer change below).
  double tot[kStages];
  int bound_stage = 0;
  double sum_stages = 0;
  for (int i = 0; i < kStages; ++i) {
    tot[i] = st[i].total();
    sum_stages += tot[i];
    if (tot[i] > tot[bound_stage]) bound_stage = i;
  }
  const double max_stage = tot[bound_stage];
  // Double-buffered pipeline on each core: every stage once (fill), then the slowest stage for each
  // further tile. The ideal (fractional) wave count splits off the last partial wave as tail.
  // Without double buffering (ub_single_buffer) every tile runs all its stages in series.
  const bool serial = plan.ub_single_buffer;
  const double t_core = serial ? static_cast<double>(w) * sum_stages
                               : sum_stages + static_cast<double>(w - 1) * max_stage;

  CriticalPath& cp = c.critical_path;
  // The critical-path parts and the bound categories are summed in locals, stage by stage in
  // stage order (the order of the additions is the result's last bit).
  double compute_us = 0, memory_us = 0, alignment_us = 0, conflict_us = 0;
  double category[4] = {0, 0, 0, 0};  // cube, vector, scalar, memory
  const double vec_tot = vec_us + scal_us + vdma_us;
  // Adds stage i run `times` times (x * 1.0 is exactly x, so the fill pass costs no rounding).
  auto add_stage = [&](int i, double times) {
    const Stage& s = st[i];
    const double base = s.base * times;
    if (i == kIn || i == kFix || i == kOut) {  // Stage::kMemory, whatever folding did
      memory_us += base;
      category[Stage::kMemory] += base;
    } else if (i == kVec) {
      // vector, scalar and the vector core's serial transfers share the stage; split by their
      // own busy times
      const double dma = vec_tot > 0 ? base * vdma_us / vec_tot : 0;
      compute_us += base - dma;
      memory_us += dma;
      category[Stage::kVector] += vec_tot > 0 ? base * vec_us / vec_tot : 0;
      category[Stage::kScalar] += vec_tot > 0 ? base * scal_us / vec_tot : 0;
      category[Stage::kMemory] += dma;
    } else {  // MTE1 and the cube: Stage::kCube
      compute_us += base;
      category[Stage::kCube] += base;
    }
    alignment_us += s.align * times;
    conflict_us += s.conflict * times;
    category[Stage::kMemory] += (s.align + s.conflict) * times;
  };
  if (serial) {
    for (int i = 0; i < kStages; ++i) add_stage(i, w_ideal);
  } else {
    for (int i = 0; i < kStages; ++i) add_stage(i, 1.0);
    add_stage(bound_stage, w_ideal - 1.0);
  }
  cp.compute_us = compute_us;
  cp.alignment_us = alignment_us;
  cp.conflict_us = conflict_us;
  cp.tail_us = (static_cast<double>(w) - w_ideal) * (serial ? sum_stages : max_stage);
  category[st[bound_stage].kind == Stage::kMemory ? Stage::kMemory : st[bound_stage].kind] +=
      cp.tail_us;

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
  const double saturation = std::max(0.0, std::max(t_chip, t_l2) - t_core);
  memory_us += saturation;
  category[Stage::kMemory] += saturation;

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
                          (writes ? hw.memory.write_latency_cycles * writes_n : 0.0)) / f;
  memory_us += latency;
  cp.memory_us = memory_us;
  category[Stage::kMemory] += latency;
  cp.head_us = (hw.overhead.launch_cycles + hw.overhead.per_block_cycles * b) / f;

  c.duration_us = cp.sum();
  c.block_dim = b;
  c.core_time_us = b * c.duration_us;
  c.tiles = tiles;
  c.waves = static_cast<int>(std::min<std::int64_t>(w, 2'000'000'000));
  c.bytes_in = in_total;
  c.bytes_out = out_total;
  c.flops = plan.flops;
  c.cube_efficiency = plan.cube_efficiency;
  c.warnings = plan.warnings;

  const double wd = static_cast<double>(w);
  PipeTimes& p = c.pipes;
  p.cube_us = wd * cube_busy_us;  // each pipe's own busy time, also when stages run in series
  p.mte1_us = wd * tot[kMte1];
  p.vector_us = wd * vec_us;
  p.scalar_us = wd * scal_us;
  p.fixpipe_us = wd * fixpipe_busy_us;
  p.mte2_us = wd * mte2_busy_us;
  p.mte3_us = wd * tot[kOut];
  if (plan.vector_dma_cycles > 0) {
    // the vector core's serial transfers: reads and writes together (the plan does not split
    // them), shown on MTE2 where the workspace loads dominate
    p.mte2_us += wd * vdma_us;
  }
  if (saturation > 0 && p.mte2_us + p.mte3_us > 0) {
    // starved DMA engines stay busy for the whole bandwidth-limited stretch
    const double scale = (p.mte2_us + p.mte3_us + saturation) / (p.mte2_us + p.mte3_us);
    p.mte2_us *= scale;
    p.mte3_us *= scale;
  }

  struct {
    Bound b;
    double t;
  } cand[] = {{Bound::kCube, category[Stage::kCube]},
              {Bound::kVector, category[Stage::kVector]},
              {Bound::kScalar, category[Stage::kScalar]},
              {Bound::kMemory, category[Stage::kMemory]},
              {Bound::kHead, cp.head_us}};
  c.bound = cand[0].b;
  double best = cand[0].t;
  for (const auto& x : cand) {
    if (x.t > best) {
      best = x.t;
      c.bound = x.b;
    }
  }
  return c;
}

}  // namespace npusim::cost
