// Index family (Gather, Embedding, ScatterNd, ...) and sort family (TopK, Sort).
// Mechanisms: one DMA per gathered/scattered row with 32-byte padding, scalar address computation
// per index, same-address conflicts growing with block dim and the duplicate ratio, a table small
// enough for the UB gathered with vgather instead; sorts as 32-element sorts plus 4-way merge
// passes, one row per core, int64 keys on the scalar unit.
// A row's DMA address comes from the scalar unit reading its index, so a core has one row in
// flight: the index work and the row DMAs run in series, not double-buffered, and a row moves at
// the chip's one-row rate (memory.row_dma_bytes_per_cycle), not the streaming rate
// (docs/accuracy_mechanisms.md, "Index rows in series").
#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"
#include "model/prepared_op.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {

bool is_integer(DType d) {
  return d == DType::kInt32 || d == DType::kInt64 || d == DType::kUInt32 || d == DType::kUInt64 ||
         d == DType::kInt16 || d == DType::kUInt16 || d == DType::kInt8 || d == DType::kUInt8;
}

void merge(Transfer& into, const Transfer& x) {
  into.bytes += x.bytes;
  into.padded_bytes += x.padded_bytes;
  into.transfers += x.transfers;
  into.ideal_transfers += x.ideal_transfers;
}

double vclass(const HwSpec& hw, VectorClass c) {
  return hw.vector.cycles_per_repeat[static_cast<std::size_t>(c)];
}

// One independently addressed row per DMA moves at the chip's one-row rate instead of `rate`
// (the streaming per-core rate of that direction): the factor on the Transfer's rate.
double row_rate_factor(const HwSpec& hw, double rate) {
  const double row = hw.memory.row_dma_bytes_per_cycle;
  return row > 0 && rate > 0 ? std::min(1.0, row / rate) : 1.0;
}

// Atomic adds into one GM region run one at a time, each holding it for
// memory.atomic_add_cycles plus its bytes at the L2 rate, whichever core issues them
// (docs/accuracy_mechanisms.md, "Session 16"). How many adds meet in one region is the data's,
// not the shapes': the scenario says that a share `index_hot_share` of the rows adds into
// `index_hot_rows` destination rows. Those rows lie side by side in the output, as many to a
// region as it holds, so the busiest region takes the hot adds of min(hot rows, rows a region
// holds) of them. The chain of those adds in cycles; 0 without the attribute or the constants.
double hot_region_chain_cycles(const OpDesc& op, const AttrTable& attrs, double rows,
                               double row_bytes, const HwSpec& hw) {
  const double hold = hw.memory.atomic_add_cycles;
  const double region = hw.memory.atomic_region_bytes;
  const double l2 = hw.memory.l2_read_bytes_per_cycle;
  if (!attrs.has(Attr::kIndexHotShare) || hold <= 0 || region <= 0 || l2 <= 0 || row_bytes <= 0) {
    return 0;
  }
  const double share = std::clamp(attrs.number(Attr::kIndexHotShare, 0, op), 0.0, 1.0);
  const double hot_rows = std::max(1.0, attrs.number(Attr::kIndexHotRows, 1, op));
  const double block = std::max(1, hw.memory.block_bytes);
  const double padded = std::ceil(row_bytes / block) * block;
  const double per_region = std::min(hot_rows, std::max(1.0, std::ceil(region / padded)));
  return share * rows * per_region / hot_rows * (hold + padded / l2);
}

}  // namespace

GatherShape gather_shape(const OpDesc& op, const AttrTable& attrs) {
  GatherShape g;
  const TensorDesc& params = op.inputs[0];
  // the indices: the first integer tensor after the params (IndexSelect puts `dim` between)
  const TensorDesc* idx = &op.inputs[1];
  for (std::size_t i = 1; i < op.inputs.size(); ++i) {
    if (is_integer(op.inputs[i].dtype) && op.inputs[i].elements() > idx->elements()) {
      idx = &op.inputs[i];
    }
  }
  const double ds = dtype_bytes(params.dtype);
  const auto axis_raw = static_cast<std::int64_t>(attrs.number(Attr::kAxis, 0, op));
  const auto rank = static_cast<std::int64_t>(params.shape.size());
  const std::int64_t axis = std::clamp<std::int64_t>(axis_raw < 0 ? axis_raw + rank : axis_raw, 0,
                                                     std::max<std::int64_t>(0, rank - 1));
  double outer = 1, row_elems = 1;
  for (std::int64_t a = 0; a < rank; ++a) {
    const auto d = static_cast<double>(params.shape[static_cast<std::size_t>(a)]);
    if (a < axis) outer *= d;
    if (a > axis) row_elems *= d;
  }
  const double n = static_cast<double>(idx->elements());
  g.rows = outer * n;
  g.row_bytes = row_elems * ds;
  // When the profile gives the output, it bounds what was gathered (e.g. Index with one index
  // tensor per axis gathers single elements, not rows).
  if (!op.outputs.empty() && g.rows > 0) {
    g.row_bytes = std::min(g.row_bytes, op.outputs[0].bytes() / g.rows);
  }
  g.idx_bytes = idx->bytes();
  g.params_bytes = params.bytes();
  return g;
}

KernelPlan plan_index(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores) {
  KernelPlan p;
  p.unit = Placement::kVector;
  const OpKindInfo& kind = *op.kind;
  p.dup_ratio = f.attrs.number(Attr::kIndexDupRatio, hw.overhead.index_dup_ratio_default, op);
  if (op.inputs.size() < 2) {
    // every return returns p, so it is built in the caller's slot: a return of another plan
    // made GCC build p on the stack and copy it out, with store-forwarding stalls (session 18)
    p = plan_generic(op, hw, cores);
    // best effort on what there is; predict() clears the generic plan's "unknown op type"
    // for a known family, so this is what the user is told
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  if (kind.role == OpRole::kGather) {
    // the op-only part prepared (model/prepared_op.h), or computed here for an unprepared op
    const GatherShape g = f.gather() ? *f.gather() : gather_shape(op, f.attrs);
    const double rows = g.rows, row_bytes = g.row_bytes;
    const double out_bytes = rows * row_bytes;
    const std::int64_t tiles = vector_tiles(out_bytes, hw, cores, saturating_count(rows));
    const double nt = static_cast<double>(tiles);
    const double b = std::min<double>(cores, nt);
    merge(p.in, flat_transfer(g.idx_bytes, nt));
    if (g.params_bytes * 2 <= hw.chip.ub_bytes) {
      // small table: each core loads it into the UB once and gathers with vgather
      merge(p.in, flat_transfer(g.params_bytes * b, nt));
      p.reread_bytes = g.params_bytes * (b - 1);
      // vgather takes byte offsets: indices are converted (vconv) and scaled (vmuls) first
      const double idx_bytes_tile = g.idx_bytes / nt;
      p.vector_cycles = fast_ceil(out_bytes / nt / hw.vector.repeat_bytes) *
                            vclass(hw, VectorClass::kGather) +
                        fast_ceil(idx_bytes_tile / hw.vector.repeat_bytes) *
                            (vclass(hw, VectorClass::kConvert) + vclass(hw, VectorClass::kUnary)) +
                        3 * hw.vector.api_overhead_cycles;
      p.in.conflict_weight = 0;
      // duplicate indices hit the same UB bank group: the conflict applies to the gather itself
      p.vector_cycles *= 1 + hw.overhead.conflict_coefficient * p.dup_ratio;
    } else {
      // one DMA per row from GM; rows are never contiguous
      Transfer rowsx = row_transfer(rows, row_bytes, nt, hw);
      rowsx.transfers = std::max(1.0, rows / nt);
      rowsx.ideal_transfers = rowsx.transfers;
      if (!is_multiple(row_bytes, hw.memory.block_bytes)) rowsx.ideal_transfers = rowsx.transfers;
      merge(p.in, rowsx);
      p.in.conflict_weight = rowsx.padded_bytes / std::max(p.in.padded_bytes, 1.0);
      p.scalar_cycles = rows / nt * hw.vector.scalar_cycles_per_index;
      // one row in flight: the rows at the one-row rate, in series with the index work
      p.in.rate_factor = row_rate_factor(hw, hw.memory.gm_read_bytes_per_cycle);
      p.ub_single_buffer = true;
    }
    p.out = flat_transfer(out_bytes, nt);
    p.tiles = tiles;
    return p;
  }
  if (kind.role == OpRole::kGatherElements) {
    const TensorDesc& x = op.inputs[0];
    const TensorDesc& idx = op.inputs[1];
    const double ds = dtype_bytes(x.dtype);
    const double out_bytes = static_cast<double>(idx.elements()) * ds;
    const std::int64_t tiles = vector_tiles(out_bytes, hw, cores, INT64_MAX);
    const double nt = static_cast<double>(tiles);
    merge(p.in, flat_transfer(x.bytes() + idx.bytes(), nt));
    p.out = flat_transfer(out_bytes, nt);
    p.vector_cycles = pass_cycles(kind, out_bytes / nt, hw);
    p.tiles = tiles;
    return p;
  }
  // Scatter: updates rows added/written into the output at indexed rows (atomic per row).
  // With two or more data tensors the first is the destination updated in place (IndexPut,
  // ScatterUpdate, ScatterNdUpdate...): it is written at the indexed rows, not read whole.
  std::size_t data_inputs = 0;
  for (const auto& t : op.inputs) data_inputs += is_integer(t.dtype) ? 0 : 1;
  const TensorDesc* updates = nullptr;
  const TensorDesc* idx = nullptr;
  bool skipped_destination = data_inputs < 2;
  for (const auto& t : op.inputs) {
    if (is_integer(t.dtype)) {
      if (!idx || t.elements() > idx->elements()) idx = &t;
    } else if (!skipped_destination) {
      skipped_destination = true;
    } else if (!updates || t.elements() >= updates->elements()) {
      updates = &t;
    }
  }
  if (!updates || !idx) {  // no index or no data tensor: best effort, as above
    p = plan_generic(op, hw, cores);
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  const bool nd = op.type.find("Nd") != std::string::npos;
  const double depth = nd && idx->shape.size() >= 2 ? static_cast<double>(idx->shape.back()) : 1.0;
  const double rows = std::max(1.0, static_cast<double>(idx->elements()) / depth);
  const double row_bytes = updates->bytes() / rows;
  // Rows added into fewer destination rows than there are rows repeat some destination: with N
  // rows into S < N segments at least N - S adds land on a row already added to, so the duplicate
  // ratio is at least 1 - S/N (pigeonhole) when the profile gives the output and no attribute
  // says otherwise.
  const double segments = !op.outputs.empty() && !op.outputs[0].shape.empty() && row_bytes > 0
                              ? op.outputs[0].bytes() / row_bytes
                              : 0.0;
  if (!f.attrs.has(Attr::kIndexDupRatio) && segments >= 1 && segments < rows) {
    p.dup_ratio = std::max(p.dup_ratio, 1 - segments / rows);
  }
  const std::int64_t tiles = vector_tiles(updates->bytes(), hw, cores, saturating_count(rows));
  const double nt = static_cast<double>(tiles);
  // Given the positions of its sorted indices as well (EmbeddingDenseGradV2: grad, sort_indices,
  // pos_idx), a scatter reads each update row at its position: a row DMA of its own, at the
  // one-row rate like the rows it writes (llama's 4-KB rows: 59 us of MTE2 for 102 rows a core)
  std::size_t row_long_int = 0;
  if (op.type == "EmbeddingDenseGradV2") {  // the other scatters never read rows at positions
    for (const auto& t : op.inputs) {
      row_long_int += is_integer(t.dtype) && static_cast<double>(t.elements()) == rows ? 1 : 0;
    }
  }
  if (row_long_int >= 2) {
    Transfer rows_in = row_transfer(rows, row_bytes, nt, hw);
    rows_in.transfers = rows_in.ideal_transfers = std::max(1.0, rows / nt);
    merge(p.in, rows_in);
    const double idx_bytes = idx->bytes() * static_cast<double>(row_long_int) / nt;
    merge(p.in, flat_transfer(idx_bytes * nt, nt));
    p.in.rate_factor = p.in.padded_bytes /
                       (rows_in.padded_bytes /
                            row_rate_factor(hw, hw.memory.gm_read_bytes_per_cycle) +
                        idx_bytes);
  } else {
    merge(p.in, flat_transfer(updates->bytes() + idx->bytes(), nt));
  }
  p.out = row_transfer(rows, row_bytes, nt, hw);
  p.out.transfers = std::max(1.0, rows / nt);
  p.out.ideal_transfers = p.out.transfers;
  p.out.conflict_weight = 1;
  // one row in flight: the scattered rows at the one-row rate, in series with the index work
  double row_factor = row_rate_factor(hw, hw.memory.gm_write_bytes_per_cycle);
  // A segment sum into fewer segments than cores: the atomic adds into one segment run one core
  // at a time, each at a core's write rate, so S segments take at most S cores' write bandwidth
  // and a core's share of it is S / cores. The 910's bert rows into 2 segments (token types,
  // [N,768] fp32, N/2 rows of 3072 B a segment) move 55-61 B/cycle a segment, against the INI's
  // 64 (ub_to_ddr_rate): 105 / 230 / 415 us at N = 4096 / 8192 / 16384. This replaces the
  // duplicate-ratio conflict estimate for them.
  const double concurrent = std::min<double>(std::max(1, cores), nt);
  const bool segment_op = op.type.rfind("UnsortedSegment", 0) == 0;
  if (segment_op && segments >= 1 && segments < concurrent) {
    row_factor = std::min(row_factor, segments / concurrent);
    p.out.conflict_weight = 0;
  }
  const double row_out_bytes = p.out.padded_bytes;
  p.vector_cycles = pass_cycles(kind, updates->bytes() / nt, hw);
  p.scalar_cycles = rows / nt * hw.vector.scalar_cycles_per_index;
  // The hot region's chain (above) bounds the kernel: a core's adds wait their turn in it, so a
  // core's stores, index and vector work (in series: one buffer) take at least the chain. Where
  // it binds, the stores are slowed to that and the chain replaces the duplicate-ratio conflict
  // estimate; where it does not, nothing changes.
  if (const double chain =
          segment_op ? hot_region_chain_cycles(op, f.attrs, rows, row_bytes, hw) : 0;
      chain > 0 && hw.memory.gm_write_bytes_per_cycle > 0) {
    const double store_floor = chain / std::max(1.0, nt / concurrent) - p.scalar_cycles -
                               p.vector_cycles - p.out.transfers * hw.memory.mte3_setup_cycles;
    const double chain_factor =
        store_floor > 0 ? row_out_bytes / (hw.memory.gm_write_bytes_per_cycle * store_floor)
                        : row_factor;
    if (chain_factor < row_factor) {  // the chain binds
      row_factor = chain_factor;
      p.out.conflict_weight = 0;
    }
  }
  p.ub_single_buffer = true;
  // ops that create their output (ScatterNd, EmbeddingDenseGrad) zero it first.
  // EmbeddingDenseGradV2 leaves that to a MemSet kernel of its own (CANN 8.3 profiles show
  // aclnnEmbeddingDenseBackward as MemSet, then EmbeddingDenseGradV2 scattering the rows), and
  // UnsortedSegmentSum adds into an output an AtomicAddrClean kernel zeroed (every one in the
  // MindSpore 910 profiles follows one, e.g. 33 us zeroing bert's [21128,768] gradient before
  // the 43-154 us UnsortedSegmentSum, which could not also zero 32 MB itself).
  if (op.type == "ScatterNd" || op.type == "EmbeddingDenseGrad" ||
      (segment_op && op.type != "UnsortedSegmentSum")) {
    const double init = op.outputs.empty() ? updates->bytes() : op.outputs[0].bytes();
    merge(p.out, flat_transfer(init, nt));
  }
  // the zeroing streams at the full rate: one factor on the whole Transfer that gives each part
  // its own rate (bytes over rate summed)
  const double init_bytes = p.out.padded_bytes - row_out_bytes;
  p.out.rate_factor = p.out.padded_bytes / (row_out_bytes / row_factor + init_bytes);
  p.tiles = tiles;
  p.flops = static_cast<double>(updates->elements());
  return p;
}

bool sort_shape(const OpDesc& op, const AttrTable& attrs, SortShape& s) {
  if (op.inputs.empty() || op.inputs[0].shape.empty()) return false;
  const TensorDesc& x = op.inputs[0];
  s.ds = dtype_bytes(x.dtype);
  s.n = static_cast<double>(x.shape.back());
  s.elements = static_cast<double>(x.elements());
  s.rows = s.elements / s.n;
  // The valid length (after a what-if rewrite) bounds the sorted prefix.
  s.n_eff = std::min(s.n, attrs.number(Attr::kValidLength, s.n, op));
  s.k = s.n;
  if (op.kind->role == OpRole::kTopK) {
    if (attrs.has(Attr::kK)) {
      s.k = std::min(s.n, attrs.number(Attr::kK, s.n, op));
    } else if (!op.outputs.empty() && !op.outputs[0].shape.empty()) {
      s.k = static_cast<double>(op.outputs[0].shape.back());
    } else {
      s.warnings |= kWarnOutputInferred;
    }
  }
  // 32-element sorts, then ceil(log4(chunks)) merge passes of 4 lists.
  s.chunks = fast_ceil(s.n_eff / 32.0);
  s.passes = s.chunks > 1 ? fast_ceil(std::log(s.chunks) / std::log(4.0)) : 0.0;
  s.log_n = std::max(1.0, std::log2(s.n_eff));
  s.int64 = is_int64(x.dtype);
  return true;
}

namespace {

KernelPlan sort_plan(const SortShape& s, const HwSpec& hw, int cores) noexcept {
  KernelPlan p;
  p.unit = Placement::kVector;
  p.warnings |= s.warnings;
  const std::int64_t tiles = vector_tiles(s.elements * s.ds, hw, cores, saturating_count(s.rows));
  const double nt = static_cast<double>(tiles);
  const double rows_per_tile = s.rows / nt;
  p.in = row_transfer(s.rows, s.n_eff * s.ds, nt, hw);
  p.out = flat_transfer(s.rows * s.k * (s.ds + 4.0), nt);  // values + int32 indices
  if (s.int64) {
    p.scalar_cycles = rows_per_tile * s.n_eff * s.log_n * hw.vector.scalar_cycles_per_element;
    p.warnings |= kWarnInt64ScalarFallback;
  } else {
    p.vector_cycles =
        rows_per_tile * (s.chunks * vclass(hw, VectorClass::kSort) * (1 + s.passes) +
                         hw.vector.api_overhead_cycles * (1 + s.passes));
  }
  p.tiles = tiles;
  p.flops = s.rows * s.n_eff * s.log_n;
  return p;
}

}  // namespace

KernelPlan plan_sort(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores) {
  if (const SortShape* s = f.sort()) return sort_plan(*s, hw, cores);
  SortShape s;
  if (!sort_shape(op, f.attrs, s)) {  // no sortable input: best effort, told as a mismatch
    KernelPlan p = plan_generic(op, hw, cores);
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  return sort_plan(s, hw, cores);
}

}  // namespace npusim::cost
