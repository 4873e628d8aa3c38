#pragma once
// What the family cost models derive from an op alone -- shapes, dtypes, attributes, layout
// decisions that depend neither on the chip (HwSpec) nor on the core budget. A PreparedOp
// (model/prepared_op.h) computes them once; the plan builders read them instead of walking
// shapes and parsing attributes on every predict() call. Each struct is filled by the builder's
// own code (the same expressions in the same order), so a prepared op predicts bit for bit what
// an unprepared one does.

#include <cstdint>

#include "model/cost/gemm.h"
#include "model/cost/reduce_layout.h"
#include "model/op_desc.h"

namespace npusim::cost {

/// The op-only part of an elementwise plan (model/cost/vector_ops.cpp, plan_elementwise).
struct ElementwiseShape {
  double e = 1, last = 1;   ///< output elements and last dimension
  double in_ds = 0, out_ds = 0, ds = 0;
  double out_bytes_all = 0;
  double rows = 1;
  double in_bytes = 0;      ///< all inputs' bytes (used when nothing broadcasts)
  bool broadcast = false;
  bool scalar = false;      ///< int64 data on the scalar unit
  int casts = 0;            ///< tensors widened to fp32
  DType out_dtype = DType::kFloat16;
  int main_output = -1;     ///< index of the largest output, which sets the extent (-1: none)
  std::uint32_t warnings = 0;
};
[[nodiscard]] ElementwiseShape elementwise_shape(const OpDesc& op) noexcept;

/// The op-only part of a data-movement plan (plan_data_movement) after its early exits.
struct MovementShape {
  double in_bytes = 0, out_e = 1, out_ds = 0, out_bytes = 0, last_out = 1;
  std::int64_t parallel = 1;  ///< the tiler's cap on parallel units
  std::uint32_t warnings = 0;
};
/// False when plan_data_movement returns before tiling (Cast, AtomicAddrClean, no input).
[[nodiscard]] bool movement_shape(const OpDesc& op, MovementShape& out) noexcept;

/// The op-only part of a sort plan (model/cost/index_sort.cpp, plan_sort): the rows, the
/// sorted length and the merge passes, whose logarithms are library calls.
struct SortShape {
  double ds = 2, n = 1, elements = 1, rows = 1, n_eff = 1, k = 1;
  double chunks = 1;   ///< 32-element sorts per row
  double passes = 0;   ///< ceil(log4(chunks)) merge passes
  double log_n = 1;    ///< max(1, log2(n_eff))
  bool int64 = false;  ///< int64 keys: the scalar unit sorts
  std::uint32_t warnings = 0;
};
/// False when plan_sort falls back to the generic plan (no input, a scalar input). Reads the
/// valid_length and k attributes, so it throws on a malformed one (op_facts calls it only when
/// they are parsed, so the error comes from predict() as for an unprepared op).
[[nodiscard]] bool sort_shape(const OpDesc& op, const AttrTable& attrs, SortShape& out);

/// The op-only part of a gather plan (model/cost/index_sort.cpp, plan_index, GatherV2 and its
/// kin): the rows gathered and their bytes, from the shapes and the axis.
struct GatherShape {
  double idx_bytes = 0;     ///< the index tensor's bytes
  double params_bytes = 0;  ///< the table's bytes
  double rows = 0;          ///< rows gathered: the axes before `axis` times the indices
  double row_bytes = 0;     ///< a row's bytes (bounded by the output when the profile gives it)
};
/// For a kGather op with at least two inputs. Reads the axis attribute, so it throws on a
/// malformed one (op_facts calls it only when it is parsed, so the error comes from predict()).
[[nodiscard]] GatherShape gather_shape(const OpDesc& op, const AttrTable& attrs);

/// The op-only part of the generic plan (model/cost/vector_ops.cpp, plan_generic): what it reads
/// and writes and the widest input dtype.
struct GenericShape {
  double in_bytes = 0;   ///< every input's bytes
  double out_bytes = 0;  ///< every output's bytes (the largest input's when none is given)
  double ds = 2;         ///< the widest input dtype's bytes, at least 2
  bool scalar = false;   ///< int64 data: the scalar unit does the pass
};
[[nodiscard]] GenericShape generic_shape(const OpDesc& op) noexcept;

/// The GEMM of a MatMul / BatchMatMul (not a convolution, not attention); false for other ops.
[[nodiscard]] bool matmul_gemm(const OpDesc& op, Gemm& out) noexcept;

}  // namespace npusim::cost
