// Vector-core families: elementwise with broadcast, reductions and norms, data movement, and the
// generic fallback. Mechanisms: streaming tilers over vector cores, per-dtype repeats of 256 B,
// vector instruction classes per pass, int64 falling back to the scalar unit, broadcast passes,
// rows whose last axis is not 32-byte aligned.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string_view>

#include "model/cost/column_split.h"
#include "model/cost/kernel_plan.h"
#include "model/prepared_op.h"
#include "model/cost/reduce_layout.h"
#include "model/op_table.h"

namespace npusim::cost {

using namespace std::string_view_literals;

namespace {


// The scalar unit does the work of passes that have no vector path for the dtype (int64).
// `bf16_casts` > 0: the data is bf16 and the core has no bf16 arithmetic, so the passes run on
// fp32 (twice the bytes) and each of the kernel's bf16 tensors is converted once (inputs to
// fp32, the result back): dav_c220's Add/Sub/Mul/Div/Max/Min take half, float, int16 and int32.
// `out_ds`: bytes per element of the op's output, for the passes of a fusion's parts after its
// fp32 main op (kind.fp32_passes); 0 = the tile's own.
void add_compute(KernelPlan& p, const OpKindInfo& kind, double tile_bytes, double tile_elements,
                 bool scalar_fallback, const HwSpec& hw, int bf16_casts = 0, double out_ds = 0) {
  if (scalar_fallback) {
    p.scalar_cycles += tile_elements * hw.vector.scalar_cycles_per_element * kind.pass_count;
    p.warnings |= kWarnInt64ScalarFallback;
  } else if (bf16_casts > 0 && (!hw.vector.bf16_arithmetic || kind.fp32_compute) &&
             kind.role != OpRole::kCast) {
    const double fp32_bytes = tile_elements * 4.0;
    if (kind.fp32_compute && kind.fp32_passes > 0 && kind.fp32_passes < kind.pass_count) {
      // the leading passes in fp32, the fused parts' after them on the output's own bytes
      const double own = out_ds > 0 ? tile_elements * out_ds : fp32_bytes;
      for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
        p.vector_cycles +=
            class_pass_cycles(kind.passes[i], i < kind.fp32_passes ? fp32_bytes : own, hw);
      }
    } else {
      p.vector_cycles += pass_cycles(kind, fp32_bytes, hw);
    }
    p.vector_cycles += bf16_casts * class_pass_cycles(VectorClass::kConvert, fp32_bytes, hw);
  } else {
    p.vector_cycles += pass_cycles(kind, tile_bytes, hw);
  }
}

// Full-size bf16 tensors of an op with `elements` output elements: those a bf16 kernel converts.
int bf16_tensors(const OpDesc& op, double elements) {
  int n = 0;
  for (const auto* ts : {&op.inputs, &op.outputs}) {
    for (const auto& t : *ts) {
      n += t.dtype == DType::kBFloat16 && static_cast<double>(t.elements()) >= elements ? 1 : 0;
    }
  }
  return n;
}

// Full-size tensors a kernel converts to compute in fp32: bf16 ones on a core without bf16
// arithmetic, and fp16 ones too when the kernel computes in fp32 (kind.fp32_compute).
int widened_tensors(const OpDesc& op, double elements, const OpKindInfo& kind) {
  int n = bf16_tensors(op, elements);
  if (!kind.fp32_compute) return n;
  for (const auto* ts : {&op.inputs, &op.outputs}) {
    for (const auto& t : *ts) {
      n += t.dtype == DType::kFloat16 && static_cast<double>(t.elements()) >= elements ? 1 : 0;
    }
  }
  return n;
}

// An int64 data tensor forces the scalar path; an int64 scalar operand (a step counter, an axis)
// does not: it is read once by the scalar unit whatever the data's dtype.
bool any_int64(const std::vector<TensorDesc>& ts) {
  return std::any_of(ts.begin(), ts.end(),
                     [](const TensorDesc& t) { return is_int64(t.dtype) && t.elements() > 1; });
}

// An ND operand of one value per row ([.., M, 1] with M rows) beside a FRACTAL_NZ first input
// [.., N1, M1, M0, N0] whose M = M1 x M0.
bool per_row_operand_on_nz(const OpDesc& op) noexcept {
  const TensorDesc& x = op.inputs[0];
  if (x.format != Format::kFractalNZ || x.shape.size() < 4) return false;
  const auto r = x.shape.size();
  const std::int64_t m = x.shape[r - 3] * x.shape[r - 2];
  return std::any_of(op.inputs.begin() + 1, op.inputs.end(), [&](const TensorDesc& t) {
    return t.format != Format::kFractalNZ && t.shape.size() >= 2 && t.shape.back() == 1 &&
           t.elements() == m * (static_cast<std::int64_t>(x.elements()) /
                                std::max<std::int64_t>(1, m * x.shape[r - 4] * x.shape[r - 1]));
  });
}

// The packed bit mask of an op that selects by one (ReluGradV2's uint8 [N,C1,H,W,C0/8]): one
// byte per 8 elements of the output, read beside the data, not broadcast over it.
bool packed_mask(const OpKindInfo& kind, const TensorDesc& t, double e) noexcept {
  bool selects = false;
  for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
    selects |= kind.passes[i] == VectorClass::kMaskSelect;
  }
  return selects && t.dtype == DType::kUInt8 && static_cast<double>(t.elements()) * 8 == e;
}

}  // namespace

ElementwiseShape elementwise_shape(const OpDesc& op) noexcept {
  ElementwiseShape s;
  const OpKindInfo& kind = *op.kind;
  double e = 1, last = 1;
  // The largest output sets the extent: MindSpore lists BNTrainingUpdate's per-channel
  // statistics ([1,C1,1,1,C0]) before y.
  const TensorDesc* main_out = nullptr;
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    if (!main_out || op.outputs[i].elements() > main_out->elements()) {
      main_out = &op.outputs[i];
      s.main_output = static_cast<int>(i);
    }
  }
  if (main_out) {
    e = product(main_out->shape);
    last = last_dim(main_out->shape);
  } else {
    broadcast_extent(op.inputs, e, last);
  }
  DType out_dtype = main_out ? main_out->dtype
                    : kind.compare      ? DType::kBool
                    : op.inputs.empty() ? DType::kFloat16
                                        : op.inputs[0].dtype;
  if (kind.role == OpRole::kCast && op.outputs.empty()) {
    if (auto d = op.attr("dst_type"); d && parse_dtype(*d)) {
      out_dtype = *parse_dtype(*d);
    } else {
      s.warnings |= kWarnOutputInferred;
    }
  }
  double in_ds = 0;
  for (const auto& t : op.inputs) in_ds = std::max(in_ds, dtype_bytes(t.dtype));
  const double out_ds = dtype_bytes(out_dtype);
  const double ds = std::max(in_ds, out_ds);
  // ops with several outputs (AdamW writes var, m and v) write all of them
  double out_bytes_all = e * out_ds;
  if (op.outputs.size() > 1) {
    out_bytes_all = 0;
    for (const auto& t : op.outputs) out_bytes_all += t.bytes();
  }
  const double rows = e / last;
  // A scalar operand rides along in a register (Adds/Muls forms): it is no broadcast; nor is the
  // packed bit mask of a mask select (one uint8 per 8 elements).
  bool broadcast = false;
  for (const auto& t : op.inputs) {
    broadcast |= t.elements() > 1 && static_cast<double>(t.elements()) != e &&
                 !packed_mask(kind, t, e);
  }
  double in_bytes = 0;
  for (const auto& t : op.inputs) in_bytes += t.bytes();
  s.e = e;
  s.last = last;
  s.in_ds = in_ds;
  s.out_ds = out_ds;
  s.ds = ds;
  s.out_bytes_all = out_bytes_all;
  s.rows = rows;
  s.in_bytes = in_bytes;
  s.broadcast = broadcast;
  s.out_dtype = out_dtype;
  s.scalar = any_int64(op.inputs) && !kind.int64_vector;
  s.casts = widened_tensors(op, e, kind) + (op.outputs.empty() && out_dtype == DType::kBFloat16);
  return s;
}

namespace {

KernelPlan elementwise_plan(const OpDesc& op, const ElementwiseShape& s, const HwSpec& hw,
                            int cores, double core_bytes) noexcept {
  KernelPlan p;
  p.unit = Placement::kVector;
  p.warnings |= s.warnings;
  const OpKindInfo& kind = *op.kind;
  const double e = s.e, last = s.last, ds = s.ds, out_ds = s.out_ds, rows = s.rows;
  const double out_bytes_all = s.out_bytes_all;
  const bool broadcast = s.broadcast;

  const std::int64_t tiles =
      vector_tiles(e * ds, hw, cores, broadcast ? saturating_count(rows) : INT64_MAX, core_bytes);
  const double nt = static_cast<double>(tiles);
  const double b = std::min<double>(cores, nt);
  // A tile's bytes and elements. Each division waits on the tile count, and the divider takes
  // them one after another, so quotients of the same operands are formed once (session 20):
  // - e / nt is tile_bytes / ds when ds is a power of two: e x 2^k / nt rounds to 2^k times the
  //   rounded e / nt (scaling by 2^k is exact; e x ds is finite and e / nt is 0 or at least
  //   2^-53, never subnormal), so dividing tile_bytes by 2^k (a multiply, div_pow2) gives it;
  // - bytes equal to e x ds (or twice that: two full inputs) divide to tile_bytes (or twice it,
  //   exact for the same reason).
  const double eds = e * ds;
  const double tile_bytes = eds / nt;
  const bool ds_pow2 = ds > 0 && (std::bit_cast<std::uint64_t>(ds) << 12) == 0 && ds < 1e300;
  const double tile_elements = ds_pow2 ? div_pow2(tile_bytes, ds) : e / nt;
  auto per_tile = [&](double bytes) {
    Transfer t;
    t.bytes = bytes == eds                  ? tile_bytes
              : bytes == 2 * eds && eds < 1e300 ? 2 * tile_bytes
                                                : bytes / nt;
    t.padded_bytes = t.bytes;
    t.transfers = t.ideal_transfers = bytes > 0 ? 1 : 0;
    return t;  // flat_transfer(bytes, nt), bit for bit
  };
  double broadcast_passes = 0;
  if (kind.writes_only) {
    p.out = per_tile(out_bytes_all);
  } else if (!broadcast) {
    p.in = per_tile(s.in_bytes);
    p.in.transfers = p.in.ideal_transfers = static_cast<double>(op.inputs.size());
    p.out = per_tile(out_bytes_all);
  } else {
    // Full-size inputs move row by row; a row-broadcast input (1, L) is loaded once per core; a
    // column-broadcast input (R, 1) is small but needs a broadcast pass over the output.
    for (const auto& t : op.inputs) {
      const double te = static_cast<double>(t.elements());
      const double tds = dtype_bytes(t.dtype);
      Transfer x;
      if (te == e) {
        x = row_transfer(rows, last * tds, nt, hw);
      } else if (last_dim(t.shape) == last && last > 1) {
        // its te / last rows (a whole number: last divides te) once per core; b x (te / last)
        // equals (b x te) / last for these integer counts, and te / last does not wait on the
        // tiler, so the division leaves the chain from the tile count (session 19, 2nd round)
        x = row_transfer(b * (te / last), last * tds, nt, hw);
        // the other b - 1 cores' loads of its te / last rows: x.padded_bytes x nt x (b - 1) / b
        // without the tile count, which the padded bytes per tile divide by (session 19's
        // formula change: two divisions off the chain to evaluate()'s hit ratio)
        const double row_bytes = last * tds;
        const double padded_row =
            is_multiple(row_bytes, hw.memory.block_bytes) ? row_bytes
                                                          : round_up(row_bytes, hw.memory.block_bytes);
        p.reread_bytes += te / last * padded_row * (b - 1);
      } else {
        x = flat_transfer(te * tds, nt);
        broadcast_passes += 1;
      }
      p.in.bytes += x.bytes;
      p.in.padded_bytes += x.padded_bytes;
      p.in.transfers += x.transfers;
      p.in.ideal_transfers += x.ideal_transfers;
    }
    p.out = row_transfer(rows, last * out_ds, nt, hw);
  }
  add_compute(p, kind, tile_bytes, tile_elements, s.scalar, hw, s.casts, out_ds);
  // Without broadcast inputs this adds 0 x a finite cycle count, +0.0 to a sum that is never
  // -0.0: skipped, bit for bit the same.
  if (broadcast_passes > 0) {
    p.vector_cycles += broadcast_passes * class_pass_cycles(VectorClass::kUnary, tile_bytes, hw);
  }
  p.tiles = tiles;
  p.flops = e * kind.pass_count;
  // a kernel whose live tensors fill UB loads, computes and stores each tile in turn (LAMB)
  p.ub_single_buffer = kind.ub_serial;
  if (kind.whole_images && !op.outputs.empty() && op.outputs[0].format == Format::kNC1HWC0 &&
      op.outputs[0].shape.size() == 5) {
    p.whole_units = op.outputs[0].shape[0];
  }
  if (kind.bn_apply && s.main_output >= 0) {
    // the map y is the largest output (MindSpore lists the BN apply's statistics before it)
    const TensorDesc& y = op.outputs[static_cast<std::size_t>(s.main_output)];
    // its fused ReLUV2 mask: a tile not a whole number of 32-byte blocks runs in series
    if (kind.relu_mask && !bn_apply_mask_aligned(y, hw)) p.ub_single_buffer = true;
    if (const std::int64_t whole = bn_apply_whole_images(y, hw); whole > 0) p.whole_units = whole;
  }
  return p;
}

}  // namespace

KernelPlan plan_elementwise(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                            double core_bytes) noexcept {
  const ElementwiseShape* s = f.elementwise();
  return s ? elementwise_plan(op, *s, hw, cores, core_bytes)
           : elementwise_plan(op, elementwise_shape(op), hw, cores, core_bytes);
}

ReduceLayout reduction_layout(const OpDesc& op) noexcept {
  ReduceLayout l = reduce_layout(op);
  ReducePlanFacts& f = l.plan;
  if (op.kind == nullptr || op.inputs.empty()) return l;
  const OpKindInfo& kind = *op.kind;
  const TensorDesc& x = op.inputs[0];
  const double e = static_cast<double>(x.elements());
  const double ds = dtype_bytes(x.dtype);
  // The physical pattern (model/cost/reduce_layout.h): size-1 axes dropped, neighbours merged.
  const double reduced = l.reduced;
  // Leading reduced runs with kept axes inside them (NC1HWC0 over N,H,W; NZ over N1; a middle
  // axis of ND): the kernel adds whole vectors of the kept axes beneath.
  bool leading = false;
  for (std::size_t i = 0; i + 1 < l.count; ++i) leading |= l.runs[i].reduced;
  const double row_len = l.last_reduced();
  const bool last_axis_reduction = !leading && l.inner_kept() == 1;
  f.e = e;
  f.ds = ds;
  f.leading = leading;
  f.row_len = row_len;
  f.last_axis_reduction = last_axis_reduction;
  f.rows = last_axis_reduction ? e / std::max(1.0, row_len) : e / reduced;
  f.out_elements = kind.role == OpRole::kRowwise ? e : e / reduced;
  f.out_ds = !op.outputs.empty() ? dtype_bytes(op.outputs[0].dtype) : ds;
  // the tiler's cap, unless a last-axis ReduceSum splits its rows by the chip's chunk
  f.parallel = saturating_count(e / std::max(1.0, row_len));
  f.parallel_ready = !(kind.role == OpRole::kReduce && last_axis_reduction);
  if (f.parallel_ready && !leading) f.parallel = saturating_count(e / reduced);
  f.scalar = is_int64(x.dtype);
  f.bf16 = bf16_tensors(op, e);
  for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
    f.reduces += kind.passes[i] == VectorClass::kReduce ? 1 : 0;
  }
  for (const auto* ts : {&op.inputs, &op.outputs}) {
    for (const auto& t : *ts) {
      f.widen_casts +=
          dtype_bytes(t.dtype) == 2 && static_cast<double>(t.elements()) == e ? 1 : 0;
    }
  }
  f.segment = per_row_operand_on_nz(op) ? static_cast<double>(x.shape.back()) : 0;
  for (const auto& t : op.outputs) f.out_bytes_leading += t.bytes();
  for (std::size_t i = 1; i < op.outputs.size(); ++i) {
    if (static_cast<double>(op.outputs[i].elements()) == e) f.full_out += op.outputs[i].bytes();
  }
  f.flops = e * kind.pass_count;
  f.valid = true;
  return l;
}

namespace {

// `layout` is reduction_layout()'s: the op-only quantities are read from its `plan`.
KernelPlan reduction_plan(const OpDesc& op, const ReduceLayout& layout, const HwSpec& hw,
                          int cores, double core_bytes) noexcept {
  KernelPlan p;
  p.unit = Placement::kVector;
  const OpKindInfo& kind = *op.kind;
  const ReducePlanFacts& rf = layout.plan;
  if (!rf.valid) {  // no input
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  const TensorDesc& x = op.inputs[0];
  const double e = rf.e;
  const double ds = rf.ds;
  const bool leading = rf.leading;
  const double row_len = rf.row_len;
  const bool last_axis_reduction = rf.last_axis_reduction;
  const double rows = rf.rows;
  const double out_elements = rf.out_elements;
  const double out_ds = rf.out_ds;

  std::int64_t parallel = rf.parallel;
  const double chunk = core_chunk_bytes(hw, core_bytes);
  if (!rf.parallel_ready) {
    // long rows are split over cores with a final combine
    parallel = saturating_count(rows * fast_ceil(row_len * ds / std::max(1.0, chunk)));
  }
  std::int64_t tiles =
      vector_tiles(e * ds, hw, cores, std::max<std::int64_t>(1, parallel), core_bytes);
  std::int64_t atomic_images = 0;
  if (kind.atomic_rows && leading) {
    // BNTrainingUpdateGrad's atomic schedule: one image a core, tiles of whole rows dividing H,
    // sized in the fp32 elements it computes in
    const std::int64_t at = bn_atomic_tiles(x, hw.chip.vector_cores, ub_tile_bytes(hw) / 4.0);
    if (at > 0) {
      tiles = at;
      atomic_images = x.shape[0];
    }
  }
  // [R, C] ND summed over R by the reduce schedule (one input: BiasAddGrad, ReduceSum; the
  // LayerNorm gradients have their own): the kernel cuts C over the cores, each reading its
  // columns of every row (model/cost/column_split.h)
  const ColumnSplit cols = kind.role == OpRole::kReduce && leading && atomic_images == 0 &&
                                   op.inputs.size() == 1
                               ? column_split(x, layout, hw, cores)
                               : ColumnSplit{};
  if (cols.applies) tiles = cols.blocks;
  const double nt = static_cast<double>(tiles);
  const bool scalar = rf.scalar;
  if (last_axis_reduction) {
    p.in = row_transfer(rows, row_len * ds, nt, hw);
    // a row shorter than one repeat still costs a whole repeat per pass
    const double row_repeats = fast_ceil(row_len * ds / hw.vector.repeat_bytes);
    const double tile_bytes = rows * row_repeats * hw.vector.repeat_bytes / nt;
    add_compute(p, kind, tile_bytes, e / nt, scalar, hw, rf.bf16);
    if (kind.role == OpRole::kRowwise) {
      // each row's max / sum / mean goes to the scalar unit and back before the pass that uses it
      p.scalar_cycles += rows / nt * rf.reduces * hw.vector.row_reduce_sync_cycles;
    }
  } else if (!leading) {
    // a middle run reduced over kept axes inside it, nothing reduced outside: the old plan
    const double inner = layout.inner_kept();
    p.in = row_transfer(e / inner, inner * ds, nt, hw);
    add_compute(p, kind, e * ds / nt, e / nt, scalar, hw, rf.bf16);
  } else {
    const double unit = layout.runs[layout.count - 1].size;
    if (cols.applies) {
      // a core's slice of every row: one strided DMA per UB load when the row stride is whole
      // 32-byte blocks, else one DMA per row, each loaded and added before the next
      const double block = hw.memory.block_bytes;
      p.in.bytes = cols.rows * cols.slice_bytes;
      if (cols.strided) {
        p.in.padded_bytes = p.in.bytes;
        p.in.transfers = p.in.ideal_transfers =
            std::max(1.0, fast_ceil(p.in.bytes / ub_tile_bytes(hw)));
        p.vector_dma_cycles += cols.rows * hw.memory.strided_burst_cycles;
      } else {
        p.in.padded_bytes = cols.rows * round_up(cols.slice_bytes, block);
        p.in.ideal_transfers = std::max(1.0, fast_ceil(p.in.bytes / ub_tile_bytes(hw)));
        p.in.transfers = std::max(p.in.ideal_transfers, cols.rows);
        // one row in flight: its fixed cost and its blocks at the gathered-row DMA rate
        p.scalar_cycles += cols.rows * (hw.memory.unaligned_row_cycles +
                                        round_up(cols.slice_bytes, block) /
                                            std::max(1e-9, hw.memory.row_dma_bytes_per_cycle));
      }
    } else {
      p.in = row_transfer(e / unit, unit * ds, nt, hw);
    }
    // A leading-axis reduction does not overlap its loads with its adds: each tile's MTE2, vector
    // and MTE3 run in series. The 910 profiles show it: BNTrainingUpdateGrad [32,16,56,56,16]
    // takes 260.6 us, where its loads alone are 107 us and its passes 172 (serial 279, overlapped
    // 172), and the type's uncalibrated ratio rose from 0.55 to 0.60-0.84 over the four CNN runs;
    // BiasAddGrad, LayerNorm, ReduceSum and LayerNormBetaGammaBackpropV2 improved with it
    // (docs/accuracy_mechanisms.md, "BN passes and serial leading-axis reductions").
    p.ub_single_buffer = true;
    if (scalar || (rf.bf16 > 0 && !hw.vector.bf16_arithmetic)) {
      add_compute(p, kind, e * ds / nt, e / nt, scalar, hw, rf.bf16);
    } else {
      // reduce-class passes are the vector adds and row sums of the layout; the others
      // (scale, shift, exp) are dense passes over the data
      // a kernel that computes in fp32 converts each full-size fp16 tensor once and runs its
      // passes over fp32 bytes
      const bool widen = kind.fp32_compute && ds == 2;
      const ReduceRepeats rr = reduce_repeats(layout, widen ? 4.0 : ds, hw);
      const auto& cpr = hw.vector.cycles_per_repeat;
      if (widen) {
        const int casts = rf.widen_casts;
        p.vector_cycles += casts * (rr.dense * cpr[static_cast<std::size_t>(VectorClass::kConvert)] / nt +
                                    hw.vector.api_overhead_cycles);
      }
      // Per-row statistics in ND ([M,1]: LayerNormXBackpropV2's mean and variance) applied to an
      // NZ tensor: each row's scalar meets one N0-wide segment per fractal column, so every pass
      // issues a repeat per segment (BERT: 848 us measured for [48,1024,16,16], where the same
      // tensor's LayerNorm, with no such operand, takes 130).
      const double segment = rf.segment;
      for (std::uint8_t i = 0; i < kind.pass_count; ++i) {
        const VectorClass c = kind.passes[i];
        const double cycles =
            segment > 0 ? e / segment * fast_ceil(segment * ds / hw.vector.repeat_bytes) *
                              cpr[static_cast<std::size_t>(c)]
            : c == VectorClass::kReduce
                ? rr.add * cpr[static_cast<std::size_t>(VectorClass::kBinary)] +
                      rr.row * cpr[static_cast<std::size_t>(VectorClass::kReduce)]
                : rr.dense * cpr[static_cast<std::size_t>(c)];
        p.vector_cycles += cycles / nt + hw.vector.api_overhead_cycles;
      }
    }
  }
  // Further inputs: full-size ones (BN's x beside dy) stream like the first; small ones (mean,
  // gamma) are read by every core.
  double extra_in = 0;
  for (std::size_t i = 1; i < op.inputs.size(); ++i) {
    const TensorDesc& t = op.inputs[i];
    if (leading && static_cast<double>(t.elements()) == e) {
      const Transfer full = flat_transfer(t.bytes(), nt);
      p.in.bytes += full.bytes;
      p.in.padded_bytes += full.padded_bytes;
      p.in.transfers += full.transfers;
      p.in.ideal_transfers += full.ideal_transfers;
    } else {
      extra_in += t.bytes();
    }
  }
  // Without small inputs (a one-input Softmax, ReduceSum) the transfer is +0 bytes and no DMA
  // and the re-read bytes +0, the plan's own: skipped, bit for bit the same (session 19).
  if (extra_in != 0) {
    Transfer extra = flat_transfer(extra_in * std::min<double>(cores, nt), nt);
    p.reread_bytes = extra_in * (std::min<double>(cores, nt) - 1);
    p.in.bytes += extra.bytes;
    p.in.padded_bytes += extra.padded_bytes;
    p.in.transfers += extra.transfers;
    p.in.ideal_transfers += extra.ideal_transfers;
  }
  if (leading && !op.outputs.empty()) {
    p.out = flat_transfer(rf.out_bytes_leading, nt);
  } else {
    p.out = kind.role == OpRole::kRowwise ? row_transfer(rows, row_len * out_ds, nt, hw)
                                          : flat_transfer(out_elements * out_ds, nt);
    // A further output as large as the input (SquareSumV2's x * x beside its sum) is stored
    // tile by tile like an elementwise result.
    const double full_out = rf.full_out;
    if (full_out > 0) {
      const Transfer full = flat_transfer(full_out, nt);
      p.out.bytes += full.bytes;
      p.out.padded_bytes += full.padded_bytes;
      p.out.transfers += full.transfers;
      p.out.ideal_transfers += full.ideal_transfers;
    }
  }
  p.tiles = tiles;
  if (atomic_images > 0) p.whole_units = atomic_images;
  p.flops = rf.flops;
  return p;
}

}  // namespace

KernelPlan plan_reduction(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                          double core_bytes) noexcept {
  if (op.kind->logits_2d) {
    KernelPlan p;
    if (plan_logits_2d(op, hw, p)) return p;
  }
  if (const ReduceLayout* l = f.reduce()) return reduction_plan(op, *l, hw, cores, core_bytes);
  return reduction_plan(op, reduction_layout(op), hw, cores, core_bytes);
}

namespace {

// Whether a tensor an AtomicAddrClean names is itself the atomic-add target it zeroes: a
// fractal-layout output ([..., 16, 16]: the split-K sums of a cube kernel, weight gradients)
// or a 2-D sum (an embedding gradient). An activation (NC1HWC0, or a 3-D ND batch) names the
// kernel whose atomic outputs are its per-channel statistics, a few KB. The 910 runs: fractal
// and 2-D tensors zeroed at 0.1-2.2 TB/s over 10-30 blocks; activations named by 1-9-block
// cleans "zeroed" in 1.3-2.4 us would need 6-127 TB/s.
bool atomic_target(const TensorDesc& t) noexcept {
  const std::size_t r = t.shape.size();
  const bool fractal = r >= 4 && t.shape[r - 1] == 16 && t.shape[r - 2] == 16;
  return fractal || r == 2;
}

}  // namespace

KernelPlan plan_data_movement(const OpDesc& op, const HwSpec& hw, int cores) {
  return plan_data_movement(op, op_facts(op), hw, cores);
}

KernelPlan plan_data_movement(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                              double core_bytes) noexcept {
  const OpKindInfo& kind = *op.kind;
  // every return returns p, so it is built in the caller's slot: a return of another plan made
  // GCC build p on the stack and copy it out, with store-forwarding stalls (session 18)
  KernelPlan p;
  if (kind.role == OpRole::kCast) {
    p = plan_elementwise(op, f, hw, cores, core_bytes);
    return p;
  }
  p.unit = Placement::kVector;
  if (kind.writes_only && op.outputs.empty()) {
    // AtomicAddrClean (MindSpore on the 910) names a tensor of the kernel it prepares. Launched
    // on several blocks with an atomic-add target named (atomic_target above), it zeroes that
    // tensor over the blocks. Otherwise what it zeroes is the kernel's atomic-add outputs
    // (per-channel BN sums, a few KB): the 910 runs measure 1.3-2.8 us for it beside named
    // activations of up to 51 MB, a launch, its first read and one block written.
    if (cores > 1 && !op.inputs.empty() && atomic_target(op.inputs[0])) {
      const double bytes = op.inputs[0].bytes();
      const std::int64_t tiles = vector_tiles(bytes, hw, cores, INT64_MAX, core_bytes);
      p.tiles = tiles;
      p.out = flat_transfer(bytes, static_cast<double>(tiles));
      return p;
    }
    p.tiles = 1;
    p.out = flat_transfer(hw.memory.block_bytes, 1);
    return p;
  }
  if (op.inputs.empty()) {
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  MovementShape local;
  const MovementShape& m =
      f.movement() ? *f.movement() : (static_cast<void>(movement_shape(op, local)), local);
  p.warnings |= m.warnings;
  const TensorDesc& x = op.inputs[0];
  const double ds = dtype_bytes(x.dtype);
  const double in_bytes = m.in_bytes, out_e = m.out_e, out_ds = m.out_ds;
  const double out_bytes = m.out_bytes;
  const double last_out = m.last_out;
  const std::int64_t tiles =
      vector_tiles(std::max(out_bytes, in_bytes), hw, cores, m.parallel, core_bytes);
  const double nt = static_cast<double>(tiles);
  const double b = std::min<double>(cores, nt);

  switch (kind.role) {
    case OpRole::kTile: {
      // the (small) source is read by every core; the output streams out row by row
      p.in = flat_transfer(std::min(in_bytes * b, std::max(in_bytes, out_bytes)), nt);
      p.reread_bytes = std::max(0.0, p.in.bytes * nt - in_bytes);
      p.out = row_transfer(out_e / last_out, last_out * out_ds, nt, hw);
      p.vector_cycles = class_pass_cycles(VectorClass::kUnary, out_bytes / nt, hw);
      break;
    }
    case OpRole::kConcat: {
      // each input lands in its slot of every output row: one DMA per row piece
      p.in = flat_transfer(0, nt);
      for (const auto& t : op.inputs) {
        if (t.shape.size() <= 1 && t.elements() <= 1 && op.inputs.size() > 2) continue;
        const double tl = last_dim(t.shape);
        const Transfer piece =
            (tl == last_out) ? flat_transfer(t.bytes(), nt)
                             : row_transfer(static_cast<double>(t.elements()) / tl,
                                            tl * dtype_bytes(t.dtype), nt, hw);
        p.in.bytes += piece.bytes;
        p.in.padded_bytes += piece.padded_bytes;
        p.in.transfers += piece.transfers;
        p.in.ideal_transfers += piece.ideal_transfers;
      }
      p.out = row_transfer(out_e / last_out, last_out * out_ds, nt, hw);
      break;
    }
    case OpRole::kTransData:
      if (const TensorDesc* y = op.outputs.empty() ? nullptr : &op.outputs[0];
          y && is_5d_transdata(x.format, y->format)) {
        plan_5d_transdata(p, x, *y, nt, hw);
        p.vector_cycles = pass_cycles(kind, out_bytes / nt, hw) * std::max(1.0, ds / 2);
        break;
      }
      [[fallthrough]];
    case OpRole::kTranspose: {
      const double last_in = last_dim(x.shape);
      const bool moves_last_axis = last_in != last_out || kind.role == OpRole::kTransData;
      p.in = row_transfer(static_cast<double>(x.elements()) / last_in, last_in * ds, nt, hw);
      p.out = row_transfer(out_e / last_out, last_out * out_ds, nt, hw);
      if (kind.role == OpRole::kTransData && !op.outputs.empty() &&
          (x.format == Format::kFractalNZ || op.outputs[0].format == Format::kFractalNZ)) {
        // ND <-> FRACTAL_NZ (TBE TIK nd_2_nz / nz_2_nd): a last axis that is not a whole number
        // of 32-byte blocks is moved a row per data_move, issued back to back in the kernel's
        // loop. The MTE queue overlaps each one's setup with the transfer before it, so a row
        // costs the issue of one TIK instruction, not a DMA setup: the 910 ViT's ND [B,12,50,50]
        // fp16 <-> NZ takes 2.4-3.3 cycles a row more than [B,12,50,64] (vit-64 / vit-128,
        // 1280 / 2560 rows a core: 14.5 / 23.2 us against 11.4 / 14.7 ND -> NZ, 12.8 / 21.2
        // against 9.6 / 15.3 back), where mte2_setup_cycles would charge 27 (75 us predicted).
        p.in_tik_row_issue = p.out_tik_row_issue = true;
      }
      if (moves_last_axis) p.vector_cycles = pass_cycles(kind, out_bytes / nt, hw);
      break;
    }
    case OpRole::kSlice: {
      // rows of the slice are strided in the source unless the last axis is kept whole
      const bool whole_rows = last_out == last_dim(x.shape);
      p.in = row_transfer(out_e / last_out, last_out * ds, nt, hw, whole_rows);
      p.out = flat_transfer(out_bytes, nt);
      break;
    }
    case OpRole::kPad: {
      p.in = row_transfer(static_cast<double>(x.elements()) / last_dim(x.shape),
                          last_dim(x.shape) * ds, nt, hw);
      p.out = row_transfer(out_e / last_out, last_out * out_ds, nt, hw);
      p.vector_cycles = class_pass_cycles(VectorClass::kUnary, out_bytes / nt, hw);
      break;
    }
    default: {  // copies, reshapes, splits: contiguous in and out
      p.in = flat_transfer(in_bytes, nt);
      p.out = flat_transfer(out_bytes, nt);
      break;
    }
  }
  p.tiles = tiles;
  return p;
}

GenericShape generic_shape(const OpDesc& op) noexcept {
  GenericShape g;
  for (const auto& t : op.inputs) g.in_bytes += t.bytes();
  for (const auto& t : op.outputs) g.out_bytes += t.bytes();
  if (op.outputs.empty()) {
    for (const auto& t : op.inputs) g.out_bytes = std::max(g.out_bytes, t.bytes());
  }
  g.scalar = any_int64(op.inputs);
  for (const auto& t : op.inputs) g.ds = std::max(g.ds, dtype_bytes(t.dtype));
  return g;
}

namespace {

KernelPlan generic_plan(const OpKindInfo& kind, const GenericShape& g, const HwSpec& hw,
                        int cores, double core_bytes) noexcept {
  // Unknown op type: read every input, one unary pass over the output, write it.
  KernelPlan p;
  p.unit = Placement::kVector;
  p.warnings |= kWarnUnknownOpType;
  const double in_bytes = g.in_bytes, out_bytes = g.out_bytes, ds = g.ds;
  const std::int64_t tiles =
      vector_tiles(std::max(in_bytes, out_bytes), hw, cores, INT64_MAX, core_bytes);
  const double nt = static_cast<double>(tiles);
  p.in = flat_transfer(in_bytes, nt);
  p.out = flat_transfer(out_bytes, nt);
  add_compute(p, kind, out_bytes / nt, out_bytes / ds / nt, g.scalar, hw);
  p.tiles = tiles;
  p.flops = out_bytes / ds;
  return p;
}

}  // namespace

KernelPlan plan_generic(const OpDesc& op, const HwSpec& hw, int cores, double core_bytes) noexcept {
  return generic_plan(*op.kind, generic_shape(op), hw, cores, core_bytes);
}

KernelPlan plan_generic(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                        double core_bytes) noexcept {
  const GenericShape* g = f.generic();
  return g ? generic_plan(*op.kind, *g, hw, cores, core_bytes)
           : generic_plan(*op.kind, generic_shape(op), hw, cores, core_bytes);
}

}  // namespace npusim::cost
